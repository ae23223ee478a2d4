package pia

import (
	"crypto/aes"
	"crypto/cipher"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
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
			cpu := testutil.ProcessCPU()
			for b.Loop() {
				buf, err = c.Seal(buf[:0], p, testSource)
				if err != nil {
					b.Fatal(err)
				}
			}
			reportPerCPU(b, cpu, len(buf))
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
			cpu := testutil.ProcessCPU()
			for b.Loop() {
				if err := c.Open(&q, raw, testSource); err != nil {
					b.Fatal(err)
				}
			}
			reportPerCPU(b, cpu, len(raw))
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

// BenchmarkStdlibGCM1KiB is the reference for the Pia figures: crypto/cipher's
// AES-128-GCM (16-byte tag) sealing and opening 1 KiB in place, measured in the
// same run.
func BenchmarkStdlibGCM1KiB(b *testing.B) {
	blk, _ := aes.NewCipher(testKey)
	g, _ := cipher.NewGCM(blk)
	nonce := make([]byte, 12)
	plain := make([]byte, 1024)
	buf := g.Seal(nil, nonce, plain, nil)
	b.Run("seal", func(b *testing.B) {
		b.SetBytes(1024)
		b.ReportAllocs()
		out := make([]byte, 0, len(buf))
		cpu := testutil.ProcessCPU()
		for b.Loop() {
			out = g.Seal(out[:0], nonce, plain, nil)
		}
		reportPerCPU(b, cpu, 1024)
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(1024)
		b.ReportAllocs()
		out := make([]byte, 0, len(buf))
		var err error
		cpu := testutil.ProcessCPU()
		for b.Loop() {
			if out, err = g.Open(out[:0], nonce, buf, nil); err != nil {
				b.Fatal(err)
			}
		}
		reportPerCPU(b, cpu, 1024)
	})
}

// reportPerCPU adds "MB/cpu-s": bytes processed per second of process CPU time
// (user+system, all threads), a figure that other load on the machine disturbs
// far less than wall-clock MB/s.
func reportPerCPU(b *testing.B, start time.Duration, size int) {
	used := testutil.ProcessCPU() - start
	if used <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(size)*float64(b.N)/used.Seconds()/1e6, "MB/cpu-s")
}
