package dyn

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// rmcVector is one RMC message of testdata/doneflow-rmc.txt: its body (the
// request's parameters or the success response's values) and its method.
type rmcVector struct {
	protocol uint16
	method   uint32
	request  bool
	body     []byte
}

func loadRMCVectors(t testing.TB) []rmcVector {
	t.Helper()
	f, err := os.Open("testdata/doneflow-rmc.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rmcVector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		fs := strings.Fields(l)
		msg, err := hex.DecodeString(fs[3])
		if err != nil {
			t.Fatal(err)
		}
		switch fs[0] {
		case "request":
			q, _, err := rmc.ParseRequest(msg)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rmcVector{q.Protocol, q.Method, true, q.Params})
		case "response":
			q, _, err := rmc.ParseResponse(msg)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rmcVector{q.Protocol, q.Method, false, q.Data})
		}
	}
	return out
}

// fieldsOf returns the fields of a method in the built-in descriptions, and
// whether it is described.
func fieldsOf(set *desc.Set, protocol uint16, method uint32, request bool) ([]*desc.Field, bool) {
	p := SelectProtocol(set, protocol, "")
	if p == nil {
		return nil, false
	}
	m := p.Method(method)
	if m == nil || m.Opaque {
		return nil, false
	}
	if request {
		return m.Params, true
	}
	return m.Results, true
}

// canonical reports whether every structure level of vals was written at the
// revision a writer of version v uses and has no bytes the descriptions skip:
// then encoding the values gives the same bytes.
func canonical(vals []FieldValue, v types.Version) bool {
	var walk func(x Value) bool
	walk = func(x Value) bool {
		if x.Struct != nil {
			for _, l := range x.Struct.Levels {
				if l.Skipped > 0 || l.Header && l.Revision != l.Struct.MaxRevision(v) {
					return false
				}
				for _, f := range l.Fields {
					if !walk(f.Value) {
						return false
					}
				}
			}
		}
		for _, it := range x.Items {
			if !walk(it) {
				return false
			}
		}
		for _, p := range x.Pairs {
			if !walk(p.Key) || !walk(p.Value) {
				return false
			}
		}
		return true
	}
	for _, f := range vals {
		if !walk(f.Value) {
			return false
		}
	}
	return true
}

// TestDoneFlowMessages decodes every RMC message NintendoClients and gamewire
// serve exchanged in the done-when capture (NEX 3.5, structure headers) by the
// built-in descriptions, and checks that encoding the decoded values again
// gives the bytes on the wire (except where a structure came at a revision NEX
// 3.5 does not describe: gamewire's RankingRankData revision 1, whose extra
// field is skipped as NintendoClients skips it).
func TestDoneFlowMessages(t *testing.T) {
	set, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	c := &Codec{Set: set, Settings: types.Settings{StructureHeader: true, Version: 30500}}
	n := 0
	for _, v := range loadRMCVectors(t) {
		fields, ok := fieldsOf(set, v.protocol, v.method, v.request)
		if !ok {
			t.Errorf("protocol %d method %d is not described", v.protocol, v.method)
			continue
		}
		vals, err := c.DecodeFields(fields, v.body)
		if err != nil {
			t.Errorf("protocol %d method %d request %v: %v", v.protocol, v.method, v.request, err)
			continue
		}
		js := AppendFieldsJSON(nil, vals)
		enc, err := c.AppendFields(nil, fields, decodeJSON(t, js))
		if err != nil || canonical(vals, 30500) && hex.EncodeToString(enc) != hex.EncodeToString(v.body) {
			t.Errorf("protocol %d method %d request %v: re-encoding %s:\n got %x (%v)\nwant %x", v.protocol, v.method, v.request, js, enc, err, v.body)
		}
		n++
	}
	if n < 40 {
		t.Errorf("%d messages decoded, want the capture's 44", n)
	}
}

func decodeJSON(t testing.TB, js []byte) map[string]any {
	d := json.NewDecoder(strings.NewReader(string(js)))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// FuzzDecodeBuiltin decodes arbitrary bytes as the parameters or return values
// of a built-in method (seeded with the done-when capture's messages): no
// panic, errors of type *types.Error, and what decodes re-encodes and decodes.
func FuzzDecodeBuiltin(f *testing.F) {
	set, err := desc.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range loadRMCVectors(f) {
		f.Add(v.protocol, v.method, v.request, v.body)
	}
	f.Fuzz(func(t *testing.T, protocol uint16, method uint32, request bool, b []byte) {
		fields, ok := fieldsOf(set, protocol, method, request)
		if !ok {
			return
		}
		for _, st := range []types.Settings{{}, {StructureHeader: true, Version: 30500}, {PIDSize: 8, StructureHeader: true}} {
			c := &Codec{Set: set, Settings: st}
			vals, err := c.DecodeFields(fields, b)
			if err != nil {
				if _, ok := err.(*types.Error); !ok {
					t.Fatalf("error of type %T: %v", err, err)
				}
				continue
			}
			js := AppendFieldsJSON(nil, vals)
			enc, err := c.AppendFields(nil, fields, decodeJSON(t, js))
			if err != nil {
				t.Fatalf("re-encoding %s: %v", js, err)
			}
			if _, err := c.DecodeFields(fields, enc); err != nil {
				t.Fatalf("decoding the re-encoding of %s: %v", js, err)
			}
		}
	})
}

// TestSelectProtocol: a game's variant by its suffix, several comma-separated
// (the first with a protocol of the id wins), the root otherwise.
func TestSelectProtocol(t *testing.T) {
	set, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id      uint16
		variant string
		want    string
	}{
		{109, "", "MatchmakeExtension"},
		{109, "mk8", "MatchmakeExtension_MK8"},
		{109, "mk8d", "MatchmakeExtension_MK8D"},
		{109, "mk8d,nx", "MatchmakeExtension_MK8D"},
		{10, "mk8d,nx", "Authentication_NX"},
		{10, "mk8", "Authentication"},
		{115, GameVariant("Super Mario Maker"), "DataStore_SMM"},
		{115, GameVariant("Miitopia"), "DataStore_Miitopia3DS"},
		{120, "eagle", "MatchmakeReferee_Eagle"},
	} {
		if p := SelectProtocol(set, c.id, c.variant); p == nil || p.Name != c.want {
			t.Errorf("%d %q: %v, want %s", c.id, c.variant, p, c.want)
		}
	}
	if SelectProtocol(set, 9999, "") != nil || SelectProtocol(nil, 109, "") != nil {
		t.Error("a protocol for an unknown id or no set")
	}
}
