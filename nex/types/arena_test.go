package types

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"
)

// arenaValue is one value a Reader copied: its bytes, as a byte slice or as the
// bytes of a string.
type arenaValue struct {
	field string
	b     []byte // the returned slice (nil for strings)
	s     string // the returned string
}

// region returns the address range the value's bytes occupy.
func (v arenaValue) region() (lo, hi uintptr) {
	if v.b != nil {
		lo = uintptr(unsafe.Pointer(unsafe.SliceData(v.b)))
		return lo, lo + uintptr(len(v.b))
	}
	lo = uintptr(unsafe.Pointer(unsafe.StringData(v.s)))
	return lo, lo + uintptr(len(v.s))
}

func (v arenaValue) bytes() []byte {
	if v.b != nil {
		return v.b
	}
	return []byte(v.s)
}

// readArenaScript reads values from r, the kind of each chosen by ops (0 String,
// 1 BufferCopy, 2 QBufferCopy), until ops or the input run out or a read fails.
// Beside each read it parses the same bytes with the standalone parser and fails
// t unless the value and the error are the same.
func readArenaScript(t *testing.T, r *Reader, ops []byte) []arenaValue {
	var vals []arenaValue
	for i, op := range ops {
		if r.Err() != nil || r.Remaining() == 0 {
			break
		}
		rest := r.b[r.off:r.limit]
		var v arenaValue
		var want []byte
		var n int
		var err error
		switch op % 3 {
		case 0:
			want, n, err = ParseStringBytes(rest)
			v = arenaValue{field: "s", s: r.String("s")}
		case 1:
			want, n, err = ParseBuffer(rest)
			v = arenaValue{field: "b", b: r.BufferCopy("b")}
		case 2:
			want, n, err = ParseQBuffer(rest)
			v = arenaValue{field: "q", b: r.QBufferCopy("q")}
		}
		if err != nil {
			var e *Error
			if !errors.As(r.Err(), &e) || e.Err.Error() != err.Error() {
				t.Fatalf("read %d: Reader error %v, parser error %v", i, r.Err(), err)
			}
			break
		}
		if r.Err() != nil {
			t.Fatalf("read %d: Reader error %v where the parser read %d bytes", i, r.Err(), n)
		}
		if !bytes.Equal(v.bytes(), want) {
			t.Fatalf("read %d: got %x, want %x", i, v.bytes(), want)
		}
		if v.b != nil && cap(v.b) != len(v.b) {
			t.Fatalf("read %d: capacity %d for %d bytes", i, cap(v.b), len(v.b))
		}
		if len(want) > 0 {
			vals = append(vals, v)
		}
	}
	return vals
}

// checkArenaValues: no byte slice shares a byte with another value, none aliases the input, writes
// to and appends through one byte slice change no other value.
func checkArenaValues(t *testing.T, input []byte, vals []arenaValue) {
	inLo := uintptr(unsafe.Pointer(unsafe.SliceData(input)))
	inHi := inLo + uintptr(len(input))
	for i, a := range vals {
		alo, ahi := a.region()
		if alo < inHi && inLo < ahi {
			t.Fatalf("value %d (%s) aliases the input", i, a.field)
		}
		for j := i + 1; j < len(vals); j++ {
			if a.b == nil && vals[j].b == nil {
				continue // strings may share bytes (one-byte strings do): nobody writes them
			}
			blo, bhi := vals[j].region()
			if alo < bhi && blo < ahi {
				t.Fatalf("values %d (%s) and %d (%s) overlap", i, a.field, j, vals[j].field)
			}
		}
	}
	snap := make([][]byte, len(vals))
	for i, v := range vals {
		snap[i] = bytes.Clone(v.bytes())
	}
	for i, v := range vals {
		if v.b == nil {
			continue
		}
		grown := append(v.b, 0xEE, 0xEE, 0xEE)
		for k := range v.b {
			v.b[k] ^= 0xFF
		}
		for j, o := range vals {
			if j != i && !bytes.Equal(o.bytes(), snap[j]) {
				t.Fatalf("writing value %d (%s) changed value %d (%s)", i, v.field, j, o.field)
			}
		}
		_ = grown
		for k := range v.b {
			v.b[k] ^= 0xFF
		}
	}
	for k := range input {
		input[k] = 0xAA
	}
	for j, o := range vals {
		if !bytes.Equal(o.bytes(), snap[j]) {
			t.Fatalf("overwriting the input changed value %d (%s)", j, o.field)
		}
	}
}

func appendArenaInput(b []byte, ops []byte, sizes []int) []byte {
	for i, op := range ops {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, sizes[i%len(sizes)])
		switch op % 3 {
		case 0:
			b, _ = AppendString(b, string(p))
		case 1:
			b, _ = AppendBuffer(b, p)
		case 2:
			b, _ = AppendQBuffer(b, p)
		}
	}
	return b
}

// TestReaderArena: values copied by one Reader, small and large, over several
// chunks, never share bytes, do not alias the input, and are not changed by
// writes or appends through another value.
func TestReaderArena(t *testing.T) {
	ops := make([]byte, 60)
	for i := range ops {
		ops[i] = byte(i % 3)
	}
	// 0 and 1 byte values, values at the size limit, one above it, and enough
	// small ones to fill more than one chunk.
	sizes := []int{5, 0, 1, arenaMaxValue, 40, arenaMaxValue + 1, 17, 3000, 64}
	in := appendArenaInput(nil, ops, sizes)
	r := NewReader(in, Settings{})
	vals := readArenaScript(t, &r, ops)
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if len(vals) < 50 {
		t.Fatalf("%d values read", len(vals))
	}
	checkArenaValues(t, in, vals)
}

