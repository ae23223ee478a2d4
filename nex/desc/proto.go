package desc

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/types"
)

// NintendoClients' protocol definition language (.proto files of
// github.com/kinnay/NintendoClients, nintendo/files/proto, MIT), as its
// generate_protocols.py reads it:
//
//	import matchmaking;
//	enum MatchmakeSystem { GLOBAL = 1, FRIENDS = 2 }
//	struct MatchmakeSession : Gathering {
//		uint32 game_mode = 0;
//		nex 30000 - 40000 {            // 30000 <= nex.version < 40000
//			nex 30600 { revision 1 { MatchmakeParam param; } }
//		}
//	}
//	protocol MatchmakeExtension : 109 {     // a root protocol and its id
//		method close_participation(uint32 gid) {}
//		method(36) get_thing(uint32 id) { list<pid> pids; } // ids count up from the last
//		method get_event_point;         // parameters unknown
//	}
//	protocol MatchmakeExtension_MK8 : MatchmakeExtension { ... } // a variant
//
// ParseProto maps it onto the description model: method names in CamelCase
// (close_participation -> CloseParticipation), `nex MIN - MAX` to Cond{NexMin: MIN,
// NexMax: MAX} (the bound is exclusive there too), `revision N` to Cond{Revision: N},
// `set noresponse;` to Protocol.NoResponse, `method name;` to an Opaque method,
// anydata to any, the datetime defaults never and future to their numbers.

// protoDateTimeFuture is the value of NintendoClients' datetime constant future
// (DateTime.future(): 9999-12-31 23:59:59 packed as NEX date-times are).
const protoDateTimeFuture = "671076024059"

type ptokKind uint8

const (
	pEOF ptokKind = iota
	pName
	pNumber
	pString
	pSymbol
)

type ptok struct {
	kind ptokKind
	text string // a string token's text is its unquoted contents
	num  uint64
	line int
}

// protoReserved are generate_protocols.py's reserved words: they are not names.
var protoReserved = map[string]bool{
	"import": true, "protocol": true, "method": true, "struct": true, "enum": true,
	"nex": true, "revision": true, "set": true,
}

func protoTokenize(file, src string) ([]ptok, error) {
	var out []ptok
	line := 1
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, file, line, fmt.Sprintf(format, args...))
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, errorf("unterminated /* comment")
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += 2 + end + 2
		case c == '"':
			end := strings.IndexAny(src[i+1:], "\"")
			if end < 0 {
				return nil, errorf("unterminated string")
			}
			s := src[i+1 : i+1+end]
			out = append(out, ptok{kind: pString, text: s, line: line})
			line += strings.Count(s, "\n")
			i += end + 2
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			text := src[i:j]
			var n uint64
			var err error
			if len(text) > 2 && text[0] == '0' && text[1] == 'x' {
				n, err = strconv.ParseUint(text[2:], 16, 64)
			} else {
				n, err = strconv.ParseUint(text, 10, 64)
			}
			if err != nil {
				return nil, errorf("bad number %q", text)
			}
			out = append(out, ptok{kind: pNumber, text: text, num: n, line: line})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			out = append(out, ptok{kind: pName, text: src[i:j], line: line})
			i = j
		case strings.IndexByte("{}()[]<>:;,.-=!#", c) >= 0:
			out = append(out, ptok{kind: pSymbol, text: src[i : i+1], line: line})
			i++
		default:
			return nil, errorf("unexpected character %q", c)
		}
	}
	return append(out, ptok{kind: pEOF, line: line}), nil
}

type protoParser struct {
	toks []ptok
	i    int
	file *File
	// prev is the last method id of the protocol being parsed.
	prev uint64
}

func (p *protoParser) peek() ptok { return p.toks[p.i] }

func (p *protoParser) next() ptok {
	t := p.toks[p.i]
	if t.kind != pEOF {
		p.i++
	}
	return t
}

func (p *protoParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, p.file.Path, p.peek().line, fmt.Sprintf(format, args...))
}

func (p *protoParser) describe() string {
	t := p.peek()
	if t.kind == pEOF {
		return "end of file"
	}
	return strconv.Quote(t.text)
}

func (p *protoParser) isSym(s string) bool {
	t := p.peek()
	return t.kind == pSymbol && t.text == s
}

func (p *protoParser) isWord(s string) bool {
	t := p.peek()
	return t.kind == pName && t.text == s
}

func (p *protoParser) sym(s string) error {
	if !p.isSym(s) {
		return p.errorf("expected %q, found %s", s, p.describe())
	}
	p.next()
	return nil
}

