package crypt

import (
	"bytes"
	"crypto/rc4"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestRC4MatchesStdlib checks the value-type RC4 against crypto/rc4 on
// random keys of every legal length and on split writes.
func TestRC4MatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	msg := make([]byte, 1500)
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	for klen := 1; klen <= 256; klen++ {
		key := make([]byte, klen)
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		ref, err := rc4.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(msg))
		ref.XORKeyStream(want, msg)

		var c RC4
		if err := c.Reset(key); err != nil {
			t.Fatal(err)
		}
		got := append([]byte(nil), msg...)
		// Uneven chunks, in place, to exercise state carry-over.
		split := 1 + rng.IntN(len(got)-1)
		c.XORKeyStream(got[:split], got[:split])
		c.XORKeyStream(got[split:], got[split:])
		if !bytes.Equal(got, want) {
			t.Fatalf("key length %d: keystream differs from crypto/rc4", klen)
		}
	}
}

// TestRC4ChunkSizes crosses the four-byte unrolled loop and its tail with
// every chunk length from 0 to 9, in place and into another buffer.
func TestRC4ChunkSizes(t *testing.T) {
	key := []byte("chunked key")
	msg := make([]byte, 4096)
	for i := range msg {
		msg[i] = byte(i * 13)
	}
	ref, _ := rc4.NewCipher(key)
	want := make([]byte, len(msg))
	ref.XORKeyStream(want, msg)
	for _, inPlace := range []bool{true, false} {
		var c RC4
		if err := c.Reset(key); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if inPlace {
			copy(got, msg)
		}
		for off, n := 0, 0; off < len(msg); n = (n + 1) % 10 {
			k := min(n, len(msg)-off)
			if inPlace {
				c.XORKeyStream(got[off:off+k], got[off:off+k])
			} else {
				c.XORKeyStream(got[off:off+k], msg[off:off+k])
			}
			off += k
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("in place %v: keystream differs from crypto/rc4", inPlace)
		}
	}
}

// TestRC4KnownAnswer is the first test vector of RFC 6229 (key 0102030405).
func TestRC4KnownAnswer(t *testing.T) {
	var c RC4
	if err := c.Reset([]byte{1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 16)
	c.XORKeyStream(out, out)
	want := []byte{0xb2, 0x39, 0x63, 0x05, 0xf0, 0x3d, 0xc0, 0x27, 0xcc, 0xc3, 0x52, 0x4a, 0x0a, 0x11, 0x18, 0xa8}
	if !bytes.Equal(out, want) {
		t.Fatalf("keystream % x, want % x", out, want)
	}
}

func TestRC4KeySize(t *testing.T) {
	var c RC4
	for _, n := range []int{0, 257} {
		if err := c.Reset(make([]byte, n)); !errors.Is(err, ErrKeySize) {
			t.Errorf("key length %d: err = %v, want ErrKeySize", n, err)
		}
	}
}

func TestRC4ResetNoAlloc(t *testing.T) {
	var c RC4
	key := []byte(DefaultKey)
	buf := make([]byte, 1024)
	n := testing.AllocsPerRun(100, func() {
		c.Reset(key)
		c.XORKeyStream(buf, buf)
	})
	if n != 0 {
		t.Fatalf("Reset+XORKeyStream allocates %v times", n)
	}
}

func BenchmarkRC4Stream1K(b *testing.B) {
	var c RC4
	c.Reset(make([]byte, 32))
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		c.XORKeyStream(buf, buf)
	}
}

func BenchmarkStdlibRC4Stream1K(b *testing.B) {
	c, _ := rc4.NewCipher(make([]byte, 32))
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		c.XORKeyStream(buf, buf)
	}
}

// BenchmarkRC4RekeyPacket1K is the Quazal per-packet case: key schedule plus
// one 1 KiB payload.
func BenchmarkRC4RekeyPacket1K(b *testing.B) {
	var c RC4
	key := []byte(DefaultKey)
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		c.Reset(key)
		c.XORKeyStream(buf, buf)
	}
}
