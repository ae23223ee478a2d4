package dyn

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// Encode appends the encoding of x as type t. x is a JSON-like value: nil (the
// type's zero value), bool, string, json.Number or a Go number, []any, or
// map[string]any; see AppendFields for structures.
func (c *Codec) Encode(b []byte, t *desc.Type, x any) ([]byte, error) {
	e := encoder{c: c, v: c.EffectiveVersion(), nc: c.nintendoClientsGates()}
	return e.value(b, t, x, "value", 0)
}

// AppendFields appends fields (a method's parameters) from obj, keyed by the
// fields' names. A field obj omits takes its description default or its type's
// zero value; a key that names no field is an error (ErrUnknownField).
func (c *Codec) AppendFields(b []byte, fields []*desc.Field, obj map[string]any) ([]byte, error) {
	e := encoder{c: c, v: c.EffectiveVersion(), nc: c.nintendoClientsGates()}
	if err := checkKeys(obj, fields, ""); err != nil {
		return b, err
	}
	var err error
	for _, f := range fields {
		if !f.Cond.Reading(e.nc).Holds(e.v, 0) {
			continue // a parameter of other NEX versions
		}
		if b, err = e.field(b, f, obj, f.Name, 0); err != nil {
			return b, err
		}
	}
	return b, nil
}

type encoder struct {
	c  *Codec
	v  types.Version
	nc bool // disputed gates in NintendoClients' reading (Codec.nintendoClientsGates)
}

// checkKeys reports a key of obj that names none of fields.
func checkKeys(obj map[string]any, fields []*desc.Field, path string) error {
	for k := range obj {
		found := false
		for _, f := range fields {
			if f.Name == k {
				found = true
				break
			}
		}
		if !found {
			names := make([]string, 0, len(fields))
			seen := map[string]bool{}
			for _, f := range fields {
				if !seen[f.Name] {
					seen[f.Name] = true
					names = append(names, f.Name)
				}
			}
			return pathError(path, fmt.Errorf("%w %q (fields: %s)", ErrUnknownField, k, strings.Join(names, ", ")))
		}
	}
	return nil
}

// field appends field f from obj, or its default.
func (e *encoder) field(b []byte, f *desc.Field, obj map[string]any, path string, depth int) ([]byte, error) {
	x, ok := obj[f.Name]
	if !ok && f.Default != "" {
		d, err := ParseDefault(f.Default)
		if err != nil {
			return b, pathError(path, err)
		}
		x = d
	}
	return e.value(b, f.Type, x, path, depth)
}

