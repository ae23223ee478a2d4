package pia

import (
	"testing"
)

// kibPacket returns a codec and a packet carrying one 1 KiB message.
func kibPacket(t testing.TB, v Version) (*Codec, *Packet) {
	n := NetworkLDN
	c := testCodec(t, v, n, testKey)
	p := samplePacket(c, true)
	p.Messages = p.Messages[:1]
	p.Messages[0].Payload = make([]byte, 1024)
	return c, &p
}

var benchVersions = []struct {
	name string
	v    Version
}{
	{"5.6-ecb-hmac", Version{5, 6}},
	{"5.11-gcm16", Version{5, 11}},
	{"5.27-gcm8", Version{5, 27}},
	{"6.16-gcm8", Version{6, 16}},
}

func BenchmarkSeal1KiB(b *testing.B) {
	for _, bv := range benchVersions {
		b.Run(bv.name, func(b *testing.B) {
			c, p := kibPacket(b, bv.v)
			buf, err := c.Seal(nil, p, testSource)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf, err = c.Seal(buf[:0], p, testSource)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpen1KiB(b *testing.B) {
	for _, bv := range benchVersions {
		b.Run(bv.name, func(b *testing.B) {
			c, p := kibPacket(b, bv.v)
			raw, err := c.Seal(nil, p, testSource)
			if err != nil {
				b.Fatal(err)
			}
			var q Packet
			if err := c.Open(&q, raw, testSource); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Open(&q, raw, testSource); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSealOpenZeroAlloc holds the promise that a warm codec with reused buffers
// seals and opens without allocating.
func TestSealOpenZeroAlloc(t *testing.T) {
	for _, bv := range benchVersions {
		c, p := kibPacket(t, bv.v)
		buf, err := c.Seal(nil, p, testSource)
		if err != nil {
			t.Fatal(err)
		}
		raw := append([]byte(nil), buf...)
		var q Packet
		if err := c.Open(&q, raw, testSource); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(50, func() { buf, _ = c.Seal(buf[:0], p, testSource) }); a != 0 {
			t.Errorf("%s: Seal allocates %.1f times", bv.name, a)
		}
		if a := testing.AllocsPerRun(50, func() { _ = c.Open(&q, raw, testSource) }); a != 0 {
			t.Errorf("%s: Open allocates %.1f times", bv.name, a)
		}
	}
}
