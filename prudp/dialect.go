package prudp

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/wire"
)

// dialectSpec is everything a dialect changes in the engine, chosen once per
// endpoint (specOf): defaults, the header codec, the DATA payload transform
// and what it adds to the handshake. Sessions call it and know no dialect by
// name.
type dialectSpec struct {
	// defaults fill the zero fields of a Config of this dialect before the
	// engine's own (engineDefaults).
	defaults Config
	// negotiates: SYN and CONNECT carry supported functions and the maximum
	// substream id, whose lower values both ends then use (V1, Lite). The
	// others have neither: MinorVersion and MaxSubstreamID are forced to 0.
	negotiates bool
	// substreams: more than substream 0 may be negotiated (V1).
	substreams bool
	// coalesces: packets carry their size, so several to one peer may share
	// a datagram, and a batched (segmented) write is read back apart (V1,
	// Lite).
	coalesces bool
	// delayedAcks: a lone acknowledgement may wait (Config.AckDelay) for a
	// packet to share its datagram with (V1). Elsewhere AckDelay is forced
	// to -1.
	delayedAcks bool
	// checksumSize, when not 0, is the only checksum size of the dialect
	// (Hyperscape: 4), whatever Config.ChecksumSize says.
	checksumSize int
	// clientPort is a client's own virtual port, "the highest unused port
	// number": 0xF for V0 and V1, 0x1F for Lite.
	clientPort uint8
	// newAcks: aggregate acknowledgements are always in the new format, and
	// no header substream id tells the formats apart (Lite).
	newAcks bool
	// liteSignature: codec.verify checks the Lite signature of a client's
	// CONNECT; a refusal is logged and counted apart.
	liteSignature bool
	// signedSyn: a client's SYN carries a packet signature the server can
	// check before answering, keyed with the access key only (V1: HMAC-MD5
	// keyed with MD5(access key), with no session key and no connection
	// signature yet). A SYN failing it gets no SYN-ACK and is counted
	// ("syn_signature"). Lite SYNs carry no signature (the Lite signature
	// is the CONNECT's), V0's and Quazal's carry only the checksum, checked
	// by every parse.
	signedSyn bool
	// multiAck: a packet with NEED_ACK and MULTI_ACK is answered with ACK
	// and MULTI_ACK both set, and MULTI_ACK never means an aggregate
	// acknowledgement (Hyperscape, "Multi Ack" in the Hyperscape "PRUDP" wiki page).
	multiAck bool
	// userStage: after the CONNECT-ACK the client sends a reliable USER the
	// server acknowledges, ordered before its first DATA (Hyperscape).
	userStage bool
	// fragMax is the highest fragment id before the ids wrap to 1: 255 for
	// 1-byte ids, 2^32-1 for Hyperscape's u32.
	fragMax uint32

	// newCodec builds the header codec on top of package prudp/wire.
	newCodec func(cfg *Config) codec
	// transform builds the DATA payload transform of a connection keyed
	// with key (the session key, or Config.RC4Key). Nil when the handshake's
	// key exchange supplies it.
	transform func(cfg *Config, key []byte, substreams int) payloadTransform
	// exchange is a key agreement carried in the CONNECT payloads (nil: none).
	exchange keyExchange
	// check refuses a resolved Config the dialect cannot run with (nil:
	// nothing to check).
	check func(c *Config) error
	// needs refuses a Config lacking what one end needs (server: a
	// Server's, else a client's); nil: nothing.
	needs func(c *Config, server bool) error
}

// engineDefaults fill what a dialect's defaults leave zero; see the field
// comments of Config.
var engineDefaults = Config{
	StreamType:      StreamRVSecure,
	FragmentSize:    1264,
	MaxMessageSize:  1 << 20,
	RC4Key:          []byte(DefaultRC4Key),
	RC4Mode:         RC4Stream,
	InitialWindow:   4,
	MaxWindow:       256,
	ReorderWindow:   512,
	InitialRTO:      time.Second,
	MinRTO:          50 * time.Millisecond,
	MaxRTO:          10 * time.Second,
	MaxRetransmits:  8,
	KeepAlive:       5 * time.Second,
	IdleTimeout:     30 * time.Second,
	AckDelay:        2 * time.Millisecond,
	MaxSendQueue:    8 << 20,
	MaxRecvQueue:    8 << 20,
	MaxBuffer:       64 << 20,
	BudgetGrace:     time.Second,
	MaxReorderBytes: 512 << 10,
	MaxConns:        50000,
	Logger:          slog.New(slog.DiscardHandler),
}

