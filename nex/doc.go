// Package nex puts gamewire's NEX pieces together into what server-revival
// developers run and what their clients do:
//
//   - Server: an authentication server (Ticket Granting, protocol 10) and a secure
//     server (Secure Connection 11, Health 18, plus any game protocols registered
//     on its Mux), each a PRUDP server speaking RMC, sharing one account store.
//   - Login: the client flow of `gamewire login`: Login on the authentication
//     server, RequestTicket when the ticket is not for the secure server, a secure
//     PRUDP connection with the ticket, Register; the result is a Session whose
//     RMC client calls the game's protocols.
//
// The pieces live in sub-packages a user can take one by one: nex/types (the NEX
// types), nex/rmc (RMC messages, Mux, Client), nex/auth, nex/secure, nex/health
// (the protocol handlers and calls), nex/accounts (the SQLite account store).
package nex
