package pipboy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/gamewire/gamewire/internal/jsonstr"
)

// AppendJSON appends v and its subtree as nested JSON: objects keep the order in which
// their keys were added, numbers print as their type holds them, and strings are
// escaped (invalid UTF-8 becomes U+FFFD). A FLOAT that is NaN or infinite, which JSON
// cannot hold, is written as a string ("NaN", "+Inf", "-Inf"); a whole FLOAT is
// written with ".0" so that DumpFromJSON gives it back as a FLOAT. indent "" gives compact
// output; otherwise each level is indented by indent.
func (v Value) AppendJSON(b []byte, indent string) ([]byte, error) {
	if !v.IsValid() {
		return b, fmt.Errorf("pipboy: json: %w", ErrNotFound)
	}
	ex := exportState{visits: exportBudget(v.db), end: len(b) + 4*v.db.strBytes + 64*v.db.Len() + 1<<20}
	return v.appendJSON(b, indent, 0, &ex)
}

// exportState carries the budgets of one export.
type exportState struct {
	visits int // values that may still be visited
	end    int // the output may not grow past this length
}

// exportBudget bounds the values one export visits. A tree visits each value once;
// a hostile update can instead share subtrees (A = [B, B], B = [C, C], ...) so that a
// small database expands to an exponential document. Output bytes are bounded too
// (a long string named by thousands of array elements): see AppendJSON.
func exportBudget(db *Database) int { return 4*db.Len() + 1024 }

// MarshalJSON implements json.Marshaler with compact output.
func (v Value) MarshalJSON() ([]byte, error) { return v.AppendJSON(nil, "") }

func newline(b []byte, indent string, depth int) []byte {
	if indent == "" {
		return b
	}
	b = append(b, '\n')
	for range depth {
		b = append(b, indent...)
	}
	return b
}

func (v Value) appendJSON(b []byte, indent string, depth int, ex *exportState) ([]byte, error) {
	if depth > maxDepth {
		return b, fmt.Errorf("pipboy: json: value id %d deeper than %d levels (cycle?)", v.ID(), maxDepth)
	}
	if ex.visits--; ex.visits < 0 {
		return b, fmt.Errorf("pipboy: json: more than %d values visited at id %d (shared subtrees?)", exportBudget(v.db), v.ID())
	}
	if len(b) > ex.end {
		return b, fmt.Errorf("pipboy: json: output beyond %d bytes at id %d (shared subtrees?)", ex.end, v.ID())
	}
	n := v.n()
	var err error
	switch n.typ {
	case TypeBool:
		return strconv.AppendBool(b, n.bits != 0), nil
	case TypeInt8, TypeInt32:
		return strconv.AppendInt(b, int64(n.bits), 10), nil
	case TypeUint8, TypeUint32:
		return strconv.AppendUint(b, n.bits, 10), nil
	case TypeFloat:
		f := math.Float32frombits(uint32(n.bits))
		switch {
		case math.IsNaN(float64(f)):
			return append(b, `"NaN"`...), nil
		case math.IsInf(float64(f), 1):
			return append(b, `"+Inf"`...), nil
		case math.IsInf(float64(f), -1):
			return append(b, `"-Inf"`...), nil
		}
		start := len(b)
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
		if !bytes.ContainsAny(b[start:], ".e") {
			b = append(b, ".0"...) // keep FLOAT distinct from the integer types
		}
		return b, nil
	case TypeString:
		return jsonstr.Append(b, n.str), nil
	case TypeArray:
		if len(n.elems) == 0 {
			return append(b, "[]"...), nil
		}
		b = append(b, '[')
		for i, id := range v.n().elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, indent, depth+1)
			e, ok := v.db.Get(id)
			if !ok {
				return b, fmt.Errorf("pipboy: json: ARRAY id %d element %d: %w: id %d", v.ID(), i, ErrNotFound, id)
			}
			if b, err = e.appendJSON(b, indent, depth+1, ex); err != nil {
				return b, err
			}
		}
		b = newline(b, indent, depth)
		return append(b, ']'), nil
	default:
		if len(n.fields) == 0 {
			return append(b, "{}"...), nil
		}
		b = append(b, '{')
		for i, f := range v.n().fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, indent, depth+1)
			b = jsonstr.Append(b, f.key)
			b = append(b, ':')
			if indent != "" {
				b = append(b, ' ')
			}
			e, ok := v.db.Get(f.id)
			if !ok {
				return b, fmt.Errorf("pipboy: json: OBJECT id %d key %q: %w: id %d", v.ID(), f.key, ErrNotFound, f.id)
			}
			if b, err = e.appendJSON(b, indent, depth+1, ex); err != nil {
				return b, err
			}
		}
		b = newline(b, indent, depth)
		return append(b, '}'), nil
	}
}

