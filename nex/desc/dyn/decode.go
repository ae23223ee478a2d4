package dyn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// MaxValues bounds the values one decoding builds (list items and map entries
// count one each, structures one per level): past it decoding fails with
// ErrTooLarge. A list's count is checked against the bytes left, but a value
// takes more memory than its bytes on the wire, so a large message of one-byte
// items would otherwise cost a hundred times its size.
const MaxValues = 1 << 18

// ErrTooLarge: a message holds more than MaxValues values.
var ErrTooLarge = errors.New("dyn: too many values in one message")

// Decode decodes one value of type t from b. It fails when b holds more than the
// value (types.ErrTrailingData).
func (c *Codec) Decode(t *desc.Type, b []byte) (Value, error) {
	r := types.NewReader(b, c.Settings)
	d := decoder{c: c, v: c.EffectiveVersion(), nc: c.nintendoClientsGates(), s: new(Scratch)}
	var v Value
	d.value(&r, t, "value", 0, &v)
	if err := r.Done(); err != nil {
		return Value{}, flatten(err)
	}
	return v, nil
}

// DecodeFields decodes a sequence of fields (a method's parameters or results)
// that fills b exactly.
func (c *Codec) DecodeFields(fields []*desc.Field, b []byte) ([]FieldValue, error) {
	return c.DecodeFieldsScratch(fields, b, new(Scratch))
}

// DecodeFieldsScratch is DecodeFields taking the memory of the values from s
// (see Scratch): after s.Reset the values it returned must not be used.
func (c *Codec) DecodeFieldsScratch(fields []*desc.Field, b []byte, s *Scratch) ([]FieldValue, error) {
	r := types.NewReader(b, c.Settings)
	out, err := c.readFields(&r, fields, s)
	if err != nil {
		return out, err
	}
	if err := r.Done(); err != nil {
		return out, flatten(err)
	}
	return out, nil
}

// ReadFields decodes fields from r, which may hold more after them. On error it
// returns the fields decoded before the failing one and an error naming the
// failing field's path and offset.
func (c *Codec) ReadFields(r *types.Reader, fields []*desc.Field) ([]FieldValue, error) {
	return c.readFields(r, fields, new(Scratch))
}

func (c *Codec) readFields(r *types.Reader, fields []*desc.Field, s *Scratch) ([]FieldValue, error) {
	d := decoder{c: c, v: c.EffectiveVersion(), nc: c.nintendoClientsGates(), s: s}
	out := s.fields.take(len(fields))[:0]
	for _, f := range fields {
		if !f.Cond.Reading(d.nc).Holds(d.v, 0) {
			continue // a parameter of other NEX versions
		}
		out = append(out, FieldValue{Name: f.Name})
		d.value(r, f.Type, f.Name, 0, &out[len(out)-1].Value)
		if r.Err() != nil {
			out = out[:len(out)-1]
			break
		}
	}
	return out, d.finish(r)
}

// Scratch is memory that decodings reuse: a reader of many messages (the
// dissector) keeps one and resets it between messages, so decoding allocates
// only the strings it copies. The zero Scratch is ready.
type Scratch struct {
	values  pool[Value]
	pairs   pool[Pair]
	fields  pool[FieldValue]
	structs pool[StructValue]
	levels  pool[Level]
	count   int // values decoded since the last Reset (MaxValues)
	chains  map[*desc.Struct][]*desc.Struct
}

// chain returns st.Chain(), computed once per structure.
func (s *Scratch) chain(st *desc.Struct) []*desc.Struct {
	if c, ok := s.chains[st]; ok {
		return c
	}
	if s.chains == nil {
		s.chains = map[*desc.Struct][]*desc.Struct{}
	}
	c := st.Chain()
	s.chains[st] = c
	return c
}

// Reset makes the memory of every value decoded with s reusable.
func (s *Scratch) Reset() {
	s.values.reset()
	s.pairs.reset()
	s.fields.reset()
	s.structs.reset()
	s.levels.reset()
	s.count = 0
}

// poolChunk is the size of a pool's chunks; larger requests get their own slice.
const poolChunk = 256

// pool hands out slices of chunks it keeps across resets.
type pool[T any] struct {
	chunks [][]T
	ci     int // current chunk
	off    int // used part of it
}

// take returns n elements, with whatever a previous use left in them.
func (p *pool[T]) take(n int) []T {
	if n > poolChunk {
		return make([]T, n)
	}
	for {
		if p.ci < len(p.chunks) {
			if c := p.chunks[p.ci]; p.off+n <= len(c) {
				out := c[p.off : p.off+n : p.off+n]
				p.off += n
				return out
			}
			p.ci++
			p.off = 0
			continue
		}
		p.chunks = append(p.chunks, make([]T, poolChunk))
	}
}

