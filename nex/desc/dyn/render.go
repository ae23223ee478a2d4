package dyn

import (
	"encoding/hex"
	"math"
	"strconv"

	"github.com/gamewire/gamewire/internal/jsonstr"
	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// JSON rendering: what Encode reads back. Structures are objects of their fields
// (the root level's first), lists arrays, maps objects when their keys are
// strings or integers and arrays of {"key", "value"} otherwise, AnyData objects
// {"class": NAME, "value": {...}} ({"class", "hex"} for a class the descriptions
// do not have), byte strings hex, DateTime "YYYY-MM-DD hh:mm:ss", enums their
// value's name (the number when it has none), Variants {"type", "value"}.

// AppendFieldsJSON appends fields as one JSON object.
func AppendFieldsJSON(b []byte, fields []FieldValue) []byte {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, f.Name)
		b = append(b, ':')
		b = f.Value.AppendJSON(b)
	}
	return append(b, '}')
}

// AppendJSON appends v as JSON.
func (v Value) AppendJSON(b []byte) []byte {
	switch v.Kind() {
	case desc.KInvalid, desc.KData:
		return append(b, "null"...)
	case desc.KBool:
		return strconv.AppendBool(b, v.Bool())
	case desc.KUint8, desc.KUint16, desc.KUint32, desc.KUint64, desc.KPID, desc.KResult:
		return strconv.AppendUint(b, v.num, 10)
	case desc.KSint8, desc.KSint16, desc.KSint32, desc.KSint64:
		return strconv.AppendInt(b, v.Int(), 10)
	case desc.KEnum:
		if n := v.EnumName(); n != "" {
			return jsonstr.Append(b, n)
		}
		if signed(v.Type) {
			return strconv.AppendInt(b, v.Int(), 10)
		}
		return strconv.AppendUint(b, v.num, 10)
	case desc.KFloat, desc.KDouble:
		return appendFloatJSON(b, v.Float())
	case desc.KDateTime:
		return jsonstr.Append(b, types.DateTime(v.num).String())
	case desc.KString, desc.KStationURL:
		return jsonstr.Append(b, v.Str)
	case desc.KBuffer, desc.KQBuffer, desc.KQUUID:
		b = append(b, '"')
		b = hex.AppendEncode(b, v.Bytes)
		return append(b, '"')
	case desc.KVariant:
		return appendVariantJSON(b, v.Variant)
	case desc.KList:
		b = append(b, '[')
		for i, it := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.AppendJSON(b)
		}
		return append(b, ']')
	case desc.KMap:
		k := v.Type.Key.Kind
		if k == desc.KString || k.Integer() || k == desc.KPID {
			b = append(b, '{')
			for i, p := range v.Pairs {
				if i > 0 {
					b = append(b, ',')
				}
				if k == desc.KString {
					b = jsonstr.Append(b, p.Key.Str)
				} else {
					b = append(b, '"')
					b = p.Key.AppendJSON(b)
					b = append(b, '"')
				}
				b = append(b, ':')
				b = p.Value.AppendJSON(b)
			}
			return append(b, '}')
		}
		b = append(b, '[')
		for i, p := range v.Pairs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = p.Key.AppendJSON(b)
			b = append(b, `,"value":`...)
			b = p.Value.AppendJSON(b)
			b = append(b, '}')
		}
		return append(b, ']')
	case desc.KStruct:
		if v.Struct == nil {
			return append(b, "null"...)
		}
		return AppendFieldsJSON(b, v.Struct.Fields())
	case desc.KAnyData:
		b = append(b, `{"class":`...)
		b = jsonstr.Append(b, v.Str)
		if v.Struct != nil {
			b = append(b, `,"value":`...)
			b = AppendFieldsJSON(b, v.Struct.Fields())
		} else {
			b = append(b, `,"hex":"`...)
			b = hex.AppendEncode(b, v.Bytes)
			b = append(b, '"')
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

func appendFloatJSON(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return jsonstr.Append(b, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendVariantJSON(b []byte, v *types.Variant) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, v.Type.String())
	b = append(b, `,"value":`...)
	switch v.Type {
	case types.VariantNone:
		b = append(b, "null"...)
	case types.VariantSint64:
		b = strconv.AppendInt(b, v.Int, 10)
	case types.VariantDouble:
		b = appendFloatJSON(b, v.Float)
	case types.VariantBool:
		b = strconv.AppendBool(b, v.Bool)
	case types.VariantString:
		b = jsonstr.Append(b, v.Str)
	case types.VariantDateTime:
		b = jsonstr.Append(b, types.DateTime(v.Uint).String())
	default:
		b = strconv.AppendUint(b, v.Uint, 10)
	}
	return append(b, '}')
}

// AppendFieldsText appends fields on one line as name=value pairs separated by
// spaces, values in the compact text form of AppendText.
func AppendFieldsText(b []byte, fields []FieldValue) []byte {
	for i, f := range fields {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, f.Name...)
		b = append(b, '=')
		b = f.Value.AppendText(b)
	}
	return b
}

// maxTextBytes bounds the bytes of a Buffer AppendText prints.
const maxTextBytes = 32

// AppendText appends v in a compact one-line text form: numbers, quoted
// strings, enums as Name(n), results by name, structures {a=1 b=2}, lists [1 2],
// AnyData Class{...}; byte strings as hex, long ones cut.
func (v Value) AppendText(b []byte) []byte {
	switch v.Kind() {
	case desc.KEnum:
		if n := v.EnumName(); n != "" {
			b = append(b, n...)
			b = append(b, '(')
			b = strconv.AppendInt(b, v.Int(), 10)
			return append(b, ')')
		}
		return strconv.AppendInt(b, v.Int(), 10)
	case desc.KResult:
		return append(b, types.Result(v.num).String()...)
	case desc.KDateTime:
		return append(b, types.DateTime(v.num).String()...)
	case desc.KString, desc.KStationURL:
		return strconv.AppendQuote(b, v.Str)
	case desc.KBuffer, desc.KQBuffer, desc.KQUUID:
		if len(v.Bytes) > maxTextBytes {
			b = hex.AppendEncode(b, v.Bytes[:maxTextBytes])
			b = append(b, "…("...)
			b = strconv.AppendInt(b, int64(len(v.Bytes)), 10)
			return append(b, " bytes)"...)
		}
		if len(v.Bytes) == 0 {
			return append(b, `""`...)
		}
		return hex.AppendEncode(b, v.Bytes)
	case desc.KList:
		b = append(b, '[')
		for i, it := range v.Items {
			if i > 0 {
				b = append(b, ' ')
			}
			b = it.AppendText(b)
		}
		return append(b, ']')
	case desc.KMap:
		b = append(b, '{')
		for i, p := range v.Pairs {
			if i > 0 {
				b = append(b, ' ')
			}
			b = p.Key.AppendText(b)
			b = append(b, ':')
			b = p.Value.AppendText(b)
		}
		return append(b, '}')
	case desc.KStruct:
		if v.Struct == nil {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		b = AppendFieldsText(b, v.Struct.Fields())
		return append(b, '}')
	case desc.KAnyData:
		b = append(b, v.Str...)
		if v.Struct != nil {
			b = append(b, '{')
			b = AppendFieldsText(b, v.Struct.Fields())
			return append(b, '}')
		}
		b = append(b, '(')
		b = hex.AppendEncode(b, v.Bytes[:min(len(v.Bytes), maxTextBytes)])
		return append(b, ')')
	case desc.KVariant:
		if v.Variant == nil {
			return append(b, "none"...)
		}
		return appendVariantJSON(b, v.Variant)
	}
	return v.AppendJSON(b)
}
