// Package wire decodes and encodes PRUDP packets in every dialect the specs describe:
//
//   - nex-v0 and nex-v0-friends: "V0 Format" in NintendoClients wiki "PRUDP Protocol", 2-byte type and flags,
//     1-byte checksum, packet signatures in the games or the friends mode ([V0]).
//   - quazal: the original Quazal Rendez-Vous encoding (GROBackendWV wiki "PRUDP packet format" and the
//     "original Quazal" notes in NintendoClients wiki "PRUDP Protocol"): 1-byte type and flags, 2006 or 2012
//     packet-type names, 1- or 4-byte checksum ([Quazal]).
//   - nex-v1: "V1 Format", magic EA D0, 16-byte HMAC-MD5 signature, option TLVs ([V1]).
//   - nex-lite: "Lite Format", magic 0x80, 8-bit ports, no checksum ([Lite]).
//   - hyperscape: the Hyperscape "PRUDP" wiki page, 1-byte type and flags (USER is 6), 4-byte
//     checksum, u32 fragment ids, SYN/CONNECT key-exchange payloads ([Hyperscape]).
//
// Every dialect is a value configured with its access key and options. It implements
// [Dialect]: Parse(b) returns the first packet in b and how many bytes it used, so several
// packets in one datagram or stream decode in a loop; Append(b, p) appends p's encoding and
// computes the checksum. The wire layer knows nothing of sockets or connection state.
//
// # Packets, aliasing, bytes consumed
//
// [Packet] holds every field any dialect carries; each dialect documents which fields it
// uses. Packet.Payload returned by Parse aliases the input: copy it if b is reused.
//
// V1 and Lite headers carry the payload size, so the packet length is always known. V0,
// Quazal and Hyperscape carry it only when FLAG_HAS_SIZE is set; without that flag the
// payload runs to the checksum at the end of b, so such a packet must be the last one in
// the datagram (that is how real peers send them).
//
// # Verification
//
// Parse verifies checksums (V0, Quazal, Hyperscape). On a mismatch it returns the fully
// decoded packet, the number of bytes it used and an error wrapping [ErrBadChecksum]; the
// caller may print the packet with checksum_ok=false or drop it. Every other error means
// the returned Packet is not valid.
//
// Signatures need connection state (session key, connection signature), so they are
// computed and verified by separate functions that take those as arguments:
// [V0.PacketSignature], [V1.Signature], [V1.SignPacket], [V1.VerifyPacket],
// [Lite.Signature], [ConnectionSignature].
//
// # Errors
//
// Decoding errors are *[Error] values naming the dialect, the field and its offset, e.g.
// "prudp nex-v1: option 3 at offset 34: truncated", and wrap one of the sentinel errors
// ([ErrTruncated], [ErrBadMagic], [ErrBadChecksum], ...) for errors.Is.
//
// # Performance and concurrency
//
// Parse and Append (into a buffer with enough capacity) do not allocate. Dialect values are
// safe for concurrent use after construction: the HMAC states the signature functions need
// are kept in a sync.Pool, and MD5(access key) is computed once by the constructor.
//
// Aggregate-acknowledgement payloads (old and new format) are encoded and decoded by
// [AppendAggregateAck], [ParseAggregateAck], [AppendAggregateAckOld] and
// [ParseAggregateAckOld].
package wire
