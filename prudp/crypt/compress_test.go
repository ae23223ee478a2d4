package crypt

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

func zlibBytes(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(p)
	w.Close()
	return b.Bytes()
}

func TestCompressRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := map[string][]byte{
		"empty":     {},
		"one":       {0x42},
		"text":      []byte("RMC call RMC call RMC call RMC call RMC call"),
		"zeros 64k": make([]byte, 65536),
		"random":    random,
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			prefix := []byte{0xAA, 0xBB}
			enc := Compress(append([]byte(nil), prefix...), src)
			if !bytes.Equal(enc[:2], prefix) {
				t.Fatalf("Compress clobbered dst prefix: % x", enc[:2])
			}
			enc = enc[2:]
			if len(src) == 0 {
				if !bytes.Equal(enc, []byte{0}) {
					t.Fatalf("empty payload encoded as % x, want 00", enc)
				}
			} else {
				c := len(enc) - 1
				want := min(max(len(src)/c+1, 1), 255)
				if int(enc[0]) != want {
					t.Fatalf("ratio byte = %d, want %d/%d + 1 = %d", enc[0], len(src), c, want)
				}
			}
			got, err := Decompress(enc, len(src))
			if err != nil {
				t.Fatalf("Decompress: %v", err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("round trip mismatch: got %d bytes, want %d", len(got), len(src))
			}
			if len(src) > 0 {
				if _, err := Decompress(enc, len(src)-1); !errors.Is(err, ErrTooLarge) {
					t.Fatalf("limit len-1: err = %v, want ErrTooLarge", err)
				}
			}
		})
	}
}

