package dyn

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// FuzzDecode decodes arbitrary bytes as each fixture method's parameters and
// results under each setting: no panic, and what decodes renders as valid JSON
// that Encode takes back and that decodes again.
func FuzzDecode(f *testing.F) {
	s := fixtureSet(f)
	// Seeds: NintendoClients' vectors (tests/nex/test_common.py, MIT; see
	// TestNintendoClientsVectors) and encodings of the fixture's methods.
	for _, h := range []string{
		"000000000a000000",
		"0008000000000000000a000000",
		"09004e756c6c446174610004000000" + "00000000",
		"09004e756c6c44617461000e0000000a00000000000000000000000000",
	} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	for _, st := range allSettings {
		c := &Codec{Set: s, Settings: st}
		for _, m := range []struct{ name, js string }{
			{"Upload", `{"score":{"category":5,"score":1234,"groups":[1,2],"param":7},"unique_id":9}`},
			{"Hold", `{"g":{"class":"Session","value":{"name":"a","params":{"k":1}}}}`},
		} {
			b, err := c.AppendFields(nil, method(f, s, m.name).Params, params(f, m.js))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
		b, err := c.AppendFields(nil, method(f, s, "Hold").Results, params(f, `{"n":{"inner":[{"attribs":[1]}],"tags":{"1":"x"},"holder":{"class":"Gathering"}}}`))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	p, err := s.Protocol("Test")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, st := range allSettings {
			c := &Codec{Set: s, Settings: st}
			for _, m := range p.AllMethods() {
				for _, fields := range [][]*desc.Field{m.Params, m.Results} {
					vals, err := c.DecodeFields(fields, b)
					if err != nil {
						if _, ok := err.(*types.Error); !ok {
							t.Fatalf("error of type %T: %v", err, err)
						}
						continue
					}
					_ = AppendFieldsText(nil, vals)
					js := AppendFieldsJSON(nil, vals)
					if !json.Valid(js) {
						t.Fatalf("invalid JSON %s", js)
					}
					d := json.NewDecoder(strings.NewReader(string(js)))
					d.UseNumber()
					var obj map[string]any
					if err := d.Decode(&obj); err != nil {
						t.Fatal(err)
					}
					enc, err := c.AppendFields(nil, fields, obj)
					if err != nil {
						t.Fatalf("re-encoding %s: %v", js, err)
					}
					if _, err := c.DecodeFields(fields, enc); err != nil {
						t.Fatalf("decoding the re-encoding of %s: %v", js, err)
					}
				}
			}
		}
	})
}
