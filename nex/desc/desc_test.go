package desc

import (
	"errors"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

const sample = `// Sample family.

import common

// Kind of thing.
enum Kind u8 {
	A = 1
	B = 2,
}

struct Base {
	id u32 = 0
	name string = "x"
}

// Session is a sample.
struct Session : Base {
	attribs list<u32> = [0, 0]
	if nex 3.0..4.0 {
		if nex >= 3.5 { score u8 = 100 }
		if nex >= 3.6 && rev >= 1 {
			param map<string, variant> = {}
		}
	}
	if nex >= 4 {
		score u8 = 100
		kind Kind
	}
}

protocol Sample 109 {
	// Do does it.
	1 Do(gid u32, range ResultRange,
		pids list<pid>) -> (result bool, holder any<Base>)
	2 Unknown(...)
	3 Nothing()
}

protocol Sample_Game : Sample {
	2 Known(s Session) -> (id u64)
	36 Extra(x u32)
}
`

func parseSample(t *testing.T) *Set {
	t.Helper()
	f, err := Parse("sample", sample)
	if err != nil {
		t.Fatal(err)
	}
	common, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s := new(Set)
	s.Add(common.File("common"), f)
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSample(t *testing.T) {
	s := parseSample(t)
	f := s.File("sample")
	if f.Doc != "Sample family." {
		t.Errorf("file doc %q", f.Doc)
	}
	st := s.Struct("Session")
	if st == nil || st.ParentStruct == nil || st.ParentStruct.Name != "Base" || st.Doc != "Session is a sample." {
		t.Fatalf("Session: %+v", st)
	}
	var got []string
	for _, fl := range st.Fields {
		got = append(got, fl.Name+" "+fl.Type.String()+" ["+fl.Cond.String()+"] ="+fl.Default)
	}
	want := []string{
		"attribs list<u32> [] =[0, 0]",
		"score u8 [nex 3.5..4.0] =100",
		"param map<string, variant> [nex 3.6..4.0 && rev >= 1] ={}",
		"score u8 [nex >= 4.0] =100",
		"kind Kind [nex >= 4.0] =",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("fields:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.Fields[4].Type.Kind != KEnum || st.Fields[4].Type.Enum.ValueName(2) != "B" {
		t.Errorf("kind field not resolved to the enum: %+v", st.Fields[4].Type)
	}
	for v, rev := range map[types.Version]int{30400: 0, 30500: 0, 30600: 1, 30800: 1, 40000: 0} {
		if got := st.MaxRevision(v); got != rev {
			t.Errorf("MaxRevision(%v) = %d, want %d", v, got, rev)
		}
	}
	p, err := s.Protocol("Sample_Game")
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != 109 || p.ParentProtocol == nil {
		t.Fatalf("variant: id %d parent %v", p.ID, p.ParentProtocol)
	}
	var names []string
	for _, m := range p.AllMethods() {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "Do,Known,Nothing,Extra" {
		t.Errorf("variant methods %v", names)
	}
	do := p.MethodByName("do")
	if do == nil || len(do.Params) != 3 || do.Params[1].Type.Struct == nil || do.Results[1].Type.Kind != KAnyData || do.Results[1].Type.Struct.Name != "Base" || do.Doc != "Do does it." {
		t.Fatalf("Do: %+v", do)
	}
	if root, _ := s.Protocol("Sample"); !root.Method(2).Opaque {
		t.Error("Unknown(...) is not opaque")
	}
	if s.ProtocolByID(109).Name != "Sample" {
		t.Error("ProtocolByID did not return the root")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"struct A {\n x u32\n", "missing }"},
		{"struct A { x }", "expected a name"},
		{"protocol P { }", "expected its id"},
		{"protocol P 1 {\n 1 M(a u32, a u32)\n}", "declared twice"},
		{"struct A { if nex 4..3 { x u32 } }", "empty version range"},
		{"enum E string { A = 1 }", "not an integer type"},
		{"struct A { x u32 = }", "expected a default value"},
		{"struct A { s string = \"x }", "unterminated string"},
		{"protocol P 1 {\n 1 M(a u32 = 3)\n}", "no defaults"},
		{"struct A { x u32 } $", "unexpected character"},
		{"struct A { if nex >= 3.4 (nintendoclients: 3.4) { x u32 } }", "the gate's own"},
		{"struct A { if nex >= 3.4 (consoles: 3.5) { x u32 } }", "expected nintendoclients"},
		{"struct A { if nex 3.4..4.0 (nintendoclients: 4.0) { x u32 } }", "outside"},
		{"protocol P 1 {\n 1 M(a u32 if rev >= 1)\n}", "no revision"},
	} {
		_, err := Parse("bad", tc.src)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.nexd:") {
			t.Errorf("Parse(%q) = %v, want a syntax error with %q and a position", tc.src, err, tc.want)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"struct A { x Missing }", "type Missing is not declared"},
		{"struct A : B { }", "parent B"},
		{"struct A : B { }\nstruct B : A { }", "cycle"},
		{"protocol P : Q { }", "parent Q"},
		{"protocol P 1 {\n 1 A()\n 1 B()\n}", "method id 1"},
		{"import nothing", "no such description file"},
		{"struct A { x u32\n x u8 }", "field x is u8 here and u32 before"},
		{"struct A { }\nstruct A { }", "declared again"},
	} {
		f, err := Parse("bad", tc.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.src, err)
		}
		s := new(Set)
		s.Add(f)
		err = s.Resolve()
		if err == nil || !errors.Is(err, ErrResolve) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q) = %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestBuiltin(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Protocol("Health")
	if err != nil || h.ID != 18 || h.Method(1).Name != "PingDaemon" {
		t.Fatalf("Health: %v %+v", err, h)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]types.Version{"3": 30000, "3.5": 30500, "3.5.1": 30501, "30400": 30400, "4.0.0": 40000} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "3.100", "1.2.3.4", "-1"} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) accepted", in)
		}
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"game_mode": "GameMode", "pids": "PIDs", "gid": "GID", "urls": "URLs", "data_id": "DataID",
		"PingDaemon": "PingDaemon", "AutoMatchmake_Postpone": "AutoMatchmakePostpone", "3ds": "X3ds",
		"min_participants": "MinParticipants", "ID": "ID", "unk1": "Unk1",
	} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDisputedAndParameterGates: a disputed gate keeps both lower bounds, reads