func (p *protoParser) name() (string, error) {
	t := p.peek()
	if t.kind != pName || protoReserved[t.text] {
		return "", p.errorf("expected a name, found %s", p.describe())
	}
	p.next()
	return t.text, nil
}

func (p *protoParser) number() (uint64, error) {
	t := p.peek()
	if t.kind != pNumber {
		return 0, p.errorf("expected a number, found %s", p.describe())
	}
	p.next()
	return t.num, nil
}

// ParseProto parses one NintendoClients .proto file. name is its family name (the
// file's base name without extension).
func ParseProto(name, src string) (*File, error) {
	f := &File{Name: name, Path: name + ".proto"}
	toks, err := protoTokenize(f.Path, src)
	if err != nil {
		return nil, err
	}
	p := &protoParser{toks: toks, file: f}
	for {
		t := p.peek()
		if t.kind == pEOF {
			addExternalImports(f)
			return f, nil
		}
		if t.kind != pName {
			return nil, p.errorf("expected import, protocol, struct or enum, found %s", p.describe())
		}
		pos := Pos{File: f.Path, Line: t.line}
		var err error
		switch t.text {
		case "import":
			p.next()
			var imp string
			if imp, err = p.name(); err == nil {
				f.Imports = append(f.Imports, imp)
				err = p.sym(";")
			}
		case "protocol":
			err = p.protocol(pos)
		case "struct":
			err = p.strct(pos)
		case "enum":
			err = p.enum(pos)
		default:
			err = p.errorf("expected import, protocol, struct or enum, found %s", p.describe())
		}
		if err != nil {
			return nil, err
		}
	}
}

// protoExternal are the types NintendoClients' generator takes from its Python
// modules instead of a .proto file, and the description file that declares them.
var protoExternal = map[string]string{"ResultRange": "common", "NotificationEvent": "notification"}

// addExternalImports imports the files of the external types f uses.
func addExternalImports(f *File) {
	need := map[string]bool{}
	var walk func(t *Type)
	walk = func(t *Type) {
		if t == nil {
			return
		}
		if file, ok := protoExternal[t.Name]; ok && file != f.Name {
			need[file] = true
		}
		walk(t.Elem)
		walk(t.Key)
	}
	for fl := range f.Fields() {
		walk(fl.Type)
	}
	for _, imp := range f.Imports {
		delete(need, imp)
	}
	for _, file := range []string{"common", "notification"} {
		if need[file] {
			f.Imports = append(f.Imports, file)
		}
	}
}

func (p *protoParser) protocol(pos Pos) error {
	p.next()
	name, err := p.name()
	if err != nil {
		return err
	}
	pr := &Protocol{Name: name, File: p.file, Pos: pos}
	if err := p.sym(":"); err != nil {
		return err
	}
	switch t := p.peek(); t.kind {
	case pNumber:
		if t.num > 0xffff {
			return p.errorf("protocol %s: id %d does not fit 16 bits", name, t.num)
		}
		pr.ID = uint16(t.num)
		p.next()
	case pName:
		pr.Parent = t.text
		p.next()
	default:
		return p.errorf("protocol %s: expected its id or parent, found %s", name, p.describe())
	}
	if err := p.sym("{"); err != nil {
		return err
	}
	p.prev = 0
	ids := map[uint32]bool{}
	for !p.isSym("}") {
		switch {
		case p.isWord("method"):
			m, err := p.method()
			if err != nil {
				return fmt.Errorf("protocol %s: %w", name, err)
			}
			if ids[m.ID] {
				return fmt.Errorf("%w: %s: protocol %s: method id %d used twice", ErrSyntax, m.Pos, name, m.ID)
			}
			ids[m.ID] = true
			m.Protocol = pr
			pr.Methods = append(pr.Methods, m)
		case p.isWord("set"):
			p.next()
			if !p.isWord("noresponse") {
				return p.errorf("protocol %s: expected set noresponse, found %s", name, p.describe())
			}
			p.next()
			if err := p.sym(";"); err != nil {
				return err
			}
			pr.NoResponse = true
		default:
			return p.errorf("protocol %s: expected method, set or }, found %s", name, p.describe())
		}
	}
	p.next()
	p.file.Protocols = append(p.file.Protocols, pr)
	return nil
}

