package crypt

import (
	"crypto/md5"
	"fmt"
)

// DefaultKey is the RC4 key of connections to an authentication server and of
// Quazal connections ("Encryption" in NintendoClients wiki "PRUDP Protocol").
const DefaultKey = "CD&ML"

// Mode says how a Cipher's keystream relates to packets.
type Mode uint8

const (
	// ModeStream runs one RC4 keystream over all payloads of one direction
	// of one substream, in sequence order: NEX V0 and V1.
	ModeStream Mode = iota
	// ModePerPacket starts every payload from the freshly keyed state: the
	// Quazal Rendez-Vous servers and public captures do this (two DATA
	// packets of one connection each decrypt from a fresh "CD&ML" state;
	// see docs/peers.md).
	ModePerPacket
)

// String names the mode as the CLI flag spells it.
func (m Mode) String() string {
	switch m {
	case ModeStream:
		return "stream"
	case ModePerPacket:
		return "per-packet"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Cipher is the RC4 state of one direction of one reliable substream
// ("Encryption" and "Substreams" in NintendoClients wiki "PRUDP Protocol"). A connection holds
// two per substream, one to send and one to receive, keyed alike.
//
// In ModeStream a Cipher is 258 bytes of state, a quarter of crypto/rc4's, and
// never allocates after Init. In ModePerPacket it also keeps a copy of the
// keyed state so that each packet restarts with a 258-byte copy instead of a
// key schedule. A Cipher is not safe for concurrent use; callers must process
// one direction's payloads in sequence order (the receive side after
// reordering), since RC4 is a stream.
type Cipher struct {
	rc4   RC4
	fresh *RC4 // keyed state, ModePerPacket only
	mode  Mode
}

// NewCipher returns a Cipher keyed with key in the given mode.
func NewCipher(key []byte, mode Mode) (*Cipher, error) {
	c := new(Cipher)
	if err := c.Init(key, mode); err != nil {
		return nil, err
	}
	return c, nil
}

// Init (re)keys c in place, for ciphers embedded in a connection struct and
// for the switch from DefaultKey to the session key after a secure CONNECT.
func (c *Cipher) Init(key []byte, mode Mode) error {
	if mode != ModeStream && mode != ModePerPacket {
		return fmt.Errorf("rc4 cipher: unknown %v", mode)
	}
	if err := c.rc4.Reset(key); err != nil {
		return err
	}
	c.mode = mode
	if mode == ModePerPacket {
		if c.fresh == nil {
			c.fresh = new(RC4)
		}
		*c.fresh = c.rc4
	} else {
		c.fresh = nil
	}
	return nil
}

// Mode reports the mode c was keyed with.
func (c *Cipher) Mode() Mode { return c.mode }

// XORPacket encrypts or decrypts one packet payload from src into dst (which
// may be src itself). In ModeStream the keystream continues from the previous
// payload; in ModePerPacket it restarts from the keyed state.
func (c *Cipher) XORPacket(dst, src []byte) {
	if c.mode == ModePerPacket {
		c.rc4 = *c.fresh
	}
	c.rc4.XORKeyStream(dst, src)
}

// ModifyKey derives in place the key of the next reliable substream from the
// key of the previous one, as modify_key in "Details on substreams and
// unreliable packets" (NintendoClients wiki "PRUDP Protocol"): only the first half changes,
// key[i] += len(key)/2 + 1 - i.
func ModifyKey(key []byte) {
	add := len(key)/2 + 1
	for i := range len(key) / 2 {
		key[i] = byte(int(key[i]) + add - i)
	}
}

// SubstreamKey returns a new slice holding the RC4 key of reliable substream
// id: the session key for substream 0, and ModifyKey applied id times after
// that. sessionKey is not modified.
func SubstreamKey(sessionKey []byte, id uint8) []byte {
	key := append([]byte(nil), sessionKey...)
	for range id {
		ModifyKey(key)
	}
	return key
}

// Salts of make_unreliable_key in NintendoClients wiki "PRUDP Protocol".
var (
	unreliableSalt1 = [8]byte{0x18, 0xd8, 0x23, 0x34, 0x37, 0xe4, 0xe3, 0xfe}
	unreliableSalt2 = [8]byte{0x23, 0x3e, 0x60, 0x01, 0x23, 0xcd, 0xab, 0x80}
)

// UnreliableKeys holds the 32-byte base key from which every unreliable DATA
// packet's own RC4 key is made. Computing it once per connection leaves two
// byte additions per packet.
type UnreliableKeys struct {
	base [32]byte
}

// NewUnreliableKeys computes the base key of make_unreliable_key
// (NintendoClients wiki "PRUDP Protocol"): MD5(sessionKey || 18d8233437e4e3fe) followed by
// MD5(sessionKey || 233e600123cdab80).
func NewUnreliableKeys(sessionKey []byte) UnreliableKeys {
	var u UnreliableKeys
	var stack [64]byte
	buf := stack[:0]
	if len(sessionKey)+8 > len(stack) {
		buf = make([]byte, 0, len(sessionKey)+8)
	}
	buf = append(append(buf, sessionKey...), unreliableSalt1[:]...)
	p1 := md5.Sum(buf)
	buf = append(buf[:len(sessionKey)], unreliableSalt2[:]...)
	p2 := md5.Sum(buf)
	copy(u.base[:16], p1[:])
	copy(u.base[16:], p2[:])
	return u
}

// Key returns the RC4 key of the unreliable packet with sequence id seq and
// session id sessionID: the base key with seq added to bytes 0 and 1 (low,
// high) and sessionID added to byte 31, each modulo 256.
func (u *UnreliableKeys) Key(seq uint16, sessionID uint8) [32]byte {
	k := u.base
	k[0] += uint8(seq)
	k[1] += uint8(seq >> 8)
	k[31] += sessionID
	return k
}

// XORPacket encrypts or decrypts one unreliable payload with a fresh RC4
// state under Key(seq, sessionID). It does not allocate.
func (u *UnreliableKeys) XORPacket(dst, src []byte, seq uint16, sessionID uint8) {
	k := u.Key(seq, sessionID)
	var c RC4
	_ = c.Reset(k[:]) // 32 bytes: always a valid length
	c.XORKeyStream(dst, src)
}

// UnreliableKey implements make_unreliable_key of "Details on substreams and
// unreliable packets" in NintendoClients wiki "PRUDP Protocol": the RC4 key of one unreliable
// DATA packet. Connections should keep an UnreliableKeys instead, which does
// the two MD5s once.
func UnreliableKey(sessionKey []byte, seq uint16, sessionID uint8) [32]byte {
	u := NewUnreliableKeys(sessionKey)
	return u.Key(seq, sessionID)
}