func (e *encoder) value(b []byte, t *desc.Type, x any, path string, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return b, pathError(path, ErrTooDeep)
	}
	bad := func(format string, args ...any) ([]byte, error) {
		return b, pathError(path, fmt.Errorf("%w: %s", ErrValue, fmt.Sprintf(format, args...)))
	}
	switch t.Kind {
	case desc.KBool:
		v, ok := x.(bool)
		if x != nil && !ok {
			return bad("want true or false for %s, got %s", t, describe(x))
		}
		return types.AppendBool(b, v), nil
	case desc.KUint8, desc.KUint16, desc.KUint32, desc.KUint64, desc.KSint8, desc.KSint16, desc.KSint32, desc.KSint64, desc.KEnum:
		n, err := e.integer(t, x)
		if err != nil {
			return b, pathError(path, err)
		}
		return appendInt(b, intKind(t).Size(), n), nil
	case desc.KPID, desc.KResult:
		n, err := parseUint(x, 64)
		if err != nil {
			return bad("%s: %v", t, err)
		}
		if t.Kind == desc.KResult {
			if n > math.MaxUint32 {
				return bad("result %d does not fit 32 bits", n)
			}
			return types.AppendResult(b, types.Result(n)), nil
		}
		out, err := types.AppendPID(b, e.c.Settings, types.PID(n))
		return out, pathError(path, err)
	case desc.KFloat, desc.KDouble:
		f, err := parseFloat(x)
		if err != nil {
			return bad("%s: %v", t, err)
		}
		if t.Kind == desc.KFloat {
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(f)), nil
	case desc.KDateTime:
		d, err := parseDateTime(x)
		if err != nil {
			return bad("%v", err)
		}
		return types.AppendDateTime(b, d), nil
	case desc.KString:
		s, ok := x.(string)
		if x != nil && !ok {
			return bad("want a string, got %s", describe(x))
		}
		out, err := types.AppendString(b, s)
		return out, pathError(path, err)
	case desc.KStationURL:
		s, ok := x.(string)
		if x != nil && !ok {
			return bad("want a station url string, got %s", describe(x))
		}
		u, err := types.ParseStationURLString(s)
		if err != nil {
			return b, pathError(path, err)
		}
		out, err := types.AppendStationURL(b, u)
		return out, pathError(path, err)
	case desc.KBuffer, desc.KQBuffer, desc.KQUUID:
		p, err := parseBytes(x)
		if err != nil {
			return bad("%s: %v", t, err)
		}
		switch t.Kind {
		case desc.KBuffer:
			out, err := types.AppendBuffer(b, p)
			return out, pathError(path, err)
		case desc.KQBuffer:
			out, err := types.AppendQBuffer(b, p)
			return out, pathError(path, err)
		}
		if x == nil {
			p = make([]byte, 16)
		}
		if len(p) != 16 {
			return bad("a qUUID is 16 bytes, got %d", len(p))
		}
		return append(b, p...), nil
	case desc.KVariant:
		v, err := parseVariant(x)
		if err != nil {
			return bad("%v", err)
		}
		out, err := types.AppendVariant(b, v)
		return out, pathError(path, err)
	case desc.KData:
		return types.AppendData(b, e.c.Settings), nil
	case desc.KList:
		var items []any
		switch v := x.(type) {
		case nil:
		case []any:
			items = v
		default:
			return bad("want an array for %s, got %s", t, describe(x))
		}
		if t.Elem.Kind == desc.KUint8 {
			if s, ok := x.(string); ok { // list<u8> may be given as hex
				p, err := parseBytes(s)
				if err != nil {
					return bad("%v", err)
				}
				b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
				return append(b, p...), nil
			}
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(items)))
		var err error
		for i, it := range items {
			if b, err = e.value(b, t.Elem, it, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	case desc.KMap:
		return e.mapValue(b, t, x, path, depth)
	case desc.KStruct:
		if t.Struct == nil {
			return bad("type %s is not resolved", t.Name)
		}
		obj, ok := x.(map[string]any)
		if x != nil && !ok {
			return bad("want an object for %s, got %s", t, describe(x))
		}
		return e.structure(b, t.Struct, obj, path, depth)
	case desc.KAnyData:
		return e.anyData(b, t, x, path, depth)
	}
	return bad("cannot encode %s", t)
}

// structure appends the levels of s from obj.
func (e *encoder) structure(b []byte, s *desc.Struct, obj map[string]any, path string, depth int) ([]byte, error) {
	var all []*desc.Field
	chain := s.Chain()
	for _, st := range chain {
		all = append(all, st.Fields...)
	}
	if err := checkKeys(obj, all, path); err != nil {
		return b, err
	}
	if s.IsData() {
		b = types.AppendData(b, e.c.Settings)
	}
	for _, st := range chain {
		rev := st.MaxRevision(e.v)
		var mark int
		b, mark = types.BeginStructure(b, e.c.Settings, uint8(rev))
		var err error
		for _, f := range st.Fields {
			if !f.Cond.Reading(e.nc).Holds(e.v, rev) {
				continue
			}
			if b, err = e.field(b, f, obj, path+"."+f.Name, depth+1); err != nil {
				return b, err
			}
		}
		if b, err = types.EndStructure(b, mark); err != nil {
			return b, pathError(path, err)
		}
	}
	return b, nil
}

