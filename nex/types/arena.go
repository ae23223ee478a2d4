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

// copyString returns p as a string whose bytes are in the arena (see copyBytes);
// a one-byte string is a constant's, as string(p) would make it.
func (r *Reader) copyString(p []byte) string {
	n := len(p)
	switch n {
	case 0:
		return ""
	case 1:
		return oneByteStrings[p[0] : int(p[0])+1] // as string(p) does: no allocation
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

// oneByteStrings holds every one-byte string, so that those take no arena space
// (string(p) of one byte does not allocate either).
const oneByteStrings = "" +
	"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f" +
	"\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f" +
	"\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x3f" +
	"\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4a\x4b\x4c\x4d\x4e\x4f" +
	"\x50\x51\x52\x53\x54\x55\x56\x57\x58\x59\x5a\x5b\x5c\x5d\x5e\x5f" +
	"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f" +
	"\x70\x71\x72\x73\x74\x75\x76\x77\x78\x79\x7a\x7b\x7c\x7d\x7e\x7f" +
	"\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f" +
	"\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f" +
	"\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf" +
	"\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf" +
	"\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf" +
	"\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf" +
	"\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef" +
	"\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff"

// newChunk starts a chunk with room for a value of n bytes (1 to arenaMaxValue)
// and the rest of the input, up to arenaChunk bytes, reserves the value's bytes
// and returns their offset in r.arena.
func (r *Reader) newChunk(n int) int {
	r.arena = make([]byte, arenaHeader+min(n+max(len(r.b)-r.off, 0), arenaChunk))
	binary.LittleEndian.PutUint32(r.arena, uint32(arenaHeader+n))
	return arenaHeader
}
