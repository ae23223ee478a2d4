// Package kerberos implements the simplified Kerberos of NEX and Quazal
// Rendez-Vous servers (nintendo-wiki "Kerberos Authentication"): password key
// derivation, the RC4 + HMAC-MD5 encryption of tickets, the ticket a client
// receives from the authentication server, the internal ticket it forwards to
// the secure server (old and new formats), and the secure CONNECT payload of
// "Secure server connection" in NintendoClients wiki "PRUDP Protocol".
//
// Encoders append to a caller's slice; decoders report how many bytes they
// used and return fields that alias their input unless a doc comment says
// otherwise. Lengths read from the wire are checked against the bytes present
// before anything is sliced, and nothing is allocated from them.
//
// # Dialects
//
// The wire format depends on two settings: the size of a PID (4 bytes on
// 3DS / Wii U and Quazal, 8 on Switch) and of the session key (32 bytes
// from NEX 2 on, 16 in NEX 1, on the 3DS / Wii U friends server and on
// Quazal). Settings holds both; NEX3DS, Switch, Friends and Quazal are
// presets.
//
// Quazal Rendez-Vous uses the same MD5-iteration key derivation
// (65000 + pid % 1024 rounds) and the same RC4-then-HMAC-MD5 ticket
// encryption as NEX 3DS / Wii U, with 4-byte PIDs and 16-byte session keys.
// What differs in practice is the internal ticket: the client never opens it,
// so its contents are the secure server's own business, and the emulators of
// Ubisoft titles seal it their own way. This package encodes it the NEX way
// (TicketInfo, old or new format), which a gamewire server and a gamewire
// client agree on; a Quazal client only ever forwards the bytes.
package kerberos
