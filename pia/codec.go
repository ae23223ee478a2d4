package pia

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash"
	"slices"
)

// Packet is a decoded Pia packet: header, messages and the plaintext footer
// ("Header", "Messages", "Footer" in the Pia Protocol wiki). A Packet filled by Codec.Open
// owns a buffer that its messages alias; reuse the Packet to avoid allocations.
type Packet struct {
	Header   Header
	Messages []Message
	// Footer holds the plaintext footer (5.27 and later): the 16-bit variable ids of
	// the receiving consoles when a packet goes to several (LDN). It aliases the input.
	Footer []byte
	// Rest is set by Codec.Open when the packet authenticated but a message did not
	// parse: the plaintext from that message on (Messages holds the ones before
	// it). It aliases the input or the packet's buffer.
	Rest []byte

	plain []byte // decrypted messages, reused
}

// FooterVariableIDs appends the 16-bit variable ids of the footer to dst. An odd
// trailing byte is reported as an error rather than dropped.
func (p *Packet) FooterVariableIDs(dst []uint16) ([]uint16, error) {
	if len(p.Footer)%2 != 0 {
		return dst, fmt.Errorf("pia footer: %w: %d bytes is not a list of 16-bit variable ids", ErrBadField, len(p.Footer))
	}
	for i := 0; i+1 < len(p.Footer); i += 2 {
		dst = append(dst, uint16(p.Footer[i])<<8|uint16(p.Footer[i+1]))
	}
	return dst, nil
}

// Config configures a Codec.
type Config struct {
	// Version is the Pia version of the session (required).
	Version Version
	// NonceParams selects the network and its session-wide nonce inputs.
	NonceParams
	// SessionKey is the 16-byte session key (see the session-key functions). Without
	// it the codec reads and writes only unencrypted packets.
	SessionKey []byte
	// AllowPlaintext lets a codec with a session key open unencrypted packets. By
	// default it refuses them: a cleared encryption bit must not bypass authentication.
	AllowPlaintext bool
}

// Codec seals and opens Pia packets of one session. It keeps scratch buffers so
// that sealing and opening allocate nothing once warm; a Codec is therefore not safe
// for concurrent use (use one per goroutine).
type Codec struct {
	cfg   Config
	hl    HeaderLayout
	ml    MessageLayout
	block cipher.Block
	gcm   cipher.AEAD // 16-byte tag; the 8-byte tag is this tag truncated
	mac   hash.Hash   // HMAC-MD5 (up to 5.6)

	nonce   [12]byte
	sum     [md5.Size]byte
	scratch []byte
}

// NewCodec returns a codec for cfg.
func NewCodec(cfg Config) (*Codec, error) {
	if cfg.Version.Major == 0 {
		return nil, fmt.Errorf("pia codec: %w: no Pia version", ErrUnsupported)
	}
	c := &Codec{cfg: cfg, hl: cfg.Version.HeaderLayout(), ml: cfg.Version.MessageLayout()}
	if cfg.Network == 0 {
		return nil, fmt.Errorf("pia codec: %w: no network (nex, ldn, lan or npln)", ErrUnsupported)
	}
	if !NonceSupported(cfg.Network, c.hl) {
		return nil, fmt.Errorf("pia codec: %w: the %s network has no nonce defined for %s (layout %s)", ErrUnsupported, cfg.Network, cfg.Version, c.hl)
	}
	if cfg.SessionKey != nil {
		if len(cfg.SessionKey) != 16 {
			return nil, fmt.Errorf("pia codec: %w: session key of %d bytes, want 16", ErrKey, len(cfg.SessionKey))
		}
		c.cfg.SessionKey = append([]byte(nil), cfg.SessionKey...)
		blk, err := aes.NewCipher(c.cfg.SessionKey)
		if err != nil {
			return nil, fmt.Errorf("pia codec: %w: %v", ErrKey, err)
		}
		c.block = blk
		if c.hl == HeaderUpTo5_6 {
			c.mac = hmac.New(md5.New, c.cfg.SessionKey)
		} else {
			c.gcm, err = cipher.NewGCMWithTagSize(blk, 16)
			if err != nil {
				return nil, fmt.Errorf("pia codec: %w", err)
			}
		}
	}
	return c, nil
}

// Version returns the Pia version of the codec.
func (c *Codec) Version() Version { return c.cfg.Version }

// HeaderLayout returns the header layout of the codec's version.
func (c *Codec) HeaderLayout() HeaderLayout { return c.hl }