// quazalDefaults are what Quazal and Hyperscape share: stream type
// OldRVSec (the Quazal checksum's base is the access key only there), the
// fragments real Quazal servers send, and their 60 s silence limit
// (docs/peers.md, "Quazal Rendez-Vous").
var quazalDefaults = Config{StreamType: StreamOldRVSec, FragmentSize: QuazalFragmentSize, IdleTimeout: 60 * time.Second}

var dialects = [...]dialectSpec{
	NEXV1: {
		defaults:   Config{MinorVersion: 4, FragmentSize: 1300},
		negotiates: true, substreams: true, coalesces: true, delayedAcks: true, signedSyn: true,
		clientPort: 0xf, fragMax: 255,
		newCodec:  func(cfg *Config) codec { return &v1Codec{d: wire.NewV1(cfg.AccessKey)} },
		transform: newRC4Transform,
	},
	NEXV0: {
		clientPort: 0xf, fragMax: 255,
		newCodec:  func(cfg *Config) codec { return &v0Codec{d: wire.NewV0(cfg.AccessKey, wire.ModeGames)} },
		transform: newRC4Transform,
	},
	NEXV0Friends: {
		// The 3DS / Wii U friends server's tickets carry 16-byte session keys.
		defaults:   Config{Kerberos: kerberos.Friends},
		clientPort: 0xf, fragMax: 255,
		newCodec:  func(cfg *Config) codec { return &v0Codec{d: wire.NewV0(cfg.AccessKey, wire.ModeFriends)} },
		transform: newRC4Transform,
	},
	NEXLite:    liteDialect,
	Quazal:     quazalDialect,
	Hyperscape: hyperscapeDialect,
}

// quazalDialect: per-packet RC4 and Quazal tickets by default, 1- or 4-byte
// checksums, and the signature mode of Config.QuazalSignatures.
var quazalDialect = dialectSpec{
	defaults:   with(quazalDefaults, func(c *Config) { c.ChecksumSize, c.Kerberos, c.RC4Mode = 1, kerberos.Quazal, RC4PerPacket }),
	clientPort: 0xf, fragMax: 255,
	newCodec: func(cfg *Config) codec {
		c := &quazalCodec{d: wire.NewQuazal(cfg.AccessKey, wire.QuazalOptions{ChecksumSize: cfg.ChecksumSize, Types2006: cfg.QuazalTypes2006})}
		switch cfg.QuazalSignatures {
		case QuazalSigPayload:
			c.hmac = wire.NewV0(cfg.AccessKey, wire.ModeFriends)
		case QuazalSigSession:
			c.hmac = wire.NewV0(cfg.AccessKey, wire.ModeGames)
		}
		return c
	},
	transform: newRC4Transform,
	check: func(c *Config) error {
		if c.ChecksumSize != 1 && c.ChecksumSize != 4 {
			return fmt.Errorf("prudp: Quazal ChecksumSize %d (1 or 4)", c.ChecksumSize)
		}
		return nil
	},
}

// with returns c changed by f: a dialect's defaults built on shared ones.
func with(c Config, f func(*Config)) Config {
	f(&c)
	return c
}

// specOf returns the description of d (nil for an unknown dialect).
func specOf(d Dialect) *dialectSpec {
	if d < 0 || int(d) >= len(dialects) {
		return nil
	}
	return &dialects[d]
}

// newCodec builds the engine's view of the configured dialect on top of
// package prudp/wire.
func newCodec(cfg *Config) (codec, error) {
	d := specOf(cfg.Dialect)
	if d == nil {
		return nil, fmt.Errorf("prudp: unknown dialect %v", cfg.Dialect)
	}
	return d.newCodec(cfg), nil
}

