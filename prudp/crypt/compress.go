package crypt

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Compression errors. Decompress wraps them with the offset or limit involved.
var (
	// ErrEmpty reports a payload too short to hold the compression-ratio byte.
	ErrEmpty = errors.New("missing compression-ratio byte")
	// ErrTooLarge reports a payload whose decompressed size exceeds the caller's limit.
	ErrTooLarge = errors.New("decompressed payload exceeds limit")
	// ErrCorrupt reports a zlib stream that does not decode or is followed by stray bytes.
	ErrCorrupt = errors.New("corrupt zlib stream")
	// ErrRatio reports a zlib stream inflating past what its ratio byte
	// claims (DecompressDeclared).
	ErrRatio = errors.New("decompressed payload exceeds its compression ratio")
)

// maxRatio is the largest ratio the single ratio byte can carry.
const maxRatio = 255

// Compress appends the compressed form of src to dst and returns the extended
// slice. It implements "Compression" in NintendoClients wiki "PRUDP Protocol": one ratio byte
// followed by a zlib stream.
//
// The ratio written is len(src)/len(zlib) + 1 (integer division), at least 1 and
// at most 255. The spec says "rounded upwards", which differs when the sizes
// divide evenly; the two peers gamewire is checked against write and demand
// n/c + 1: NintendoClients drops a packet whose ratio byte is not n/c + 1, and
// nex-go's Quazal mode needs it too (docs/interop.md). Decompress accepts any
// non-zero ratio, since implementations disagree. An empty src is written as a
// ratio byte of 0 with nothing after it, the uncompressed encoding of an empty
// payload, since a ratio of 0 is how the format says "not compressed".
func Compress(dst, src []byte) []byte {
	if len(src) == 0 {
		return append(dst, 0)
	}
	start := len(dst)
	dst = append(dst, 0) // ratio placeholder
	w := bytes.NewBuffer(dst)
	zw := zlib.NewWriter(w)
	// Writes to a bytes.Buffer cannot fail.
	_, _ = zw.Write(src)
	_ = zw.Close()
	dst = w.Bytes()
	c := len(dst) - start - 1
	ratio := len(src)/c + 1
	ratio = min(max(ratio, 1), maxRatio)
	dst[start] = byte(ratio)
	return dst
}

// Decompress undoes Compress. It implements "Compression" in
// NintendoClients wiki "PRUDP Protocol".
//
// A ratio byte of 0 means the rest of b is the payload uncompressed; the
// returned slice then aliases b. Any non-zero ratio is accepted, because
// implementations disagree on how they round it, and the ratio is never used
// to size an allocation: the output grows as the zlib stream decodes and is
// refused with ErrTooLarge once it would exceed limit bytes (a negative
// limit counts as 0). Bytes after the end of the zlib stream are an error
// (ErrCorrupt), not silently dropped. Decompress is safe for concurrent use;
// inflate state is pooled.
func Decompress(b []byte, limit int) ([]byte, error) {
	return decompress(b, limit, false)
}

// DecompressDeclared is Decompress that also holds the sender to its ratio
// byte: the output may not exceed ratio times the zlib stream's size, and
// inflating stops (ErrRatio) as soon as it would. Both roundings peers
// write, n/c + 1 and ceil(n/c), are at least n/c, so an honest payload
// always passes. A ratio byte of 255 is saturated (Compress writes 255 for
// any higher ratio, which a few kilobytes of zeros reach), so it bounds
// nothing and limit alone applies: limit is what really bounds a zlib bomb
// (a few hundred bytes inflating to hundreds of kilobytes), and the caller
// should keep it to what one packet could carry uncompressed.
func DecompressDeclared(b []byte, limit int) ([]byte, error) {
	return decompress(b, limit, true)
}

func decompress(b []byte, limit int, declared bool) ([]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("decompress: %w (payload is 0 bytes)", ErrEmpty)
	}
	if b[0] == 0 {
		rest := b[1:]
		if len(rest) > limit {
			return nil, fmt.Errorf("decompress: %w: uncompressed payload is %d bytes, limit %d", ErrTooLarge, len(rest), limit)
		}
		return rest, nil
	}
	d := inflaters.Get().(*inflater)
	defer func() {
		d.src.Reset(nil) // do not keep the caller's buffer alive in the pool
		inflaters.Put(d)
	}()
	d.src.Reset(b[1:])
	if d.zr == nil {
		zr, err := zlib.NewReader(&d.src)
		if err != nil {
			return nil, fmt.Errorf("decompress: %w at offset 1: %v", ErrCorrupt, err)
		}
		d.zr = zr
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		return nil, fmt.Errorf("decompress: %w at offset 1: %v", ErrCorrupt, err)
	}
	src := &d.src
	zr := d.zr
	limit = max(limit, 0)
	ratioLimit := false
	if c := len(b) - 1; declared && b[0] < maxRatio && int(b[0])*c < limit {
		limit = int(b[0]) * c
		ratioLimit = true
	}
	// The first guess at the output size comes from the compressed size,
	// never from the ratio byte; reading one byte past the limit tells
	// "exactly limit" from "more".
	out := bytes.NewBuffer(make([]byte, 0, min(limit+1, 4*len(b)+64)))
	n, err := io.Copy(out, io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w after %d output bytes: %v", ErrCorrupt, n, err)
	}
	if n > int64(limit) && ratioLimit {
		return nil, fmt.Errorf("decompress: %w: ratio byte %d over %d compressed bytes allows %d output bytes", ErrRatio, b[0], len(b)-1, limit)
	}
	if n > int64(limit) {
		return nil, fmt.Errorf("decompress: %w: output passes limit of %d bytes", ErrTooLarge, limit)
	}
	if rest := src.Len(); rest != 0 {
		return nil, fmt.Errorf("decompress: %w: %d stray bytes after zlib stream at offset %d", ErrCorrupt, rest, len(b)-rest)
	}
	return out.Bytes(), nil
}

// inflater is a reusable zlib reader: a fresh one costs about 40 KiB of
// allocations, most of it the inflate window.
type inflater struct {
	src bytes.Reader
	zr  io.ReadCloser
}

var inflaters = sync.Pool{New: func() any { return new(inflater) }}
