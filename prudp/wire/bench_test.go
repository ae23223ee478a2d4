package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

var (
	benchSessionKey = bytes.Repeat([]byte{0x5c}, 32)
	benchConnSig    = bytes.Repeat([]byte{0xc5}, 16)
)

func benchV1Data() (*V1, Packet, []byte) {
	d := NewV1("3d37fbdb")
	p := Packet{Type: TypeData, Flags: FlagReliable | FlagNeedAck | FlagHasSize,
		Src: VPort{StreamRVSecure, 15}, Dst: VPort{StreamRVSecure, 1}, SessionID: 0x42,
		Seq: 1000, Payload: bytes.Repeat([]byte{0xa7}, 1024)}
	enc, _ := d.Append(nil, &p)
	_ = d.SignPacket(enc, benchSessionKey, benchConnSig)
	return d, p, enc
}

func benchV0Data() (*V0, Packet, []byte) {
	d := NewV0("ridfebb9", ModeGames)
	p := Packet{Type: TypeData, Flags: FlagReliable | FlagNeedAck,
		Src: VPort{StreamRVSecure, 15}, Dst: VPort{StreamRVSecure, 1}, SessionID: 0x42,
		Seq: 1000, Payload: bytes.Repeat([]byte{0xa7}, 1024)}
	p.SetSignature32(d.PacketSignature(&p, benchSessionKey[:16], 0))
	enc, _ := d.Append(nil, &p)
	return d, p, enc
}

// v1ParseVerify is the receive path: parse and check the signature.
func v1ParseVerify(d *V1, enc []byte) bool {
	p, n, err := d.Parse(enc)
	if err != nil || p.Type != TypeData {
		return false
	}
	ok, err := d.VerifyPacket(enc[:n], benchSessionKey, benchConnSig)
	return ok && err == nil
}

// v1AppendSign is the send path: encode into a reused buffer and sign.
func v1AppendSign(d *V1, p *Packet, buf []byte) []byte {
	buf, _ = d.Append(buf[:0], p)
	_ = d.SignPacket(buf, benchSessionKey, benchConnSig)
	return buf
}

func v0ParseVerify(d *V0, enc []byte) bool {
	p, _, err := d.Parse(enc) // verifies the checksum
	return err == nil && d.VerifySignature(&p, benchSessionKey[:16], 0)
}

func v0AppendSign(d *V0, p *Packet, buf []byte) []byte {
	p.SetSignature32(d.PacketSignature(p, benchSessionKey[:16], 0))
	buf, _ = d.Append(buf[:0], p)
	return buf
}

func BenchmarkV1ParseVerify1K(b *testing.B) {
	d, _, enc := benchV1Data()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if !v1ParseVerify(d, enc) {
			b.Fatal("verify failed")
		}
	}
}

func BenchmarkV1AppendSign1K(b *testing.B) {
	d, p, enc := benchV1Data()
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v1AppendSign(d, &p, buf)
	}
}

func BenchmarkV1Parse1K(b *testing.B) {
	d, _, enc := benchV1Data()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Parse(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkV1Append1K(b *testing.B) {
	d, p, enc := benchV1Data()
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = d.Append(buf[:0], &p)
	}
}

func BenchmarkV0ParseVerify1K(b *testing.B) {
	d, _, enc := benchV0Data()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if !v0ParseVerify(d, enc) {
			b.Fatal("verify failed")
		}
	}
}

func BenchmarkV0AppendSign1K(b *testing.B) {
	d, p, enc := benchV0Data()
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		buf = v0AppendSign(d, &p, buf)
	}
}

func BenchmarkQuazalParse(b *testing.B) {
	d := NewQuazal("8dtRv2oj", QuazalOptions{})
	enc := testutil.Unhex(b, "3f31311f7856341201000100267f5e")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := d.Parse(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestZeroAllocs holds the promise of the package doc: parse, verify, append into a reused
// buffer and sign allocate nothing. (Skipped under -race: sync.Pool drops items at random
// there.)
func TestZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	d1, p1, enc1 := benchV1Data()
	d0, p0, enc0 := benchV0Data()
	buf := make([]byte, 0, 2048)
	lite := NewLite("k")
	tests := []struct {
		name string
		f    func()
	}{
		{"v1 parse+verify", func() {
			if !v1ParseVerify(d1, enc1) {
				t.Fatal("verify failed")
			}
		}},
		{"v1 append+sign", func() { buf = v1AppendSign(d1, &p1, buf) }},
		{"v0 parse+verify", func() {
			if !v0ParseVerify(d0, enc0) {
				t.Fatal("verify failed")
			}
		}},
		{"v0 append+sign", func() { buf = v0AppendSign(d0, &p0, buf) }},
		{"lite signature", func() { _ = lite.Signature([16]byte{}) }},
		{"aggregate ack", func() {
			buf, _ = AppendAggregateAck(buf[:0], 0, 5, []uint16{7, 9})
			a, _ := ParseAggregateAck(buf)
			_ = a.At(1)
		}},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(200, tt.f); n != 0 {
			t.Errorf("%s: %.1f allocations per run, want 0", tt.name, n)
		}
	}
}

// Baselines measured in the same run, so the figures in docs/performance.md are ratios:
// the bare HMAC-MD5 over the same bytes (the floor for parse+verify), and HMAC-MD5 with a
// fresh hmac.New per packet, which is what implementations that do not keep a hash state
// pay (nex-go's V1 signature code does this).
func BenchmarkBaselineHMACMD5Reused1K(b *testing.B) {
	_, _, enc := benchV1Data()
	k := md5.Sum([]byte("3d37fbdb"))
	h := hmac.New(md5.New, k[:])
	var out [16]byte
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		h.Reset()
		h.Write(enc[6:14])
		h.Write(benchSessionKey)
		h.Write(benchConnSig)
		h.Write(enc[30:])
		h.Sum(out[:0])
	}
}

func BenchmarkBaselineHMACMD5New1K(b *testing.B) {
	_, _, enc := benchV1Data()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		k := md5.Sum([]byte("3d37fbdb"))
		h := hmac.New(md5.New, k[:])
		h.Write(enc[6:14])
		h.Write(benchSessionKey)
		h.Write(benchConnSig)
		h.Write(enc[30:])
		_ = h.Sum(nil)
	}
}