// anyData appends an AnyDataHolder from {"class": NAME, "value": {...}} (or, for
// a class the descriptions do not have, {"class": NAME, "hex": "..."}). An
// AnyData of a named base class with no value holds that class with its defaults.
func (e *encoder) anyData(b []byte, t *desc.Type, x any, path string, depth int) ([]byte, error) {
	obj, ok := x.(map[string]any)
	if x != nil && !ok {
		return b, pathError(path, fmt.Errorf("%w: want {\"class\": NAME, \"value\": {...}} for %s, got %s", ErrValue, t, describe(x)))
	}
	class, hasClass := obj["class"].(string)
	if c, ok := obj["class"]; ok && !hasClass {
		return b, pathError(path, fmt.Errorf("%w: class must be a string, got %s", ErrValue, describe(c)))
	}
	for k := range obj {
		if k != "class" && k != "value" && k != "hex" {
			return b, pathError(path, fmt.Errorf("%w %q: an AnyData is {\"class\": NAME, \"value\": {...}}", ErrUnknownField, k))
		}
	}
	if !hasClass {
		if t.Struct == nil {
			return b, pathError(path, fmt.Errorf("%w: %s needs {\"class\": NAME, \"value\": {...}}", ErrValue, t))
		}
		class = t.Struct.Name
	}
	if hx, ok := obj["hex"]; ok {
		p, err := parseBytes(hx)
		if err != nil {
			return b, pathError(path, fmt.Errorf("%w: hex: %v", ErrValue, err))
		}
		out, err := types.AppendAnyDataHolder(b, types.AnyDataHolder{TypeName: class, Data: p})
		return out, pathError(path, err)
	}
	var st *desc.Struct
	if e.c.Set != nil {
		st = e.c.Set.Struct(class)
	}
	if st == nil {
		return b, pathError(path, fmt.Errorf("%w %q (give its bytes as {\"class\": %q, \"hex\": \"...\"})", ErrUnknownClass, class, class))
	}
	if !derives(st, t) {
		return b, pathError(path, fmt.Errorf("%w: %s does not derive from %s", ErrUnknownClass, class, t.Name))
	}
	inner, _ := obj["value"].(map[string]any)
	if v, ok := obj["value"]; ok && v != nil && inner == nil {
		return b, pathError(path, fmt.Errorf("%w: value of %s must be an object, got %s", ErrValue, class, describe(v)))
	}
	data, err := e.structure(nil, st, inner, path, depth+1)
	if err != nil {
		return b, err
	}
	out, err := types.AppendAnyDataHolder(b, types.AnyDataHolder{TypeName: class, Data: data})
	return out, pathError(path, err)
}

// mapValue appends a Map from an object (string or integer keys, in key order)
// or an array of {"key": K, "value": V}.
func (e *encoder) mapValue(b []byte, t *desc.Type, x any, path string, depth int) ([]byte, error) {
	type kv struct {
		k, v any
		name string
	}
	var pairs []kv
	switch m := x.(type) {
	case nil:
	case map[string]any:
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var key any = k
			if t.Key.Kind != desc.KString {
				key = json.Number(k)
			}
			pairs = append(pairs, kv{key, m[k], k})
		}
	case []any:
		for i, it := range m {
			o, ok := it.(map[string]any)
			if !ok {
				return b, pathError(path, fmt.Errorf("%w: map entry %d: want {\"key\": K, \"value\": V}, got %s", ErrValue, i, describe(it)))
			}
			pairs = append(pairs, kv{o["key"], o["value"], strconv.Itoa(i)})
		}
	default:
		return b, pathError(path, fmt.Errorf("%w: want an object or an array of {\"key\", \"value\"} for %s, got %s", ErrValue, t, describe(x)))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(pairs)))
	var err error
	for _, p := range pairs {
		if b, err = e.value(b, t.Key, p.k, path+"["+p.name+"] key", depth+1); err != nil {
			return b, err
		}
		if b, err = e.value(b, t.Elem, p.v, path+"["+p.name+"]", depth+1); err != nil {
			return b, err
		}
	}
	return b, nil
}

