package prudp

import (
	"fmt"
	"time"

	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/wire"
)

// hyperscapeDialect is the Quazal variant of the Hyperscape "PRUDP" wiki page:
// 4-byte checksums, u32 fragment ids, an ECDH key exchange in CONNECT whose
// key makes DATA AES-128-CBC, a USER stage, ACK|MULTI_ACK answers, and a
// PING every 10 s with the connection failed after two unanswered ones
// ("Pinging").
var hyperscapeDialect = dialectSpec{
	defaults: with(quazalDefaults, func(c *Config) {
		c.KeepAlive, c.MaxUnansweredPings = 10*time.Second, 2
	}),
	checksumSize: 4,
	clientPort:   0xf,
	multiAck:     true,
	userStage:    true,
	fragMax:      1<<32 - 1,
	newCodec:     func(*Config) codec { return &hyperscapeCodec{d: wire.NewHyperscape()} },
	exchange:     hyperscapeExchange{},
	check: func(c *Config) error {
		switch {
		case c.NoEncryption:
			return fmt.Errorf("prudp: Hyperscape DATA is always AES-encrypted (NoEncryption set)")
		case c.Ticket != nil:
			return fmt.Errorf("prudp: Hyperscape connections are keyed by their ECDH exchange, not by a Ticket")
		}
		return nil
	},
	needs: func(c *Config, server bool) error {
		switch {
		case server && c.CertKey == nil:
			return fmt.Errorf("prudp: a Hyperscape server needs Config.CertKey (its certification private key)")
		case !server && c.CertPub == nil:
			return fmt.Errorf("prudp: a Hyperscape client needs Config.CertPub (the server's certification public key)")
		}
		return nil
	},
}

// hyperscapeCodec is the Hyperscape "PRUDP" wiki page on wire.Hyperscape: 1-byte
// type and flags, u32 fragment ids, 4-byte checksum. The spec calls the packet
// signature "Unknown"; gamewire puts the connection signature received from
// the peer there, as Quazal does, and checks it.
type hyperscapeCodec struct{ d *wire.Hyperscape }

func (c *hyperscapeCodec) parse(b []byte, p *pkt) (int, error) { return p.parsedKeep(c.d.Parse(b)) }

func (c *hyperscapeCodec) appendPacket(dst []byte, p *pkt, k keys) ([]byte, error) {
	var w wire.Packet
	p.toWire(&w)
	w.SubstreamID = 0
	if p.typ == typeData || p.payload != nil {
		w.Flags |= wire.FlagHasSize
	}
	w.SetSignature32(sig32(k.connSig))
	return c.d.Append(dst, &w)
}

func (c *hyperscapeCodec) verify(p *pkt, k keys) bool {
	return p.w.Signature32() == sig32(k.connSig)
}

func (c *hyperscapeCodec) connSigLen() int { return 4 }

// keyExchange is a key agreement a dialect carries in the CONNECT payloads;
// its result keys the connection's payload transform.
type keyExchange interface {
	// hello starts a client's exchange: it returns the CONNECT payload and
	// finish, which takes the payload of the server's CONNECT-ACK to the
	// connection's transform.
	hello(cfg *Config) (payload []byte, finish func(answer []byte) (payloadTransform, error), err error)
	// answer is the server's side: the transform and the CONNECT-ACK
	// payload for a client's CONNECT payload.
	answer(cfg *Config, hello []byte) (payload []byte, xf payloadTransform, err error)
}

// hyperscapeExchange is "Key Exchange" in the Hyperscape "PRUDP" wiki page: the
// client's ephemeral P-256 key, answered by the server's, signed with its
// certification key and bound to both by a tag.
type hyperscapeExchange struct{}

func (hyperscapeExchange) hello(cfg *Config) ([]byte, func([]byte) (payloadTransform, error), error) {
	hc, err := hyperscape.NewClient(cfg.CertPub)
	if err != nil {
		return nil, nil, err
	}
	hello := wire.HyperscapeConnect{PublicKey: hc.PublicKey()}
	payload, err := hello.Append(nil, false)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the CONNECT key: %w", err)
	}
	return payload, hyperscapeFinish(hc, cfg), nil
}

