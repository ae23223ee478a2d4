package desc

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The documented differences between gamewire's descriptions and NintendoClients'
// definitions (docs/nex.md "Protocol descriptions"): everything else must be equal.
var (
	// crossProtocolRenames maps NintendoClients' family.Protocol to gamewire's name
	// where NintendoClients gives a variant its parent's name.
	crossProtocolRenames = map[string]string{
		"matchmaking_eagle.MatchmakeReferee": "MatchmakeReferee_Eagle",
		"ranking2_eagle.Ranking2":            "Ranking2_Eagle",
	}
	// crossMethodRenames maps Protocol.Method (NintendoClients' name in CamelCase)
	// to gamewire's, where the nintendo-wiki's name is another word, not another
	// spelling of the same words.
	crossMethodRenames = map[string]string{
		"MatchmakeExtension.GetFriendNotificationDataList": "GetlstFriendNotificationData",
		"MatchmakeExtension.GetMyBlockList":                "GetMyBlackList",
		"MatchmakeExtension.AddToBlockList":                "AddToBlackList",
		"MatchmakeExtension.RemoveFromBlockList":           "RemoveFromBlackList",
		"MatchmakeExtension.ClearMyBlockList":              "ClearMyBlackList",
		"Messaging.GetMessageHeaders":                      "GetMessagesHeaders",
		"Ranking_MK8D.GetCommmonDataByPidList":             "GetCommonDataByPIDList",
	}
	// crossParamRenames maps Protocol.Method.param to gamewire's parameter name.
	crossParamRenames = map[string]string{
		"Ranking2.PutScore.socres": "scores",
	}
	// crossExtraMethods are methods gamewire describes from the nintendo-wiki that
	// NintendoClients does not have (declaring protocol and id).
	crossExtraMethods = map[string]bool{
		"MatchmakeExtension.54": true, // FindCommunityByOwner
		"Messaging.8":           true, // DeliverMessageMultiTarget
		"MessageDelivery.2":     true, // DeliverMessageMultiTarget (Pretendo's nex-protocols-go)
	}
	// crossWikiOverrides are methods a variant redefines after the nintendo-wiki
	// where NintendoClients' variant inherits its parent's (Protocol.id): Super
	// Mario Maker's DataStoreCustomProtocol numbers its own methods from 45.
	crossWikiOverrides = map[string]bool{
		"DataStore_SMM.45": true, // GetObjectInfos, DataStoreFileServerObjectInfo results
		"DataStore_SMM.46": true, // GetMetaByOwnerId, not SearchObjectLight
	}
	// crossWikiGates are structures whose gates follow the nintendo-wiki's
	// revisions and NEX versions where NintendoClients has none (family.Struct):
	// their fields must be NintendoClients' (names and types), in any order and
	// under any condition.
	crossWikiGates = map[string]bool{
		"datastore.DataStoreSearchParam":        true, // revisions 1-3, NEX 4's renumbering
		"datastore.DataStoreChangeMetaParam":    true, // revision 1's persistence_target
		"datastore.DataStorePrepareUpdateParam": true, // NEX 3.5's extra_data
		"messaging.UserMessage":                 true, // the recipient id and type before NEX 4
		"ranking.RankingRankData":               true, // update_time as revision 1 from NEX 3.6
		"authentication.AuthenticationInfo":     true, // token_type and server_version from NEX 3.0
		// revisions 1-3 at NEX 3.6-3.8 (the lead's gate decision, docs/nex.md
		// "Disputed gates")
		"matchmaking.MatchmakeSessionSearchCriteria": true,
	}
	// crossWikiParamGates are method parameters the nintendo-wiki puts on the wire
	// from a NEX version where NintendoClients has no gate (Protocol.Method.param).
	crossWikiParamGates = map[string]bool{
		"MatchmakeExtension.CreateMatchmakeSession.num_participants": true, // NEX 3.4
		"MatchmakeExtension.JoinMatchmakeSessionEx.num_participants": true, // NEX 3.4
	}
	// crossWikiEnumValues are enum values only the nintendo-wiki has
	// (family.Enum.Value).
	crossWikiEnumValues = map[string]bool{
		"ranking.RankingMode.FriendsAroundSelf": true, // "Ranking (112)", mode 2
	}
	// crossWikiEnumTypes are enums only the nintendo-wiki has, given to fields
	// NintendoClients types as the enum's integer (family.Enum): compared as that
	// integer.
	crossWikiEnumTypes = map[string]bool{
		"notification.NotificationType": true, // NotificationEvent.type
		"nattraversal.NATMapping":       true, // ReportNATProperties' natm ("NEX Types", StationURL)
		"nattraversal.NATFiltering":     true, // ReportNATProperties' natf
	}
	// crossWikiFields are the fields of crossWikiGates structures that only the
	// nintendo-wiki has (NEX versions NintendoClients does not describe).
	crossWikiFields = map[string]bool{
		"messaging.UserMessage.recipient_id":   true,
		"messaging.UserMessage.recipient_type": true,
	}
)

