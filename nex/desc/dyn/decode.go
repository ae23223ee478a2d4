package dyn

import (
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// Decode decodes one value of type t from b. It fails when b holds more than the
// value (types.ErrTrailingData).
func (c *Codec) Decode(t *desc.Type, b []byte) (Value, error) {
	r := types.NewReader(b, c.Settings)
	d := decoder{c: c, v: c.EffectiveVersion()}
	v := d.value(&r, t, "value", 0)
	if err := r.Done(); err != nil {
		return Value{}, flatten(err)
	}
	return v, nil
}

// DecodeFields decodes a sequence of fields (a method's parameters or results)
// that fills b exactly.
func (c *Codec) DecodeFields(fields []*desc.Field, b []byte) ([]FieldValue, error) {
	r := types.NewReader(b, c.Settings)
	out, err := c.ReadFields(&r, fields)
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
	d := decoder{c: c, v: c.EffectiveVersion()}
	out := make([]FieldValue, 0, len(fields))
	for _, f := range fields {
		v := d.value(r, f.Type, f.Name, 0)
		if r.Err() != nil {
			break
		}
		out = append(out, FieldValue{Name: f.Name, Value: v})
	}
	return out, d.finish(r)
}

// decoder carries one decoding's codec and version.
type decoder struct {
	c *Codec
	v types.Version
}

// finish returns the Reader's first error with AnyData objects' errors
// rebased (flatten).
func (d *decoder) finish(r *types.Reader) error {
	if r.Err() == nil {
		return nil
	}
	return flatten(r.Err())
}

func (d *decoder) value(r *types.Reader, t *desc.Type, field string, depth int) Value {
	v := Value{Type: t}
	if r.Err() != nil {
		return v
	}
	if depth > MaxDepth {
		r.Fail(field, ErrTooDeep)
		return v
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
		v.Items = types.ReadList(r, field, func(r *types.Reader, field string) Value {
			return d.value(r, t.Elem, field, depth+1)
		})
	case desc.KMap:
		pairs := types.ReadMap(r, field,
			func(r *types.Reader, field string) Value { return d.value(r, t.Key, field, depth+1) },
			func(r *types.Reader, field string) Value { return d.value(r, t.Elem, field, depth+1) })
		if len(pairs) > 0 {
			v.Pairs = make([]Pair, len(pairs))
			for i, p := range pairs {
				v.Pairs[i] = Pair{Key: p.Key, Value: p.Value}
			}
		}
	case desc.KStruct:
		if t.Struct == nil {
			r.Fail(field, fmt.Errorf("%w: type %s is not resolved", ErrUnknownClass, t.Name))
			return v
		}
		v.Struct = d.structure(r, t.Struct, field, depth)
	case desc.KAnyData:
		d.anyData(r, t, &v, field, depth)
	default:
		r.Fail(field, fmt.Errorf("%w: cannot decode kind %s", ErrValue, t.Kind))
	}
	return v
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
	sv := &StructValue{Struct: s}
	chain := s.Chain()
	if s.IsData() {
		// The Data base class is a level of its own, with no fields.
		r.ReadData(field)
	}
	sv.Levels = make([]Level, 0, len(chain))
	for _, st := range chain {
		m := r.EnterStructure(field)
		lv := Level{Struct: st, Revision: m.Version, Header: m.Version >= 0}
		if !lv.Header {
			lv.Revision = st.MaxRevision(d.v)
		}
		for _, f := range st.Fields {
			if !f.Cond.Holds(d.v, lv.Revision) {
				continue
			}
			fv := d.value(r, f.Type, f.Name, depth+1)
			if r.Err() != nil {
				break
			}
			lv.Fields = append(lv.Fields, FieldValue{Name: f.Name, Value: fv})
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
