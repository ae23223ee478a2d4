package matchmaking

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

var versions = []struct {
	v  types.Version
	st types.Settings
}{
	{types.Version3, types.Settings{Version: types.Version3}},
	{types.Version3_4, types.Settings{Version: types.Version3_4}},
	{types.Version3_5, types.Settings{StructureHeader: true, Version: types.Version3_5}},
	{types.Version3_6, types.Settings{StructureHeader: true, Version: types.Version3_6}},
	{types.Version3_7, types.Settings{StructureHeader: true, Version: types.Version3_7}},
	{types.Version3_8, types.Settings{StructureHeader: true, Version: types.Version3_8}},
	{types.Version4, types.Settings{StructureHeader: true, PIDSize: 8, Version: types.Version4}},
}

func fullSession() MatchmakeSession {
	return MatchmakeSession{
		Gathering: Gathering{ID: 7, Owner: 1000, Host: 1001, MinParticipants: 2, MaxParticipants: 8,
			ParticipationPolicy: 98, PolicyArgument: 3, Flags: FlagMigrateOwner | 0x200, State: 1, Description: "room"},
		GameMode: 4, Attributes: []uint32{1, 2, 3, 4, 5, 6}, OpenParticipation: true, MatchmakeSystemType: 2,
		ApplicationBuffer: []byte{9, 8}, ParticipationCount: 3, ProgressScore: 50, SessionKey: []byte{1, 2, 3},
		Option0: 5, MatchmakeParam: []types.Pair[string, types.Variant]{{Key: "k", Value: types.Variant{Type: types.VariantBool, Bool: true}}},
		StartedTime: types.MakeDateTime(2026, 11, 24, 12, 0, 0), UserPassword: "pw", ReferGID: 9,
		UserPasswordEnabled: true, SystemPasswordEnabled: true, Codeword: "cw",
	}
}

// keep zeroes what version v does not carry.
func keep(s MatchmakeSession, v types.Version) MatchmakeSession {
	if v < types.Version3_4 {
		s.ProgressScore = 0
	}
	if v < types.Version3 {
		s.SessionKey = nil
	}
	if v < types.Version3_5 {
		s.Option0 = 0
	}
	if v < types.Version3_6 {
		s.MatchmakeParam, s.StartedTime = nil, 0
	}
	if v < types.Version3_7 {
		s.UserPassword = ""
	}
	if v < types.Version3_8 {
		s.ReferGID, s.UserPasswordEnabled, s.SystemPasswordEnabled = 0, false, false
	}
	if v < types.Version4 {
		s.Codeword = ""
	}
	return s
}

func TestMatchmakeSessionVersions(t *testing.T) {
	for _, tc := range versions {
		t.Run(tc.v.String(), func(t *testing.T) {
			in := fullSession()
			h, err := in.Holder(tc.st)
			if err != nil {
				t.Fatal(err)
			}
			got, isSession, err := ParseHolder(h, tc.st)
			if err != nil || !isSession {
				t.Fatalf("ParseHolder: %v session=%v", err, isSession)
			}
			if want := keep(in, tc.v); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			// Every prefix fails.
			for n := range len(h.Data) {
				if _, _, err := ParseHolder(types.AnyDataHolder{TypeName: h.TypeName, Data: h.Data[:n]}, tc.st); err == nil {
					t.Fatalf("prefix of %d bytes parsed", n)
				}
			}
		})
	}
}

// TestNewerRevisionIsVersionError: a session of a NEX 3.8 client (revision 3)
// read by a server configured for 3.5 fails naming the structure and the
// versions, instead of being read as another version's (the one version
// context: serve --nex-version).
func TestNewerRevisionIsVersionError(t *testing.T) {
	in := fullSession()
	h, _ := in.Holder(types.Settings{StructureHeader: true, Version: types.Version3_8})
	_, _, err := ParseHolder(h, types.Settings{StructureHeader: true, Version: types.Version3_5})
	var ve *types.VersionError
	if !errors.Is(err, types.ErrVersion) || !errors.As(err, &ve) {
		t.Fatalf("got %v, want a VersionError", err)
	}
}