func (p *protoParser) method() (*Method, error) {
	m := &Method{Pos: Pos{File: p.file.Path, Line: p.peek().line}}
	p.next()
	id := p.prev + 1
	if p.isSym("(") {
		p.next()
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		id = n
		if err := p.sym(")"); err != nil {
			return nil, err
		}
	}
	if id >= 1<<31 {
		return nil, p.errorf("method id %d does not fit 31 bits", id)
	}
	p.prev = id
	m.ID = uint32(id)
	raw, err := p.name()
	if err != nil {
		return nil, err
	}
	m.Name = ProtoMethodName(raw)
	switch {
	case p.isSym(";"):
		p.next()
		m.Opaque = true
		return m, nil
	case p.isSym("("):
		p.next()
	default:
		return nil, p.errorf("method %s: expected ( or ;, found %s", raw, p.describe())
	}
	for !p.isSym(")") {
		f, err := p.variable()
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", raw, err)
		}
		if f.Default != "" {
			return nil, fmt.Errorf("%w: %s: method %s: parameter %s has a default (gamewire descriptions give parameters none)", ErrSyntax, f.Pos, raw, f.Name)
		}
		if err := addVar(&m.Params, f); err != nil {
			return nil, fmt.Errorf("method %s: %w", raw, err)
		}
		if p.isSym(",") {
			p.next()
			if p.isSym(")") {
				return nil, p.errorf("method %s: expected a parameter after ,", raw)
			}
		} else if !p.isSym(")") {
			return nil, p.errorf("method %s: expected , or ), found %s", raw, p.describe())
		}
	}
	p.next()
	if err := p.sym("{"); err != nil {
		return nil, err
	}
	for !p.isSym("}") {
		f, err := p.variable()
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", raw, err)
		}
		if f.Default != "" {
			return nil, fmt.Errorf("%w: %s: method %s: result %s has a default (gamewire descriptions give results none)", ErrSyntax, f.Pos, raw, f.Name)
		}
		if err := addVar(&m.Results, f); err != nil {
			return nil, fmt.Errorf("method %s: %w", raw, err)
		}
		if err := p.sym(";"); err != nil {
			return nil, err
		}
	}
	p.next()
	return m, nil
}

func addVar(list *[]*Field, f *Field) error {
	for _, g := range *list {
		if g.Name == f.Name {
			return fmt.Errorf("%w: %s: %s declared twice", ErrSyntax, f.Pos, f.Name)
		}
	}
	*list = append(*list, f)
	return nil
}

// ProtoMethodName turns a NintendoClients method name into the CamelCase of
// gamewire's descriptions: auto_matchmake_postpone -> AutoMatchmakePostpone.
func ProtoMethodName(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	if b.Len() == 0 {
		return s
	}
	return b.String()
}

// declarable reports an error for a structure or enum name that the description
// language reads as a built-in type (u32, any, data, ...) or as Data.
func (p *protoParser) declarable(name string) error {
	if _, ok := kindByName(name); ok || name == "Data" || name == "list" || name == "map" {
		return p.errorf("%s cannot be declared: the name is a built-in type of gamewire descriptions", name)
	}
	return nil
}

// protoKinds maps NintendoClients' basic type names onto kinds.
var protoKinds = map[string]Kind{
	"uint8": KUint8, "uint16": KUint16, "uint32": KUint32, "uint64": KUint64,
	"sint8": KSint8, "sint16": KSint16, "sint32": KSint32, "sint64": KSint64,
	"float": KFloat, "double": KDouble, "bool": KBool, "pid": KPID, "result": KResult,
	"datetime": KDateTime, "string": KString, "stationurl": KStationURL, "buffer": KBuffer,
	"qbuffer": KQBuffer, "variant": KVariant,
}

// protoTypeDepth bounds nested list and map types.
const protoTypeDepth = 16