// Resolved returns a copy of c with every zero field set to its default for
// c.Dialect (see the field comments), and the settings the dialect does not
// have forced: what a Server or Dial with c actually runs with. Layers on
// top of the engine (package nex) read their defaults here rather than
// repeating them.
func (c *Config) Resolved() Config {
	r := *c
	d := specOf(r.Dialect)
	if d == nil {
		fillDefaults(&r, &engineDefaults)
		return r // validate refuses it
	}
	fillDefaults(&r, &d.defaults)
	fillDefaults(&r, &engineDefaults)
	if !d.negotiates {
		r.MinorVersion = 0
	}
	if !d.substreams {
		r.MaxSubstreamID = 0
	}
	if !d.delayedAcks {
		r.AckDelay = -1 // one packet per datagram: nothing to share
	}
	if d.checksumSize != 0 {
		r.ChecksumSize = d.checksumSize
	}
	orDefault(&r.MaxUnfinishedBytes, r.MaxMessageSize)
	r.MaxWindow = max(r.MaxWindow, r.InitialWindow)
	r.ReorderWindow = min(r.ReorderWindow, 16384)
	// Our own peers buffer ReorderWindow packets ahead; a larger send window
	// would only make them drop packets.
	r.MaxWindow = min(r.MaxWindow, r.ReorderWindow)
	r.InitialWindow = min(r.InitialWindow, r.MaxWindow)
	return r
}

// resolved is Resolved (the engine's own spelling).
func (c *Config) resolved() Config { return c.Resolved() }

// fillDefaults sets the zero (or, for sizes and durations, non-positive)
// fields of r that have a default in d. AckDelay is taken only when zero:
// a negative one turns delayed acknowledgements off.
func fillDefaults(r, d *Config) {
	orDefault(&r.StreamType, d.StreamType)
	orDefault(&r.MinorVersion, d.MinorVersion)
	orDefault(&r.FragmentSize, d.FragmentSize)
	orDefault(&r.MaxMessageSize, d.MaxMessageSize)
	if len(r.RC4Key) == 0 {
		r.RC4Key = d.RC4Key
	}
	orDefault(&r.InitialWindow, d.InitialWindow)
	orDefault(&r.MaxWindow, d.MaxWindow)
	orDefault(&r.ReorderWindow, d.ReorderWindow)
	orDefault(&r.InitialRTO, d.InitialRTO)
	orDefault(&r.MinRTO, d.MinRTO)
	orDefault(&r.MaxRTO, d.MaxRTO)
	orDefault(&r.MaxRetransmits, d.MaxRetransmits)
	orDefault(&r.KeepAlive, d.KeepAlive)
	if r.MaxUnansweredPings == 0 { // negative: off
		r.MaxUnansweredPings = d.MaxUnansweredPings
	}
	orDefault(&r.IdleTimeout, d.IdleTimeout)
	if r.AckDelay == 0 {
		r.AckDelay = d.AckDelay
	}
	orDefault(&r.MaxSendQueue, d.MaxSendQueue)
	orDefault(&r.MaxRecvQueue, d.MaxRecvQueue)
	orDefault(&r.MaxBuffer, d.MaxBuffer)
	orDefault(&r.BudgetGrace, d.BudgetGrace)
	orDefault(&r.MaxReorderBytes, d.MaxReorderBytes)
	orDefault(&r.MaxUnfinishedBytes, d.MaxUnfinishedBytes)
	if r.MaxConns == 0 { // negative: no cap
		r.MaxConns = d.MaxConns
	}
	if r.Kerberos == (kerberos.Settings{}) {
		r.Kerberos = d.Kerberos
	}
	orDefault(&r.ChecksumSize, d.ChecksumSize)
	if r.RC4Mode == RC4Default {
		r.RC4Mode = d.RC4Mode
	}
	if r.Logger == nil {
		r.Logger = d.Logger
	}
}

// orDefault sets *v to def when *v is not positive.
func orDefault[T int | uint8 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