// TestDisputedReadings: at NEX 3.4 the consoles' MatchmakeSession carries
// progress_score and NintendoClients' does not (docs/nex.md "Disputed gates");
// each reading reads its own bytes and refuses the other's; from 3.5 on they agree.
func TestDisputedReadings(t *testing.T) {
	console := types.Settings{Version: types.Version3_4}
	nc := types.Settings{Version: types.Version3_4, Gates: types.GatesNintendoClients}
	in := fullSession()
	hc, _ := in.Holder(console)
	hn, _ := in.Holder(nc)
	if len(hc.Data) != len(hn.Data)+1 {
		t.Fatalf("console %d bytes, NintendoClients %d: want one byte (progress_score) more", len(hc.Data), len(hn.Data))
	}
	if got, _, err := ParseHolder(hc, console); err != nil || got.ProgressScore != in.ProgressScore {
		t.Fatalf("console reading: %v %d", err, got.ProgressScore)
	}
	if got, _, err := ParseHolder(hn, nc); err != nil || got.ProgressScore != 0 {
		t.Fatalf("NintendoClients reading: %v %d", err, got.ProgressScore)
	}
	if _, _, err := ParseHolder(hn, console); err == nil {
		t.Fatal("the console reading read NintendoClients' bytes")
	}
	if _, _, err := ParseHolder(hc, nc); err == nil {
		t.Fatal("NintendoClients' reading read the console's bytes")
	}
	at35 := types.Settings{StructureHeader: true, Version: types.Version3_5}
	a, _ := in.Holder(at35)
	at35.Gates = types.GatesNintendoClients
	b, _ := in.Holder(at35)
	if !bytes.Equal(a.Data, b.Data) {
		t.Fatal("the readings differ at NEX 3.5")
	}
}

func TestSearchCriteriaAndParams(t *testing.T) {
	for _, tc := range versions {
		t.Run(tc.v.String(), func(t *testing.T) {
			c := SearchCriteria{Attributes: []string{"1", "", "2,5"}, GameMode: "3", MinParticipants: "2", MaxParticipants: "8",
				MatchmakeSystemType: "1", VacantOnly: true, ExcludeLocked: true, SelectionMethod: 1, VacantParticipants: 2}
			if tc.v >= types.Version4 {
				c.Codeword, c.ResultRange = "x", types.ResultRange{Offset: 1, Size: 10}
			}
			if tc.v < types.Version3_4 {
				c.VacantParticipants = 0
			}
			if tc.v >= types.Version3_6 {
				c.MatchmakeParam = []types.Pair[string, types.Variant]{} // decoded lists are never nil
			}
			if tc.v >= types.Version3_7 {
				c.ExcludeUserPasswordSet = true
			}
			if tc.v >= types.Version3_8 {
				c.ReferGID = 4
			}
			jp := JoinParam{GID: 3, AdditionalParticipants: []types.PID{}, UserPassword: "u", SystemPassword: "s", JoinMessage: "m",
				ParticipationCount: 1, ExtraParticipants: 2, BlockListOption: 1}
			w := types.NewWriter(nil, tc.st)
			c.Append(&w)
			jw := jp.Wire()
			jw.Append(&w)
			b, err := w.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			r := types.NewReader(b, tc.st)
			gotC := ReadSearchCriteria(&r, "c")
			var gotJ mm.JoinMatchmakeSessionParam
			gotJ.Read(&r, "j")
			if err := r.Done(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotC, c) {
				t.Fatalf("SearchCriteria: got %+v\nwant %+v", gotC, c)
			}
			if !reflect.DeepEqual(gotJ, jw) {
				t.Fatalf("JoinParam: got %+v want %+v", gotJ, jw)
			}
		})
	}
}