func (p *protoParser) typ(depth int) (*Type, error) {
	if depth > protoTypeDepth {
		return nil, p.errorf("types nested deeper than %d", protoTypeDepth)
	}
	name, err := p.name()
	if err != nil {
		return nil, err
	}
	switch name {
	case "list":
		if err := p.sym("<"); err != nil {
			return nil, err
		}
		elem, err := p.typ(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: KList, Elem: elem}, p.sym(">")
	case "map":
		if err := p.sym("<"); err != nil {
			return nil, err
		}
		key, err := p.typ(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.sym(","); err != nil {
			return nil, err
		}
		elem, err := p.typ(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: KMap, Key: key, Elem: elem}, p.sym(">")
	case "anydata":
		t := &Type{Kind: KAnyData}
		if p.isSym("<") {
			p.next()
			if t.Name, err = p.name(); err != nil {
				return nil, err
			}
			if t.Name == "Data" {
				t.Name = ""
			}
			return t, p.sym(">")
		}
		return t, nil
	case "Data":
		return &Type{Kind: KData}, nil
	}
	if k, ok := protoKinds[name]; ok {
		return &Type{Kind: k}, nil
	}
	if _, ok := kindByName(name); ok {
		return nil, p.errorf("unknown type %s (NintendoClients writes uint32, anydata, ...)", name)
	}
	return &Type{Kind: KStruct, Name: name}, nil
}

// variable parses `type name [= constant]`.
func (p *protoParser) variable() (*Field, error) {
	f := &Field{Pos: Pos{File: p.file.Path, Line: p.peek().line}}
	var err error
	if f.Type, err = p.typ(0); err != nil {
		return nil, err
	}
	if f.Name, err = p.name(); err != nil {
		return nil, err
	}
	if p.isSym("=") {
		p.next()
		if f.Default, err = p.constant(f.Type, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return f, nil
}

// constant parses a default value for a field of type t and returns it as the
// description language writes it.
func (p *protoParser) constant(t *Type, depth int) (string, error) {
	if depth > protoTypeDepth {
		return "", p.errorf("default nested deeper than %d", protoTypeDepth)
	}
	tok := p.peek()
	switch {
	case t.Kind.Integer() || t.Kind == KPID:
		if tok.kind != pNumber {
			return "", p.errorf("expected a number, found %s", p.describe())
		}
		p.next()
		return strconv.FormatUint(tok.num, 10), nil
	case t.Kind == KString || t.Kind == KBuffer || t.Kind == KQBuffer || t.Kind == KStationURL:
		if tok.kind != pString {
			return "", p.errorf("expected a string, found %s", p.describe())
		}
		p.next()
		return strconv.Quote(tok.text), nil
	case t.Kind == KBool:
		if tok.kind != pName || tok.text != "true" && tok.text != "false" {
			return "", p.errorf("expected true or false, found %s", p.describe())
		}
		p.next()
		return tok.text, nil
	case t.Kind == KDateTime:
		var v string
		switch {
		case tok.kind == pNumber:
			v = strconv.FormatUint(tok.num, 10)
		case tok.kind == pName && tok.text == "never":
			v = "0"
		case tok.kind == pName && tok.text == "future":
			v = protoDateTimeFuture
		default:
			return "", p.errorf("expected a date-time (a number, never or future), found %s", p.describe())
		}
		p.next()
		return v, nil
	case t.Kind == KList:
		if err := p.sym("["); err != nil {
			return "", err
		}
		var items []string
		for !p.isSym("]") {
			s, err := p.constant(t.Elem, depth+1)
			if err != nil {
				return "", err
			}
			items = append(items, s)
			if p.isSym(",") {
				p.next()
				if p.isSym("]") {
					return "", p.errorf("expected a value after ,")
				}
			} else if !p.isSym("]") {
				return "", p.errorf("expected , or ], found %s", p.describe())
			}
		}
		p.next()
		return "[" + strings.Join(items, ", ") + "]", nil
	case t.Kind == KMap:
		if err := p.sym("{"); err != nil {
			return "", err
		}
		if !p.isSym("}") {
			return "", p.errorf("only the empty map {} is supported as a default")
		}
		p.next()
		return "{}", nil
	}
	return "", p.errorf("no default values for type %s", t)
}

func (p *protoParser) strct(pos Pos) error {
	p.next()
	name, err := p.name()
	if err != nil {
		return err
	}
	if err := p.declarable(name); err != nil {
		return err
	}
	s := &Struct{Name: name, File: p.file, Pos: pos}
	if p.isSym(":") {
		p.next()
		if s.Parent, err = p.name(); err != nil {
			return err
		}
	}
	if err := p.body(s, Cond{}, 0); err != nil {
		return err
	}
	p.file.Structs = append(p.file.Structs, s)
	return nil
}

// body parses `{ items }` of a structure or a condition.
func (p *protoParser) body(s *Struct, cond Cond, depth int) error {
	if depth > protoTypeDepth {
		return p.errorf("struct %s: conditions nested deeper than %d", s.Name, protoTypeDepth)
	}
	if err := p.sym("{"); err != nil {
		return err
	}
	for !p.isSym("}") {
		if p.peek().kind == pEOF {
			return p.errorf("struct %s: missing }", s.Name)
		}
		if p.isWord("nex") || p.isWord("revision") {
			rev := p.isWord("revision")
			p.next()
			lo, err := p.number()
			if err != nil {
				return fmt.Errorf("struct %s: %w", s.Name, err)
			}
			var c Cond
			if p.isSym("-") {
				p.next()
				hi, err := p.number()
				if err != nil {
					return fmt.Errorf("struct %s: %w", s.Name, err)
				}
				if rev {
					return p.errorf("struct %s: revision ranges (revision %d - %d) are not supported", s.Name, lo, hi)
				}
				if hi <= lo || hi > 1<<32-1 {
					return p.errorf("struct %s: bad version range %d - %d", s.Name, lo, hi)
				}
				c.NexMax = types.Version(hi)
			}
			if rev {
				if lo > 255 {
					return p.errorf("struct %s: bad revision %d", s.Name, lo)
				}
				c.Revision = int(lo)
			} else {
				if lo > 1<<32-1 {
					return p.errorf("struct %s: bad version %d", s.Name, lo)
				}
				c.NexMin = types.Version(lo)
			}
			inner := cond.And(c)
			if inner.NexMax != 0 && inner.NexMin >= inner.NexMax {
				return p.errorf("struct %s: nex %d inside a range that ends at %d never holds", s.Name, inner.NexMin, inner.NexMax)
			}
			if err := p.body(s, inner, depth+1); err != nil {
				return err
			}
			continue
		}
		f, err := p.variable()
		if err != nil {
			return fmt.Errorf("struct %s: %w", s.Name, err)
		}
		if f.Name == "if" {
			return fmt.Errorf("%w: %s: struct %s: a field named if cannot be described (if starts a gate)", ErrSyntax, f.Pos, s.Name)
		}
		f.Cond = cond
		s.Fields = append(s.Fields, f)
		if err := p.sym(";"); err != nil {
			return err
		}
	}
	p.next()
	return nil
}

func (p *protoParser) enum(pos Pos) error {
	p.next()
	name, err := p.name()
	if err != nil {
		return err
	}
	if err := p.declarable(name); err != nil {
		return err
	}
	e := &Enum{Name: name, Base: KUint32, File: p.file, Pos: pos}
	if err := p.sym("{"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for !p.isSym("}") {
		vname, err := p.name()
		if err != nil {
			return fmt.Errorf("enum %s: %w", name, err)
		}
		if seen[vname] {
			return p.errorf("enum %s: %s declared twice", name, vname)
		}
		seen[vname] = true
		if err := p.sym("="); err != nil {
			return err
		}
		v, err := p.number()
		if err != nil {
			return fmt.Errorf("enum %s.%s: %w", name, vname, err)
		}
		if v > 1<<63-1 {
			return p.errorf("enum %s.%s: %d is too large", name, vname, v)
		}
		e.Values = append(e.Values, EnumValue{Name: vname, Value: int64(v)})
		if p.isSym(",") {
			p.next()
		} else if !p.isSym("}") {
			return p.errorf("enum %s: expected , or }, found %s", name, p.describe())
		}
	}
	p.next()
	p.file.Enums = append(p.file.Enums, e)
	return nil
}

// LoadProtoDir parses every .proto file of dir (NintendoClients'
// nintendo/files/proto layout), sorted by name.
//
// A NintendoClients file sees the structures of the files it imports as its own,
// and a structure it declares again replaces the imported one everywhere in it
// (matchmaking_eagle's MatchmakeRefereePersonalRoundResult is also the one inside
// MatchmakeRefereeEndRoundParam there). gamewire looks names up from the file that
// declares them, so LoadProtoDir copies into the importing file every imported
// structure that uses, directly or not, one the file declares again.
func LoadProtoDir(dir string) ([]*File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".proto") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := ParseProto(strings.TrimSuffix(e.Name(), ".proto"), string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	copyShadowed(files)
	return files, nil
}

// copyShadowed gives each file its own copies of the imported structures that
// reach a structure the file declares again (see LoadProtoDir).
func copyShadowed(files []*File) {
	byName := map[string]*File{}
	for _, f := range files {
		byName[f.Name] = f
	}
	for _, f := range files {
		own := map[string]bool{}
		for _, s := range f.Structs {
			own[s.Name] = true
		}
		// The imported structures, nearest import first, as NintendoClients adds them.
		imported := map[string]*Struct{}
		var order []string
		seen := map[*File]bool{f: true}
		var walk func(g *File)
		walk = func(g *File) {
			for _, imp := range g.Imports {
				h := byName[imp]
				if h == nil || seen[h] {
					continue
				}
				seen[h] = true
				walk(h)
				for _, s := range h.Structs {
					if _, ok := imported[s.Name]; !ok && !own[s.Name] {
						imported[s.Name] = s
						order = append(order, s.Name)
					}
				}
			}
		}
		walk(f)
		// An imported structure is shadowed when it reaches a name the file now
		// declares; iterate until no more are found.
		for changed := true; changed; {
			changed = false
			for _, name := range order {
				s := imported[name]
				if own[name] || !usesAny(s, own) {
					continue
				}
				c := *s
				c.File, c.Pos, c.ParentStruct = f, Pos{File: f.Path, Line: s.Pos.Line}, nil
				c.Fields = make([]*Field, len(s.Fields))
				for i, fl := range s.Fields {
					g := *fl
					g.Type = cloneType(fl.Type)
					c.Fields[i] = &g
				}
				f.Structs = append(f.Structs, &c)
				own[name] = true
				changed = true
			}
		}
	}
}

func usesAny(s *Struct, names map[string]bool) bool {
	if names[s.Parent] {
		return true
	}
	var uses func(t *Type) bool
	uses = func(t *Type) bool {
		switch t.Kind {
		case KList:
			return uses(t.Elem)
		case KMap:
			return uses(t.Key) || uses(t.Elem)
		}
		return t.Name != "" && names[t.Name]
	}
	for _, f := range s.Fields {
		if uses(f.Type) {
			return true
		}
	}
	return false
}

// cloneType returns a deep copy of t without its resolved links.
func cloneType(t *Type) *Type {
	if t == nil {
		return nil
	}
	c := &Type{Kind: t.Kind, Name: t.Name, Elem: cloneType(t.Elem), Key: cloneType(t.Key)}
	if c.Kind == KEnum {
		c.Kind = KStruct // told apart again when resolved
	}
	return c
}

// BuiltinWithProtoDir returns a new resolved Set of gamewire's built-in
// descriptions with NintendoClients' .proto files of dir added (LoadProtoDir): a
// .proto file of a family the built-in set has (matchmaking.proto) replaces that
// family's protocols, structures and enums of the same names; the family's other
// built-in declarations stay (keepBuiltin), so the built-in families that use them
// still resolve. The built-in Set returned by Builtin is not changed. An empty dir
// returns a fresh copy of the built-in set.
func BuiltinWithProtoDir(dir string) (*Set, error) {
	files, err := ParseFS(defs, "defs")
	if err != nil {
		return nil, err
	}
	s := new(Set)
	s.Add(files...)
	if dir != "" {
		extra, err := LoadProtoDir(dir)
		if err != nil {
			return nil, err
		}
		for _, f := range extra {
			if b := s.File(f.Name); b != nil {
				keepBuiltin(f, b)
			}
		}
		s.Add(extra...)
	}
	if err := s.Resolve(); err != nil {
		return nil, fmt.Errorf("descriptions with %s: %w", dir, err)
	}
	return s, nil
}

// keepBuiltin adds to f, a .proto file replacing the built-in file b of its
// family, b's protocols, structures and enums that f does not declare, and b's
// imports that f lacks: the declarations gamewire adds to NintendoClients' (the
// nintendo-wiki's Super Mario Maker structures in datastore_smm, which
// datastore_badgearcade uses) stay, and f's declarations replace b's of the same
// name. A kept declaration sees f's: NintendoClients' structures replace the
// built-in ones it uses.
func keepBuiltin(f, b *File) {
	declared := map[string]bool{}
	for _, st := range f.Structs {
		declared[st.Name] = true
	}
	for _, e := range f.Enums {
		declared[e.Name] = true
	}
	protocols := map[string]bool{}
	for _, p := range f.Protocols {
		protocols[p.Name] = true
	}
	for _, st := range b.Structs {
		if !declared[st.Name] {
			st.File = f
			f.Structs = append(f.Structs, st)
		}
	}
	for _, e := range b.Enums {
		if !declared[e.Name] {
			e.File = f
			f.Enums = append(f.Enums, e)
		}
	}
	for _, p := range b.Protocols {
		if !protocols[p.Name] {
			p.File = f
			f.Protocols = append(f.Protocols, p)
		}
	}
	for _, imp := range b.Imports {
		if imp != f.Name && !slices.Contains(f.Imports, imp) {
			f.Imports = append(f.Imports, imp)
		}
	}
}
