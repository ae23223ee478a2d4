package desc

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// protoSample is a NintendoClients-style .proto snippet written for these tests:
// every construct of the grammar once.
const protoSample = `
/*** a block
comment ***/
import base;

enum Flags {
	NONE = 0,
	ALL = 0xFF
}

struct Thing : Data {
	uint32 id = 0x10;
	list<uint8> attribs = [1, 2, 3];
	map<string, variant> params = {};
	datetime until = future;
	datetime since = never;
	string name = "a\b";
	bool on = true;
	anydata<Thing> inner;
	nex 30000 - 40000 {
		nex 30500 { uint8 score = 100; } // nested: 3.5 <= v < 4.0
		revision 2 { qbuffer extra; }
	}
	nex 40000 { uint8 score = 100; }
}

protocol Sample : 109 {
	set noresponse;
	method first(uint32 gid, ResultRange range) {}
	method second;
	method(10) tenth(list<map<string, pid>> m) {
		bool result;
		anydata data;
	}
	method eleventh_method() { list<NotificationEvent> events; }
}

protocol Sample_Game : Sample {
	method(36) create_simple_search_object(Thing object) { uint32 id; }
	method update_it(uint32 id) {}
}
`

func TestParseProto(t *testing.T) {
	f, err := ParseProto("sample", protoSample)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Imports, ",") != "base,common,notification" {
		t.Errorf("imports %v (the external ResultRange and NotificationEvent add common and notification)", f.Imports)
	}
	if len(f.Enums) != 1 || f.Enums[0].ValueName(255) != "ALL" {
		t.Errorf("enum: %+v", f.Enums)
	}
	th := f.Structs[0]
	if th.Parent != "Data" {
		t.Errorf("parent %q", th.Parent)
	}
	var got []string
	for _, fl := range th.Fields {
		got = append(got, fl.Name+" "+fl.Type.String()+" ["+fl.Cond.String()+"] ="+fl.Default)
	}
	want := []string{
		"id u32 [] =16",
		"attribs list<u8> [] =[1, 2, 3]",
		"params map<string, variant> [] ={}",
		"until datetime [] =671076024059",
		"since datetime [] =0",
		`name string [] ="a\\b"`,
		"on bool [] =true",
		"inner any<Thing> [] =",
		"score u8 [nex 3.5..4.0] =100",
		"extra qbuffer [nex 3.0..4.0 && rev >= 2] =",
		"score u8 [nex >= 4.0] =100",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("fields:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(f.Protocols) != 2 {
		t.Fatalf("%d protocols", len(f.Protocols))
	}
	p := f.Protocols[0]
	if p.ID != 109 || !p.NoResponse {
		t.Errorf("Sample: id %d noresponse %v", p.ID, p.NoResponse)
	}
	var ms []string
	for _, m := range p.Methods {
		s := m.Name
		if m.Opaque {
			s += "(...)"
		}
		ms = append(ms, strconv.Itoa(int(m.ID))+" "+s)
	}
	if strings.Join(ms, ",") != "1 First,2 Second(...),10 Tenth,11 EleventhMethod" {
		t.Errorf("methods %v", ms)
	}
	tenth := p.Methods[2]
	if tenth.Params[0].Type.String() != "list<map<string, pid>>" || tenth.Results[1].Type.String() != "any" {
		t.Errorf("Tenth: %s / %s", tenth.Params[0].Type, tenth.Results[1].Type)
	}
	v := f.Protocols[1]
	if v.Parent != "Sample" || v.ID != 0 || v.Methods[0].ID != 36 || v.Methods[1].ID != 37 || v.Methods[0].Name != "CreateSimpleSearchObject" {
		t.Errorf("variant: %+v %+v", v, v.Methods)
	}
}

func TestParseProtoErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"struct A { uint32 x }", `expected ";"`},
		{"struct A { uint32 x;", "missing }"},
		{"protocol P { }", `expected ":"`},
		{"protocol P : 70000 { }", "16 bits"},
		{"protocol P : 1 { method a(uint32 x, uint32 x) {} }", "declared twice"},
		{"protocol P : 1 { method a() {} method(1) b() {} }", "used twice"},
		{"protocol P : 1 { method a(uint32 x = 1) {} }", "has a default"},
		{"protocol P : 1 { set response; }", "set noresponse"},
		{"struct A { nex 40000 - 30000 { uint8 x; } }", "bad version range"},
		{"struct A { revision 1 - 2 { uint8 x; } }", "revision ranges"},
		{"struct A { map<uint8, uint8> m = {1: 2}; }", "empty map"},
		{"struct A { datetime d = later; }", "date-time"},
		{"struct A { datetime d =", "date-time (a number, never or future), found end of file"},
		{"struct A { A x = 1; }", "no default values"},
		{"struct A { string s = \"x; }", "unterminated string"},
		{"/* open", "unterminated /*"},
		{"struct A { uint8 x = 1$; }", "unexpected character"},
		{"struct A { uint8 x = 99999999999999999999; }", "bad number"},
		{"enum E { A = 1, A = 2 }", "declared twice"},
		{"method x;", "expected import"},
		{"struct A { uint32 if; }", "field named if"},
		{"struct u32 { uint8 x; }", "built-in type"},
		{"enum data { A = 1 }", "built-in type"},
		{"struct Data { uint8 x; }", "built-in type"},
		{"struct A { u32 x; }", "unknown type u32"},
		{"struct A { list<list<list<list<list<list<list<list<list<list<list<list<list<list<list<list<list<list<u8>>>>>>>>>>>>>>>>>> x; }", "deeper"},
	} {
		_, err := ParseProto("bad", tc.src)
		if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.proto:") {
			t.Errorf("ParseProto(%q) = %v, want a syntax error with %q and a position", tc.src, err, tc.want)
		}
	}
}

func TestLoadProtoDirShadowing(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(dir+"/"+name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("base.proto", `
struct Result { uint32 a; }
struct Round { list<Result> results; }
struct Other { uint32 b; }
protocol Ref : 120 { method end(Round r) {} }
`)
	write("game.proto", `
import base;
struct Result { uint32 a; uint8 mode; }
protocol Ref : 120 { method end(Round r) {} method other(Other o) {} }
`)
	write("notes.txt", "not a proto file")
	files, err := LoadProtoDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "base" || files[1].Name != "game" {
		t.Fatalf("files %v", files)
	}
	s := new(Set)
	b, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s.Add(b.File("common"))
	s.Add(files...)
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	game := s.File("game")
	if len(game.Structs) != 2 || game.Structs[1].Name != "Round" {
		t.Fatalf("game structs: %v", game.Structs)
	}
	if got := game.Structs[1].Fields[0].Type.Elem.Struct; got != game.Structs[0] {
		t.Errorf("game's Round holds %v, want game's own Result", got.File.Name)
	}
	base := s.File("base")
	if got := base.Structs[1].Fields[0].Type.Elem.Struct; got != base.Structs[0] {
		t.Errorf("base's Round holds %v's Result", got.File.Name)
	}
	if _, err := LoadProtoDir(dir + "/missing"); err == nil {
		t.Error("LoadProtoDir of a missing directory succeeded")
	}
	write("broken.proto", "struct {")
	if _, err := LoadProtoDir(dir); err == nil || !strings.Contains(err.Error(), "broken.proto") {
		t.Errorf("LoadProtoDir with a broken file: %v", err)
	}
}

func FuzzParseProto(f *testing.F) {
	f.Add(protoSample)
	f.Add("protocol Health : 18 { method ping_daemon() { bool result; } }")
	f.Add("struct S { nex 30000 - 40000 { nex 30600 { revision 1 { uint8 x = 1; } } } }")
	f.Add("import x; enum E { A = 0x1 } protocol P : Q { method(5) a; method b(list<anydata<S>> l) {} }")
	f.Fuzz(func(t *testing.T, src string) {
		file, err := ParseProto("fuzz", src)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error does not wrap ErrSyntax: %v", err)
			}
			return
		}
		checkRoundTrip(t, file)
		s := new(Set)
		s.Add(file)
		_ = s.Resolve()
	})
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	entries, err := defs.ReadDir("defs")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		b, err := defs.ReadFile("defs/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := Parse("fuzz", src)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error does not wrap ErrSyntax: %v", err)
			}
			return
		}
		checkRoundTrip(t, file)
		s := new(Set)
		s.Add(file)
		_ = s.Resolve()
	})
}

func TestBuiltinWithProtoDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/health.proto", []byte(`protocol Health : 18 {
	method ping_daemon() { bool result; }
	method(9) check_everything(list<uint32> ids) { bool result; }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/extra.proto", []byte(`import matchmaking;
protocol MatchmakeExtension_Test : MatchmakeExtension { method(200) play(ResultRange range) { anydata<Gathering> g; } }`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := BuiltinWithProtoDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Protocol("Health")
	if err != nil {
		t.Fatal(err)
	}
	if h.File.Path != "health.proto" || h.Method(9) == nil || h.Method(9).Name != "CheckEverything" || h.Method(2) != nil {
		t.Errorf("health.proto did not replace the built-in Health: %s %v", h.File.Path, h.AllMethods())
	}
	v, err := s.Protocol("MatchmakeExtension_Test")
	if err != nil || v.ID != 109 || v.Method(200) == nil || v.Method(3) == nil || v.Method(3).Name != "AutoMatchmake_Postpone" {
		t.Errorf("variant over the built-in MatchmakeExtension: %v %+v", err, v)
	}
	b, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if bh, _ := b.Protocol("Health"); bh.File.Path != "health.nexd" || bh.Method(2) == nil {
		t.Error("the built-in set changed")
	}
	if _, err := b.Protocol("MatchmakeExtension_Test"); err == nil {
		t.Error("the built-in set gained a protocol")
	}
	// A .proto of a family with declarations gamewire adds (datastore_smm's wiki
	// structures, which datastore_badgearcade uses) replaces the ones it declares
	// and keeps the others.
	if err := os.WriteFile(dir+"/datastore_smm.proto", []byte(`import datastore;
struct BufferQueueParam { uint64 data_id; uint32 slot; uint32 extra; }
protocol DataStore_SMM : DataStore { method(61) get_application_config(uint32 application_id) { list<uint32> config; } }`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = BuiltinWithProtoDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	smm, err := s.Protocol("DataStore_SMM")
	if err != nil || smm.File.Path != "datastore_smm.proto" || smm.Method(61) == nil || smm.Method(62) != nil {
		t.Errorf("datastore_smm.proto did not replace DataStore_SMM: %v %+v", err, smm)
	}
	smmFile := s.File("datastore_smm")
	if st, _ := s.LookupType(smmFile, "BufferQueueParam"); st == nil || len(st.Fields) != 3 || st.Pos.File != "datastore_smm.proto" {
		t.Errorf("BufferQueueParam is not the .proto's: %+v", st)
	}
	if st, _ := s.LookupType(smmFile, "DataStoreGetMetaByOwnerIdParam"); st == nil || st.Pos.File != "datastore_smm.nexd" || st.File != smmFile {
		t.Errorf("the built-in DataStoreGetMetaByOwnerIdParam was not kept: %+v", st)
	}
	if ba, err := s.Protocol("DataStore_BadgeArcade"); err != nil || ba.Method(45) == nil ||
		ba.Method(45).Params[0].Type.Struct == nil || ba.Method(45).Params[0].Type.Struct.Name != "DataStoreGetMetaByOwnerIdParam" {
		t.Errorf("DataStore_BadgeArcade over the replaced datastore_smm: %v", err)
	}
	if err := os.WriteFile(dir+"/bad.proto", []byte(`protocol Bad : Nothing { }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := BuiltinWithProtoDir(dir); err == nil || !strings.Contains(err.Error(), "Nothing") {
		t.Errorf("a protocol with an unknown parent: %v", err)
	}
}