// hyperscapeFinish checks the server's answer to hc's CONNECT. Any mismatch
// refuses the connection: a server that cannot prove it holds the
// certification key is not the one we were told to trust.
func hyperscapeFinish(hc *hyperscape.Client, cfg *Config) func([]byte) (payloadTransform, error) {
	return func(answer []byte) (payloadTransform, error) {
		hello, err := wire.ParseHyperscapeConnect(answer, true)
		if err != nil {
			return nil, fmt.Errorf("hyperscape CONNECT answer: %w", err)
		}
		key, err := hc.Finish(hello.PublicKey[:], hello.PublicKeySignature, hello.Tag)
		if err != nil {
			return nil, fmt.Errorf("hyperscape key exchange: %w", err)
		}
		return newAESTransform(cfg, key)
	}
}

func (hyperscapeExchange) answer(cfg *Config, payload []byte) ([]byte, payloadTransform, error) {
	c, err := parseHyperscapeClientConnect(payload)
	if err != nil {
		return nil, nil, err
	}
	hello, key, err := hyperscape.Respond(c.PublicKey[:], cfg.CertKey)
	if err != nil {
		return nil, nil, err
	}
	xf, err := newAESTransform(cfg, key)
	if err != nil {
		return nil, nil, err
	}
	ans := wire.HyperscapeConnect{PublicKey: hello.PublicKey, PublicKeySignature: hello.Signature, Tag: hello.Tag[:]}
	response, err := ans.Append(nil, true)
	return response, xf, err
}

// parseHyperscapeClientConnect decodes the payload of a Hyperscape client's
// CONNECT after the connection signature ("Packet: CONNECT",
// the Hyperscape "PRUDP" wiki page): the client's 64-byte ephemeral public key,
// checked to be a point on P-256. Errors name what was wrong.
func parseHyperscapeClientConnect(payload []byte) (wire.HyperscapeConnect, error) {
	c, err := wire.ParseHyperscapeConnect(payload, false)
	if err != nil {
		return c, fmt.Errorf("hyperscape CONNECT payload: %w", err)
	}
	if _, err := hyperscape.ParsePublicKey(c.PublicKey[:]); err != nil {
		return c, fmt.Errorf("hyperscape CONNECT client key: %w", err)
	}
	return c, nil
}

// aesTransform is Hyperscape's DATA: AES-128-CBC under the exchanged key,
// the sequence id as a suffix, compression inside the cipher
// (hyperscape.DataCipher). It opens on arrival, so that a payload that does
// not decrypt is refused unacknowledged.
type aesTransform struct {
	c        *hyperscape.DataCipher
	zlib     bool
	fragSize int
}

func newAESTransform(cfg *Config, key hyperscape.SharedKey) (payloadTransform, error) {
	c, err := hyperscape.NewDataCipher(key)
	if err != nil {
		return nil, err
	}
	return &aesTransform{c: c, zlib: cfg.Compression, fragSize: cfg.FragmentSize}, nil
}

// room is the whole fragment size: the ratio byte, suffix, IV and padding
// grow the payload beyond it.
func (t *aesTransform) room() int { return t.fragSize }

func (t *aesTransform) sealReliable(dst, frag []byte, _ uint8, seq uint16) []byte {
	return t.c.Seal(dst, frag, seq, t.zlib)
}

func (t *aesTransform) sealUnreliable(dst, data []byte, seq uint16, _ uint8) ([]byte, error) {
	if len(data) > t.fragSize {
		return dst, fmt.Errorf("%w: unreliable message of %d bytes exceeds the fragment size %d", ErrMessageTooLarge, len(data), t.fragSize)
	}
	return t.c.Seal(dst, data, seq, t.zlib), nil
}

func (t *aesTransform) openArrival(dst, payload []byte, seq uint16) ([]byte, bool, error) {
	plain, err := t.c.Open(dst, payload, seq, max(t.fragSize, maxInflated))
	return plain, true, err
}

// inflatesAtDelivery is false: a payload is inflated as it arrives.
func (t *aesTransform) inflatesAtDelivery() bool { return false }

func (t *aesTransform) openReliable(payload []byte, _ uint8, _ bool) ([]byte, error) {
	return payload, nil
}
func (t *aesTransform) openUnreliable(payload []byte, _ uint16, _ uint8) ([]byte, error) {
	return payload, nil
}
