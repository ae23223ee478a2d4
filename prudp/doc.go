// Package prudp runs PRUDP connections over UDP: reliable, ordered,
// encrypted and signed, client and server, in the NEX V0 (games and friends
// signature modes) and V1 dialects ("Protocol Description" in
// NintendoClients wiki "PRUDP Protocol"). A dialect is configuration (Config.Dialect), not a
// fork of the engine; packet bytes come from prudp/wire, RC4 and zlib from
// prudp/crypt, Kerberos tickets from prudp/kerberos.
//
// A Server serves many connections on one socket, demultiplexed by peer
// address, virtual ports and session id; SYNs are answered statelessly (the
// SYN-ACK's connection signature is an HMAC of the client's address), so no
// state exists before a CONNECT that proves it saw our SYN-ACK. Dial connects
// a client. A Conn sends and receives whole messages, reliable per substream
// or unreliable, and reports Stats.
//
// Connections belong to shards: a shard's goroutine owns their state, takes
// received datagrams and API calls from a queue, and runs their timers from
// one heap; small datagrams may be run to completion by the socket reader
// while it holds the shard. Every state-machine method takes the time as an
// argument, which lets the tests run the engine inside testing/synctest over
// the in-memory lossy link of internal/lossy.
//
// docs/prudp.md describes the behaviour in detail: handshake and negotiation,
// secure connections, RTT estimation and retransmission, windows,
// acknowledgements (individual, aggregate old and new format, delayed),
// keepalive, teardown, fragmentation and flow control, with the choices made
// where the specs are silent.
package prudp
