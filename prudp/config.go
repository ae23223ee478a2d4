package prudp

import (
	"crypto/ecdsa"
	"fmt"
	"log/slog"
	"time"

	"github.com/gamewire/gamewire/prudp/kerberos"
)

// Dialect selects the PRUDP encoding a connection speaks. A dialect is
// configuration of the one engine, not a fork of it.
type Dialect int

const (
	// NEXV1 is "V1 Format" in NintendoClients wiki "PRUDP Protocol" (Wii U and most 3DS games):
	// option TLVs, HMAC-MD5 packet signatures, substreams, aggregate acks.
	NEXV1 Dialect = iota
	// NEXV0 is "V0 Format" with the games signature mode (3DS games).
	NEXV0
	// NEXV0Friends is "V0 Format" with the friends-server signature mode.
	NEXV0Friends
	// NEXLite is "Lite Format" (Switch games) over a stream transport
	// (package prudp/lite: WebSocket, TCP, TLS); see dialect_lite.go.
	NEXLite
	// Quazal is the original Quazal Rendez-Vous encoding (GROBackendWV wiki "PRUDP packet format",
	// the Quazal notes in NintendoClients wiki "PRUDP Protocol"): 1-byte type and flags, 1- or 4-byte
	// checksum (ChecksumSize), RC4 "CD&ML" re-keyed for every packet (RC4Mode),
	// stream type OldRVSec, ~963-byte fragments. See docs/prudp-quazal.md.
	Quazal
	// Hyperscape is the Quazal variant of the Hyperscape "PRUDP" wiki page: 4-byte
	// checksums, u32 fragment ids, an ECDH key exchange in CONNECT verified
	// with a certification key (CertKey, CertPub), a USER stage, AES-128-CBC
	// DATA, PINGs every 10 s. See docs/prudp-hyperscape.md.
	Hyperscape
)

// String returns the dialect's CLI name.
func (d Dialect) String() string {
	switch d {
	case NEXV1:
		return "nex-v1"
	case NEXV0:
		return "nex-v0"
	case NEXV0Friends:
		return "nex-v0-friends"
	case NEXLite:
		return "nex-lite"
	case Quazal:
		return "quazal"
	case Hyperscape:
		return "hyperscape"
	}
	return fmt.Sprintf("dialect(%d)", int(d))
}

