// Package crypt holds the byte-level building blocks of PRUDP payload
// protection: the compression wrapper ("Compression" in NintendoClients wiki "PRUDP Protocol"),
// RC4 streams per direction and substream ("Encryption"), the key of
// unreliable packets ("Details on substreams and unreliable packets") and the
// per-packet re-keying used by Quazal Rendez-Vous.
//
// Nothing here knows about sockets or packet headers: callers hand in payload
// slices and keys.
package crypt
