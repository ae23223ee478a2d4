package desc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/gamewire/gamewire/nex/types"
)

// ErrSyntax is wrapped by every error of Parse and ParseProto.
var ErrSyntax = errors.New("desc: syntax error")

// The description language (.nexd), written for gamewire (docs/nex.md "Protocol
// descriptions" is the reference):
//
//	// Doc comments (// lines right above a declaration) are kept.
//	import common
//
//	enum MatchmakeSystem u32 {
//		Global = 1
//		Friends = 2
//	}
//
//	struct MatchmakeSession : Gathering {
//		game_mode u32
//		attribs   list<u32> = [0, 0, 0, 0, 0, 0]
//		if nex 3.0..4.0 {
//			if nex >= 3.5 { progress_score u8 = 100 }
//			if nex >= 3.6 && rev >= 1 { param MatchmakeParam }
//		}
//	}
//
//	protocol MatchMaking 21 {
//		1 RegisterGathering(gathering any<Gathering>) -> (gid u32)
//		45 GetEventPoint(...)             // parameters not known
//	}
//
//	protocol MatchmakeExtension_MK8 : MatchmakeExtension {
//		36 CreateSimpleSearchObject(object SimpleSearchObject) -> (id u32)
//	}
//
// Declarations end at a newline or ';'. A protocol is either a root with its id or a
// variant of another protocol (": Parent"); "noresponse" in a protocol body marks a
// protocol whose calls are never answered. Method lists may span lines.

type tokKind uint8

const (
	tEOF tokKind = iota
	tNewline
	tIdent
	tNumber
	tString
	tPunct // one of { } ( ) < > [ ] , : ; = and the pairs -> .. >= && <
	tEllipsis
)

type token struct {
	kind tokKind
	text string
	line int
	doc  string // // comment lines directly above the token's line
}

type lexer struct {
	src  string
	file string
	off  int
	line int
	doc  []string // pending comment lines
	// fileDoc is the first comment block that a blank line separates from what
	// follows: the file's documentation.
	fileDoc string
	// lastLine is the line of the last token (0 once its newline was emitted).
	lastLine int
	// lineUsed reports whether the current line has had a token or a comment.
	lineUsed bool
	seenDecl bool
}

func (l *lexer) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, l.file, line, fmt.Sprintf(format, args...))
}

func (l *lexer) next() (token, error) {
	for l.off < len(l.src) {
		c := l.src[l.off]
		if c == '\n' {
			l.off++
			if !l.lineUsed && len(l.doc) > 0 {
				// A blank line ends a comment block that documents nothing below it.
				if l.fileDoc == "" && !l.seenDecl {
					l.fileDoc = strings.Join(l.doc, "\n")
				}
				l.doc = nil
			}
			l.line++
			l.lineUsed = false
			if l.lastLine == l.line-1 && l.lastLine != 0 {
				l.lastLine = 0
				return token{kind: tNewline, text: "\n", line: l.line - 1}, nil
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' {
			l.off++
			continue
		}
		if strings.HasPrefix(l.src[l.off:], "//") {
			end := strings.IndexByte(l.src[l.off:], '\n')
			if end < 0 {
				end = len(l.src) - l.off
			}
			text := strings.TrimSpace(l.src[l.off+2 : l.off+end])
			if l.lastLine != l.line { // a line of its own: a doc comment for what follows
				l.doc = append(l.doc, text)
			}
			l.lineUsed = true
			l.off += end
			continue
		}
		break
	}
	if l.off >= len(l.src) {
		return token{kind: tEOF, line: l.line}, nil
	}
	t := token{line: l.line, doc: strings.Join(l.doc, "\n")}
	l.doc = nil
	l.lastLine = l.line
	l.lineUsed = true
	l.seenDecl = true
	s := l.src[l.off:]
	c := s[0]
	switch {
	case c == '_' || unicode.IsLetter(rune(c)):
		n := 1
		for n < len(s) && (isIdentByte(s[n]) || s[n] == '.' && n+1 < len(s) && isIdentByte(s[n+1])) {
			n++
		}
		t.kind, t.text = tIdent, s[:n]
	case c >= '0' && c <= '9' || c == '-' && len(s) > 1 && s[1] >= '0' && s[1] <= '9':
		n := 1
		for n < len(s) && (isIdentByte(s[n]) || s[n] == '.' && !strings.HasPrefix(s[n:], "..")) {
			n++
		}
		t.kind, t.text = tNumber, s[:n]
	case c == '"':
		n := 1
		for n < len(s) && s[n] != '"' && s[n] != '\n' {
			if s[n] == '\\' {
				n++
			}
			n++
		}
		if n >= len(s) || s[n] != '"' {
			return t, l.errorf(l.line, "unterminated string")
		}
		t.kind, t.text = tString, s[:n+1]
	case strings.HasPrefix(s, "..."):
		t.kind, t.text = tEllipsis, "..."
	case strings.HasPrefix(s, "->"), strings.HasPrefix(s, ".."), strings.HasPrefix(s, ">="), strings.HasPrefix(s, "&&"):
		t.kind, t.text = tPunct, s[:2]
	case strings.ContainsRune("{}()<>[],:;=", rune(c)):
		t.kind, t.text = tPunct, s[:1]
	default:
		return t, l.errorf(l.line, "unexpected character %q", c)
	}
	l.off += len(t.text)
	return t, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// parser is a recursive-descent parser over the lexer with one token of lookahead.
type parser struct {
	lx   lexer
	tok  token
	file *File
}

func (p *parser) advance() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errorf(format string, args ...any) error {
	return p.lx.errorf(p.tok.line, format, args...)
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tIdent) && p.tok.text == text
}

func (p *parser) expect(text string) error {
	if !p.is(text) {
		return p.errorf("expected %q, found %s", text, p.describe())
	}
	return p.advance()
}

func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "end of file"
	case tNewline:
		return "end of line"
	}
	return strconv.Quote(p.tok.text)
}