// MessageLayout returns the message layout of the codec's version.
func (c *Codec) MessageLayout() MessageLayout { return c.ml }

// Overhead returns the bytes a packet adds around its messages: header, HMAC (up to
// 5.6) and footer, not counting the padding to 16 bytes.
func (c *Codec) Overhead(footer int) int {
	n := c.hl.Size() + footer
	if c.hl == HeaderUpTo5_6 && c.block != nil {
		n += md5.Size
	}
	return n
}

// Seal implements "Encryption" in the Pia Protocol wiki: it appends p to dst, encrypted when
// p.Header.Encrypted is set. The codec fills the layout, the version bits, the footer
// size and the tag (p.Header is updated to what was written); the caller chooses the
// connection id, packet id, timers, variable ids and the 8-byte header nonce.
// src is the sender as the nonce sees it (this endpoint's own address).
func (c *Codec) Seal(dst []byte, p *Packet, src Source) ([]byte, error) {
	h := &p.Header
	h.Layout = c.hl
	h.Version = 0
	if c.hl.HasVersionBits() {
		h.Version = c.cfg.Version.HeaderVersion()
	}
	h.Tag = [16]byte{}
	if c.hl.HasFooter() {
		if len(p.Footer) > 0xFF {
			return dst, fmt.Errorf("pia seal: %w: footer of %d bytes (max 255)", ErrTooLarge, len(p.Footer))
		}
		h.FooterSize = uint8(len(p.Footer))
	} else if len(p.Footer) != 0 {
		return dst, fmt.Errorf("pia seal %s: %w: this layout has no footer", c.hl, ErrBadField)
	}
	if h.Encrypted && c.block == nil {
		return dst, fmt.Errorf("pia seal: %w: encrypted packet without a session key", ErrKey)
	}
	start := len(dst)
	dst, err := h.Append(dst)
	if err != nil {
		return dst[:start], fmt.Errorf("pia seal: %w", err)
	}
	body := len(dst)
	for i := range p.Messages {
		var prev *Message
		if i > 0 {
			prev = &p.Messages[i-1]
		}
		if dst, err = AppendMessage(dst, &p.Messages[i], c.ml, prev); err != nil {
			return dst[:start], fmt.Errorf("pia seal: message %d: %w", i, err)
		}
	}
	if !h.Encrypted {
		return append(dst, p.Footer...), nil
	}
	for (len(dst)-body)%16 != 0 {
		dst = append(dst, 0xFF)
	}
	if c.hl == HeaderUpTo5_6 {
		for i := body; i < len(dst); i += 16 {
			c.block.Encrypt(dst[i:i+16], dst[i:i+16])
		}
		c.mac.Reset()
		c.mac.Write(dst[start:])
		return c.mac.Sum(dst), nil
	}
	if c.nonce, err = BuildNonce(c.cfg.NonceParams, h, src); err != nil {
		return dst[:start], fmt.Errorf("pia seal: %w", err)
	}
	n := len(dst) - body
	dst = slices.Grow(dst, 16) // seal in place: the tag must not move the array
	sealed := c.gcm.Seal(dst[body:body], c.nonce[:], dst[body:], nil)
	tag := sealed[n : n+16]
	ts := c.hl.TagSize()
	copy(h.Tag[:ts], tag)
	copy(dst[start+c.hl.Size()-ts:], tag[:ts])
	dst = dst[:body+n]
	return append(dst, p.Footer...), nil
}