func TestDecompressAnyRatio(t *testing.T) {
	src := bytes.Repeat([]byte("abcd"), 100)
	z := zlibBytes(t, src)
	// ceil(n/c), n/c+1, and nonsense values must all be accepted.
	for _, ratio := range []byte{1, byte((len(src) + len(z) - 1) / len(z)), byte(len(src)/len(z) + 1), 200, 255} {
		got, err := Decompress(append([]byte{ratio}, z...), 1<<20)
		if err != nil {
			t.Fatalf("ratio %d: %v", ratio, err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("ratio %d: wrong output", ratio)
		}
	}
}

func TestDecompressUncompressed(t *testing.T) {
	in := []byte{0, 1, 2, 3}
	got, err := Decompress(in, 3)
	if err != nil || !bytes.Equal(got, []byte{1, 2, 3}) {
		t.Fatalf("Decompress = % x, %v", got, err)
	}
	if _, err := Decompress(in, 2); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestDecompressErrors(t *testing.T) {
	good := append([]byte{4}, zlibBytes(t, bytes.Repeat([]byte{7}, 100))...)
	tests := []struct {
		name  string
		in    []byte
		limit int
		want  error
	}{
		{"nil", nil, 100, ErrEmpty},
		{"not zlib", []byte{3, 1, 2, 3, 4}, 100, ErrCorrupt},
		{"trailing bytes", append(append([]byte(nil), good...), 0x99), 100, ErrCorrupt},
		{"bad checksum", func() []byte { b := append([]byte(nil), good...); b[len(b)-1] ^= 1; return b }(), 100, ErrCorrupt},
		{"over limit", good, 99, ErrTooLarge},
		{"negative limit", good, -5, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decompress(tt.in, tt.limit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	// Every strict prefix of a compressed payload is an error.
	for i := 1; i < len(good); i++ {
		if _, err := Decompress(good[:i], 100); err == nil {
			t.Fatalf("prefix of %d bytes accepted", i)
		}
	}
}

func TestDecompressBomb(t *testing.T) {
	// 4 MiB of zeros compresses to ~4 KiB; a 64 KiB limit must stop it early.
	bomb := Compress(nil, make([]byte, 4<<20))
	if _, err := Decompress(bomb, 64<<10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func FuzzDecompress(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3})
	f.Add(Compress(nil, []byte("hello hello hello hello")))
	f.Add(Compress(nil, make([]byte, 1000)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 1 << 16
		if out, err := DecompressDeclared(b, limit); err == nil && len(b) > 0 && b[0] > 0 && b[0] < 255 && len(out) > int(b[0])*(len(b)-1) {
			t.Fatalf("DecompressDeclared: %d bytes out of %d with ratio byte %d", len(out), len(b)-1, b[0])
		}
		out, err := Decompress(b, limit)
		if err != nil {
			return
		}
		if len(out) > limit {
			t.Fatalf("output %d bytes over limit", len(out))
		}
		back, err := Decompress(Compress(nil, out), limit)
		if err != nil {
			t.Fatalf("recompress: %v", err)
		}
		if !bytes.Equal(back, out) {
			t.Fatal("recompress round trip mismatch")
		}
	})
}

// TestDecompressGROVector inflates the DO Join Request of the Ghost Recon
// Online wiki (testdata/prudp/vectors.json "quazal-gro-do-join-request"):
// ratio byte 0x02, then zlib inflating to 39 bytes.
func TestDecompressGROVector(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/prudp/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Packets []struct {
			Name string `json:"name"`
			Hex  string `json:"hex"`
		} `json:"packets"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var pkt []byte
	for _, p := range v.Packets {
		if p.Name == "quazal-gro-do-join-request" {
			pkt = testutil.Unhex(t, p.Hex)
		}
	}
	// Quazal V0 DATA header: 10 bytes, fragment id, LE16 size; 1-byte checksum last.
	const payloadOff = 13
	if len(pkt) < payloadOff+1 {
		t.Fatalf("vector missing or short: %d bytes", len(pkt))
	}
	size := int(binary.LittleEndian.Uint16(pkt[11:13]))
	if payloadOff+size+1 != len(pkt) {
		t.Fatalf("size field %d does not match packet length %d", size, len(pkt))
	}
	payload := pkt[payloadOff : payloadOff+size]
	if payload[0] != 2 {
		t.Fatalf("ratio byte %d, want 2", payload[0])
	}
	out, err := Decompress(payload, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 39 {
		t.Fatalf("inflated to %d bytes, want 39", len(out))
	}
	if _, err := Decompress(payload, 38); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit 38: err = %v, want ErrTooLarge", err)
	}
}

func BenchmarkDecompress1K(b *testing.B) {
	src := bytes.Repeat([]byte("RMC response payload "), 50)[:1024]
	enc := Compress(nil, src)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decompress(enc, 2048); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecompressConcurrent checks that pooled inflaters do not leak state
// between callers, including after an error.
func TestDecompressConcurrent(t *testing.T) {
	inputs := make([][]byte, 8)
	encoded := make([][]byte, 8)
	for i := range inputs {
		inputs[i] = bytes.Repeat([]byte{byte('a' + i)}, 100*(i+1))
		encoded[i] = Compress(nil, inputs[i])
	}
	corrupt := append([]byte(nil), encoded[0]...)
	corrupt[len(corrupt)-1] ^= 0xff
	errc := make(chan error, len(inputs))
	for i := range inputs {
		go func() {
			for range 50 {
				if _, err := Decompress(corrupt, 1<<16); err == nil {
					errc <- errors.New("corrupt payload accepted")
					return
				}
				got, err := Decompress(encoded[i], 1<<16)
				if err != nil {
					errc <- err
					return
				}
				if !bytes.Equal(got, inputs[i]) {
					errc <- errors.New("wrong output from pooled inflater")
					return
				}
			}
			errc <- nil
		}()
	}
	for range inputs {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// TestDecompressDeclaredBomb: the zlib bomb of issue 18 (about 350 bytes
// inflating to 332,800, which the engine's old per-packet limit of 256
// fragments let through) stops at the caller's limit with the saturated
// ratio byte 255, and at ratio times its size (ErrRatio) with any lower one.
func TestDecompressDeclaredBomb(t *testing.T) {
	bomb := Compress(nil, make([]byte, 332800))
	if len(bomb) > 400 || bomb[0] != 255 {
		t.Fatalf("bomb is %d bytes with ratio byte %d", len(bomb), bomb[0])
	}
	if _, err := DecompressDeclared(bomb, 4096); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ratio byte 255, limit 4096: err = %v, want ErrTooLarge", err)
	}
	if out, err := DecompressDeclared(bomb, 1<<20); err != nil || len(out) != 332800 {
		t.Fatalf("ratio byte 255 bounds nothing: %d bytes, %v", len(out), err)
	}
	for _, ratio := range []byte{1, 10, 254} {
		bomb[0] = ratio
		if _, err := DecompressDeclared(bomb, 1<<20); !errors.Is(err, ErrRatio) {
			t.Fatalf("ratio byte %d: err = %v, want ErrRatio", ratio, err)
		}
		if _, err := Decompress(bomb, 1<<20); err != nil {
			t.Fatalf("Decompress accepts any ratio byte, got %v", err)
		}
	}
	// A lying ratio byte on an ordinary stream is refused too.
	liar := Compress(nil, bytes.Repeat([]byte("abcdefgh"), 100))
	liar[0] = 1
	if _, err := DecompressDeclared(liar, 1<<20); !errors.Is(err, ErrRatio) {
		t.Fatalf("ratio byte 1 on a %d:1 stream: err = %v, want ErrRatio", 800/(len(liar)-1), err)
	}
}

// TestDecompressDeclaredHonest: payloads written with either rounding of
// the ratio byte (n/c + 1 as Compress writes, ceil(n/c) as other servers
// do) always pass.
func TestDecompressDeclaredHonest(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 1))
	for n := 1; n <= 8192; n += 37 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.IntN(1 + n%7)) // from incompressible to very compressible
		}
		b := Compress(nil, src)
		c := len(b) - 1
		for _, ratio := range []int{n/c + 1, (n + c - 1) / c} {
			b[0] = byte(min(max(ratio, 1), 255)) // 255: saturated, as Compress writes it
			out, err := DecompressDeclared(b, 1<<20)
			if err != nil || !bytes.Equal(out, src) {
				t.Fatalf("%d bytes, ratio byte %d: %v", n, b[0], err)
			}
		}
	}
}
