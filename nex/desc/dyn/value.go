// Package dyn encodes and decodes NEX values by description at run time: the
// dissector names and decodes the parameters of every described method with it,
// and `gamewire nex call` encodes a method's parameters from JSON and decodes the
// response.
//
// A Codec holds a resolved description Set (package nex/desc) and the settings of
// one connection (PID size, structure headers) with its NEX version. Decode
// turns bytes into a Value tree whose structure fields keep their description
// names and wire order, structure levels their revisions, AnyData objects their
// class (decoded through the Set when it describes the class), enums their value
// names. Errors name the field path and the offset, as types.Reader's do; a
// length or count field is checked against the bytes present before anything is
// allocated, so no input makes Decode panic or allocate beyond a small multiple
// of its size.
//
// Encode writes values given as JSON-like Go values (what encoding/json decodes
// into an any with UseNumber): structures as objects keyed by the description's
// snake_case field names, lists as arrays, numbers as json.Number or Go numbers.
// A field the object omits takes its description default (Field.Default) or its
// type's zero value.
package dyn

import (
	"errors"
	"fmt"
	"math"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// Sentinel errors. Decode errors are *types.Error values wrapping one of the
// types sentinels or these; Encode errors wrap these with the field path.
var (
	// ErrTooDeep: values nest deeper than MaxDepth (a structure that contains
	// itself, or a hostile AnyData chain).
	ErrTooDeep = errors.New("dyn: values nest too deep")
	// ErrUnknownClass: an AnyData names a class the descriptions do not have or
	// one that does not derive from the type's base class.
	ErrUnknownClass = errors.New("dyn: unknown AnyData class")
	// ErrValue: a value given to Encode does not fit its type.
	ErrValue = errors.New("dyn: bad value")
	// ErrUnknownField: an object given to Encode names a field the structure
	// does not have.
	ErrUnknownField = errors.New("dyn: unknown field")
	// ErrDefault: a description's default literal does not parse.
	ErrDefault = errors.New("dyn: bad default in description")
)

// MaxDepth bounds how deep structures, lists, maps and AnyData objects nest.
const MaxDepth = 48

// Codec encodes and decodes values by the descriptions of Set for one
// connection's settings. The NEX version that opens and shuts the descriptions'
// version gates is Version when set, else Settings.NEXVersion() (the
// connection's one version context); Settings' Gates and Learned choose the
// reading of the disputed gates at that version (docs/nex.md "Disputed gates").
type Codec struct {
	Set      *desc.Set
	Settings types.Settings
	Version  types.Version
}

// EffectiveVersion returns the NEX version c encodes and decodes for.
func (c *Codec) EffectiveVersion() types.Version {
	if c.Version != 0 {
		return c.Version
	}
	return c.Settings.NEXVersion()
}

// nintendoClientsGates reports whether c reads the disputed gates as
// NintendoClients does: its settings' reading (types.Settings.NintendoClientsGates)
// at the version c codes for, which Version may set apart from the settings (the
// auto reading depends on it: NintendoClients' with structure headers below
// NEX 3.5).
func (c *Codec) nintendoClientsGates() bool {
	st := c.Settings
	st.Version = c.EffectiveVersion()
	return st.NintendoClientsGates()
}

// Value is one decoded value. Which members hold it depends on Type.Kind:
// numbers (integers, enums, bool, PID, Result, DateTime, floats) through Uint,
// Int, Float and Bool; String and StationURL in Str; Buffer, qBuffer and qUUID
// in Bytes (aliasing the decoded input); List in Items; Map in Pairs; a
// structure in Struct; an AnyData in Str (the class name) and Struct (its
// object when the class is described) or Bytes (its data when it is not); a
// Variant in Variant.
type Value struct {
	Type    *desc.Type
	num     uint64 // integer bits, float bits, bool
	Str     string
	Bytes   []byte
	Items   []Value
	Pairs   []Pair
	Struct  *StructValue
	Variant *types.Variant
}

// Pair is one entry of a Map, in wire order.
type Pair struct {
	Key, Value Value
}

// StructValue is a decoded structure: its levels, the root ancestor's first.
type StructValue struct {
	Struct *desc.Struct
	Levels []Level
}

// Level is one structure level on the wire: a structure of the chain with the
// revision it was read with (the header's version, or the revision the NEX
// version implies when the settings have no headers) and its fields.
type Level struct {
	Struct *desc.Struct
	// Revision is the level's structure version.
	Revision int
	// Header reports whether the level had a structure header on the wire.
	Header bool
	Fields []FieldValue
	// Skipped counts content bytes of the level that no described field read
	// (fields of a newer revision): skipped as NEX clients skip them.
	Skipped int
}

// FieldValue is a named value: a structure field or a method parameter.
type FieldValue struct {
	Name  string
	Value Value
}

// Fields returns every field of s, the root level's first.
func (s *StructValue) Fields() []FieldValue {
	if len(s.Levels) == 1 {
		return s.Levels[0].Fields
	}
	var out []FieldValue
	for _, l := range s.Levels {
		out = append(out, l.Fields...)
	}
	return out
}

// Field returns the value of the field name (the last of that name), and
// whether there is one.
func (s *StructValue) Field(name string) (Value, bool) {
	for i := len(s.Levels) - 1; i >= 0; i-- {
		fs := s.Levels[i].Fields
		for j := len(fs) - 1; j >= 0; j-- {
			if fs[j].Name == name {
				return fs[j].Value, true
			}
		}
	}
	return Value{}, false
}

// Lookup returns the value of the named field among fields (the last of that
// name).
func Lookup(fields []FieldValue, name string) (Value, bool) {
	for j := len(fields) - 1; j >= 0; j-- {
		if fields[j].Name == name {
			return fields[j].Value, true
		}
	}
	return Value{}, false
}

// Kind returns the value's kind (KInvalid for the zero Value).
func (v Value) Kind() desc.Kind {
	if v.Type == nil {
		return desc.KInvalid
	}
	return v.Type.Kind
}

// Uint returns an unsigned integer, PID, Result or DateTime value (and the bits
// of a signed one).
func (v Value) Uint() uint64 { return v.num }

// Int returns a signed integer or enum value, sign-extended from its width.
func (v Value) Int() int64 {
	k := v.Kind()
	if k == desc.KEnum && v.Type.Enum != nil {
		k = v.Type.Enum.Base
	}
	switch k {
	case desc.KSint8:
		return int64(int8(v.num))
	case desc.KSint16:
		return int64(int16(v.num))
	case desc.KSint32:
		return int64(int32(v.num))
	}
	return int64(v.num)
}

// Float returns a Float or Double value.
func (v Value) Float() float64 {
	if v.Kind() == desc.KFloat {
		return float64(math.Float32frombits(uint32(v.num)))
	}
	return math.Float64frombits(v.num)
}

// Bool returns a Bool value.
func (v Value) Bool() bool { return v.num != 0 }

// EnumName returns the name of an enum value, or "".
func (v Value) EnumName() string {
	if v.Kind() != desc.KEnum || v.Type.Enum == nil {
		return ""
	}
	return v.Type.Enum.ValueName(v.Int())
}

// signed reports whether integers of kind k (an enum's base for enums) are signed.
func signed(t *desc.Type) bool {
	k := t.Kind
	if k == desc.KEnum && t.Enum != nil {
		k = t.Enum.Base
	}
	switch k {
	case desc.KSint8, desc.KSint16, desc.KSint32, desc.KSint64:
		return true
	}
	return false
}

// intKind returns the integer kind that carries t on the wire (an enum's base).
func intKind(t *desc.Type) desc.Kind {
	if t.Kind == desc.KEnum {
		if t.Enum != nil {
			return t.Enum.Base
		}
		return desc.KUint32
	}
	return t.Kind
}

func (v Value) String() string { return string(v.AppendText(nil)) }

// pathError is an Encode error with the field path.
func pathError(path string, err error) error {
	if path == "" || err == nil {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
