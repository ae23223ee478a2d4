package desc

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// dumpFile writes everything of f that a description says (not positions or
// resolved links), one item a line, for comparing two files.
func dumpFile(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file %s doc %q imports %v\n", f.Name, f.Doc, f.Imports)
	for _, e := range f.Enums {
		fmt.Fprintf(&b, "enum %s %s doc %q\n", e.Name, e.Base, e.Doc)
		for _, v := range e.Values {
			fmt.Fprintf(&b, "  %s = %d doc %q\n", v.Name, v.Value, v.Doc)
		}
	}
	dumpFields := func(list []*Field) {
		for _, fl := range list {
			fmt.Fprintf(&b, "  %s %s = %q [%s] doc %q\n", fl.Name, dumpType(fl.Type), fl.Default, fl.Cond, fl.Doc)
		}
	}
	for _, s := range f.Structs {
		fmt.Fprintf(&b, "struct %s : %q doc %q\n", s.Name, s.Parent, s.Doc)
		dumpFields(s.Fields)
	}
	for _, p := range f.Protocols {
		id := p.ID
		if p.Parent != "" {
			id = 0 // a resolved variant carries its root's id
		}
		fmt.Fprintf(&b, "protocol %s %d : %q noresponse %v doc %q\n", p.Name, id, p.Parent, p.NoResponse, p.Doc)
		for _, m := range p.Methods {
			fmt.Fprintf(&b, " method %d %s opaque %v doc %q\n", m.ID, m.Name, m.Opaque, m.Doc)
			dumpFields(m.Params)
			b.WriteString("  ->\n")
			dumpFields(m.Results)
		}
	}
	return b.String()
}

// dumpType writes t with its kind, so that an unresolved struct name and a
// resolved enum of that name compare equal but a kind change does not.
func dumpType(t *Type) string {
	return typeKey(t, func(t *Type) string {
		if t.Kind == KStruct || t.Kind == KEnum {
			return "named:" + t.Name
		}
		return t.String()
	})
}

// typeKey writes t, lists and maps element by element, with leaf for every other
// type.
func typeKey(t *Type, leaf func(*Type) string) string {
	switch t.Kind {
	case KList:
		return "list<" + typeKey(t.Elem, leaf) + ">"
	case KMap:
		return "map<" + typeKey(t.Key, leaf) + ", " + typeKey(t.Elem, leaf) + ">"
	}
	return leaf(t)
}

func checkRoundTrip(t *testing.T, f *File) {
	t.Helper()
	text := Format(f)
	g, err := Parse(f.Name, text)
	if err != nil {
		t.Fatalf("%s: Parse(Format) failed: %v\n%s", f.Name, err, text)
	}
	if a, b := dumpFile(f), dumpFile(g); a != b {
		t.Errorf("%s: round trip differs:\n%s\nformatted:\n%s", f.Name, diffLines(a, b), text)
	}
	if again := Format(g); again != text {
		t.Errorf("%s: Format is not stable:\n%s", f.Name, diffLines(text, again))
	}
}

// diffLines shows the first differing line of two texts with some context.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "(equal)"
}

func TestFormatRoundTrip(t *testing.T) {
	f, err := Parse("sample", sample)
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, f)
	p, err := ParseProto("sample", protoSample)
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, p)
	b, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Files() {
		checkRoundTrip(t, f)
	}
	if dir := os.Getenv("NEX_PROTO_DIR"); dir != "" {
		files, err := LoadProtoDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			checkRoundTrip(t, f)
		}
	}
}

func TestFormatShape(t *testing.T) {
	f, err := Parse("x", `// The x family.

import common

struct S {
	a u32
	if nex 3.0..4.0 && rev >= 1 {
		// b is documented.
		b u8 = 1
	}
	c string = "q"
}

protocol P 5 {
	noresponse
	1 M(a u32) -> (b bool)
	2 N(...)
}

protocol V : P {
	3 O(a_very_long_parameter_name list<map<string, variant>>, another_long_parameter_name list<u32>, more u8) -> (r bool)
	4 Q(a u32) -> (a_very_long_result_name list<map<string, variant>>, another_long_result_name list<u32>)
}
`)
	if err != nil {
		t.Fatal(err)
	}
	want := `// The x family.

import common

struct S {
	a u32
	if nex 3.0..4.0 && rev >= 1 {
		// b is documented.
		b u8 = 1
	}
	c string = "q"
}

protocol P 5 {
	noresponse
	1 M(a u32) -> (b bool)
	2 N(...)
}

protocol V : P {
	3 O(
		a_very_long_parameter_name list<map<string, variant>>,
		another_long_parameter_name list<u32>,
		more u8,
	) -> (r bool)
	4 Q(a u32) -> (
		a_very_long_result_name list<map<string, variant>>,
		another_long_result_name list<u32>,
	)
}
`
	if got := Format(f); got != want {
		t.Errorf("Format:\n%s\nwant:\n%s\n%s", got, want, diffLines(got, want))
	}
	if got := formatVersion(1234567); got != "1234567" {
		t.Errorf("formatVersion(1234567) = %q", got)
	}
}

// TestBuiltinDescriptions checks what holds for every built-in description
// without NintendoClients' files at hand (TestNintendoClientsCrossCheck compares
// them with those): the counts, a header citing the public sources, documented
// protocols, and method names unique within each protocol, inherited ones included.
func TestBuiltinDescriptions(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	// At least NintendoClients' 30 families, 36 protocols and 431 methods, and its
	// 214 structures with common's two and matchmaking_eagle's two re-declared ones.
	if p, m, st := s.Count(); p < 36 || m < 431 || st < 218 || len(s.Files()) < 31 {
		t.Errorf("%d files, %d protocols, %d methods, %d structures; want at least 31, 36, 431, 218", len(s.Files()), p, m, st)
	}
	for _, f := range s.Files() {
		// Protocols NintendoClients does not describe cite Pretendo Network's
		// definitions, read for facts.
		if f.Name != "common" && !strings.Contains(f.Doc, "https://github.com/kinnay/NintendoClients") &&
			!strings.Contains(f.Doc, "https://github.com/PretendoNetwork/") {
			t.Errorf("%s: the header does not cite NintendoClients or Pretendo Network: %q", f.Name, f.Doc)
		}
		for _, p := range f.Protocols {
			if p.Doc == "" {
				t.Errorf("%s: protocol %s has no doc comment", f.Name, p.Name)
			}
			names := map[string]uint32{}
			for _, m := range p.AllMethods() {
				if id, dup := names[foldName(m.Name)]; dup {
					t.Errorf("%s: methods %d and %d are both %s", p.QualifiedName(), id, m.ID, m.Name)
				}
				names[foldName(m.Name)] = m.ID
			}
		}
	}
}
