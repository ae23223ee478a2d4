package prudp

import (
	"crypto/hmac"
	"time"

	"github.com/gamewire/gamewire/prudp/wire"
)

// The NEXLite dialect: "Lite Format", "Virtual ports" and "Lite signature" in
// NintendoClients wiki "PRUDP Protocol", spoken by Switch games over WebSocket/TLS streams
// (package prudp/lite is the transport). What it changes in the engine:
//
//   - the codec: magic 0x80, no session id, substream id, checksum or packet
//     signature; options 0 on SYN and CONNECT, 1 on the SYN-ACK, 0x80 on the
//     client's CONNECT;
//   - 8-bit virtual ports with the stream type in a byte of its own; the
//     client's port is 0x1F;
//   - no RC4 (TLS protects the stream);
//   - aggregate acknowledgements always in the new format, sent and read
//     whatever minor version was negotiated ("The Lite format always uses the
//     new version"; nex-go answers minor version 0);
//   - the client signs its CONNECT with the Lite signature; the server
//     verifies it before creating any state and refuses a bad one with a
//     warning in its log and the drop reason "lite_signature";
//   - stream timers (liteDialect).

// vport packs a stream type and a port number the way pkt.src, pkt.dst and
// the demultiplexing keys hold them: 4-bit V0/V1 ports and 8-bit Lite ports
// alike.
func vport(stream, port uint8) uint16 { return uint16(stream)<<8 | uint16(port) }

// liteDialect is NEXLite. A stream loses nothing while it is open, so a
// resend only duplicates what TCP delivers anyway: a packet is resent only
// after 5 s without an acknowledgement (the peer is stuck, or the stream is
// dead and the transport is about to say so), at most twice
// (NintendoClients' Switch profile waits 5 s and does not resend).
// Keepalive and dead-peer detection stay those of UDP. Lite carries no
// maximum substream id (option 4).
var liteDialect = dialectSpec{
	defaults: Config{MinorVersion: 4, FragmentSize: 1300, InitialRTO: 5 * time.Second, MinRTO: 5 * time.Second,
		MaxRTO: 20 * time.Second, MaxRetransmits: 2},
	negotiates: true, coalesces: true, newAcks: true, liteSignature: true,
	clientPort: 0x1f, fragMax: 255,
	newCodec: func(cfg *Config) codec { return &liteCodec{d: wire.NewLite(cfg.AccessKey)} },
	// TLS protects the stream: no RC4.
	transform: func(cfg *Config, _ []byte, _ int) payloadTransform { return newPlainTransform(cfg) },
}

// liteCodec is "Lite Format" on top of wire.Lite.
type liteCodec struct{ d *wire.Lite }

func (c *liteCodec) parse(b []byte, p *pkt) (int, error) {
	w, n, err := c.d.Parse(b)
	if err != nil {
		return 0, err
	}
	p.fromWire(&w)
	p.w.LiteSignature, p.w.Options = w.LiteSignature, w.Options
	return n, nil
}

// appendPacket writes the options Lite carries for the packet's type and
// drops the fields it does not carry (session id, substream id, maximum
// substream id, unreliable sequence id). The client's CONNECT gets the Lite
// signature over the server's connection signature (k.connSig).
func (c *liteCodec) appendPacket(dst []byte, p *pkt, k keys) ([]byte, error) {
	var w wire.Packet
	p.toWire(&w)
	w.SessionID, w.SubstreamID, w.MaxSubstreamID, w.UnreliableSeq = 0, 0, 0, 0
	ack := p.flags&flagAck != 0
	switch {
	case p.typ == typeSyn && ack:
		w.Options = wire.OptSupportedFunctions | wire.OptConnSignature
	case p.typ == typeSyn:
		w.Options, w.ConnSignature = wire.OptSupportedFunctions, [16]byte{}
	case p.typ == typeConnect && !ack:
		var serverSig [16]byte
		copy(serverSig[:], k.connSig)
		w.Options, w.ConnSignature = wire.OptSupportedFunctions|wire.OptLiteSignature, [16]byte{}
		w.LiteSignature = c.d.Signature(serverSig)
	case p.typ == typeConnect:
		w.Options, w.ConnSignature = wire.OptSupportedFunctions, [16]byte{}
	default:
		w.Options, w.ConnSignature, w.SupportedFunctions = wire.OptNone, [16]byte{}, 0
	}
	return c.d.Append(dst, &w)
}

// verify implements "Lite signature": a client's CONNECT must carry
// HMAC-MD5(MD5(access key), MD5(access key) || the server's connection
// signature k.connSig). Lite has no packet signatures, so every other packet
// passes.
func (c *liteCodec) verify(p *pkt, k keys) bool {
	if p.typ != typeConnect || p.flags&flagAck != 0 {
		return true
	}
	var serverSig [16]byte
	copy(serverSig[:], k.connSig)
	want := c.d.Signature(serverSig)
	return p.w.Options&wire.OptLiteSignature != 0 && hmac.Equal(want[:], p.w.LiteSignature[:])
}

func (c *liteCodec) connSigLen() int { return 16 }
