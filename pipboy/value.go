package pipboy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// ValueType is the type byte of a database value ("Type 3: Data Update" in the Pip-Boy PROTOCOL.md).
type ValueType uint8

// Value types, as the spec's table names them.
const (
	TypeBool   ValueType = 0 // u8, true if non-zero
	TypeInt8   ValueType = 1 // i8
	TypeUint8  ValueType = 2 // u8
	TypeInt32  ValueType = 3 // i32 LE
	TypeUint32 ValueType = 4 // u32 LE
	TypeFloat  ValueType = 5 // f32 LE
	TypeString ValueType = 6 // NUL-terminated bytes
	TypeArray  ValueType = 7 // u16 count, u32 ids[count]
	TypeObject ValueType = 8 // u16 count, (u32 id, NUL-terminated key)[count], u16 count, u32 removed ids[count]
)

func (t ValueType) String() string {
	switch t {
	case TypeBool:
		return "BOOLEAN"
	case TypeInt8:
		return "INT8"
	case TypeUint8:
		return "UINT8"
	case TypeInt32:
		return "INT32"
	case TypeUint32:
		return "UINT32"
	case TypeFloat:
		return "FLOAT"
	case TypeString:
		return "STRING"
	case TypeArray:
		return "ARRAY"
	case TypeObject:
		return "OBJECT"
	}
	return fmt.Sprintf("ValueType(%d)", uint8(t))
}

// Valid reports whether t is one of the nine value types.
func (t ValueType) Valid() bool { return t <= TypeObject }

// entryHeaderSize is the UpdateHeader: u8 type, u32 id.
const entryHeaderSize = 5

// IDList is a packed list of little-endian u32 value ids as it appears on the wire
// (array elements, object remove lists). It aliases the buffer it was parsed from.
type IDList []byte

// Len returns the number of ids.
func (l IDList) Len() int { return len(l) / 4 }

// At returns the i-th id.
func (l IDList) At(i int) uint32 { return binary.LittleEndian.Uint32(l[4*i:]) }

// AppendIDs appends ids to l in wire form.
func AppendIDs(l IDList, ids ...uint32) IDList {
	for _, id := range ids {
		l = binary.LittleEndian.AppendUint32(l, id)
	}
	return l
}

// KeyList is the packed add list of an object, (u32 id, NUL-terminated key) pairs as
// on the wire. It aliases the buffer it was parsed from.
type KeyList struct {
	n   int
	raw []byte
}

// Len returns the number of (key, id) pairs.
func (l KeyList) Len() int { return l.n }

// All calls yield for every pair in order until it returns false. The key aliases the input.
func (l KeyList) All(yield func(key []byte, id uint32) bool) {
	b := l.raw
	for range l.n {
		id := binary.LittleEndian.Uint32(b)
		k := bytes.IndexByte(b[4:], 0)
		if !yield(b[4:4+k], id) {
			return
		}
		b = b[4+k+1:]
	}
}

// AppendKey appends one (key, id) pair to l. Keys must not contain NUL.
func (l KeyList) AppendKey(key string, id uint32) KeyList {
	l.raw = binary.LittleEndian.AppendUint32(l.raw, id)
	l.raw = append(l.raw, key...)
	l.raw = append(l.raw, 0)
	l.n++
	return l
}

// Entry is one value of a data update: the UpdateHeader and the data of its type.
// Which fields are meaningful depends on Type. Str, Elems, Add and Remove alias the
// parsed input.
type Entry struct {
	Type   ValueType
	ID     uint32
	Bool   bool    // TypeBool
	Int    int32   // TypeInt8, TypeInt32
	Uint   uint32  // TypeUint8, TypeUint32
	Float  float32 // TypeFloat
	Str    []byte  // TypeString, without the terminating NUL
	Elems  IDList  // TypeArray
	Add    KeyList // TypeObject: (key, id) pairs to add
	Remove IDList  // TypeObject: ids of values the object stops mapping to
}