// integer returns x as the bits of an integer of t's kind (an enum's base),
// checking its range. Enums take their value names too.
func (e *encoder) integer(t *desc.Type, x any) (uint64, error) {
	k := intKind(t)
	bits := k.Size() * 8
	if s, ok := x.(string); ok && t.Kind == desc.KEnum && t.Enum != nil {
		for _, ev := range t.Enum.Values {
			if strings.EqualFold(ev.Name, s) {
				x = json.Number(strconv.FormatInt(ev.Value, 10))
				break
			}
		}
		if _, still := x.(string); still {
			names := make([]string, len(t.Enum.Values))
			for i, ev := range t.Enum.Values {
				names[i] = ev.Name
			}
			return 0, fmt.Errorf("%w: %q is not a value of %s (%s)", ErrValue, s, t.Enum.Name, strings.Join(names, ", "))
		}
	}
	if signed(t) {
		n, err := parseInt(x, bits)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrValue, t, err)
		}
		return uint64(n), nil
	}
	n, err := parseUint(x, bits)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrValue, t, err)
	}
	return n, nil
}

func appendInt(b []byte, size int, n uint64) []byte {
	switch size {
	case 1:
		return append(b, byte(n))
	case 2:
		return binary.LittleEndian.AppendUint16(b, uint16(n))
	case 4:
		return binary.LittleEndian.AppendUint32(b, uint32(n))
	}
	return binary.LittleEndian.AppendUint64(b, n)
}

