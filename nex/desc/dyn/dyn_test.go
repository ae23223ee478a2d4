package dyn

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// fixture describes a little of everything Decode and Encode handle. The ranking
// structures follow NintendoClients' ranking.proto (MIT) field for field, so the
// generated nex/protocols/ranking codec checks the bytes.
const fixture = `// Test family.
import common

enum Mode u8 {
	Global = 1
	Friends = 2
}

struct RankingOrderParam {
	order_calc u8 = 0
	group_index u8 = 255
	group_num u8 = 0
	time_scope u8 = 2
	offset u32 = 0
	count u8 = 10
}

struct RankingScoreData {
	category u32
	score u32
	order_by u8 = 0
	update_mode u8 = 0
	groups list<u8> = [0, 0]
	param u64 = 0
}

struct Gathering : Data {
	id u32 = 0
	owner pid
	max u16 = 8
}

struct Session : Gathering {
	mode Mode = 1
	attribs list<u32> = [0, 0, 0]
	name string = "room"
	if nex >= 3.5 {
		score u8 = 100
	}
	if nex >= 3.6 && rev >= 1 {
		params map<string, variant> = {}
		started datetime
	}
}

struct Nested {
	inner list<Session>
	holder any<Gathering>
	tags map<u32, string>
	blob buffer
	q qbuffer
	url stationurl
	f f32 = 1.5
	d f64
	s s16 = -3
	r result
	u quuid
}

protocol Test 200 {
	1 Upload(score RankingScoreData, unique_id u64) -> ()
	2 Get(mode u8, category u32, order RankingOrderParam, unique_id u64, pid pid) -> (result list<Session>)
	3 Hold(g any<Gathering>) -> (n Nested)
	4 Opaque(...)
}
`

func fixtureSet(t testing.TB) *desc.Set {
	t.Helper()
	f, err := desc.Parse("test", fixture)
	if err != nil {
		t.Fatal(err)
	}
	b, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s := new(desc.Set)
	s.Add(b.File("common"), f)
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	return s
}

func method(t testing.TB, s *desc.Set, name string) *desc.Method {
	t.Helper()
	p, err := s.Protocol("Test")
	if err != nil {
		t.Fatal(err)
	}
	m := p.MethodByName(name)
	if m == nil {
		t.Fatalf("no method %s", name)
	}
	return m
}

func params(t testing.TB, js string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(js))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

var allSettings = []types.Settings{{}, {StructureHeader: true}, {PIDSize: 8, StructureHeader: true}}

// TestRankingAgainstGenerated encodes UploadScore and GetRanking parameters by
// description and compares them with nex/protocols/ranking's generated
// encoders, then decodes them back.
func TestRankingAgainstGenerated(t *testing.T) {
	s := fixtureSet(t)
	for _, st := range allSettings {
		c := &Codec{Set: s, Settings: st}
		up := method(t, s, "Upload")
		got, err := c.AppendFields(nil, up.Params, params(t, `{"score":{"category":5,"score":1234,"groups":[1,2],"param":7},"unique_id":9}`))
		if err != nil {
			t.Fatal(err)
		}
		w := types.NewWriter(nil, st)
		(&rk.RankingScoreData{Category: 5, Score: 1234, Groups: []byte{1, 2}, Param: 7}).Append(&w)
		w.U64(9)
		if !bytes.Equal(got, w.B) {
			t.Fatalf("%+v UploadScore:\n got %x\nwant %x", st, got, w.B)
		}
		vals, err := c.DecodeFields(up.Params, got)
		if err != nil {
			t.Fatal(err)
		}
		js := string(AppendFieldsJSON(nil, vals))
		want := `{"score":{"category":5,"score":1234,"order_by":0,"update_mode":0,"groups":[1,2],"param":7},"unique_id":9}`
		if js != want {
			t.Fatalf("JSON\n got %s\nwant %s", js, want)
		}

		get := method(t, s, "get") // case-insensitive
		got, err = c.AppendFields(nil, get.Params, params(t, `{"mode":0,"category":5,"order":{"time_scope":2,"count":10},"pid":0}`))
		if err != nil {
			t.Fatal(err)
		}
		w = types.NewWriter(nil, st)
		w.U8(0)
		w.U32(5)
		(&rk.RankingOrderParam{GroupIndex: 255, TimeScope: 2, Count: 10}).Append(&w)
		w.U64(0)
		w.PID(0)
		if !bytes.Equal(got, w.B) {
			t.Fatalf("%+v GetRanking:\n got %x\nwant %x", st, got, w.B)
		}
	}
}