// TestReaderArenaCopies: a Reader copied by value after reads, and a Reader
// restored from a saved copy, share the arena's used mark with the original, so
// values read through the copies never overlap.
func TestReaderArenaCopies(t *testing.T) {
	ops := []byte{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}
	in := appendArenaInput(nil, ops, []int{7, 12, 3})
	r := NewReader(in, Settings{})
	vals := readArenaScript(t, &r, ops[:3])
	saved := r // a copy taken after the arena exists
	vals = append(vals, readArenaScript(t, &r, ops[3:6])...)
	r = saved // rewind: the same input is read again into new bytes
	vals = append(vals, readArenaScript(t, &r, ops[3:9])...)
	r2 := r
	vals = append(vals, readArenaScript(t, &r2, ops[9:])...)
	vals = append(vals, readArenaScript(t, &r, ops[9:])...)
	checkArenaValues(t, in, vals)
}

// TestReaderArenaBounded: a chunk is never larger than the input left when it
// starts (plus its header), nor than arenaChunk; a value above arenaMaxValue gets an
// allocation of exactly its size, so a small value kept from a huge request
// keeps at most one chunk alive, not the request.
func TestReaderArenaBounded(t *testing.T) {
	in, _ := AppendString(nil, "abc")
	in, _ = AppendBuffer(in, []byte{1, 2})
	r := NewReader(in, Settings{})
	_ = r.String("s")
	if got, max := cap(r.arena), arenaHeader+len(in)-2; got > max {
		t.Fatalf("chunk of %d bytes for a %d-byte input (want at most %d)", got, len(in), max)
	}

	huge := make([]byte, 1<<20)
	in, _ = AppendString(nil, "name")
	in, _ = AppendBuffer(in, huge)
	in, _ = AppendString(in, "tail")
	r = NewReader(in, Settings{})
	name := r.String("name")
	data := r.BufferCopy("data")
	tail := r.String("tail")
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if cap(r.arena) > arenaHeader+arenaChunk {
		t.Fatalf("chunk of %d bytes (limit %d)", cap(r.arena), arenaHeader+arenaChunk)
	}
	if cap(data) != len(huge) || len(data) != len(huge) {
		t.Fatalf("huge buffer: len %d cap %d", len(data), cap(data))
	}
	arena := uintptr(unsafe.Pointer(unsafe.SliceData(r.arena)))
	for _, s := range []string{name, tail} {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		if p < arena || p >= arena+uintptr(cap(r.arena)) {
			t.Fatalf("%q is not in the arena", s)
		}
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	if d >= arena && d < arena+uintptr(cap(r.arena)) {
		t.Fatal("the huge buffer is in the arena")
	}
}

// TestReaderArenaAllocs: the values of one small message cost one allocation.
func TestReaderArenaAllocs(t *testing.T) {
	ops := []byte{0, 1, 2, 0, 1}
	in := appendArenaInput(nil, ops, []int{4, 32, 32, 3, 2})
	n := testing.AllocsPerRun(100, func() {
		r := NewReader(in, Settings{})
		for _, op := range ops {
			switch op {
			case 0:
				_ = r.String("s")
			case 1:
				_ = r.BufferCopy("b")
			case 2:
				_ = r.QBufferCopy("q")
			}
		}
		if r.Done() != nil {
			t.Fatal(r.Err())
		}
	})
	if n != 1 {
		t.Fatalf("%v allocations, want 1", n)
	}
}

// FuzzReaderArena reads Strings, Buffers and qBuffers (the kinds chosen by the
// input's first bytes) from the rest of the input and checks each value and
// error against the standalone parsers, and that the values never overlap,
// never alias the input and do not change when another is written or appended to.
func FuzzReaderArena(f *testing.F) {
	f.Add(appendArenaInput([]byte{8, 0, 1, 2, 0, 1, 2, 0, 1}, []byte{0, 1, 2, 0, 1, 2, 0, 1}, []int{3, 0, 300, 1}))
	f.Add(appendArenaInput([]byte{3, 1, 1, 0}, []byte{1, 1, 0}, []int{2000, 5}))
	f.Add([]byte{2, 0, 0, 3, 0, 'a', 'b'}) // a String without its terminator
	f.Add([]byte{1, 1, 9, 0, 0, 0, 1})     // a Buffer longer than the input
	seedGoldens(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		n := min(int(b[0]), len(b)-1)
		ops, in := b[1:1+n], bytes.Clone(b[1+n:])
		r := NewReader(in, Settings{})
		vals := readArenaScript(t, &r, ops)
		checkArenaValues(t, in, vals)
	})
}

// TestReaderOneByteStrings: one-byte and empty strings take no allocation (as
// string(p) does not for them), so a list of such tags costs nothing.
func TestReaderOneByteStrings(t *testing.T) {
	var in []byte
	for _, s := range []string{"a", "", "\x00", "\xff", "z"} {
		in, _ = AppendString(in, s)
	}
	var got []string
	n := testing.AllocsPerRun(100, func() {
		r := NewReader(in, Settings{})
		got = got[:0]
		for r.Remaining() > 0 {
			got = append(got, r.String("s"))
		}
		if r.Done() != nil {
			t.Fatal(r.Err())
		}
	})
	if n != 0 || len(got) != 5 || got[0] != "a" || got[1] != "" || got[2] != "\x00" || got[3] != "\xff" || got[4] != "z" {
		t.Fatalf("%v allocations, strings %q", n, got)
	}
}
