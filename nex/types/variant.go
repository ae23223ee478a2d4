package types

import (
	"encoding/binary"
	"fmt"
	"math"
)

// VariantType is the type id in front of a Variant's value ("Variant" in types.md).
type VariantType uint8

// Variant type ids.
const (
	VariantNone     VariantType = 0
	VariantSint64   VariantType = 1
	VariantDouble   VariantType = 2
	VariantBool     VariantType = 3
	VariantString   VariantType = 4
	VariantDateTime VariantType = 5
	VariantUint64   VariantType = 6
)

func (t VariantType) String() string {
	switch t {
	case VariantNone:
		return "None"
	case VariantSint64:
		return "Sint64"
	case VariantDouble:
		return "Double"
	case VariantBool:
		return "Bool"
	case VariantString:
		return "String"
	case VariantDateTime:
		return "DateTime"
	case VariantUint64:
		return "Uint64"
	}
	return fmt.Sprintf("VariantType(%d)", uint8(t))
}

// Variant is a tagged value. Type says which field holds it: Int for Sint64,
// Float for Double, Bool, Str for String, and Uint for both Uint64 and DateTime
// (as the DateTime's packed value).
type Variant struct {
	Type  VariantType
	Int   int64
	Uint  uint64
	Float float64
	Bool  bool
	Str   string
}

// AppendVariant appends v: its type id and its value.
func AppendVariant(b []byte, v Variant) ([]byte, error) {
	b = append(b, byte(v.Type))
	switch v.Type {
	case VariantNone:
		return b, nil
	case VariantSint64:
		return binary.LittleEndian.AppendUint64(b, uint64(v.Int)), nil
	case VariantDouble:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float)), nil
	case VariantBool:
		return AppendBool(b, v.Bool), nil
	case VariantString:
		return AppendString(b, v.Str)
	case VariantDateTime, VariantUint64:
		return binary.LittleEndian.AppendUint64(b, v.Uint), nil
	}
	return b[:len(b)-1], fmt.Errorf("%w %d", ErrBadVariant, uint8(v.Type))
}

// ParseVariant decodes a Variant.
func ParseVariant(b []byte) (Variant, int, error) {
	if len(b) < 1 {
		return Variant{}, 0, fmt.Errorf("variant type: %w", ErrTruncated)
	}
	v := Variant{Type: VariantType(b[0])}
	p := b[1:]
	switch v.Type {
	case VariantNone:
		return v, 1, nil
	case VariantSint64, VariantDouble, VariantDateTime, VariantUint64:
		if len(p) < 8 {
			return Variant{}, 0, fmt.Errorf("variant %s value: %w (need 8 bytes, have %d)", v.Type, ErrTruncated, len(p))
		}
		u := binary.LittleEndian.Uint64(p)
		switch v.Type {
		case VariantSint64:
			v.Int = int64(u)
		case VariantDouble:
			v.Float = math.Float64frombits(u)
		default:
			v.Uint = u
		}
		return v, 9, nil
	case VariantBool:
		if len(p) < 1 {
			return Variant{}, 0, fmt.Errorf("variant Bool value: %w", ErrTruncated)
		}
		v.Bool = p[0] != 0
		return v, 2, nil
	case VariantString:
		s, n, err := ParseString(p)
		if err != nil {
			return Variant{}, 0, fmt.Errorf("variant String value: %w", err)
		}
		v.Str = s
		return v, 1 + n, nil
	}
	return Variant{}, 0, fmt.Errorf("%w %d", ErrBadVariant, b[0])
}
