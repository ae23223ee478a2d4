package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Support for the structures whose codecs are generated from protocol
// descriptions (package nex/protocols/...): structure levels that know their
// class name and the revisions the connection's NEX version allows, and
// AnyDataHolders whose objects decode by class name.

// VersionError wraps a decoding error raised inside a described structure level
// with what a client of another NEX version would get wrong: the structure, the
// revision its header carried (-1 without structure headers or when the header
// itself did not decode), the highest revision
// the connection's NEX version allows, and that version. Its Err is ErrVersion when
// the header's revision itself is too new.
type VersionError struct {
	Struct   string
	Revision int
	Max      int
	Version  Version
	Err      error
}

func (e *VersionError) Error() string {
	if e.Revision < 0 {
		return fmt.Sprintf("structure %s (NEX %s): %v", e.Struct, e.Version, e.Err)
	}
	return fmt.Sprintf("structure %s revision %d (NEX %s allows up to %d): %v", e.Struct, e.Revision, e.Version, e.Max, e.Err)
}

func (e *VersionError) Unwrap() error { return e.Err }

// EnterClass is EnterStructure for one level of a described structure: class
// names the level (its structure's name) and maxRevision is the highest revision
// the connection's NEX version allows for it (the description's MaxRevision). A
// header carrying a newer revision fails with a VersionError wrapping ErrVersion,
// and errors raised inside the level are wrapped in a VersionError naming it.
func (r *Reader) EnterClass(field, class string, maxRevision int) StructureMark {
	return r.enter(field, class, maxRevision)
}

// wrapVersion wraps the error just recorded in a VersionError naming the
// structure: revision is the header's (-1 when the header did not decode). It
// is a function of its own so that its variables cost nothing on the success
// path.
//
//go:noinline
func (r *Reader) wrapVersion(class string, maxRevision, revision int) {
	var e *Error
	if errors.As(r.err, &e) {
		e.Err = &VersionError{Struct: class, Revision: revision, Max: maxRevision, Version: r.s.NEXVersion(), Err: e.Err}
	}
}

// Count appends a List's or Map's element count, failing when n does not fit.
// It inlines (the failure is a call of its own), as the U32 of WriteList does.
func (w *Writer) Count(n int) {
	if uint64(n) > math.MaxUint32 {
		w.countTooLong(n)
		return
	}
	w.U32(uint32(n))
}

func (w *Writer) countTooLong(n int) {
	w.set(nil, fmt.Errorf("list of %d items: %w", n, ErrTooLong))
}

// Data appends the Data base class level (see AppendData).
func (w *Writer) Data() { w.B = AppendData(w.B, w.S) }

// QUUID appends a qUUID.
func (w *Writer) QUUID(u QUUID) { w.B = append(w.B, u[:]...) }

// QUUID reads a qUUID.
func (r *Reader) QUUID(field string) QUUID {
	var u QUUID
	copy(u[:], r.need(field, 16))
	return u
}

// F32 appends a Float.
func (w *Writer) F32(v float32) { w.U32(math.Float32bits(v)) }

// F32 reads a Float.
func (r *Reader) F32(field string) float32 { return math.Float32frombits(r.U32(field)) }

// BufferCopy reads a Buffer into a copy (nil for an empty one), for values that
// outlive the input: bytes of the Reader's arena (arena.go) whose capacity is
// their length.
func (r *Reader) BufferCopy(field string) []byte {
	if r.err == nil && r.limit-r.off >= 4 {
		if n := uint64(binary.LittleEndian.Uint32(r.b[r.off:])); n <= uint64(r.limit-r.off-4) {
			start := r.off + 4
			r.off = start + int(n)
			return r.copyBytes(r.b[start:r.off])
		}
	}
	return r.copyBytes(r.Buffer(field)) // Buffer records the failure
}

// QBufferCopy reads a qBuffer into a copy (nil for an empty one), as BufferCopy.
func (r *Reader) QBufferCopy(field string) []byte {
	if r.err == nil && r.limit-r.off >= 2 {
		if n := int(binary.LittleEndian.Uint16(r.b[r.off:])); n <= r.limit-r.off-2 {
			start := r.off + 2
			r.off = start + n
			return r.copyBytes(r.b[start:r.off])
		}
	}
	return r.copyBytes(r.QBuffer(field)) // QBuffer records the failure
}

// Object is a structure with a generated codec: its class name, and its levels
// (the ancestors' first) written by Append and read by Read.
type Object interface {
	ClassName() string
	Append(w *Writer)
	Read(r *Reader, field string)
}