// TestNintendoClientsCrossCheck compares gamewire's built-in descriptions with
// NintendoClients' own .proto files, read from NEX_PROTO_DIR (its
// nintendo/files/proto folder): every protocol, method (id, name, parameters and
// results), structure (parent, fields in order with types, gates and defaults) and
// enum of NintendoClients must be in gamewire's, equal but for the documented
// renames above.
func TestNintendoClientsCrossCheck(t *testing.T) {
	dir := os.Getenv("NEX_PROTO_DIR")
	if dir == "" {
		t.Skip("NEX_PROTO_DIR (NintendoClients' nintendo/files/proto) not set")
	}
	files, err := LoadProtoDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	nc := new(Set)
	nc.Add(ours.File("common")) // ResultRange: NintendoClients' common.py
	nc.Add(files...)
	if err := nc.Resolve(); err != nil {
		t.Fatal(err)
	}
	var nProtocols, nMethods, nStructs, nEnums int
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(dir, f.Name+".proto"))
		if err != nil {
			t.Fatal(err)
		}
		own, err := ParseProto(f.Name, string(raw))
		if err != nil {
			t.Fatal(err)
		}
		nStructs += len(own.Structs)
		nEnums += len(own.Enums)
		of := ours.File(f.Name)
		if of == nil {
			t.Errorf("%s: no gamewire description file %s.nexd", f.Name, f.Name)
			continue
		}
		for _, p := range f.Protocols {
			nProtocols++
			nMethods += len(p.Methods)
			crossCheckProtocol(t, f, of, p)
		}
		for _, s := range f.Structs {
			crossCheckStruct(t, ours, of, s)
		}
		for _, e := range f.Enums {
			crossCheckEnum(t, ours, of, e)
		}
	}
	t.Logf("NintendoClients: %d files, %d protocols, %d methods, %d structures, %d enums; all in gamewire's descriptions",
		len(files), nProtocols, nMethods, nStructs, nEnums)
	p, m, s := ours.Count()
	t.Logf("gamewire: %d files, %d protocols, %d methods, %d structures", len(ours.Files()), p, m, s)
}

func crossCheckProtocol(t *testing.T, f, of *File, p *Protocol) {
	t.Helper()
	name := p.Name
	if r, ok := crossProtocolRenames[f.Name+"."+p.Name]; ok {
		name = r
	}
	var op *Protocol
	for _, q := range of.Protocols {
		if q.Name == name {
			op = q
		}
	}
	where := f.Name + "." + p.Name
	if op == nil {
		t.Errorf("%s: no protocol %s in %s.nexd", where, name, of.Name)
		return
	}
	if op.ID != p.ID || op.NoResponse != p.NoResponse {
		t.Errorf("%s: id %d noresponse %v, NintendoClients %d %v", where, op.ID, op.NoResponse, p.ID, p.NoResponse)
	}
	ncMethods := map[uint32]*Method{}
	for _, m := range p.AllMethods() {
		ncMethods[m.ID] = m
	}
	for _, om := range op.AllMethods() {
		if ncMethods[om.ID] == nil && !crossExtraMethods[fmt.Sprintf("%s.%d", om.Protocol.Name, om.ID)] && !smmWikiMethod(om) {
			t.Errorf("%s: method %d %s is not NintendoClients' nor a documented addition", where, om.ID, om.Name)
		}
	}
	for _, m := range p.AllMethods() {
		om := op.Method(m.ID)
		if om != nil && crossWikiOverrides[fmt.Sprintf("%s.%d", om.Protocol.Name, om.ID)] {
			continue
		}
		mwhere := fmt.Sprintf("%s method %d %s", where, m.ID, m.Name)
		if om == nil {
			t.Errorf("%s: missing", mwhere)
			continue
		}
		want := m.Name
		if r, ok := crossMethodRenames[m.Protocol.Name+"."+m.Name]; ok {
			want = r
		}
		if foldName(om.Name) != foldName(want) {
			t.Errorf("%s: named %s", mwhere, om.Name)
		}
		if om.Opaque != m.Opaque {
			t.Errorf("%s: opaque %v, NintendoClients %v", mwhere, om.Opaque, m.Opaque)
		}
		crossCheckFields(t, mwhere+" parameters", m.Protocol.Name+"."+m.Name+".", m.Params, om.Params)
		crossCheckFields(t, mwhere+" results", m.Protocol.Name+"."+m.Name+".", m.Results, om.Results)
	}
}