// DumpFromJSON builds the payload of a full dump (a type 3 message) from a nested JSON
// document, so a game emulator can serve a hand-written tree. The top-level value must
// be an object; it becomes id 0, and other values get ids from 1 in the order they
// appear, children first. JSON types map to value types: true/false to BOOLEAN,
// integers to INT32 (UINT32 above 2^31-1), other numbers to FLOAT, strings to STRING,
// arrays to ARRAY and objects to OBJECT. Keys holding NUL, integers beyond 32 bits and
// nesting deeper than 128 levels are errors. Object key order is kept.
func DumpFromJSON(r io.Reader) ([]byte, error) {
	d := json.NewDecoder(r)
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("pipboy: json tree: %w: %w", ErrBadJSON, err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("pipboy: json tree: %w: top level must be an object", ErrBadJSON)
	}
	bld := &treeBuilder{d: d, next: 1}
	add, err := bld.object(0)
	if err != nil {
		return nil, fmt.Errorf("pipboy: json tree at byte %d: %w", d.InputOffset(), err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pipboy: json tree at byte %d: %w: data after the top-level object", d.InputOffset(), ErrBadJSON)
	}
	e := Entry{Type: TypeObject, ID: RootID, Add: add}
	return e.Append(bld.out)
}

type treeBuilder struct {
	d    *json.Decoder
	next uint32
	out  []byte
}

// value reads one value whose first token is tok, emits it and its children, returns its id.
func (t *treeBuilder) value(tok json.Token, depth int) (uint32, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("%w: nested deeper than %d levels", ErrBadJSON, maxDepth)
	}
	var e Entry
	switch x := tok.(type) {
	case bool:
		e = Entry{Type: TypeBool, Bool: x}
	case string:
		for i := 0; i < len(x); i++ {
			if x[i] == 0 {
				return 0, fmt.Errorf("%w: string holds NUL", ErrBadJSON)
			}
		}
		e = Entry{Type: TypeString, Str: []byte(x)}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			switch {
			case i >= math.MinInt32 && i <= math.MaxInt32:
				e = Entry{Type: TypeInt32, Int: int32(i)}
			case i > math.MaxInt32 && i <= math.MaxUint32:
				e = Entry{Type: TypeUint32, Uint: uint32(i)}
			default:
				return 0, fmt.Errorf("%w: integer %s does not fit 32 bits", ErrBadJSON, x)
			}
		} else {
			f, err := strconv.ParseFloat(string(x), 32)
			if err != nil {
				return 0, fmt.Errorf("%w: number %s: %w", ErrBadJSON, x, err)
			}
			e = Entry{Type: TypeFloat, Float: float32(f)}
		}
	case json.Delim:
		switch x {
		case '[':
			var elems IDList
			for t.d.More() {
				tok, err := t.d.Token()
				if err != nil {
					return 0, fmt.Errorf("%w: %w", ErrBadJSON, err)
				}
				id, err := t.value(tok, depth+1)
				if err != nil {
					return 0, err
				}
				elems = AppendIDs(elems, id)
			}
			if _, err := t.d.Token(); err != nil {
				return 0, fmt.Errorf("%w: %w", ErrBadJSON, err)
			}
			e = Entry{Type: TypeArray, Elems: elems}
		case '{':
			add, err := t.object(depth + 1)
			if err != nil {
				return 0, err
			}
			e = Entry{Type: TypeObject, Add: add}
		default:
			return 0, fmt.Errorf("%w: unexpected %v", ErrBadJSON, x)
		}
	default:
		return 0, fmt.Errorf("%w: null has no Pip-Boy value type", ErrBadJSON)
	}
	e.ID = t.next
	t.next++
	var err error
	t.out, err = e.Append(t.out)
	return e.ID, err
}

// object reads the members of an object whose '{' was consumed, through its '}'.
func (t *treeBuilder) object(depth int) (KeyList, error) {
	var add KeyList
	// A Pip-Boy object holds each key once; JSON allows a key twice, which
	// would leave a value in the dump that no object names.
	seen := make(map[string]struct{})
	for t.d.More() {
		tok, err := t.d.Token()
		if err != nil {
			return add, fmt.Errorf("%w: %w", ErrBadJSON, err)
		}
		key := tok.(string) // the decoder guarantees object keys are strings
		for i := 0; i < len(key); i++ {
			if key[i] == 0 {
				return add, fmt.Errorf("%w: key %q holds NUL", ErrBadJSON, key)
			}
		}
		if _, dup := seen[key]; dup {
			return add, fmt.Errorf("%w: key %q appears twice in one object", ErrBadJSON, key)
		}
		seen[key] = struct{}{}
		tok, err = t.d.Token()
		if err != nil {
			return add, fmt.Errorf("%w: %w", ErrBadJSON, err)
		}
		id, err := t.value(tok, depth+1)
		if err != nil {
			return add, fmt.Errorf("key %q: %w", key, err)
		}
		add = add.AppendKey(key, id)
	}
	if _, err := t.d.Token(); err != nil {
		return add, fmt.Errorf("%w: %w", ErrBadJSON, err)
	}
	return add, nil
}