// TestRoundTrip encodes every kind from JSON, decodes, renders JSON, encodes the
// rendering again and expects the same bytes, under each setting and at two NEX
// versions (gates open and shut).
func TestRoundTrip(t *testing.T) {
	s := fixtureSet(t)
	m := method(t, s, "Hold")
	in := `{"n":{"inner":[{"id":1,"owner":1000,"mode":"Friends","attribs":[1,2,3],"params":{"a":5,"b":"x","c":true,"d":{"type":"Double","value":2.5}},"started":"2026-11-27 08:30:00"},{}],
		"holder":{"class":"Session","value":{"id":7,"name":"club"}},
		"tags":{"3":"three","1":"one"},"blob":"00ff10","q":"abcd","url":"prudps:/address=127.0.0.1;port=1",
		"d":-0.25,"r":2147549186,"u":"00112233445566778899aabbccddeeff"}}`
	for _, st := range allSettings {
		for _, v := range []types.Version{30400, 30600} {
			c := &Codec{Set: s, Settings: st, Version: v}
			enc, err := c.AppendFields(nil, m.Results, params(t, in))
			if err != nil {
				t.Fatal(err)
			}
			vals, err := c.DecodeFields(m.Results, enc)
			if err != nil {
				t.Fatalf("%+v %v: %v", st, v, err)
			}
			js := AppendFieldsJSON(nil, vals)
			enc2, err := c.AppendFields(nil, m.Results, params(t, string(js)))
			if err != nil {
				t.Fatalf("re-encoding %s: %v", js, err)
			}
			if !bytes.Equal(enc, enc2) {
				t.Fatalf("%+v %v: round trip through %s changed the bytes", st, v, js)
			}
			n := vals[0].Value.Struct
			inner, _ := n.Field("inner")
			first := inner.Items[0].Struct
			if mode, _ := first.Field("mode"); mode.EnumName() != "Friends" || mode.Int() != 2 {
				t.Errorf("mode %v", mode)
			}
			_, hasScore := first.Field("score")
			_, hasParams := first.Field("params")
			if hasScore != (v >= 30500) || hasParams != (v >= 30600) {
				t.Errorf("version %v: score %v params %v", v, hasScore, hasParams)
			}
			if len(first.Levels) != 2 || first.Levels[1].Revision != map[bool]int{false: 0, true: 1}[v >= 30600] {
				t.Errorf("levels %+v", first.Levels)
			}
			second := inner.Items[1].Struct
			if name, _ := second.Field("name"); name.Str != "room" {
				t.Errorf("default name %q", name.Str)
			}
			if a, _ := second.Field("attribs"); len(a.Items) != 3 {
				t.Errorf("default attribs %v", a)
			}
			holder, _ := n.Field("holder")
			if holder.Str != "Session" || holder.Struct == nil {
				t.Fatalf("holder %+v", holder)
			}
			if name, _ := holder.Struct.Field("name"); name.Str != "club" {
				t.Errorf("holder name %v", name)
			}
			if f, _ := n.Field("f"); f.Float() != 1.5 {
				t.Errorf("f %v", f.Float())
			}
			if sv, _ := n.Field("s"); sv.Int() != -3 {
				t.Errorf("s %v", sv.Int())
			}
			text := string(AppendFieldsText(nil, vals))
			if !strings.Contains(text, `mode=Friends(2)`) || !strings.Contains(text, `holder=Session{id=7`) {
				t.Errorf("text %s", text)
			}
		}
	}
}

