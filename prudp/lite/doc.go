// Package lite is the stream transport of PRUDP Lite, the PRUDP format of Nintendo Switch
// games ("Lite Format", "Virtual ports", "Lite signature" in NintendoClients wiki "PRUDP Protocol"): Lite
// packets back to back inside a WebSocket (subprotocol NEX, path /, binary messages) or a
// raw TCP stream, usually over TLS.
//
// The PRUDP engine (package prudp, dialect prudp.NEXLite) runs on datagrams; this package
// presents streams to it as a prudp.PacketConn:
//
//   - [Listener] accepts WebSocket and raw streams on one TCP port (TLS with Config.TLS;
//     the first byte tells them apart), gives each stream an address, splits its bytes into
//     packets with [Reader] (a packet boundary may fall anywhere; a message may carry
//     several packets), and hands each packet to the [PortConn] of its destination virtual
//     port: an authentication server on port 1 and a secure server on port 2 share the
//     listener.
//   - Writes to a stream's address are queued and written by the stream's writer, several
//     packets per write (one WebSocket message).
//   - [Dial] (or [DialStream] and [NewClient]) is the client side over ws://, wss://,
//     tcp:// and tls://.
//
// Back-pressure: received packets wait in a bounded queue per port and then in TCP (nothing
// is dropped); sent packets never block the engine, and a peer that stops reading until its
// bounded queue is full, or accepts nothing for Config.WriteTimeout, is dropped with
// [ErrSlowReader]. When a stream ends, the engine gets a forced DISCONNECT for every
// connection it carried. Every drop and close is counted by reason ([Listener.Stats],
// [Listener.Collector]) and logged through Config.Logger only.
//
// See docs/prudp-lite.md.
package lite
