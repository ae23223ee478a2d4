package lite

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/gamewire/gamewire/prudp/wire"
)

// litePackets encodes one packet of every kind a Lite connection sends, with
// the codec of prudp/wire (there are no published Lite captures).
func litePackets(t testing.TB) [][]byte {
	t.Helper()
	d := wire.NewLite("6f599f81")
	src := wire.VPort{Stream: 10, Port: 0x1f}
	dst := wire.VPort{Stream: 10, Port: 2}
	big := bytes.Repeat([]byte{0xab}, 1300)
	pkts := []wire.Packet{
		{Src: src, Dst: dst, Type: wire.TypeSyn, Flags: wire.FlagNeedAck, SupportedFunctions: 4},
		{Src: dst, Dst: src, Type: wire.TypeSyn, Flags: wire.FlagAck, SupportedFunctions: 4, ConnSignature: [16]byte{1, 2, 3}},
		{Src: src, Dst: dst, Type: wire.TypeConnect, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 1, SupportedFunctions: 4,
			LiteSignature: d.Signature([16]byte{1, 2, 3})},
		{Src: src, Dst: dst, Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 2, Payload: []byte("hello")},
		{Src: src, Dst: dst, Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 3, FragmentID: 1, Payload: big},
		{Src: dst, Dst: src, Type: wire.TypeData, Flags: wire.FlagAck | wire.FlagMultiAck, Payload: []byte{0, 1, 3, 0, 2, 0}},
		{Src: src, Dst: dst, Type: wire.TypePing, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 4},
		{Src: src, Dst: dst, Type: wire.TypeDisconnect},
	}
	var out [][]byte
	for i := range pkts {
		b, err := d.Append(nil, &pkts[i])
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		out = append(out, b)
	}
	return out
}

// chunkReader returns at most the next chunk size of data per Read, with
// sizes drawn from a seeded generator (1 byte up to max).
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *chunkReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+r.rng.IntN(r.max), len(b), len(r.data))
	copy(b, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func readAll(t testing.TB, r *Reader) ([][]byte, error) {
	var got [][]byte
	for {
		p, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, append([]byte(nil), p...))
	}
}

func TestPacketLen(t *testing.T) {
	for i, p := range litePackets(t) {
		for cut := range 4 {
			n, err := PacketLen(p[:cut])
			if err != nil || n != 0 {
				t.Errorf("packet %d, %d bytes: got %d, %v; want 0, nil (need more)", i, cut, n, err)
			}
		}
		n, err := PacketLen(p)
		if err != nil || n != len(p) {
			t.Errorf("packet %d: got %d, %v; want %d", i, n, err, len(p))
		}
	}
	if _, err := PacketLen([]byte{0xea, 0xd0}); !errors.Is(err, wire.ErrBadMagic) {
		t.Errorf("V1 magic: got %v, want ErrBadMagic", err)
	}
	if n, _ := PacketLen([]byte{0x80, 0xff, 0xff, 0xff}); n != MaxPacketSize {
		t.Errorf("largest header: got %d, want %d", n, MaxPacketSize)
	}
}

// TestReaderBoundariesAnywhere feeds the same stream in reads of every size
// from 1 byte to larger than several packets, so that packet boundaries fall
// everywhere in a read, and checks every packet comes out whole and in order.
func TestReaderBoundariesAnywhere(t *testing.T) {
	pkts := litePackets(t)
	var stream []byte
	for range 3 {
		for _, p := range pkts {
			stream = append(stream, p...)
		}
	}
	check := func(t *testing.T, r *Reader) {
		got, err := readAll(t, r)
		if err != io.EOF {
			t.Fatalf("end: got %v, want io.EOF", err)
		}
		if len(got) != 3*len(pkts) {
			t.Fatalf("got %d packets, want %d", len(got), 3*len(pkts))
		}
		for i, g := range got {
			if !bytes.Equal(g, pkts[i%len(pkts)]) {
				t.Fatalf("packet %d differs", i)
			}
		}
		if r.Offset() != int64(len(stream)) {
			t.Errorf("offset %d, want %d", r.Offset(), len(stream))
		}
	}
	t.Run("one byte at a time", func(t *testing.T) {
		check(t, NewReader(iotest.OneByteReader(bytes.NewReader(stream)), 0))
	})
	t.Run("all at once", func(t *testing.T) {
		check(t, NewReader(bytes.NewReader(stream), 0))
	})
	t.Run("half reads", func(t *testing.T) {
		check(t, NewReader(iotest.HalfReader(bytes.NewReader(stream)), 0))
	})
	for _, maxChunk := range []int{2, 7, 13, 100, 1500, 5000} {
		for seed := range uint64(5) {
			r := &chunkReader{data: stream, rng: rand.New(rand.NewPCG(seed, uint64(maxChunk))), max: maxChunk}
			check(t, NewReader(r, 0))
		}
	}
	t.Run("data with EOF", func(t *testing.T) {
		check(t, NewReader(iotest.DataErrReader(bytes.NewReader(stream)), 0))
	})
}