// TestNintendoClientsVectors decodes byte strings of NintendoClients' tests
// (tests/nex/test_common.py, MIT; as in nex/types' vectors): ResultRange and an
// AnyDataHolder of NullData, with and without structure headers.
func TestNintendoClientsVectors(t *testing.T) {
	s, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	rr := &desc.Type{Kind: desc.KStruct, Name: "ResultRange", Struct: s.Struct("ResultRange")}
	anyT := &desc.Type{Kind: desc.KAnyData}
	for _, v := range []struct {
		st   types.Settings
		t    *desc.Type
		hex  string
		json string
	}{
		{types.Settings{}, rr, "000000000a000000", `{"offset":0,"size":10}`},
		{types.Settings{StructureHeader: true}, rr, "0008000000000000000a000000", `{"offset":0,"size":10}`},
		{types.Settings{}, anyT, "09004e756c6c446174610004000000" + "00000000", `{"class":"NullData","value":{}}`},
		{types.Settings{PIDSize: 8, StructureHeader: true}, anyT, "09004e756c6c44617461000e0000000a00000000000000000000000000", `{"class":"NullData","value":{}}`},
	} {
		b, _ := hex.DecodeString(v.hex)
		c := &Codec{Set: s, Settings: v.st}
		val, err := c.Decode(v.t, b)
		if err != nil {
			t.Fatalf("%s: %v", v.hex, err)
		}
		if js := string(val.AppendJSON(nil)); js != v.json {
			t.Errorf("%s: %s, want %s", v.hex, js, v.json)
		}
		var x any
		d := json.NewDecoder(strings.NewReader(v.json))
		d.UseNumber()
		_ = d.Decode(&x)
		enc, err := c.Encode(nil, v.t, x)
		if err != nil || !bytes.Equal(enc, b) {
			t.Errorf("%s: encoded %x, %v", v.hex, enc, err)
		}
	}
}