func TestCriteriaMatch(t *testing.T) {
	s := fullSession()
	s.UserPassword, s.UserPasswordEnabled, s.Codeword, s.ReferGID = "", false, "", 0
	tests := []struct {
		name string
		c    SearchCriteria
		want bool
	}{
		{"anything", SearchCriteria{}, true},
		{"game mode", SearchCriteria{GameMode: "4"}, true},
		{"other game mode", SearchCriteria{GameMode: "5"}, false},
		{"game mode set", SearchCriteria{GameMode: "1|4|9"}, true},
		{"attribute range", SearchCriteria{Attributes: []string{"0,1", "2"}}, true},
		{"attribute out of range", SearchCriteria{Attributes: []string{"2,3"}}, false},
		{"participants", SearchCriteria{MinParticipants: "2", MaxParticipants: "8,8"}, true},
		{"other maximum", SearchCriteria{MaxParticipants: "4"}, false},
		{"vacant", SearchCriteria{VacantOnly: true, VacantParticipants: 5}, true},
		{"not vacant enough", SearchCriteria{VacantOnly: true, VacantParticipants: 6}, false},
		{"system password", SearchCriteria{ExcludeSystemPasswordSet: true}, false},
		{"codeword", SearchCriteria{Codeword: "x"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Match(&s, true, 0); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range []SearchCriteria{{GameMode: "x"}, {GameMode: "5,1"}, {Attributes: make([]string, 7)}, {MaxParticipants: "1,"}} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("Compile(%+v) accepted", bad)
		}
	}
}

func FuzzParseHolder(f *testing.F) {
	for i, tc := range versions {
		s := fullSession()
		h, _ := s.Holder(tc.st)
		f.Add(h.Data, uint8(i), true)
		g, _ := GatheringHolder(s.Gathering, tc.st)
		f.Add(g.Data, uint8(i), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, vi uint8, session bool) {
		tc := versions[int(vi)%len(versions)]
		name := TypeGathering
		if session {
			name = TypeMatchmakeSession
		}
		s, _, err := ParseHolder(types.AnyDataHolder{TypeName: name, Data: data}, tc.st)
		if err != nil || !session {
			return
		}
		h, err := s.Holder(tc.st)
		if err != nil {
			return // a value that does not fit again (e.g. a huge list) is fine to refuse
		}
		s2, _, err := ParseHolder(h, tc.st)
		if err != nil {
			t.Fatalf("re-encoding does not parse back: %v", err)
		}
		// Bytes, not values: a Double in the params may be NaN.
		if h2, _ := s2.Holder(tc.st); !bytes.Equal(h.Data, h2.Data) {
			t.Fatalf("round trip: %x vs %x", h.Data, h2.Data)
		}
	})
}

func FuzzReadParams(f *testing.F) {
	for i, tc := range versions {
		w := types.NewWriter(nil, tc.st)
		crit := SearchCriteria{GameMode: "1"}
		fs := fullSession()
		p := mm.AutoMatchmakeParam{Session: fs.Wire(), SearchCriteria: []mm.MatchmakeSessionSearchCriteria{crit.Wire()}}
		p.Append(&w)
		f.Add(w.B, uint8(i))
		w = types.NewWriter(nil, tc.st)
		u := mm.UpdateMatchmakeSessionParam{GID: 1, ModificationFlags: ModifyAttributes, Attributes: []uint32{1}, Description: "d"}
		u.Append(&w)
		f.Add(w.B, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, vi uint8) {
		tc := versions[int(vi)%len(versions)]
		r := types.NewReader(data, tc.st)
		var ap mm.AutoMatchmakeParam
		if ap.Read(&r, "p"); r.Err() == nil {
			for _, c := range criteriaFromWire(ap.SearchCriteria) {
				Compile(c)
			}
		}
		r = types.NewReader(data, tc.st)
		var jp mm.JoinMatchmakeSessionParam
		jp.Read(&r, "j")
		r = types.NewReader(data, tc.st)
		var cp mm.CreateMatchmakeSessionParam
		cp.Read(&r, "c")
		r = types.NewReader(data, tc.st)
		var up mm.UpdateMatchmakeSessionParam
		if up.Read(&r, "u"); r.Done() == nil {
			ms := fullSession()
			u := updateFromWire(&up)
			u.apply(&ms)
		}
		r = types.NewReader(data, tc.st)
		c := ReadSearchCriteria(&r, "s")
		if r.Err() == nil {
			Compile(c)
		}
	})
}

// TestTermsAgreeWithMatch: every session Match accepts satisfies every term
// of the criterion (a store searching by the terms never misses a session
// Match would take), over criteria of each shape and sessions around them.
func TestTermsAgreeWithMatch(t *testing.T) {
	crits := []SearchCriteria{
		{},
		{GameMode: "3"},
		{GameMode: "3", MatchmakeSystemType: "1", Attributes: []string{"1", "2"}},
		{Attributes: []string{"0,5", "1|2|3", "", "7"}, MinParticipants: "2", MaxParticipants: "4,8"},
		{GameMode: "2|3", Attributes: []string{"", "", "", "", "", "6"}},
		{MaxParticipants: "8", Attributes: []string{"4,4"}},
		{Attributes: []string{"2,6"}, MaxParticipants: "5,7"},
		{Attributes: []string{"", "1|3|5"}, GameMode: "0,2"},
	}
	value := func(f Field, s *MatchmakeSession) (uint32, bool) {
		switch f {
		case FieldGameMode:
			return s.GameMode, true
		case FieldSystemType:
			return s.MatchmakeSystemType, true
		case FieldMinParticipants:
			return uint32(s.MinParticipants), true
		case FieldMaxParticipants:
			return uint32(s.MaxParticipants), true
		}
		i := int(f - FieldAttribute)
		if i < len(s.Attributes) {
			return s.Attributes[i], true
		}
		return 0, false
	}
	for _, sc := range crits {
		checked := 0
		c, err := Compile(sc)
		if err != nil {
			t.Fatal(err)
		}
		rnd := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			s := MatchmakeSession{GameMode: rnd.Uint32N(5), MatchmakeSystemType: rnd.Uint32N(2),
				Gathering:         Gathering{MinParticipants: uint16(rnd.UintN(3)), MaxParticipants: uint16(4 + rnd.UintN(5))},
				OpenParticipation: true}
			for range rnd.IntN(7) {
				s.Attributes = append(s.Attributes, rnd.Uint32N(8))
			}
			if !c.Match(&s, false, 0) {
				continue
			}
			checked++
			for _, term := range c.Terms() {
				v, ok := value(term.Field, &s)
				in := ok && (term.Values == nil && term.Lo <= v && v <= term.Hi || term.Values != nil && slices.Contains(term.Values, v))
				if !in {
					t.Fatalf("criteria %+v: session %+v matches but fails term %+v", sc, s, term)
				}
			}
		}
		if checked < 5 {
			t.Fatalf("criteria %+v: only %d matching sessions checked", sc, checked)
		}
	}
}