func (p *pool[T]) reset() { p.ci, p.off = 0, 0 }

// decoder carries one decoding's codec, version and memory.
type decoder struct {
	c  *Codec
	v  types.Version
	nc bool // disputed gates in NintendoClients' reading (Codec.nintendoClientsGates)
	s  *Scratch
}

// spend counts n values against MaxValues and fails r past it.
func (d *decoder) spend(r *types.Reader, field string, n int) bool {
	d.s.count += n
	if d.s.count > MaxValues {
		r.Fail(field, fmt.Errorf("%w (more than %d)", ErrTooLarge, MaxValues))
		return false
	}
	return true
}

// finish returns the Reader's first error with AnyData objects' errors
// rebased (flatten).
func (d *decoder) finish(r *types.Reader) error {
	if r.Err() == nil {
		return nil
	}
	return flatten(r.Err())
}

// value decodes a value of type t into *v.
func (d *decoder) value(r *types.Reader, t *desc.Type, field string, depth int, v *Value) {
	*v = Value{Type: t}
	if r.Err() != nil {
		return
	}
	if depth > MaxDepth {
		r.Fail(field, ErrTooDeep)
		return
	}
	switch t.Kind {
	case desc.KUint8, desc.KSint8:
		v.num = uint64(r.U8(field))
	case desc.KUint16, desc.KSint16:
		v.num = uint64(r.U16(field))
	case desc.KUint32, desc.KSint32, desc.KFloat, desc.KResult:
		v.num = uint64(r.U32(field))
	case desc.KUint64, desc.KSint64, desc.KDouble, desc.KDateTime:
		v.num = r.U64(field)
	case desc.KBool:
		if r.Bool(field) {
			v.num = 1
		}
	case desc.KEnum:
		v.num = d.int(r, intKind(t), field)
	case desc.KPID:
		v.num = uint64(r.PID(field))
	case desc.KString:
		v.Str = r.String(field)
	case desc.KStationURL:
		u := r.StationURL(field)
		v.Str = u.String()
	case desc.KBuffer:
		v.Bytes = r.Buffer(field)
	case desc.KQBuffer:
		v.Bytes = r.QBuffer(field)
	case desc.KQUUID:
		v.Bytes = r.Bytes(field, 16)
	case desc.KVariant:
		x := r.Variant(field)
		if r.Err() == nil {
			v.Variant = &x
		}
	case desc.KData:
		r.ReadData(field)
	case desc.KList:
		n := d.count(r, field)
		if n == 0 || !d.spend(r, field, n) {
			return
		}
		v.Items = d.s.values.take(n)
		for i := range v.Items {
			d.value(r, t.Elem, field, depth+1, &v.Items[i])
			if r.Err() != nil {
				itemPath(r, field, i)
				v.Items = v.Items[:i]
				break
			}
		}
	case desc.KMap:
		n := d.count(r, field)
		if n == 0 || !d.spend(r, field, 2*n) {
			return
		}
		v.Pairs = d.s.pairs.take(n)
		for i := range v.Pairs {
			p := &v.Pairs[i]
			d.value(r, t.Key, field, depth+1, &p.Key)
			d.value(r, t.Elem, field, depth+1, &p.Value)
			if r.Err() != nil {
				itemPath(r, field, i)
				v.Pairs = v.Pairs[:i]
				break
			}
		}
	case desc.KStruct:
		if t.Struct == nil {
			r.Fail(field, fmt.Errorf("%w: type %s is not resolved", ErrUnknownClass, t.Name))
			return
		}
		v.Struct = d.structure(r, t.Struct, field, depth)
	case desc.KAnyData:
		d.anyData(r, t, v, field, depth)
	default:
		r.Fail(field, fmt.Errorf("%w: cannot decode kind %s", ErrValue, t.Kind))
	}
}