// TestDecodeErrorsSayWhere cuts an encoding at every length and expects an error
// with a field path and an offset inside the input, and checks the path and
// offset of a failure inside a list element, a structure and an AnyData object.
func TestDecodeErrorsSayWhere(t *testing.T) {
	s := fixtureSet(t)
	m := method(t, s, "Hold")
	for _, st := range allSettings {
		c := &Codec{Set: s, Settings: st}
		enc, err := c.AppendFields(nil, m.Results, params(t, `{"n":{"inner":[{},{"name":"abc"}],"holder":{"class":"Session","value":{"name":"xyz"}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(enc); n++ {
			_, err := c.DecodeFields(m.Results, enc[:n])
			var te *types.Error
			if !errors.As(err, &te) || te.Offset > n || !strings.HasPrefix(te.Field, "n") {
				t.Fatalf("%+v prefix %d: %v", st, n, err)
			}
		}
		if _, err := c.DecodeFields(m.Results, append(enc, 0)); !errors.Is(err, types.ErrTrailingData) {
			t.Fatalf("trailing byte: %v", err)
		}
	}
	// Break the string of the second session's name: its terminator.
	c := &Codec{Set: s}
	enc, _ := c.AppendFields(nil, m.Results, params(t, `{"n":{"inner":[{},{"name":"abc"}]}}`))
	i := bytes.Index(enc, []byte("abc\x00"))
	bad := bytes.Clone(enc)
	bad[i+3] = 'X'
	_, err := c.DecodeFields(m.Results, bad)
	var te *types.Error
	if !errors.As(err, &te) || te.Field != "n.inner[1].name" || te.Offset != i-2 || !errors.Is(err, types.ErrNoTerminator) {
		t.Fatalf("got %v (field %q offset %d), want n.inner[1].name at %d", err, te.Field, te.Offset, i-2)
	}
	// The same inside an AnyData object.
	enc, _ = c.AppendFields(nil, m.Results, params(t, `{"n":{"holder":{"class":"Session","value":{"name":"xyz"}}}}`))
	i = bytes.Index(enc, []byte("xyz\x00"))
	bad = bytes.Clone(enc)
	bad[i+3] = 'X'
	_, err = c.DecodeFields(m.Results, bad)
	if !errors.As(err, &te) || te.Field != "n.holder.name" || te.Offset != i-2 {
		t.Fatalf("got %v, want n.holder.name at %d", err, i-2)
	}
}

// TestUnknownClassKeepsBytes: an AnyData of a class the descriptions lack keeps
// its bytes, and re-encodes from {"class", "hex"}.
func TestUnknownClassKeepsBytes(t *testing.T) {
	s := fixtureSet(t)
	c := &Codec{Set: s}
	anyT := &desc.Type{Kind: desc.KAnyData}
	b, err := types.AppendAnyDataHolder(nil, types.AnyDataHolder{TypeName: "Mystery", Data: []byte{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Decode(anyT, b)
	if err != nil {
		t.Fatal(err)
	}
	js := string(v.AppendJSON(nil))
	if js != `{"class":"Mystery","hex":"010203"}` {
		t.Fatal(js)
	}
	enc, err := c.Encode(nil, anyT, params(t, js))
	if err != nil || !bytes.Equal(enc, b) {
		t.Fatalf("%x %v", enc, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	s := fixtureSet(t)
	c := &Codec{Set: s}
	m := method(t, s, "Hold")
	for _, v := range []struct {
		js   string
		want error
		path string
	}{
		{`{"nope":1}`, ErrUnknownField, ""},
		{`{"n":{"inner":[{"mode":"Nowhere"}]}}`, ErrValue, "n.inner[0].mode"},
		{`{"n":{"inner":[{"max":70000}]}}`, ErrValue, "n.inner[0].max"},
		{`{"n":{"s":40000}}`, ErrValue, "n.s"},
		{`{"n":{"holder":{"class":"RankingOrderParam"}}}`, ErrUnknownClass, "n.holder"},
		{`{"n":{"holder":{"class":"Nope"}}}`, ErrUnknownClass, "n.holder"},
		{`{"n":{"blob":"zz"}}`, ErrValue, "n.blob"},
		{`{"n":{"inner":{}}}`, ErrValue, "n.inner"},
	} {
		_, err := c.AppendFields(nil, m.Results, params(t, v.js))
		if !errors.Is(err, v.want) || !strings.HasPrefix(err.Error(), v.path) {
			t.Errorf("%s: %v, want %v at %q", v.js, err, v.want, v.path)
		}
	}
}

func TestParseDefault(t *testing.T) {
	for in, want := range map[string]string{
		`0`: `"0"`, `-3`: `"-3"`, `0xFFFFFFFF`: `"0xFFFFFFFF"`, `1.5`: `"1.5"`, `"a\"b"`: `"a\"b"`,
		`true`: `true`, `[0, 0, 1]`: `[]interface {}{"0", "0", "1"}`, `{}`: `map[string]interface {}{}`,
		`[]`: `[]interface {}{}`, `["x", "y"]`: `[]interface {}{"x", "y"}`,
	} {
		v, err := ParseDefault(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := strings.ReplaceAll(fmt.Sprintf("%#v", v), "json.Number(", "")
		got = strings.ReplaceAll(got, `")`, `"`)
		if got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{``, `[0`, `{1}`, `"x`, `abc`, `1 2`} {
		if _, err := ParseDefault(in); !errors.Is(err, ErrDefault) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestDisputedGates codes MatchmakeSession at NEX 3.4, where
// progress_score is on the wire in the consoles' reading and not in
// NintendoClients' (docs/nex.md "Disputed gates"), in the reading each
// settings choose. The version comes from the Codec, not the settings, as the
// dissector and nex call set it: the auto reading is NintendoClients' with
// structure headers below NEX 3.5 all the same.
func TestDisputedGates(t *testing.T) {
	s, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Protocol("MatchmakeExtension")
	if err != nil {
		t.Fatal(err)
	}
	m := p.MethodByName("FindMatchmakeSessionByGatheringIdDetail")
	in := params(t, `{"session":{"id":7,"owner":100,"game_mode":3,"progress_score":42}}`)
	for _, tc := range []struct {
		st    types.Settings
		v     types.Version
		score bool // progress_score on the wire
	}{
		{types.Settings{}, 30400, true},
		{types.Settings{StructureHeader: true}, 30400, false},
		{types.Settings{StructureHeader: true, Gates: types.GatesConsole}, 30400, true},
		{types.Settings{Gates: types.GatesNintendoClients}, 30400, false},
		{types.Settings{StructureHeader: true}, 30500, true},
		{types.Settings{Gates: types.GatesNintendoClients}, 30500, true},
	} {
		c := &Codec{Set: s, Settings: tc.st, Version: tc.v}
		enc, err := c.AppendFields(nil, m.Results, in)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := c.DecodeFields(m.Results, enc)
		if err != nil {
			t.Fatalf("%+v %v: %v", tc.st, tc.v, err)
		}
		ms := vals[0].Value.Struct
		score, ok := ms.Field("progress_score")
		if ok != tc.score || (ok && score.Uint() != 42) {
			t.Errorf("%+v at %v: progress_score %v (present %v), want present %v", tc.st, tc.v, score.Uint(), ok, tc.score)
		}
		// The other reading of the same bytes does not take progress_score.
		other := *c
		other.Settings.Gates = map[bool]types.Gates{true: types.GatesNintendoClients, false: types.GatesConsole}[tc.score]
		if tc.v < 30500 {
			if vals, err := other.DecodeFields(m.Results, enc); err == nil {
				if _, ok := vals[0].Value.Struct.Field("progress_score"); ok == tc.score {
					t.Errorf("%+v at %v: the other reading also decodes progress_score %v", tc.st, tc.v, ok)
				}
			}
		}
	}
}