// ParseEntry parses one value from the start of b and returns it with the number of
// bytes used. Offsets in errors are relative to b.
func ParseEntry(b []byte) (Entry, int, error) {
	if len(b) < entryHeaderSize {
		return Entry{}, 0, fmt.Errorf("value header at offset 0: %w: have %d of %d bytes", ErrTruncated, len(b), entryHeaderSize)
	}
	e := Entry{Type: ValueType(b[0]), ID: binary.LittleEndian.Uint32(b[1:])}
	d := b[entryHeaderSize:]
	// short builds the error for a field that does not fit; it runs only on failure.
	short := func(field string, i, n int) error {
		if i >= 0 {
			field = fmt.Sprintf("%s[%d] %s", "add", i, field)
		}
		return fmt.Errorf("%s value id %d: %s at offset %d: %w: need %d bytes, have %d", e.Type, e.ID, field, len(b)-len(d), ErrTruncated, n, len(d))
	}
	switch e.Type {
	case TypeBool, TypeInt8, TypeUint8:
		if len(d) < 1 {
			return Entry{}, 0, short("data", -1, 1)
		}
		switch e.Type {
		case TypeBool:
			e.Bool = d[0] != 0
		case TypeInt8:
			e.Int = int32(int8(d[0]))
		default:
			e.Uint = uint32(d[0])
		}
		return e, entryHeaderSize + 1, nil
	case TypeInt32, TypeUint32, TypeFloat:
		if len(d) < 4 {
			return Entry{}, 0, short("data", -1, 4)
		}
		v := binary.LittleEndian.Uint32(d)
		switch e.Type {
		case TypeInt32:
			e.Int = int32(v)
		case TypeUint32:
			e.Uint = v
		default:
			e.Float = math.Float32frombits(v)
		}
		return e, entryHeaderSize + 4, nil
	case TypeString:
		k := bytes.IndexByte(d, 0)
		if k < 0 {
			return Entry{}, 0, fmt.Errorf("STRING value id %d: string at offset %d: %w: no terminating NUL", e.ID, entryHeaderSize, ErrTruncated)
		}
		e.Str = d[:k:k]
		return e, entryHeaderSize + k + 1, nil
	case TypeArray:
		if len(d) < 2 {
			return Entry{}, 0, short("element count", -1, 2)
		}
		n := int(binary.LittleEndian.Uint16(d))
		d = d[2:]
		if len(d) < 4*n {
			return Entry{}, 0, short("element ids", -1, 4*n)
		}
		e.Elems = IDList(d[: 4*n : 4*n])
		return e, entryHeaderSize + 2 + 4*n, nil
	case TypeObject:
		if len(d) < 2 {
			return Entry{}, 0, short("add count", -1, 2)
		}
		n := int(binary.LittleEndian.Uint16(d))
		d = d[2:]
		start := d
		for i := range n {
			if len(d) < 4 {
				return Entry{}, 0, short("id", i, 4)
			}
			k := bytes.IndexByte(d[4:], 0)
			if k < 0 {
				return Entry{}, 0, fmt.Errorf("OBJECT value id %d: add[%d] key at offset %d: %w: no terminating NUL", e.ID, i, len(b)-len(d)+4, ErrTruncated)
			}
			d = d[4+k+1:]
		}
		used := len(start) - len(d)
		e.Add = KeyList{n: n, raw: start[:used:used]}
		if len(d) < 2 {
			return Entry{}, 0, short("remove count", -1, 2)
		}
		r := int(binary.LittleEndian.Uint16(d))
		d = d[2:]
		if len(d) < 4*r {
			return Entry{}, 0, short("remove ids", -1, 4*r)
		}
		e.Remove = IDList(d[: 4*r : 4*r])
		d = d[4*r:]
		return e, len(b) - len(d), nil
	}
	return Entry{}, 0, fmt.Errorf("value id %d: type field at offset 0: %w %d", e.ID, ErrUnknownValueType, b[0])
}

// Append appends the wire form of e to b.
func (e *Entry) Append(b []byte) ([]byte, error) {
	if !e.Type.Valid() {
		return b, fmt.Errorf("append value id %d: %w %d", e.ID, ErrUnknownValueType, e.Type)
	}
	b = append(b, byte(e.Type))
	b = binary.LittleEndian.AppendUint32(b, e.ID)
	switch e.Type {
	case TypeBool:
		if e.Bool {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case TypeInt8:
		return append(b, byte(int8(e.Int))), nil
	case TypeUint8:
		return append(b, byte(e.Uint)), nil
	case TypeInt32:
		return binary.LittleEndian.AppendUint32(b, uint32(e.Int)), nil
	case TypeUint32:
		return binary.LittleEndian.AppendUint32(b, e.Uint), nil
	case TypeFloat:
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(e.Float)), nil
	case TypeString:
		if bytes.IndexByte(e.Str, 0) >= 0 {
			return b, fmt.Errorf("append STRING value id %d: string contains NUL", e.ID)
		}
		b = append(b, e.Str...)
		return append(b, 0), nil
	case TypeArray:
		if e.Elems.Len() > 0xFFFF {
			return b, fmt.Errorf("append ARRAY value id %d: %d elements exceed 65535", e.ID, e.Elems.Len())
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(e.Elems.Len()))
		return append(b, e.Elems[:4*e.Elems.Len()]...), nil
	default: // TypeObject
		if e.Add.n > 0xFFFF || e.Remove.Len() > 0xFFFF {
			return b, fmt.Errorf("append OBJECT value id %d: more than 65535 keys or removals", e.ID)
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(e.Add.n))
		b = append(b, e.Add.raw...)
		b = binary.LittleEndian.AppendUint16(b, uint16(e.Remove.Len()))
		return append(b, e.Remove[:4*e.Remove.Len()]...), nil
	}
}

// Equal reports whether e and o encode the same value.
func (e *Entry) Equal(o *Entry) bool {
	a, _ := e.Append(nil)
	c, _ := o.Append(nil)
	return bytes.Equal(a, c)
}

// Entries iterates over the values of a data update payload. It stops at the first
// error, which Err reports; offsets in errors are relative to the payload.
type Entries struct {
	b   []byte
	off int
	err error
}

// NewEntries returns an iterator over the values of payload.
func NewEntries(payload []byte) Entries { return Entries{b: payload} }

// Next parses the next value. It returns false at the end of the payload or on error.
func (it *Entries) Next() (Entry, bool) {
	if it.err != nil || it.off >= len(it.b) {
		return Entry{}, false
	}
	e, n, err := ParseEntry(it.b[it.off:])
	if err != nil {
		it.err = fmt.Errorf("pipboy: data update value at offset %d: %w", it.off, err)
		return Entry{}, false
	}
	it.off += n
	return e, true
}

// Offset returns the payload offset of the next value.
func (it *Entries) Offset() int { return it.off }

// Err returns the error that stopped iteration, if any.
func (it *Entries) Err() error { return it.err }