// Open implements "Encryption" in the Pia Protocol wiki in reverse: it parses b, verifies and
// decrypts it, and fills p (reusing p's buffers). src is the sender as the nonce sees
// it. Payloads and the footer alias b or p's buffer. On an error p holds nothing
// usable (plaintext of a packet that fails authentication is never exposed),
// except for a *MessageError: the packet authenticated (or was not encrypted) but a
// message does not parse. Then p keeps the header, the footer, the messages before
// the break and the undecoded rest (Packet.Rest), for analysis: a peer drops such
// a packet, and inherited fields (5.18+) can make a misplaced boundary look valid,
// so the messages before the break are not proven right either.
func (c *Codec) Open(p *Packet, b []byte, src Source) error {
	p.Messages = p.Messages[:0]
	p.Footer = nil
	p.Rest = nil
	h, hs, err := ParseHeader(b, c.hl)
	if err != nil {
		return err
	}
	p.Header = h
	if c.hl.HasVersionBits() && h.Version != c.cfg.Version.HeaderVersion() {
		return fmt.Errorf("pia open %s: %w: header version %d at offset 4, Pia %s uses %d", c.hl, ErrBadVersion, h.Version, c.cfg.Version, c.cfg.Version.HeaderVersion())
	}
	if !h.Encrypted && c.block != nil && !c.cfg.AllowPlaintext {
		return fmt.Errorf("pia open %s: %w: unencrypted packet in an encrypted session (Config.AllowPlaintext)", c.hl, ErrAuth)
	}
	body := b[hs:]
	if c.hl.HasFooter() {
		fs := int(h.FooterSize)
		if len(body) < fs {
			return fmt.Errorf("pia open %s: %w: footer size %d at offset 15, only %d bytes after the header", c.hl, ErrTruncated, fs, len(body))
		}
		p.Footer = body[len(body)-fs:]
		body = body[:len(body)-fs]
	}
	if !h.Encrypted {
		return p.parseMessages(body, c.ml)
	}
	if c.block == nil {
		return fmt.Errorf("pia open: %w: encrypted packet and no session key", ErrKey)
	}
	if c.hl == HeaderUpTo5_6 {
		if len(body) < md5.Size {
			return fmt.Errorf("pia open %s: %w: %d bytes after the header, HMAC-MD5 needs 16", c.hl, ErrTruncated, len(body))
		}
		ct := body[:len(body)-md5.Size]
		c.mac.Reset()
		c.mac.Write(b[:hs+len(ct)])
		sum := c.mac.Sum(c.sum[:0])
		if !hmac.Equal(sum, body[len(ct):]) {
			return fmt.Errorf("pia open %s: %w: HMAC-MD5 mismatch", c.hl, ErrAuth)
		}
		if len(ct)%16 != 0 {
			return fmt.Errorf("pia open %s: %w: AES-ECB ciphertext of %d bytes is not a multiple of 16", c.hl, ErrBadPadding, len(ct))
		}
		p.plain = append(p.plain[:0], ct...)
		for i := 0; i < len(ct); i += 16 {
			c.block.Decrypt(p.plain[i:i+16], p.plain[i:i+16])
		}
	} else {
		if c.nonce, err = BuildNonce(c.cfg.NonceParams, &h, src); err != nil {
			return fmt.Errorf("pia open: %w", err)
		}
		if err := c.openGCM(p, body, &h); err != nil {
			return err
		}
	}
	return p.parseMessages(p.plain, c.ml)
}

// parseMessages fills p.Messages from the plaintext messages body, and p.Rest
// from the message that does not parse on.
func (p *Packet) parseMessages(body []byte, l MessageLayout) error {
	var err error
	p.Messages, err = ParseMessages(p.Messages, body, l)
	if err != nil {
		var me *MessageError
		if errors.As(err, &me) {
			p.Rest = body[me.Offset:]
		}
		return fmt.Errorf("pia open: %w", err)
	}
	return nil
}

// openGCM decrypts ct into p.plain and verifies the header tag. The 16-byte tag goes
// through crypto/cipher's Open. crypto/cipher refuses 8-byte tags, so for them the
// ciphertext is sealed once to decrypt it (GCM's CTR is symmetric), the plaintext is
// sealed again to recompute the tag, and the first 8 tag bytes are compared in
// constant time.
func (c *Codec) openGCM(p *Packet, ct []byte, h *Header) error {
	n := len(ct)
	if c.hl.TagSize() == 16 {
		c.scratch = append(append(c.scratch[:0], ct...), h.Tag[:]...)
		out, err := c.gcm.Open(p.plain[:0], c.nonce[:], c.scratch, nil)
		if err != nil {
			p.plain = p.plain[:0]
			return fmt.Errorf("pia open %s: %w: AES-GCM tag mismatch", c.hl, ErrAuth)
		}
		p.plain = out
		return nil
	}
	// CTR is its own inverse: sealing the ciphertext yields the plaintext (and a
	// tag of no use). Sealing the plaintext then yields the real tag.
	p.plain = c.gcm.Seal(p.plain[:0], c.nonce[:], ct, nil)[:n]
	c.scratch = c.gcm.Seal(c.scratch[:0], c.nonce[:], p.plain, nil)
	if subtle.ConstantTimeCompare(c.scratch[n:n+8], h.Tag[:8]) != 1 {
		clear(p.plain)
		p.plain = p.plain[:0]
		return fmt.Errorf("pia open %s: %w: AES-GCM tag (8 bytes) mismatch", c.hl, ErrAuth)
	}
	return nil
}