func (p *parser) ident() (string, error) {
	if p.tok.kind != tIdent {
		return "", p.errorf("expected a name, found %s", p.describe())
	}
	s := p.tok.text
	return s, p.advance()
}

func (p *parser) skipNewlines() error {
	for p.tok.kind == tNewline || p.is(";") {
		if err := p.advance(); err != nil {
			return err
		}
	}
	return nil
}

// endDecl accepts the end of a declaration: a newline, ';', or a closing brace
// (not consumed).
func (p *parser) endDecl() error {
	switch {
	case p.tok.kind == tNewline || p.is(";"):
		return p.advance()
	case p.is("}") || p.tok.kind == tEOF:
		return nil
	}
	return p.errorf("expected the end of the line, found %s", p.describe())
}

// Parse parses one description file. name is the file's family name (its base name
// without extension), used by imports and in positions.
func Parse(name, src string) (*File, error) {
	p := &parser{lx: lexer{src: src, file: name + ".nexd", line: 1}, file: &File{Name: name, Path: name + ".nexd"}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	for {
		if err := p.skipNewlines(); err != nil {
			return nil, err
		}
		if p.file.Doc == "" {
			p.file.Doc = p.lx.fileDoc
		}
		if p.tok.kind == tEOF {
			return p.file, nil
		}
		doc := p.tok.doc
		pos := p.pos()
		var err error
		switch {
		case p.is("import"):
			err = p.parseImport()
		case p.is("enum"):
			err = p.parseEnum(doc, pos)
		case p.is("struct"):
			err = p.parseStruct(doc, pos)
		case p.is("protocol"):
			err = p.parseProtocol(doc, pos)
		default:
			err = p.errorf("expected import, enum, struct or protocol, found %s", p.describe())
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) pos() Pos { return Pos{File: p.file.Path, Line: p.tok.line} }

func (p *parser) parseImport() error {
	if err := p.advance(); err != nil {
		return err
	}
	name, err := p.ident()
	if err != nil {
		return err
	}
	p.file.Imports = append(p.file.Imports, name)
	return p.endDecl()
}

func (p *parser) parseEnum(doc string, pos Pos) error {
	if err := p.advance(); err != nil {
		return err
	}
	name, err := p.ident()
	if err != nil {
		return err
	}
	e := &Enum{Name: name, Base: KUint32, Doc: doc, File: p.file, Pos: pos}
	if p.tok.kind == tIdent {
		k, ok := kindByName(p.tok.text)
		if !ok || !k.Integer() {
			return p.errorf("enum %s: base %q is not an integer type", name, p.tok.text)
		}
		e.Base = k
		if err := p.advance(); err != nil {
			return err
		}
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	for {
		if err := p.skipNewlines(); err != nil {
			return err
		}
		if p.is("}") {
			break
		}
		vdoc := p.tok.doc
		vname, err := p.ident()
		if err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		if p.tok.kind != tNumber {
			return p.errorf("enum %s.%s: expected a number, found %s", name, vname, p.describe())
		}
		v, err := strconv.ParseInt(p.tok.text, 0, 64)
		if err != nil {
			return p.errorf("enum %s.%s: %v", name, vname, err)
		}
		e.Values = append(e.Values, EnumValue{Name: vname, Value: v, Doc: vdoc})
		if err := p.advance(); err != nil {
			return err
		}
		if p.is(",") {
			if err := p.advance(); err != nil {
				return err
			}
		}
	}
	if err := p.advance(); err != nil {
		return err
	}
	p.file.Enums = append(p.file.Enums, e)
	return p.endDecl()
}

func (p *parser) parseStruct(doc string, pos Pos) error {
	if err := p.advance(); err != nil {
		return err
	}
	name, err := p.ident()
	if err != nil {
		return err
	}
	s := &Struct{Name: name, Doc: doc, File: p.file, Pos: pos}
	if p.is(":") {
		if err := p.advance(); err != nil {
			return err
		}
		if s.Parent, err = p.ident(); err != nil {
			return err
		}
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	if err := p.parseBody(s, Cond{}); err != nil {
		return err
	}
	p.file.Structs = append(p.file.Structs, s)
	return p.endDecl()
}

// parseBody parses fields and gates up to and including the closing brace.
func (p *parser) parseBody(s *Struct, cond Cond) error {
	for {
		if err := p.skipNewlines(); err != nil {
			return err
		}
		switch {
		case p.is("}"):
			return p.advance()
		case p.tok.kind == tEOF:
			return p.errorf("struct %s: missing }", s.Name)
		case p.is("if"):
			if err := p.advance(); err != nil {
				return err
			}
			c, err := p.parseCond()
			if err != nil {
				return fmt.Errorf("struct %s: %w", s.Name, err)
			}
			if err := p.expect("{"); err != nil {
				return err
			}
			if err := p.parseBody(s, cond.And(c)); err != nil {
				return err
			}
			if err := p.endDecl(); err != nil {
				return err
			}
		default:
			f, err := p.parseField(true)
			if err != nil {
				return fmt.Errorf("struct %s: %w", s.Name, err)
			}
			f.Cond = cond
			s.Fields = append(s.Fields, f)
			if err := p.endDecl(); err != nil {
				return err
			}
		}
	}
}

// parseCond parses `term && term ...` where a term is `nex >= V`, `nex < V`,
// `nex V..W` or `rev >= N`.
func (p *parser) parseCond() (Cond, error) {
	var c Cond
	for {
		switch {
		case p.is("nex"):
			if err := p.advance(); err != nil {
				return c, err
			}
			switch {
			case p.is(">="):
				if err := p.advance(); err != nil {
					return c, err
				}
				v, err := p.version()
				if err != nil {
					return c, err
				}
				nc, err := p.dispute(v, 0)
				if err != nil {
					return c, err
				}
				c = c.And(Cond{NexMin: v, NCMin: nc})
			case p.is("<"):
				if err := p.advance(); err != nil {
					return c, err
				}
				v, err := p.version()
				if err != nil {
					return c, err
				}
				c = c.And(Cond{NexMax: v})
			default:
				lo, err := p.version()
				if err != nil {
					return c, err
				}
				if err := p.expect(".."); err != nil {
					return c, err
				}
				hi, err := p.version()
				if err != nil {
					return c, err
				}
				if hi <= lo {
					return c, p.errorf("empty version range %s..%s", VersionString(lo), VersionString(hi))
				}
				nc, err := p.dispute(lo, hi)
				if err != nil {
					return c, err
				}
				c = c.And(Cond{NexMin: lo, NexMax: hi, NCMin: nc})
			}
		case p.is("rev"):
			if err := p.advance(); err != nil {
				return c, err
			}
			if err := p.expect(">="); err != nil {
				return c, err
			}
			if p.tok.kind != tNumber {
				return c, p.errorf("expected a revision number, found %s", p.describe())
			}
			n, err := strconv.Atoi(p.tok.text)
			if err != nil || n < 0 || n > 255 {
				return c, p.errorf("bad revision %q", p.tok.text)
			}
			c = c.And(Cond{Revision: n})
			if err := p.advance(); err != nil {
				return c, err
			}
		default:
			return c, p.errorf("expected nex or rev, found %s", p.describe())
		}
		if !p.is("&&") {
			return c, nil
		}
		if err := p.advance(); err != nil {
			return c, err
		}
	}
}

// dispute parses the optional `(nintendoclients: V)` after a lower NEX bound lo
// (of a range ending at hi, 0 when open): NintendoClients' lower bound of a
// disputed gate. It returns 0 when there is none.
func (p *parser) dispute(lo, hi types.Version) (types.Version, error) {
	if !p.is("(") {
		return 0, nil
	}
	if err := p.advance(); err != nil {
		return 0, err
	}
	if !p.is("nintendoclients") {
		return 0, p.errorf("expected nintendoclients in a disputed gate, found %s", p.describe())
	}
	if err := p.advance(); err != nil {
		return 0, err
	}
	if err := p.expect(":"); err != nil {
		return 0, err
	}
	v, err := p.version()
	if err != nil {
		return 0, err
	}
	if v == lo {
		return 0, p.errorf("disputed gate: NintendoClients' bound %s is the gate's own", VersionString(v))
	}
	if hi != 0 && v >= hi {
		return 0, p.errorf("disputed gate: NintendoClients' bound %s is outside ..%s", VersionString(v), VersionString(hi))
	}
	return v, p.expect(")")
}

// version parses a NEX version written as 3, 3.5 or 3.5.1 (or as the number 30501).
func (p *parser) version() (types.Version, error) {
	if p.tok.kind != tNumber {
		return 0, p.errorf("expected a NEX version, found %s", p.describe())
	}
	v, err := ParseVersion(p.tok.text)
	if err != nil {
		return 0, p.errorf("%v", err)
	}
	return v, p.advance()
}

// ParseVersion parses a NEX version as descriptions and flags write it: "3.5",
// "3.5.1", "4" or the number form "30501".
func ParseVersion(s string) (types.Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) == 1 {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("bad NEX version %q", s)
		}
		if n < 100 {
			return types.Version(n * 10000), nil
		}
		return types.Version(n), nil
	}
	if len(parts) > 3 {
		return 0, fmt.Errorf("bad NEX version %q", s)
	}
	var v types.Version
	mult := []types.Version{10000, 100, 1}
	for i, part := range parts {
		n, err := strconv.ParseUint(part, 10, 8)
		if err != nil || n > 99 {
			return 0, fmt.Errorf("bad NEX version %q", s)
		}
		v += types.Version(n) * mult[i]
	}
	return v, nil
}

// parseField parses `name type [= default]`.
func (p *parser) parseField(allowDefault bool) (*Field, error) {
	f := &Field{Doc: p.tok.doc, Pos: p.pos()}
	var err error
	if f.Name, err = p.ident(); err != nil {
		return nil, err
	}
	if f.Type, err = p.parseType(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	if p.is("=") {
		if !allowDefault {
			return nil, p.errorf("%s: parameters have no defaults", f.Name)
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if f.Default, err = p.parseLiteral(); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return f, nil
}

// parseLiteral returns a default value's source text: a number, a string, true,
// false, a list [a, b] or the empty map {}.
func (p *parser) parseLiteral() (string, error) {
	switch {
	case p.tok.kind == tNumber || p.tok.kind == tString || p.is("true") || p.is("false"):
		s := p.tok.text
		return s, p.advance()
	case p.is("["):
		var items []string
		if err := p.advance(); err != nil {
			return "", err
		}
		for !p.is("]") {
			s, err := p.parseLiteral()
			if err != nil {
				return "", err
			}
			items = append(items, s)
			if p.is(",") {
				if err := p.advance(); err != nil {
					return "", err
				}
			} else if !p.is("]") {
				return "", p.errorf("expected , or ] in a list, found %s", p.describe())
			}
		}
		return "[" + strings.Join(items, ", ") + "]", p.advance()
	case p.is("{"):
		if err := p.advance(); err != nil {
			return "", err
		}
		if err := p.expect("}"); err != nil {
			return "", err
		}
		return "{}", nil
	}
	return "", p.errorf("expected a default value, found %s", p.describe())
}

func kindByName(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s && Kind(k) != KInvalid && Kind(k) != KStruct && Kind(k) != KEnum && Kind(k) != KList && Kind(k) != KMap {
			return Kind(k), true
		}
	}
	return KInvalid, false
}

func (p *parser) parseType() (*Type, error) {
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	switch name {
	case "list":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		return &Type{Kind: KList, Elem: elem}, p.expect(">")
	case "map":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		key, err := p.parseType()
		if err != nil {
			return nil, err
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		return &Type{Kind: KMap, Key: key, Elem: elem}, p.expect(">")
	case "any":
		t := &Type{Kind: KAnyData}
		if p.is("<") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			if t.Name, err = p.ident(); err != nil {
				return nil, err
			}
			return t, p.expect(">")
		}
		return t, nil
	}
	if k, ok := kindByName(name); ok {
		return &Type{Kind: k}, nil
	}
	// A structure or an enum, told apart when the Set is resolved.
	return &Type{Kind: KStruct, Name: name}, nil
}

func (p *parser) parseProtocol(doc string, pos Pos) error {
	if err := p.advance(); err != nil {
		return err
	}
	name, err := p.ident()
	if err != nil {
		return err
	}
	pr := &Protocol{Name: name, Doc: doc, File: p.file, Pos: pos}
	switch {
	case p.is(":"):
		if err := p.advance(); err != nil {
			return err
		}
		if pr.Parent, err = p.ident(); err != nil {
			return err
		}
	case p.tok.kind == tNumber:
		id, err := strconv.ParseUint(p.tok.text, 0, 16)
		if err != nil {
			return p.errorf("protocol %s: bad id %q", name, p.tok.text)
		}
		pr.ID = uint16(id)
		if err := p.advance(); err != nil {
			return err
		}
	default:
		return p.errorf("protocol %s: expected its id or \": Parent\", found %s", name, p.describe())
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	for {
		if err := p.skipNewlines(); err != nil {
			return err
		}
		switch {
		case p.is("}"):
			if err := p.advance(); err != nil {
				return err
			}
			p.file.Protocols = append(p.file.Protocols, pr)
			return p.endDecl()
		case p.is("noresponse"):
			pr.NoResponse = true
			if err := p.advance(); err != nil {
				return err
			}
		case p.tok.kind == tNumber:
			m, err := p.parseMethod()
			if err != nil {
				return fmt.Errorf("protocol %s: %w", name, err)
			}
			m.Protocol = pr
			pr.Methods = append(pr.Methods, m)
		default:
			return p.errorf("protocol %s: expected a method (id Name(...)), found %s", name, p.describe())
		}
		if err := p.endDecl(); err != nil {
			return err
		}
	}
}

// parseMethod parses `id Name(params) [-> (results)]`; `(...)` marks parameters
// and results the description does not know.
func (p *parser) parseMethod() (*Method, error) {
	m := &Method{Doc: p.tok.doc, Pos: p.pos()}
	id, err := strconv.ParseUint(p.tok.text, 0, 31)
	if err != nil {
		return nil, p.errorf("bad method id %q", p.tok.text)
	}
	m.ID = uint32(id)
	if err := p.advance(); err != nil {
		return nil, err
	}
	if m.Name, err = p.ident(); err != nil {
		return nil, err
	}
	if p.tok.kind == tPunct && p.tok.text == "(" {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == tEllipsis {
			m.Opaque = true
			if err := p.advance(); err != nil {
				return nil, err
			}
			return m, p.expect(")")
		}
	} else {
		return nil, p.errorf("method %s: expected (, found %s", m.Name, p.describe())
	}
	if m.Params, err = p.parseParams(); err != nil {
		return nil, fmt.Errorf("method %s: %w", m.Name, err)
	}
	if p.is("->") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		if m.Results, err = p.parseParams(); err != nil {
			return nil, fmt.Errorf("method %s results: %w", m.Name, err)
		}
	}
	return m, nil
}

// parseParams parses a parameter list after its opening parenthesis, up to and
// including the closing one; newlines inside are ignored.
func (p *parser) parseParams() ([]*Field, error) {
	var out []*Field
	for {
		if err := p.skipNewlines(); err != nil {
			return nil, err
		}
		if p.is(")") {
			return out, p.advance()
		}
		f, err := p.parseField(false)
		if err != nil {
			return nil, err
		}
		if p.is("if") {
			// A parameter on the wire only in some NEX versions.
			if err := p.advance(); err != nil {
				return nil, err
			}
			if f.Cond, err = p.parseCond(); err != nil {
				return nil, fmt.Errorf("parameter %s: %w", f.Name, err)
			}
			if f.Cond.Revision != 0 {
				return nil, p.errorf("parameter %s: a parameter has no revision", f.Name)
			}
		}
		for _, g := range out {
			if g.Name == f.Name {
				return nil, p.errorf("parameter %s declared twice", f.Name)
			}
		}
		out = append(out, f)
		if err := p.skipNewlines(); err != nil {
			return nil, err
		}
		if p.is(",") {
			if err := p.advance(); err != nil {
				return nil, err
			}
		} else if !p.is(")") {
			return nil, p.errorf("expected , or ) after parameter %s, found %s", f.Name, p.describe())
		}
	}
}
