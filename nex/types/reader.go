package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Reader decodes a sequence of NEX values (a method's parameters or a structure's
// fields) from one byte slice. The first failure sticks: later reads return zero
// values and Err reports the first error as an *Error naming the field path and
// the offset. Byte slices it returns alias the input, except those of BufferCopy
// and QBufferCopy; strings are copies.
//
// A Reader is a small value; declare it on the stack with NewReader and pass its
// address. It allocates only to build lists and to copy values out of the input:
// strings and the Copy methods' bytes share one arena chunk per Reader (arena.go).
type Reader struct {
	b     []byte
	off   int
	limit int // end of the current structure's content (or len(b))
	s     Settings
	err   error
	arena []byte // chunk for copied values; see arena.go
}

// NewReader returns a Reader over b with the given settings.
func NewReader(b []byte, s Settings) Reader {
	return Reader{b: b, limit: len(b), s: s}
}

// Settings returns the settings the Reader decodes with.
func (r *Reader) Settings() Settings { return r.s }

// NEXVersion returns Settings().NEXVersion(), the version that gates fields,
// without copying the settings (generated decoders ask for it per structure).
func (r *Reader) NEXVersion() Version { return r.s.nexVersion() }

// GateMin returns Settings().GateMin(console, nc) without copying the settings.
func (r *Reader) GateMin(console, nc Version) Version { return r.s.gateMin(console, nc) }

// Err returns the first error, or nil.
func (r *Reader) Err() error { return r.err }

// Offset returns the current offset from the start of the input.
func (r *Reader) Offset() int { return r.off }

// Remaining returns the number of bytes left in the current structure (or input).
func (r *Reader) Remaining() int { return r.limit - r.off }

// Done checks that the whole input was used: it returns the first error, or an error
// naming the trailing bytes. Handlers call it after the last parameter, so a request
// with extra bytes is refused rather than silently accepted.
func (r *Reader) Done() error {
	if r.err != nil {
		return r.err
	}
	if r.off != len(r.b) {
		return &Error{Field: "end of parameters", Offset: r.off, Err: fmt.Errorf("%w: %d bytes", ErrTrailingData, len(r.b)-r.off)}
	}
	return nil
}

// Fail records err for field at the current offset unless an error is recorded
// already. Decoders of game-specific types use it to report semantic errors.
func (r *Reader) Fail(field string, err error) {
	if r.err == nil {
		r.err = &Error{Field: field, Offset: r.off, Err: err}
	}
}

func (r *Reader) rest() []byte {
	if r.err != nil {
		return nil
	}
	return r.b[r.off:r.limit]
}

// need returns the next n bytes, or records a truncation error for field.
func (r *Reader) need(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if r.limit-r.off < n {
		r.Fail(field, fmt.Errorf("%w (need %d bytes, have %d)", ErrTruncated, n, r.limit-r.off))
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

// use applies the result of a Parse function.
func (r *Reader) use(field string, n int, err error) bool {
	if err != nil {
		r.Fail(field, err)
		return false
	}
	r.off += n
	return true
}

// U8 reads a Uint8.
func (r *Reader) U8(field string) uint8 {
	if p := r.need(field, 1); p != nil {
		return p[0]
	}
	return 0
}

// Bool reads a Bool: any non-zero byte is true.
func (r *Reader) Bool(field string) bool { return r.U8(field) != 0 }

// U16 reads a Uint16.
func (r *Reader) U16(field string) uint16 {
	if p := r.need(field, 2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

// U32 reads a Uint32.
func (r *Reader) U32(field string) uint32 {
	if p := r.need(field, 4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

// U64 reads a Uint64.
func (r *Reader) U64(field string) uint64 {
	if p := r.need(field, 8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// S32 reads a Sint32.
func (r *Reader) S32(field string) int32 { return int32(r.U32(field)) }

// S64 reads a Sint64.
func (r *Reader) S64(field string) int64 { return int64(r.U64(field)) }

// F64 reads a Double.
func (r *Reader) F64(field string) float64 { return math.Float64frombits(r.U64(field)) }

// Bytes reads n raw bytes (aliasing the input).
func (r *Reader) Bytes(field string, n int) []byte { return r.need(field, n) }

// StringBytes reads a String without copying it.
func (r *Reader) StringBytes(field string) []byte {
	v, n, err := ParseStringBytes(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return nil
}

// String reads a String. Its bytes are a copy in the Reader's arena (arena.go).
func (r *Reader) String(field string) string {
	v, n, err := ParseStringBytes(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return r.copyString(v)
	}
	return ""
}

// Buffer reads a Buffer (aliasing the input).
func (r *Reader) Buffer(field string) []byte {
	v, n, err := ParseBuffer(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return nil
}

// QBuffer reads a qBuffer (aliasing the input).
func (r *Reader) QBuffer(field string) []byte {
	v, n, err := ParseQBuffer(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return nil
}

// PID reads a PID of the configured width.
func (r *Reader) PID(field string) PID {
	v, n, err := ParsePID(r.rest(), r.s)
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return 0
}

// Result reads a Result.
func (r *Reader) Result(field string) Result { return Result(r.U32(field)) }

// DateTime reads a DateTime.
func (r *Reader) DateTime(field string) DateTime { return DateTime(r.U64(field)) }

// StationURL reads a StationURL.
func (r *Reader) StationURL(field string) StationURL {
	v, n, err := ParseStationURL(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return StationURL{}
}

// Variant reads a Variant.
func (r *Reader) Variant(field string) Variant {
	v, n, err := ParseVariant(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return Variant{}
}

// AnyDataHolder reads an AnyDataHolder; its Data aliases the input.
func (r *Reader) AnyDataHolder(field string) AnyDataHolder {
	v, n, err := ParseAnyDataHolder(r.rest())
	if r.err == nil && r.use(field, n, err) {
		return v
	}
	return AnyDataHolder{}
}

// StructureMark is returned by EnterStructure and closes the structure level in
// LeaveStructure.
type StructureMark struct {
	// Version is the structure version from the header, or -1 when the settings
	// have no structure headers (the caller then knows the version from elsewhere).
	Version   int
	field     string
	prevLimit int
	end       int
	hadErr    bool
	// class and max are set by EnterClass: the structure's name and the highest
	// revision the connection's NEX version allows.
	class string
	max   int
}

// Revision returns the level's revision: the header's; without structure headers,
// for a level EnterClass opened, the highest revision the connection's NEX version
// allows (both sides' layout at that version), else 0.
func (m StructureMark) Revision() int {
	switch {
	case m.Version >= 0:
		return m.Version
	case m.class != "":
		return m.max
	}
	return 0
}

// EnterStructure starts one level of a Structure ("Structure" in types.md). With
// structure headers it reads the version and content length and confines the
// following reads to the content; without them it only records the field name for
// error messages. Every EnterStructure needs its LeaveStructure.
func (r *Reader) EnterStructure(field string) StructureMark { return r.enter(field, "", 0) }

// enter is EnterStructure and EnterClass: class "" is an undescribed level. The
// two common cases (no headers; a header whose revision and length fit) return
// the mark directly; everything else, failures included, is enterHeader's.
func (r *Reader) enter(field, class string, maxRevision int) StructureMark {
	if !r.s.StructureHeader {
		return StructureMark{Version: -1, field: field, prevLimit: r.limit, end: -1, hadErr: r.err != nil, class: class, max: maxRevision}
	}
	if r.err == nil && r.limit-r.off >= 5 {
		h := r.b[r.off : r.off+5]
		rev, n := int(h[0]), uint64(binary.LittleEndian.Uint32(h[1:]))
		if (class == "" || rev <= maxRevision) && n <= uint64(r.limit-r.off-5) {
			prev := r.limit
			r.off += 5
			r.limit = r.off + int(n)
			return StructureMark{Version: rev, field: field, prevLimit: prev, end: r.limit, class: class, max: maxRevision}
		}
	}
	return r.enterHeader(field, class, maxRevision)
}

// enterHeader is enter's general case.
func (r *Reader) enterHeader(field, class string, maxRevision int) StructureMark {
	m := StructureMark{Version: -1, field: field, prevLimit: r.limit, end: -1, hadErr: r.err != nil, class: class, max: maxRevision}
	if !r.s.StructureHeader || r.err != nil {
		return m
	}
	if r.limit-r.off < 5 {
		r.Fail(field, fmt.Errorf("structure header: %w (need 5 bytes, have %d)", ErrTruncated, r.limit-r.off))
		m.hadErr = true
		if class != "" {
			r.wrapVersion(class, maxRevision, -1)
		}
		return m
	}
	h := r.b[r.off : r.off+5]
	r.off += 5
	m.Version = int(h[0])
	n := uint64(binary.LittleEndian.Uint32(h[1:]))
	if uint64(r.limit-r.off) < n {
		r.off -= 5
		r.Fail(field, fmt.Errorf("structure content of %d bytes: %w (have %d)", n, ErrTruncated, r.limit-r.off-5))
		m.hadErr = true
		if class != "" {
			r.wrapVersion(class, maxRevision, -1)
		}
		return m
	}
	if class != "" && m.Version > maxRevision {
		r.off -= 5
		r.Fail(field, ErrVersion)
		r.wrapVersion(class, maxRevision, m.Version)
		m.hadErr = true
		return m
	}
	m.end = r.off + int(n)
	r.limit = m.end
	return m
}

// LeaveStructure ends the level m opened. Content left unread (fields of a newer
// structure version this decoder does not know) is skipped, as NEX clients do; an
// error raised inside gets the structure's field name prefixed to its path.
func (r *Reader) LeaveStructure(m StructureMark) {
	r.limit = m.prevLimit
	if r.err != nil {
		var e *Error
		if !m.hadErr && errors.As(r.err, &e) {
			if m.class != "" && !errors.As(e.Err, new(*VersionError)) {
				e.Err = &VersionError{Struct: m.class, Revision: m.Version, Max: m.max, Version: r.s.NEXVersion(), Err: e.Err}
			}
			e.Field = m.field + "." + e.Field
		}
		return
	}
	if m.end >= 0 {
		r.off = m.end
	}
}

// maxListPrealloc bounds the capacity reserved for a List before its elements
// are decoded: the count is checked against the bytes left, but an element's Go
// value can be much larger than its wire size, so the slice grows only as
// elements actually decode.
const maxListPrealloc = 256

// ReadList reads a List ("List" in types.md): a 32-bit count, then count elements
// read by elem. The count is checked against the bytes left (every element takes at
// least one byte), so a forged count is an error, not an allocation.
func ReadList[T any](r *Reader, field string, elem func(r *Reader, field string) T) []T {
	if r.err != nil {
		return nil
	}
	if r.limit-r.off < 4 {
		r.Fail(field, fmt.Errorf("list count: %w (need 4 bytes, have %d)", ErrTruncated, r.limit-r.off))
		return nil
	}
	count := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	if uint64(count) > uint64(r.limit-r.off) {
		r.off -= 4
		r.Fail(field, fmt.Errorf("list count %d: %w (only %d bytes left)", count, ErrBadLength, r.limit-r.off-4))
		return nil
	}
	out := make([]T, 0, min(count, maxListPrealloc))
	for i := 0; i < int(count); i++ {
		hadErr := r.err != nil
		v := elem(r, field)
		if r.err != nil {
			var e *Error
			if !hadErr && errors.As(r.err, &e) {
				e.Field = fmt.Sprintf("%s[%d]", field, i) + trimField(e.Field, field)
			}
			return nil
		}
		out = append(out, v)
	}
	return out
}

// trimField removes the list's own name from an element error's path.
func trimField(path, field string) string {
	if len(path) >= len(field) && path[:len(field)] == field {
		return path[len(field):]
	}
	return "." + path
}

// Pair is one entry of a Map, kept in wire order.
type Pair[K, V any] struct {
	Key   K
	Value V
}

// ReadMap reads a Map ("Map" in types.md): a List of key/value pairs.
func ReadMap[K, V any](r *Reader, field string, key func(r *Reader, field string) K, value func(r *Reader, field string) V) []Pair[K, V] {
	return ReadList(r, field, func(r *Reader, field string) Pair[K, V] {
		k := key(r, field)
		return Pair[K, V]{Key: k, Value: value(r, field)}
	})
}

// AppendList appends a List of items, each encoded by elem.
func AppendList[T any](b []byte, items []T, elem func(b []byte, v T) ([]byte, error)) ([]byte, error) {
	if uint64(len(items)) > math.MaxUint32 {
		return b, fmt.Errorf("list of %d items: %w", len(items), ErrTooLong)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(items)))
	var err error
	for i, v := range items {
		if b, err = elem(b, v); err != nil {
			return b, fmt.Errorf("list item %d: %w", i, err)
		}
	}
	return b, nil
}

// AppendMap appends a Map of pairs in order.
func AppendMap[K, V any](b []byte, pairs []Pair[K, V], key func(b []byte, k K) ([]byte, error), value func(b []byte, v V) ([]byte, error)) ([]byte, error) {
	return AppendList(b, pairs, func(b []byte, p Pair[K, V]) ([]byte, error) {
		b, err := key(b, p.Key)
		if err != nil {
			return b, fmt.Errorf("key: %w", err)
		}
		if b, err = value(b, p.Value); err != nil {
			return b, fmt.Errorf("value: %w", err)
		}
		return b, nil
	})
}

// ParseList decodes a List with a standalone element decoder, for use outside a
// Reader. See ReadList for the count check.
func ParseList[T any](b []byte, elem func(b []byte) (T, int, error)) ([]T, int, error) {
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("list count: %w (need 4 bytes, have %d)", ErrTruncated, len(b))
	}
	count := binary.LittleEndian.Uint32(b)
	if uint64(count) > uint64(len(b)-4) {
		return nil, 0, fmt.Errorf("list count %d: %w (only %d bytes left)", count, ErrBadLength, len(b)-4)
	}
	off := 4
	out := make([]T, 0, min(count, maxListPrealloc))
	for i := 0; i < int(count); i++ {
		v, n, err := elem(b[off:])
		if err != nil {
			return nil, 0, fmt.Errorf("list item %d at offset %d: %w", i, off, err)
		}
		out = append(out, v)
		off += n
	}
	return out, off, nil
}