func crossCheckFields(t *testing.T, where, renamePrefix string, nc, ours []*Field) {
	t.Helper()
	if len(nc) != len(ours) {
		t.Errorf("%s: %d, NintendoClients %d", where, len(ours), len(nc))
		return
	}
	for i, f := range nc {
		o := ours[i]
		name := f.Name
		if r, ok := crossParamRenames[renamePrefix+f.Name]; ok {
			name = r
		}
		// A disputed gate is compared in NintendoClients' reading.
		cond := o.Cond.Reading(true)
		if crossWikiParamGates[renamePrefix+f.Name] {
			cond = Cond{}
		}
		if o.Name != name || crossType(o.Type) != crossType(f.Type) || o.Default != f.Default || cond != f.Cond {
			t.Errorf("%s %d: %s %s = %q [%s], NintendoClients %s %s = %q [%s]", where, i,
				o.Name, crossType(o.Type), o.Default, o.Cond, f.Name, crossType(f.Type), f.Default, f.Cond)
		}
	}
}

// crossType writes a resolved type with the family of every structure and enum it
// names: the same name must mean the same declaration.
func crossType(t *Type) string {
	return typeKey(t, func(t *Type) string {
		switch {
		case t.Struct != nil && t.Kind == KAnyData:
			return "any<" + t.Struct.File.Name + "." + t.Name + ">"
		case t.Struct != nil:
			return t.Struct.File.Name + "." + t.Name
		case t.Enum != nil && crossWikiEnumTypes[t.Enum.File.Name+"."+t.Name]:
			return t.Enum.Base.String()
		case t.Enum != nil:
			return t.Enum.File.Name + "." + t.Name
		}
		return t.String()
	})
}

func crossCheckStruct(t *testing.T, ours *Set, of *File, s *Struct) {
	t.Helper()
	where := of.Name + " struct " + s.Name
	st, _ := ours.LookupType(of, s.Name)
	if st == nil {
		t.Errorf("%s: missing", where)
		return
	}
	if st.File.Name != s.File.Name {
		t.Errorf("%s: declared in %s, NintendoClients %s", where, st.File.Name, s.File.Name)
	}
	if st.Parent != s.Parent {
		t.Errorf("%s: parent %q, NintendoClients %q", where, st.Parent, s.Parent)
	}
	if crossWikiGates[of.Name+"."+s.Name] {
		have := map[string]string{}
		for _, f := range st.Fields {
			if !crossWikiFields[of.Name+"."+s.Name+"."+f.Name] {
				have[f.Name] = crossType(f.Type)
			}
		}
		for _, f := range s.Fields {
			if have[f.Name] != crossType(f.Type) {
				t.Errorf("%s: field %s %s, NintendoClients %s", where, f.Name, have[f.Name], crossType(f.Type))
			}
		}
		if len(have) != len(s.Fields) {
			t.Errorf("%s: %d distinct fields, NintendoClients %d", where, len(have), len(s.Fields))
		}
		return
	}
	crossCheckFields(t, where+" fields", "", s.Fields, st.Fields)
}

func crossCheckEnum(t *testing.T, ours *Set, of *File, e *Enum) {
	t.Helper()
	where := of.Name + " enum " + e.Name
	_, oe := ours.LookupType(of, e.Name)
	if oe == nil {
		t.Errorf("%s: missing", where)
		return
	}
	var got []string
	for i, k := range enumKeys(oe) {
		if !crossWikiEnumValues[of.Name+"."+e.Name+"."+oe.Values[i].Name] {
			got = append(got, k)
		}
	}
	want := enumKeys(e)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: %v, NintendoClients %v", where, got, want)
	}
}

// enumKeys returns an enum's values as folded-name=value strings.
func enumKeys(e *Enum) []string {
	out := make([]string, len(e.Values))
	for i, v := range e.Values {
		out[i] = fmt.Sprintf("%s=%d", foldName(v.Name), v.Value)
	}
	return out
}

// smmWikiMethod: the methods of DataStore_SMM the nintendo-wiki's Super Mario
// Maker page adds to NintendoClients' two (47-87 but 61 and 74).
func smmWikiMethod(m *Method) bool {
	return m.Protocol.Name == "DataStore_SMM" && m.ID >= 47 && m.ID <= 87
}

// TestBuiltinWithNintendoClientsDir loads all of NintendoClients' .proto files
// over the built-in descriptions, as `--proto-dir` does with its
// nintendo/files/proto: every file replaces or adds to a family and the set
// resolves, NintendoClients' methods replacing the built-in ones of their
// protocols.
func TestBuiltinWithNintendoClientsDir(t *testing.T) {
	dir := os.Getenv("NEX_PROTO_DIR")
	if dir == "" {
		t.Skip("NEX_PROTO_DIR (NintendoClients' nintendo/files/proto) not set")
	}
	s, err := BuiltinWithProtoDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	smm, err := s.Protocol("DataStore_SMM")
	if err != nil {
		t.Fatal(err)
	}
	if smm.File.Path != "datastore_smm.proto" || smm.Method(61) == nil || smm.Method(48) != nil {
		t.Errorf("DataStore_SMM is not NintendoClients': %s", smm.File.Path)
	}
	if _, err := s.Protocol("DataStore_BadgeArcade"); err != nil {
		t.Error(err)
	}
	p, m, st := s.Count()
	t.Logf("built-in descriptions with %s: %d protocols, %d methods, %d structures", dir, p, m, st)
}