type dataClass struct {
	new       func() Object
	ancestors []string // the class and its ancestors up to Data
}

var (
	classesMu sync.RWMutex
	classes   = map[string]dataClass{}
)

// RegisterData registers a class derived from Data, so that AnyDataHolders naming
// it decode into it: ancestors are the class itself and its parents (nearest first),
// new returns a fresh value. Generated packages register their Data classes in
// init. A name registered already keeps its first registration (a game variant's
// redefinition of a class does not replace the base one globally).
func RegisterData(name string, ancestors []string, new func() Object) {
	classesMu.Lock()
	defer classesMu.Unlock()
	if _, dup := classes[name]; !dup {
		classes[name] = dataClass{new: new, ancestors: ancestors}
	}
}

// NewData returns a fresh value of a registered Data class.
func NewData(name string) (Object, bool) {
	classesMu.RLock()
	c, ok := classes[name]
	classesMu.RUnlock()
	if !ok {
		return nil, false
	}
	return c.new(), true
}

// DerivesFrom reports whether the registered class name is base or derives from it
// (base "" and "Data" admit every class).
func DerivesFrom(name, base string) bool {
	if base == "" || base == "Data" || name == base {
		return true
	}
	classesMu.RLock()
	c, ok := classes[name]
	classesMu.RUnlock()
	return ok && slices.Contains(c.ancestors, base)
}

// AnyData is an AnyDataHolder ("AnyDataHolder" in types.md) whose object is
// decoded: Object is a value of a registered class (RegisterData). A holder naming a
// class nobody registered keeps its encoding in Raw (Data copied from the input) and
// is written back unchanged; the zero AnyData is a holder with an empty class name
// and no data.
type AnyData struct {
	Object Object
	Raw    AnyDataHolder
}

// ClassName returns the class the holder names.
func (a AnyData) ClassName() string {
	if a.Object != nil {
		return a.Object.ClassName()
	}
	return a.Raw.TypeName
}

// AnyData appends a holder: the class name, the two lengths and the object's levels.
func (w *Writer) AnyData(a AnyData) {
	if a.Object == nil {
		w.AnyDataHolder(a.Raw)
		return
	}
	w.String(a.Object.ClassName())
	start := len(w.B)
	w.B = append(w.B, 0, 0, 0, 0, 0, 0, 0, 0)
	a.Object.Append(w)
	if w.err != nil {
		return
	}
	n := len(w.B) - start - 8
	if uint64(n) > math.MaxUint32-4 {
		w.set(nil, fmt.Errorf("AnyDataHolder data of %d bytes: %w", n, ErrTooLong))
		return
	}
	binary.LittleEndian.PutUint32(w.B[start:], uint32(n)+4)
	binary.LittleEndian.PutUint32(w.B[start+4:], uint32(n))
}

// AnyData reads a holder whose class must be base or derive from it (base "" or
// "Data": any class). A registered class decodes into its Object; content it leaves
// unread (a newer revision's) is skipped. An unregistered class is kept in Raw.
func (r *Reader) AnyData(field, base string) AnyData {
	if r.err != nil {
		return AnyData{}
	}
	start := r.off
	name := r.String(field)
	lens := r.need(field, 8)
	if lens == nil {
		return AnyData{}
	}
	outer := uint64(binary.LittleEndian.Uint32(lens))
	inner := uint64(binary.LittleEndian.Uint32(lens[4:]))
	if outer != inner+4 {
		r.off -= 8
		r.Fail(field, fmt.Errorf("AnyDataHolder %q: %w (outer length %d, inner %d: want inner+4)", name, ErrBadLength, outer, inner))
		return AnyData{}
	}
	if uint64(r.limit-r.off) < inner {
		r.Fail(field, fmt.Errorf("AnyDataHolder %q data of %d bytes: %w (have %d)", name, inner, ErrTruncated, r.limit-r.off))
		return AnyData{}
	}
	end := r.off + int(inner)
	if name == "" && inner == 0 {
		return AnyData{}
	}
	if !DerivesFrom(name, base) {
		r.off = start
		r.Fail(field, fmt.Errorf("%w: %q where a %s is expected", ErrBadClass, name, base))
		return AnyData{}
	}
	obj, ok := NewData(name)
	if !ok {
		a := AnyData{Raw: AnyDataHolder{TypeName: name, Data: r.copyBytes(r.b[r.off:end])}}
		r.off = end
		return a
	}
	prev := r.limit
	r.limit = end
	obj.Read(r, field)
	r.limit = prev
	if r.err != nil {
		return AnyData{}
	}
	r.off = end
	return AnyData{Object: obj}
}