// ParseDialect maps a CLI name (nex-v1, nex-v0, nex-v0-friends, nex-lite,
// quazal, hyperscape) to a Dialect.
func ParseDialect(s string) (Dialect, error) {
	for _, d := range []Dialect{NEXV1, NEXV0, NEXV0Friends, NEXLite, Quazal, Hyperscape} {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("prudp: unknown dialect %q (want nex-v1, nex-v0, nex-v0-friends, nex-lite, quazal or hyperscape)", s)
}

// RC4Mode says how the RC4 keystream of reliable DATA relates to packets.
type RC4Mode int

const (
	// RC4Default is RC4PerPacket for Quazal and RC4Stream for the NEX dialects.
	RC4Default RC4Mode = iota
	// RC4Stream runs one keystream per direction and substream (NEX V0 and V1;
	// nex-go in its Quazal mode).
	RC4Stream
	// RC4PerPacket restarts the keystream from the freshly keyed state for
	// every packet, as the Quazal servers and the public captures do
	// (docs/peers.md, "Quazal Rendez-Vous").
	RC4PerPacket
)

// String returns the mode's CLI name.
func (m RC4Mode) String() string {
	switch m {
	case RC4Stream:
		return "stream"
	case RC4PerPacket:
		return "per-packet"
	}
	return "default"
}

// ParseRC4Mode maps a CLI name (stream, per-packet) to an RC4Mode.
func ParseRC4Mode(s string) (RC4Mode, error) {
	switch s {
	case "stream":
		return RC4Stream, nil
	case "per-packet":
		return RC4PerPacket, nil
	case "", "default":
		return RC4Default, nil
	}
	return 0, fmt.Errorf("prudp: unknown RC4 mode %q (want per-packet or stream)", s)
}

// QuazalSignatures says what the 4-byte packet signature of Quazal DATA
// (and DISCONNECT) packets holds; every other packet carries the connection
// signature received from the peer.
type QuazalSignatures int

const (
	// QuazalSigConnection: every packet carries the peer's connection
	// signature, as the GRO page describes ("Signature" in
	// GROBackendWV wiki "PRUDP packet format"). The default.
	QuazalSigConnection QuazalSignatures = iota
	// QuazalSigPayload: DATA carries the first 4 bytes of HMAC-MD5 keyed
	// with MD5(access key) over the payload, 0x12345678 when it is empty
	// (the friends-server mode of "V0 Format").
	QuazalSigPayload
	// QuazalSigSession: DATA and DISCONNECT carry the first 4 bytes of
	// HMAC-MD5 keyed with MD5(access key) over session key, sequence id,
	// fragment id and payload (the games mode of "V0 Format"; what nex-go
	// sends in its Quazal mode).
	QuazalSigSession
)

// String returns the mode's CLI name.
func (m QuazalSignatures) String() string {
	switch m {
	case QuazalSigPayload:
		return "payload"
	case QuazalSigSession:
		return "session"
	}
	return "connection"
}

// ParseQuazalSignatures maps a CLI name (connection, payload, session) to a mode.
func ParseQuazalSignatures(s string) (QuazalSignatures, error) {
	for _, m := range []QuazalSignatures{QuazalSigConnection, QuazalSigPayload, QuazalSigSession} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("prudp: unknown Quazal signature mode %q (want connection, payload or session)", s)
}

// Stream types ("Virtual ports" in NintendoClients wiki "PRUDP Protocol").
const (
	StreamDO       = 1
	StreamRV       = 2
	StreamRVSec    = 3
	StreamRVSecure = 10 // what Nintendo games use; the default
	StreamOldRVSec = 3  // Quazal and Hyperscape; the default for those dialects
)

// QuazalFragmentSize is the payload per DATA packet real Quazal servers send
// (docs/peers.md, "Quazal Rendez-Vous"); the Quazal and Hyperscape default.
const QuazalFragmentSize = 963

// DefaultRC4Key keys the RC4 streams of connections without a session key
// ("Encryption" in NintendoClients wiki "PRUDP Protocol").
const DefaultRC4Key = "CD&ML"

// Config configures one end of PRUDP connections. The zero value works: every
// zero field takes the default written beside it.
type Config struct {
	// Dialect is the encoding; default NEXV1.
	Dialect Dialect
	// AccessKey is the game server's sandbox access key, used by checksums and
	// signatures; default "" (sum 0).
	AccessKey string
	// StreamType of the virtual ports; default StreamRVSecure (10), or
	// StreamOldRVSec (3) for Quazal and Hyperscape (the Quazal checksum's
	// base is the access key only on that stream type).
	StreamType uint8
	// Port is the virtual port number (0-15; 0-255 for NEXLite): the server's port (default 1) or
	// the client's own port (default 15, "the highest unused port").
	Port uint8
	// MinorVersion is the highest PRUDP minor version offered in "Supported
	// functions"; the lower of both ends is used. Default 4 (V1), 0 for V0.
	MinorVersion uint8
	// MaxSubstreamID is the highest reliable substream id offered; the lower
	// of both ends is used. Default 0 (NEX uses only substream 0). V0 has none.
	MaxSubstreamID uint8
	// FragmentSize is the largest payload per DATA packet; default 1300 (V1),
	// 1264 (V0) ("Fragment size" in NintendoClients wiki "PRUDP Protocol") or 963 (Quazal and
	// Hyperscape, whose payload then grows by the sequence id suffix, the
	// ratio byte, the IV and the AES padding).
	FragmentSize int
	// MaxMessageSize bounds a reassembled message; default 1 MiB. Larger
	// messages are refused on send and, on receive, dropped as soon as their
	// fragments cross the limit, without storing the rest.
	MaxMessageSize int
	// Compression compresses payloads with zlib and the ratio byte. Default off
	// (NEX disabled it); both ends must agree.
	Compression bool
	// RC4Key keys the payload streams when there is no session key; default
	// "CD&ML".
	RC4Key []byte
	// NoEncryption sends DATA payloads, reliable and unreliable, without RC4
	// (what nex-go's dummy encryption setting does; NEXLite never encrypts).
	// Checksums and signatures stay. Both ends must agree. Hyperscape, whose
	// DATA is always AES-encrypted, refuses it.
	NoEncryption bool
	// InitialWindow is the number of unacknowledged reliable packets allowed
	// in flight at first; it grows by one per acknowledgement up to MaxWindow
	// and halves on loss. Default 4 (Wii U and 3DS buffer about four).
	InitialWindow int
	// MaxWindow caps the send window; default 256.
	MaxWindow int
	// ReorderWindow is how far ahead of the next expected sequence id
	// received packets are buffered; default 512. Packets further ahead are
	// dropped unacknowledged and resent by the peer.
	ReorderWindow int
	// InitialRTO is the retransmission timeout before the first RTT sample;
	// default 1 s. MinRTO and MaxRTO bound it; defaults 50 ms and 10 s (the
	// floor keeps scheduling hiccups on a loaded host from looking like loss).
	// NEXLite, over a reliable stream, defaults to 5 s, 5 s and 20 s.
	InitialRTO, MinRTO, MaxRTO time.Duration
	// MaxRetransmits is how often one packet is resent on a timeout before
	// the connection fails with ErrTimeout; default 8 (2 for NEXLite). Fast
	// retransmissions (acknowledgements of later packets show the peer alive)
	// do not count.
	MaxRetransmits int
	// KeepAlive is the idle time after which a PING is sent; default 5 s.
	// Hyperscape sends a PING every KeepAlive (default 10 s) whatever else
	// is sent, and fails the connection with ErrPeerDead when MaxUnansweredPings
	// PINGs in a row went unanswered.
	KeepAlive time.Duration
	// MaxUnansweredPings closes the connection (ErrPeerDead) when that many
	// PINGs in a row were not acknowledged; default 2 for Hyperscape
	// ("Pinging" in the Hyperscape "PRUDP" wiki page), 0 (off) otherwise.
	MaxUnansweredPings int
	// IdleTimeout is how long a peer may stay silent before the connection
	// fails with ErrPeerDead and its resources are freed; default 30 s, or
	// 60 s for Quazal and Hyperscape (real Quazal servers drop a client after
	// about 60 s of silence).
	IdleTimeout time.Duration
	// AckDelay is how long a lone acknowledgement may wait for a packet of
	// our own to share its datagram (V1 only, where packets to one peer are
	// coalesced): a request's ACK then rides with the next request, as TCP's
	// delayed ACK does. Two or more pending acknowledgements, or any packet
	// we send, flush them at once. Default 2 ms; negative sends every ACK at
	// the end of the batch that received its packet.
	AckDelay time.Duration
	// IndividualAcks forces one ACK packet per acknowledged packet (what
	// NintendoClients sends) instead of aggregate acks.
	IndividualAcks bool
	// MaxSendQueue bounds the bytes queued for sending on one connection;
	// Send blocks (or fails with ErrSendQueueFull on a cancelled context)
	// beyond it. Default 8 MiB.
	MaxSendQueue int
	// MaxRecvQueue bounds the bytes of received messages waiting for Recv or
	// the Handler. Beyond it new DATA is neither accepted nor acknowledged,
	// so the peer backs off and resends (and gives up with its retransmission
	// limit if the application never reads again). Default 8 MiB.
	MaxRecvQueue int
	// MaxBuffer is the budget for data an endpoint (a Server, or one Dial)
	// holds for its connections: packets waiting in reorder buffers,
	// unfinished messages, received messages waiting for the application
	// and messages queued to send and not yet acknowledged, in bytes over
	// all connections (the capacity of the buffers, plus a little per held
	// packet). Default 64 MiB. When a packet would take the total past it,
	// a connection holding more than an equal share (MaxBuffer divided by
	// the open connections) is refused that packet, unacknowledged, so
	// that the peer resends it ("budget" drops), while connections holding
	// less go on; a connection still refused BudgetGrace after its first
	// refusal is closed with ErrOverBudget. Such a connection's Send blocks
	// until its peer acknowledges, and an InlineHandler's answer on it is
	// dropped ("inline_reply_queue"), so a peer that acknowledges nothing
	// cannot pile answers up; one holding less still queues its answers,
	// which can take the total past MaxBuffer by up to an equal share each
	// (twice MaxBuffer at worst).
	MaxBuffer int
	// BudgetGrace is how long a connection may go on being refused by the
	// MaxBuffer budget before it is closed; default 1 s.
	BudgetGrace time.Duration
	// MaxReorderBytes bounds the bytes one connection holds in its reorder
	// buffers (all substreams together); packets beyond it are dropped
	// unacknowledged, as beyond ReorderWindow ("reorder_bytes" drops).
	// Default 512 KiB: about 390 full fragments of 1,300 bytes, more than
	// the largest send window (MaxWindow, 256 packets) puts in flight, so
	// that an honest peer's early packets are never refused for it.
	MaxReorderBytes int
	// MaxUnfinishedBytes bounds the bytes of unfinished messages one
	// connection holds, all substreams together; the message crossing it
	// is refused like one crossing MaxMessageSize ("unfinished_bytes"
	// drops). Default MaxMessageSize.
	MaxUnfinishedBytes int
	// MaxConns caps a Server's connections, lingering ones included; a
	// CONNECT beyond it is not answered and is counted ("conn_limit"
	// drops). Default 50,000 (about 135 MB of idle connection state);
	// negative: no cap.
	MaxConns int
	// Ticket makes a client connection secure ("Secure server connection"
	// in NintendoClients wiki "PRUDP Protocol"): the CONNECT carries Ticket.Internal and the
	// request data (PID, a connection id, a check value) sealed with
	// Ticket.SessionKey, the server answers with check+1, and the session
	// key then keys RC4 and the signatures. Default nil: an authentication
	// (non-secure) connection keyed with RC4Key.
	Ticket *kerberos.Ticket
	// PID is the user's principal id sent in a secure CONNECT.
	PID uint64
	// Kerberos sets PID and session key sizes; default kerberos.Quazal for
	// Quazal, kerberos.Friends (16-byte session keys) for NEXV0Friends, else
	// the zero value: 4-byte PIDs and 32-byte session keys (3DS / Wii U).
	Kerberos kerberos.Settings
	// ChecksumSize is the Quazal checksum size, 1 (default) or 4 bytes.
	ChecksumSize int
	// QuazalTypes2006 numbers Quazal packet types as 25 To Life (2006) does
	// rather than as Ghost Recon Online (2012); the engine's packets (SYN to
	// PING) are the same in both.
	QuazalTypes2006 bool
	// RC4Mode is per packet or one stream; RC4Default picks per packet for
	// Quazal and a stream for the NEX dialects. Hyperscape uses AES instead.
	RC4Mode RC4Mode
	// QuazalSignatures selects what Quazal DATA and DISCONNECT packets are
	// signed with; default QuazalSigConnection.
	QuazalSignatures QuazalSignatures
	// CertKey is a Hyperscape server's certification private key: it signs
	// the server's ephemeral key in every CONNECT answer. Required for a
	// Hyperscape Server.
	CertKey *ecdsa.PrivateKey
	// CertPub is the certification public key a Hyperscape client verifies
	// the server's key with. Required for a Hyperscape client.
	CertPub *ecdsa.PublicKey
	// DisableOffload turns off batched datagram I/O on UDP sockets. By
	// default, on Linux, a run of datagrams to one peer leaves in one system
	// call (UDP generic segmentation offload) and the socket reads runs a
	// peer sent that way in one call (UDP_GRO); each is still a datagram of
	// its own on the wire. Other platforms and PacketConns other than
	// *net.UDPConn never use it.
	DisableOffload bool
	// Logger receives the engine's logs; default none.
	Logger *slog.Logger
}

// validate refuses settings the engine cannot honour.
func (c *Config) validate() error {
	switch {
	case len(c.RC4Key) > 256:
		return fmt.Errorf("prudp: RC4Key of %d bytes (1 to 256)", len(c.RC4Key))
	case c.FragmentSize < 16 || c.FragmentSize > maxDatagram-128:
		return fmt.Errorf("prudp: FragmentSize %d (16 to %d)", c.FragmentSize, maxDatagram-128)
	case c.StreamType > 15 || (c.Port > 15 && c.Dialect != NEXLite):
		return fmt.Errorf("prudp: virtual port stream type %d, port %d (each 0 to 15)", c.StreamType, c.Port)
	case c.Ticket != nil && len(c.Ticket.SessionKey) == 0:
		return fmt.Errorf("prudp: Ticket without a session key")
	case c.RC4Mode != RC4Stream && c.RC4Mode != RC4PerPacket:
		return fmt.Errorf("prudp: RC4Mode %d", c.RC4Mode)
	case specOf(c.Dialect) == nil:
		return fmt.Errorf("prudp: unknown dialect %v", c.Dialect)
	}
	if d := specOf(c.Dialect); d.check != nil {
		return d.check(c)
	}
	return nil
}

// validateEnd is validate plus what the dialect needs at one end (server:
// a Server's, else a client's).
func (c *Config) validateEnd(server bool) error {
	if err := c.validate(); err != nil {
		return err
	}
	if d := specOf(c.Dialect); d.needs != nil {
		return d.needs(c, server)
	}
	return nil
}
