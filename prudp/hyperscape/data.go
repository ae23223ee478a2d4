package hyperscape

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/prudp/crypt"
)

// IVSize is the size of the random IV in front of every DATA payload.
const IVSize = aes.BlockSize

// SeqSuffixSize is the size of the sequence id appended to every fragment.
const SeqSuffixSize = 2

// DataCipher applies the DATA transform of the Hyperscape "PRUDP" wiki page
// ("Packet: DATA", "Compression", "Encryption") under one connection's
// shared key: fragment || LE16(sequence id), then the compression ratio byte
// (0 = not compressed) and zlib, then AES-128-CBC with PKCS#7 padding and a
// fresh random IV in front.
//
// Seal and Open each keep one CBC state that they re-IV per packet, so
// neither allocates on the uncompressed path. A DataCipher is not safe for
// concurrent use except that one goroutine may Seal while another Opens.
type DataCipher struct {
	enc, dec cipher.BlockMode
	setEnc   func([]byte)
	setDec   func([]byte)
}

type ivSetter interface{ SetIV([]byte) }

// randRead fills IVs; tests swap it for a deterministic source. crypto/rand
// never fails since Go 1.24.
var randRead = func(b []byte) { rand.Read(b) }

// NewDataCipher returns the DATA transform keyed with key.
func NewDataCipher(key SharedKey) (*DataCipher, error) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	var zero [IVSize]byte
	c := &DataCipher{
		enc: cipher.NewCBCEncrypter(block, zero[:]),
		dec: cipher.NewCBCDecrypter(block, zero[:]),
	}
	// The standard library's CBC modes can be re-IVed; if some future one
	// cannot, fall back to a new mode per packet.
	if s, ok := c.enc.(ivSetter); ok {
		c.setEnc = s.SetIV
	} else {
		c.setEnc = func(iv []byte) { c.enc = cipher.NewCBCEncrypter(block, iv) }
	}
	if s, ok := c.dec.(ivSetter); ok {
		c.setDec = s.SetIV
	} else {
		c.setDec = func(iv []byte) { c.dec = cipher.NewCBCDecrypter(block, iv) }
	}
	return c, nil
}

// Seal appends to dst the DATA payload (after the fragment id) carrying
// fragment as packet seq. With compress set the fragment and suffix are
// zlib-compressed behind a ratio byte of ceil(n/c) (the spec's captures show
// 0x02; any non-zero value means compressed), unless that would not make
// them smaller, in which case they are sent with ratio byte 0.
func (c *DataCipher) Seal(dst, fragment []byte, seq uint16, compress bool) []byte {
	start := len(dst)
	var zero [IVSize]byte
	dst = append(dst, zero[:]...)
	body := len(dst)
	randRead(dst[start:body])
	packed := false
	if compress {
		plain := make([]byte, 0, len(fragment)+SeqSuffixSize)
		plain = binary.LittleEndian.AppendUint16(append(plain, fragment...), seq)
		z := crypt.Compress(nil, plain)
		if len(z) < 1+len(plain) {
			dst = append(dst, z...)
			packed = true
		}
	}
	if !packed {
		dst = append(dst, 0)
		dst = append(dst, fragment...)
		dst = binary.LittleEndian.AppendUint16(dst, seq)
	}
	pad := aes.BlockSize - (len(dst)-body)%aes.BlockSize
	for range pad {
		dst = append(dst, byte(pad))
	}
	c.setEnc(dst[start:body])
	c.enc.CryptBlocks(dst[body:], dst[body:])
	return dst
}

// Open reverses Seal for the packet with sequence id seq and appends the
// fragment to dst. limit bounds the fragment's size after decompression.
// Errors: ErrBadCiphertext (not IV + whole blocks), ErrBadPadding (checked in
// constant time), ErrBadPayload (zlib stream corrupt or over limit, or too
// short for the suffix; wraps the crypt error), ErrBadSequence.
func (c *DataCipher) Open(dst, payload []byte, seq uint16, limit int) ([]byte, error) {
	n := len(payload) - IVSize
	if n < aes.BlockSize || n%aes.BlockSize != 0 {
		return dst, fmt.Errorf("hyperscape DATA: %w: %d bytes (want 16-byte IV + a positive multiple of 16)", ErrBadCiphertext, len(payload))
	}
	start := len(dst)
	dst = append(dst, payload[IVSize:]...)
	plain := dst[start:]
	c.setDec(payload[:IVSize])
	c.dec.CryptBlocks(plain, plain)
	pad, ok := checkPadding(plain)
	if !ok {
		return dst[:start], fmt.Errorf("hyperscape DATA: %w (wrong key, or corrupted IV or ciphertext)", ErrBadPadding)
	}
	plain = plain[:len(plain)-pad]
	body, err := crypt.Decompress(plain, limit+SeqSuffixSize)
	if err != nil {
		if errors.Is(err, crypt.ErrTooLarge) {
			return dst[:start], fmt.Errorf("hyperscape DATA: %w: fragment over limit of %d bytes: %w", ErrBadPayload, limit, err)
		}
		return dst[:start], fmt.Errorf("hyperscape DATA: %w: %w", ErrBadPayload, err)
	}
	if len(body) < SeqSuffixSize {
		return dst[:start], fmt.Errorf("hyperscape DATA: %w: %d bytes after decompression, the sequence id suffix alone is %d", ErrBadPayload, len(body), SeqSuffixSize)
	}
	frag := body[:len(body)-SeqSuffixSize]
	if got := binary.LittleEndian.Uint16(body[len(frag):]); got != seq {
		return dst[:start], fmt.Errorf("hyperscape DATA: %w: suffix says %d, packet is %d", ErrBadSequence, got, seq)
	}
	// frag aliases dst just past start (uncompressed) or is a new buffer that
	// may be longer than the ciphertext (compressed); append moves or grows.
	return append(dst[:start], frag...), nil
}

// checkPadding returns the PKCS#7 padding length of b (a non-empty multiple
// of the block size) and whether it is valid, reading the last block in full
// whatever the padding byte says.
func checkPadding(b []byte) (int, bool) {
	last := b[len(b)-aes.BlockSize:]
	pad := int(last[aes.BlockSize-1])
	good := subtle.ConstantTimeLessOrEq(1, pad) & subtle.ConstantTimeLessOrEq(pad, aes.BlockSize)
	for i := range aes.BlockSize {
		// Byte last[15-i] belongs to the padding when i < pad.
		inPad := subtle.ConstantTimeLessOrEq(i+1, pad)
		eq := subtle.ConstantTimeByteEq(last[aes.BlockSize-1-i], byte(pad))
		good &= subtle.ConstantTimeSelect(inPad, eq, 1)
	}
	return pad, good == 1
}
