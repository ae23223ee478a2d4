package crypt

import (
	"errors"
	"fmt"
)

// ErrKeySize reports an RC4 key outside 1..256 bytes.
var ErrKeySize = errors.New("rc4 key must be 1 to 256 bytes")

// RC4 is the RC4 stream cipher as a plain value: unlike crypto/rc4, whose
// NewCipher allocates, an RC4 can live inside a connection struct and be
// re-keyed with Reset as often as a dialect demands (Quazal re-keys for every
// packet, unreliable NEX packets use one key per packet) without touching the
// heap. Its output is identical to crypto/rc4's (tested on random keys).
//
// The zero value has no key and produces a keystream from the all-identity
// state; always Reset before use. An RC4 is not safe for concurrent use.
type RC4 struct {
	s    [256]uint8
	i, j uint8
}

// Reset keys c with key (the RC4 key schedule), discarding any previous
// state. It returns ErrKeySize, and leaves c unchanged, for an empty key or
// one longer than 256 bytes.
func (c *RC4) Reset(key []byte) error {
	k := len(key)
	if k < 1 || k > 256 {
		return fmt.Errorf("rc4: %w (got %d)", ErrKeySize, k)
	}
	for i := range 256 {
		c.s[i] = uint8(i)
	}
	var j uint8
	for i := range 256 {
		j += c.s[i] + key[i%k]
		c.s[i], c.s[j] = c.s[j], c.s[i]
	}
	c.i, c.j = 0, 0
	return nil
}

// XORKeyStream sets dst to src XORed with the keystream. dst and src must
// overlap entirely or not at all; in-place (dst == src) is the usual use.
// It panics if dst is shorter than src, like cipher.Stream.
func (c *RC4) XORKeyStream(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)] // one bounds check; panics like crypto/rc4 when dst is short
	i, j := c.i, c.j
	s := &c.s
	// Four bytes per iteration: the loop overhead and the bounds checks of
	// the byte loop cost about a third of it (BenchmarkRC4Stream1K).
	n := len(src) &^ 3
	for k := 0; k < n; k += 4 {
		d, v := dst[k:k+4:k+4], src[k:k+4:k+4]
		i++
		x := s[i]
		j += x
		y := s[j]
		s[i], s[j] = y, x
		d[0] = v[0] ^ s[x+y]
		i++
		x = s[i]
		j += x
		y = s[j]
		s[i], s[j] = y, x
		d[1] = v[1] ^ s[x+y]
		i++
		x = s[i]
		j += x
		y = s[j]
		s[i], s[j] = y, x
		d[2] = v[2] ^ s[x+y]
		i++
		x = s[i]
		j += x
		y = s[j]
		s[i], s[j] = y, x
		d[3] = v[3] ^ s[x+y]
	}
	for k := n; k < len(src); k++ {
		i++
		x := s[i]
		j += x
		y := s[j]
		s[i], s[j] = y, x
		dst[k] = src[k] ^ s[x+y]
	}
	c.i, c.j = i, j
}