// by the settings' reading, survives And and Format; a parameter gate parses and
// prints back.
func TestDisputedAndParameterGates(t *testing.T) {
	src := "struct A {\n\tif nex 3.4..4.0 (nintendoclients: 3.5) {\n\t\tx u8\n\t}\n}\n\n" +
		"protocol P 1 {\n\t1 M(a u32, b u16 if nex >= 3.4)\n}\n"
	f, err := Parse("g", src)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Structs[0].Fields[0].Cond
	if c != (Cond{NexMin: 30400, NexMax: 40000, NCMin: 30500}) || !c.Disputed() {
		t.Fatalf("cond %+v", c)
	}
	console, nc := types.Settings{Version: 30400}, types.Settings{Version: 30400, Gates: types.GatesNintendoClients}
	if !c.HoldsIn(console, 30400, 0) || c.HoldsIn(nc, 30400, 0) || !c.HoldsIn(nc, 30500, 0) || c.HoldsIn(console, 40000, 0) {
		t.Fatal("HoldsIn by reading")
	}
	if got := c.And(Cond{Revision: 1}); got != (Cond{NexMin: 30400, NexMax: 40000, NCMin: 30500, Revision: 1}) {
		t.Fatalf("And: %+v", got)
	}
	if got := c.And(Cond{NexMin: 30600}); got.Disputed() {
		t.Fatalf("And above both bounds stays disputed: %+v", got)
	}
	if p := f.Protocols[0].Methods[0].Params[1]; p.Cond != (Cond{NexMin: 30400}) {
		t.Fatalf("parameter gate %+v", p.Cond)
	}
	if out := Format(f); out != src {
		t.Fatalf("Format:\n%s\nwant\n%s", out, src)
	}
}