// count reads a List's or Map's 32-bit count and checks it against the bytes
// left (every item takes at least one byte), as types.ReadList does.
func (d *decoder) count(r *types.Reader, field string) int {
	b := r.Bytes(field, 4)
	if b == nil {
		return 0
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(r.Remaining()) {
		left := r.Remaining()
		r.Fail(field, fmt.Errorf("list count %d: %w (only %d bytes left)", n, types.ErrBadLength, left))
		return 0
	}
	return int(n)
}

// itemPath puts item i's index into the path of the error it raised, as
// types.ReadList does: "field[i].sub".
func itemPath(r *types.Reader, field string, i int) {
	var e *types.Error
	if !errors.As(r.Err(), &e) {
		return
	}
	rest := "." + e.Field
	if len(e.Field) >= len(field) && e.Field[:len(field)] == field {
		rest = e.Field[len(field):]
	}
	e.Field = field + "[" + strconv.Itoa(i) + "]" + rest
}

// int reads an integer of kind k.
func (d *decoder) int(r *types.Reader, k desc.Kind, field string) uint64 {
	switch k.Size() {
	case 1:
		return uint64(r.U8(field))
	case 2:
		return uint64(r.U16(field))
	case 4:
		return uint64(r.U32(field))
	}
	return r.U64(field)
}

// structure reads the levels of s, its root ancestor's first.
func (d *decoder) structure(r *types.Reader, s *desc.Struct, field string, depth int) *StructValue {
	chain := d.s.chain(s)
	if !d.spend(r, field, len(chain)) {
		return nil
	}
	sv := &d.s.structs.take(1)[0]
	*sv = StructValue{Struct: s}
	if s.IsData() {
		// The Data base class is a level of its own, with no fields.
		r.ReadData(field)
	}
	sv.Levels = d.s.levels.take(len(chain))[:0]
	for _, st := range chain {
		m := r.EnterStructure(field)
		lv := Level{Struct: st, Revision: m.Version, Header: m.Version >= 0, Fields: d.s.fields.take(len(st.Fields))[:0]}
		if !lv.Header {
			lv.Revision = st.MaxRevision(d.v)
		}
		for _, f := range st.Fields {
			if !f.Cond.Reading(d.nc).Holds(d.v, lv.Revision) {
				continue
			}
			lv.Fields = append(lv.Fields, FieldValue{Name: f.Name})
			d.value(r, f.Type, f.Name, depth+1, &lv.Fields[len(lv.Fields)-1].Value)
			if r.Err() != nil {
				lv.Fields = lv.Fields[:len(lv.Fields)-1]
				break
			}
		}
		if lv.Header && r.Err() == nil {
			lv.Skipped = r.Remaining()
		}
		r.LeaveStructure(m)
		sv.Levels = append(sv.Levels, lv)
		if r.Err() != nil {
			break
		}
	}
	return sv
}

// anyData reads an AnyDataHolder and decodes its object when the Set describes
// its class.
func (d *decoder) anyData(r *types.Reader, t *desc.Type, v *Value, field string, depth int) {
	h := r.AnyDataHolder(field)
	if r.Err() != nil {
		return
	}
	v.Str = h.TypeName
	var st *desc.Struct
	if d.c.Set != nil {
		st = d.c.Set.Struct(h.TypeName)
	}
	if st == nil || !derives(st, t) {
		v.Bytes = h.Data
		return
	}
	// The object's bytes end where the holder does: the object is decoded by a
	// Reader of its own, and its error travels in an anyError that finish
	// rebases onto this input.
	sub := types.NewReader(h.Data, r.Settings())
	v.Struct = d.structure(&sub, st, "", depth+1)
	err := sub.Done()
	if err == nil {
		return
	}
	e := flatten(err)
	if e.Field == "end of parameters" {
		e = &types.Error{Field: " (" + h.TypeName + ")", Offset: e.Offset, Err: fmt.Errorf("%w after the object's fields", e.Err)}
	}
	r.Fail(field, &anyError{dataOff: r.Offset() - len(h.Data), e: e})
}

// anyError carries the error of an AnyData object, decoded by a Reader of its
// own whose offsets start at dataOff of the enclosing input.
type anyError struct {
	dataOff int
	e       *types.Error
}

func (a *anyError) Error() string { return a.e.Error() }
func (a *anyError) Unwrap() error { return a.e }

// flatten turns an error of the Reader into one *types.Error whose path runs
// into AnyData objects and whose offset counts from the start of the input.
func flatten(err error) *types.Error {
	var te *types.Error
	if !errors.As(err, &te) {
		return &types.Error{Field: "value", Err: err}
	}
	var ae *anyError
	if !errors.As(te.Err, &ae) {
		return te
	}
	return &types.Error{Field: te.Field + ae.e.Field, Offset: ae.dataOff + ae.e.Offset, Err: ae.e.Err}
}

// derives reports whether class st may stand where t (an AnyData of a base
// class, or of any Data) is expected.
func derives(st *desc.Struct, t *desc.Type) bool {
	if t.Name == "" || t.Name == "Data" {
		return true
	}
	for p := st; p != nil; p = p.ParentStruct {
		if p.Name == t.Name || p == t.Struct {
			return true
		}
	}
	return false
}
