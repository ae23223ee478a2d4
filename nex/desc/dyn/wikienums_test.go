package dyn

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
)

// TestWikiEnumParameters: the nintendo-wiki's enums on parameters that
// NintendoClients types as integers decode to their names (text Name(n), JSON
// the name), encode from those names to the same bytes, and keep an unnamed
// value as its number: NAT Traversal's ReportNATProperties (NATMapping,
// NATFiltering) and Authentication_Crossplay's platform types.
func TestWikiEnumParameters(t *testing.T) {
	set, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	c := &Codec{Set: set}
	for _, tc := range []struct {
		protocol, method string
		hex, text, json  string
	}{
		{"NATTraversal", "ReportNATProperties", "01000000" + "02000000" + "1e000000",
			"natm=EndpointIndependent(1) natf=PortDependent(2) rtt=30",
			`{"natm":"EndpointIndependent","natf":"PortDependent","rtt":30}`},
		{"NATTraversal", "ReportNATProperties", "00000000" + "07000000" + "00000000",
			"natm=Unknown(0) natf=7 rtt=0", `{"natm":"Unknown","natf":7,"rtt":0}`},
		{"Authentication_Crossplay", "RequestTicket", "03" + "e803000000000000" + "0200000000000000",
			"platform_type=Switch(3) source=1000 target=2", `{"platform_type":"Switch","source":1000,"target":2}`},
	} {
		p, err := set.Protocol(tc.protocol)
		if err != nil {
			t.Fatal(err)
		}
		m := p.MethodByName(tc.method)
		if m == nil {
			t.Fatalf("%s has no %s", tc.protocol, tc.method)
		}
		body, _ := hex.DecodeString(tc.hex)
		if tc.protocol == "Authentication_Crossplay" {
			c = &Codec{Set: set, Settings: types.Settings{PIDSize: 8}} // Switch
		}
		vals, err := c.DecodeFields(m.Params, body)
		if err != nil {
			t.Fatalf("%s.%s: %v", tc.protocol, tc.method, err)
		}
		if got := string(AppendFieldsText(nil, vals)); got != tc.text {
			t.Errorf("%s.%s text %q, want %q", tc.protocol, tc.method, got, tc.text)
		}
		js := AppendFieldsJSON(nil, vals)
		if string(js) != tc.json {
			t.Errorf("%s.%s JSON %s, want %s", tc.protocol, tc.method, js, tc.json)
		}
		back, err := c.AppendFields(nil, m.Params, params(t, string(js)))
		if err != nil || !bytes.Equal(back, body) {
			t.Errorf("%s.%s: encoding %s gives %x (%v), want %s", tc.protocol, tc.method, js, back, err, tc.hex)
		}
	}
}