// TestReaderErrorsOnEOF cuts the stream inside every packet: the packets
// before the cut come out, then ErrTruncatedStream naming the offset.
func TestReaderErrorsOnEOF(t *testing.T) {
	pkts := litePackets(t)
	var stream []byte
	var ends []int
	for _, p := range pkts {
		stream = append(stream, p...)
		ends = append(ends, len(stream))
	}
	for cut := 1; cut < len(stream); cut++ {
		got, err := readAll(t, NewReader(iotest.HalfReader(bytes.NewReader(stream[:cut])), 0))
		whole := 0
		for _, e := range ends {
			if e <= cut {
				whole++
			}
		}
		if len(got) != whole {
			t.Fatalf("cut %d: %d packets, want %d", cut, len(got), whole)
		}
		atBoundary := whole > 0 && ends[whole-1] == cut
		if atBoundary && err != io.EOF {
			t.Fatalf("cut %d on a boundary: got %v, want io.EOF", cut, err)
		}
		if !atBoundary && !errors.Is(err, ErrTruncatedStream) {
			t.Fatalf("cut %d: got %v, want ErrTruncatedStream", cut, err)
		}
	}
}

func TestReaderRefuses(t *testing.T) {
	pkts := litePackets(t)
	tests := []struct {
		name   string
		stream []byte
		max    int
		want   error
		wantN  int
	}{
		{"bad magic first", []byte{0xea, 0xd0, 0, 0}, 0, wire.ErrBadMagic, 0},
		{"bad magic after a packet", append(append([]byte(nil), pkts[0]...), 0x00, 0x80), 0, wire.ErrBadMagic, 1},
		{"declared length over the limit", []byte{0x80, 0, 0x00, 0x10, 0xa1}, 4096, ErrPacketTooLarge, 0},
		{"1300-byte payload over a 1 KiB limit", pkts[4], 1024, ErrPacketTooLarge, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tc.stream), tc.max)
			got, err := readAll(t, r)
			if !errors.Is(err, tc.want) || len(got) != tc.wantN {
				t.Fatalf("got %d packets, %v; want %d, %v", len(got), err, tc.wantN, tc.want)
			}
			if _, again := r.Next(); again != err {
				t.Errorf("the error is not sticky: %v then %v", err, again)
			}
			if cap(r.buf) > max(tc.max, 4096) {
				t.Errorf("buffer grew to %d for a refused packet", cap(r.buf))
			}
		})
	}
}

// TestReaderLargePackets: a limit above 4 KiB lets the buffer grow to the
// largest packet Lite can describe, and no further.
func TestReaderLargePackets(t *testing.T) {
	d := wire.NewLite("")
	p := wire.Packet{Type: wire.TypeData, Flags: wire.FlagReliable, Payload: bytes.Repeat([]byte{7}, 0xffff)}
	b, err := d.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	stream := append(append([]byte(nil), b...), b...)
	got, err := readAll(t, NewReader(iotest.HalfReader(bytes.NewReader(stream)), MaxPacketSize))
	if err != io.EOF || len(got) != 2 || !bytes.Equal(got[1], b) {
		t.Fatalf("got %d packets, %v", len(got), err)
	}
}

type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(b []byte) (int, error) {
	n := copy(b, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

func TestReaderNoAllocs(t *testing.T) {
	var stream []byte
	for _, p := range litePackets(t) {
		stream = append(stream, p...)
	}
	r := NewReader(&repeatReader{data: stream}, 0)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %.1f times per packet, want 0", allocs)
	}
}

func BenchmarkReader(b *testing.B) {
	var stream []byte
	for _, p := range litePackets(b) {
		stream = append(stream, p...)
	}
	r := NewReader(&repeatReader{data: stream}, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)) / 8)
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzReader checks, on any stream, that the Reader never panics, that the
// packets it returns are exactly a prefix of the stream split by PacketLen,
// and that the result does not depend on how the stream is cut into reads.
// Packets that decode as Lite re-encode to the same bytes.
func FuzzReader(f *testing.F) {
	var all []byte
	for _, p := range litePackets(f) {
		f.Add(p, uint64(1))
		all = append(all, p...)
	}
	f.Add(all, uint64(7))
	f.Add(all[:len(all)-3], uint64(3))
	f.Add([]byte{0x80, 0xff, 0xff, 0xff}, uint64(0))
	d := wire.NewLite("6f599f81")
	f.Fuzz(func(t *testing.T, stream []byte, seed uint64) {
		whole, errWhole := readAll(t, NewReader(bytes.NewReader(stream), 2048))
		cut, errCut := readAll(t, NewReader(&chunkReader{data: stream, rng: rand.New(rand.NewPCG(seed, 1)), max: 1 + int(seed%64)}, 2048))
		if len(whole) != len(cut) || (errWhole == nil) != (errCut == nil) || errors.Is(errWhole, io.EOF) != errors.Is(errCut, io.EOF) {
			t.Fatalf("whole: %d packets, %v; in pieces: %d packets, %v", len(whole), errWhole, len(cut), errCut)
		}
		off := 0
		for i := range whole {
			if !bytes.Equal(whole[i], cut[i]) || !bytes.Equal(whole[i], stream[off:off+len(whole[i])]) {
				t.Fatalf("packet %d differs", i)
			}
			n, err := PacketLen(whole[i])
			if err != nil || n != len(whole[i]) {
				t.Fatalf("packet %d: length %d, PacketLen %d, %v", i, len(whole[i]), n, err)
			}
			off += n
			p, used, err := d.Parse(whole[i])
			if err != nil {
				continue // framed but not a valid Lite packet: the engine drops it
			}
			again, err := d.Append(nil, &p)
			if err != nil || used != len(whole[i]) || !bytes.Equal(again, whole[i]) {
				t.Fatalf("packet %d: parse -> append differs (%v)", i, err)
			}
		}
	})
}
