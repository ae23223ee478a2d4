// Package protocols holds the Go code generated from gamewire's NEX protocol
// descriptions (nex/desc/defs/*.nexd): one package per description family
// (nex/protocols/datastore for datastore.nexd, nex/protocols/matchmakingmk8 for
// matchmaking_mk8.nexd). Each has the family's enums; its structures with Append
// and Read over types.Writer and types.Reader (structure levels with headers and
// revisions, NEX-version gates read from types.Settings.Version, Data classes
// registered for AnyDataHolders); per protocol the method ids and names, request
// and response types, a typed handler interface with Register functions for an
// rmc.Mux, and a client over an rmc.Caller. docs/nex.md "Generated protocol code"
// shows how services use them.
//
// Nothing here is edited by hand: change a description or the generator
// (nex/desc/gen) and run go generate ./nex/protocols (CI fails when the
// committed code differs from what it writes).
package protocols

//go:generate go run ../desc/gen -out .