// numberText returns the text of a JSON-like number (or of a string holding one).
func numberText(x any) (string, bool) {
	switch v := x.(type) {
	case nil:
		return "0", true
	case json.Number:
		return string(v), true
	case string:
		return strings.TrimSpace(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32), true
	case int:
		return strconv.FormatInt(int64(v), 10), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int32:
		return strconv.FormatInt(int64(v), 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case uint32:
		return strconv.FormatUint(uint64(v), 10), true
	case uint:
		return strconv.FormatUint(uint64(v), 10), true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	}
	return "", false
}

func parseUint(x any, bits int) (uint64, error) {
	s, ok := numberText(x)
	if !ok {
		return 0, fmt.Errorf("want a number, got %s", describe(x))
	}
	n, err := strconv.ParseUint(s, 0, bits)
	if err != nil {
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f == math.Trunc(f) && f >= 0 && f < math.Ldexp(1, bits) {
			return uint64(f), nil
		}
		return 0, fmt.Errorf("%q is not an unsigned %d-bit integer", s, bits)
	}
	return n, nil
}

func parseInt(x any, bits int) (int64, error) {
	s, ok := numberText(x)
	if !ok {
		return 0, fmt.Errorf("want a number, got %s", describe(x))
	}
	n, err := strconv.ParseInt(s, 0, bits)
	if err != nil {
		lim := math.Ldexp(1, bits-1)
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f == math.Trunc(f) && f >= -lim && f < lim {
			return int64(f), nil
		}
		return 0, fmt.Errorf("%q is not a signed %d-bit integer", s, bits)
	}
	return n, nil
}

func parseFloat(x any) (float64, error) {
	s, ok := numberText(x)
	if !ok {
		return 0, fmt.Errorf("want a number, got %s", describe(x))
	}
	return strconv.ParseFloat(s, 64)
}

// parseDateTime takes a DateTime as its packed number or as "YYYY-MM-DD hh:mm:ss".
func parseDateTime(x any) (types.DateTime, error) {
	if s, ok := x.(string); ok && strings.Contains(s, "-") {
		var y, mo, d, h, mi, sec int
		if _, err := fmt.Sscanf(s, "%d-%d-%d %d:%d:%d", &y, &mo, &d, &h, &mi, &sec); err != nil {
			return 0, fmt.Errorf("datetime %q: want YYYY-MM-DD hh:mm:ss or the packed number", s)
		}
		return types.MakeDateTime(y, mo, d, h, mi, sec), nil
	}
	n, err := parseUint(x, 64)
	return types.DateTime(n), err
}

// parseBytes takes bytes as a hex string (spaces allowed) or an array of numbers.
func parseBytes(x any) ([]byte, error) {
	switch v := x.(type) {
	case nil:
		return nil, nil
	case string:
		return hex.DecodeString(strings.ReplaceAll(v, " ", ""))
	case []byte:
		return v, nil
	case []any:
		out := make([]byte, len(v))
		for i, it := range v {
			n, err := parseUint(it, 8)
			if err != nil {
				return nil, fmt.Errorf("byte %d: %v", i, err)
			}
			out[i] = byte(n)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a hex string, got %s", describe(x))
}

// parseVariant takes {"type": NAME, "value": V} or a bare value: a string is a
// String, a bool a Bool, an integer a Sint64 (Uint64 past its range), another
// number a Double, null None.
func parseVariant(x any) (types.Variant, error) {
	switch v := x.(type) {
	case nil:
		return types.Variant{}, nil
	case bool:
		return types.Variant{Type: types.VariantBool, Bool: v}, nil
	case string:
		return types.Variant{Type: types.VariantString, Str: v}, nil
	case map[string]any:
		name, _ := v["type"].(string)
		val := v["value"]
		var out types.Variant
		for t := types.VariantNone; t <= types.VariantUint64; t++ {
			if strings.EqualFold(t.String(), name) {
				out.Type = t
				break
			}
			if t == types.VariantUint64 {
				return out, fmt.Errorf("variant type %q (want None, Sint64, Double, Bool, String, DateTime or Uint64)", name)
			}
		}
		var err error
		switch out.Type {
		case types.VariantSint64:
			out.Int, err = parseInt(val, 64)
		case types.VariantDouble:
			out.Float, err = parseFloat(val)
		case types.VariantBool:
			out.Bool, _ = val.(bool)
		case types.VariantString:
			out.Str, _ = val.(string)
		case types.VariantDateTime:
			var d types.DateTime
			d, err = parseDateTime(val)
			out.Uint = uint64(d)
		case types.VariantUint64:
			out.Uint, err = parseUint(val, 64)
		}
		return out, err
	}
	s, ok := numberText(x)
	if !ok {
		return types.Variant{}, fmt.Errorf("want a variant, got %s", describe(x))
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return types.Variant{Type: types.VariantSint64, Int: n}, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return types.Variant{Type: types.VariantUint64, Uint: n}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return types.Variant{}, fmt.Errorf("%q is not a number", s)
	}
	return types.Variant{Type: types.VariantDouble, Float: f}, nil
}

func describe(x any) string {
	switch v := x.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprintf("%T", x)
}

// ParseDefault parses a description's default literal (Field.Default): a number,
// a quoted string, true, false, a list [a, b] or the empty map {}, into the
// JSON-like value Encode takes.
func ParseDefault(s string) (any, error) {
	p := defaultParser{s: s}
	v, err := p.value()
	if err == nil {
		p.space()
		if p.i != len(p.s) {
			err = fmt.Errorf("trailing %q", p.s[p.i:])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrDefault, s, err)
	}
	return v, nil
}

type defaultParser struct {
	s string
	i int
}

func (p *defaultParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *defaultParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("missing value")
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		out := []any{}
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return out, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			}
		}
	case c == '{':
		p.i++
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '}' {
			return nil, fmt.Errorf("only the empty map {} is a default")
		}
		p.i++
		return map[string]any{}, nil
	case c == '"':
		j := p.i + 1
		for j < len(p.s) && p.s[j] != '"' {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return nil, fmt.Errorf("unterminated string")
		}
		s, err := strconv.Unquote(p.s[p.i : j+1])
		if err != nil {
			return nil, err
		}
		p.i = j + 1
		return s, nil
	}
	j := p.i
	for j < len(p.s) && p.s[j] != ',' && p.s[j] != ']' && p.s[j] != ' ' {
		j++
	}
	word := p.s[p.i:j]
	p.i = j
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if _, err := strconv.ParseFloat(word, 64); err != nil {
		if _, err := strconv.ParseInt(word, 0, 64); err != nil {
			if _, err := strconv.ParseUint(word, 0, 64); err != nil {
				return nil, fmt.Errorf("%q is not a number", word)
			}
		}
	}
	return json.Number(word), nil
}
