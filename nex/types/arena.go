package types

import (
	"encoding/binary"
	"unsafe"
)

// The arena for copied values. A Reader's input is often a pooled datagram
// buffer (prudp reuses them once the call returns) while the values decoded from
// it live on (sessions, DataStore objects), so strings and the Buffers that
// generated codecs read (BufferCopy, QBufferCopy) are copies, not aliases. A
// separate allocation per value cost a decode of a MatchmakeSession two
// allocations more than the hand-written codec that aliased its input; the
// arena makes them one allocation per Reader instead:
//
//   - The first copy allocates one chunk sized by what is left of the input from
//     that value on (every later copy comes from those bytes, so they all fit) and
//     at most arenaChunk bytes; later copies take the next free bytes of it. A
//     value longer than arenaMaxValue gets an allocation of its own, and a value
//     that no longer fits starts a new chunk.
//   - Retention: a value a caller keeps keeps its whole chunk alive, that is at
//     most arenaChunk+arenaHeader bytes and never more than the rest of the input
//     it came from plus arenaHeader. A huge Buffer never sits in a chunk, so a
//     small value kept from a large request never pins the request.
//   - Byte slices are handed out with their capacity equal to their length
//     (a[i:j:j]), so a caller's append reallocates instead of writing over the
//     next value, and writes through one slice stay inside it.
//   - Strings are made with unsafe.String over their chunk bytes, as
//     strings.Builder does: the Reader writes each byte of a chunk once, before
//     the string over it exists, and never again (it only ever writes past the
//     used mark), and no byte slice it hands out covers a string's bytes.
//   - The used mark lives in the chunk itself (its first arenaHeader bytes), not
//     in the Reader: a Reader copied by value after reads (r2 := *r, a saved
//     Reader restored with *r = saved) shares the chunk and its mark with the
//     original, so the copies never hand out the same bytes twice. A Reader and
//     its copies must not be used concurrently (no Reader is safe for that).
const (
	arenaChunk    = 1024 // the most bytes a chunk holds (without its header)
	arenaMaxValue = 256  // longer values get an allocation of their own
	arenaHeader   = 4    // the chunk's used mark, little-endian uint32
)

// copyBytes returns a copy of p (nil for an empty p) from the arena: p must be
// the value the Reader just read, so that the input after it (r.b[r.off:]) holds
// every later value.
func (r *Reader) copyBytes(p []byte) []byte {
	n := len(p)
	if n == 0 {
		return nil
	}
	if a := r.arena; len(a) >= arenaHeader {
		used := int(binary.LittleEndian.Uint32(a))
		if end := used + n; end <= len(a) && n <= arenaMaxValue {
			binary.LittleEndian.PutUint32(a, uint32(end))
			v := a[used:end:end]
			copy(v, p)
			return v
		}
	}
	if n > arenaMaxValue {
		v := make([]byte, n)
		copy(v, p)
		return v
	}
	i := r.newChunk(n)
	v := r.arena[i : i+n : i+n]
	copy(v, p)
	return v
}

// copyString returns p as a string whose bytes are in the arena (see copyBytes).
func (r *Reader) copyString(p []byte) string {
	n := len(p)
	if n == 0 {
		return ""
	}
	if a := r.arena; len(a) >= arenaHeader {
		used := int(binary.LittleEndian.Uint32(a))
		if end := used + n; end <= len(a) && n <= arenaMaxValue {
			binary.LittleEndian.PutUint32(a, uint32(end))
			copy(a[used:end], p)
			return unsafe.String(&a[used], n)
		}
	}
	if n > arenaMaxValue {
		return string(p)
	}
	i := r.newChunk(n)
	copy(r.arena[i:i+n], p)
	return unsafe.String(&r.arena[i], n)
}

// newChunk starts a chunk with room for a value of n bytes (1 to arenaMaxValue)
// and the rest of the input, up to arenaChunk bytes, reserves the value's bytes
// and returns their offset in r.arena.
func (r *Reader) newChunk(n int) int {
	r.arena = make([]byte, arenaHeader+min(n+max(len(r.b)-r.off, 0), arenaChunk))
	binary.LittleEndian.PutUint32(r.arena, uint32(arenaHeader+n))
	return arenaHeader
}
