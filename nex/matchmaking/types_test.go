package matchmaking

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

var versions = []struct {
	v  types.Version
	st types.Settings
}{
	{types.Version2, types.Settings{}},
	{types.Version3, types.Settings{}},
	{types.Version3_4, types.Settings{}},
	{types.Version3_5, types.Settings{StructureHeader: true}},
	{types.Version3_6, types.Settings{StructureHeader: true}},
	{types.Version3_7, types.Settings{StructureHeader: true}},
	{types.Version3_8, types.Settings{StructureHeader: true}},
	{types.Version4, types.Settings{StructureHeader: true, PIDSize: 8}},
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
			h, err := in.Holder(tc.st, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, isSession, used, err := ParseHolder(h, tc.st, tc.v)
			if err != nil || !isSession || used != tc.v {
				t.Fatalf("ParseHolder: %v session=%v version %v", err, isSession, used)
			}
			if want := keep(in, tc.v); !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			// Every prefix fails.
			for n := range len(h.Data) {
				if _, _, _, err := ParseHolder(types.AnyDataHolder{TypeName: h.TypeName, Data: h.Data[:n]}, tc.st, tc.v); err == nil {
					t.Fatalf("prefix of %d bytes parsed", n)
				}
			}
		})
	}
}

// TestRevisionRefinesVersion: a client that speaks 3.8 is understood by a server
// assuming 3.5, by the revision in the structure header.
func TestRevisionRefinesVersion(t *testing.T) {
	st := types.Settings{StructureHeader: true}
	in := fullSession()
	h, _ := in.Holder(st, types.Version3_8)
	got, _, used, err := ParseHolder(h, st, types.Version3_5)
	if err != nil || used != types.Version3_8 || !reflect.DeepEqual(got, keep(in, types.Version3_8)) {
		t.Fatalf("%v %v %+v", err, used, got)
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
			if tc.v < types.Version3 {
				c.SelectionMethod = 0
			}
			if tc.v < types.Version3_4 {
				c.VacantParticipants = 0
			}
			if tc.v < types.Version2 {
				c.MinParticipants, c.MaxParticipants = "", ""
			}
			if tc.v >= types.Version3_6 {
				c.MatchmakeParam = []types.Pair[string, types.Variant]{} // decoded lists are never nil
			}
			p := AutoMatchmakeParam{Session: keep(fullSession(), tc.v), AdditionalParticipants: []types.PID{5}, Option: 1,
				JoinMessage: "hi", ParticipationCount: 2, SearchCriteria: []SearchCriteria{c}, TargetGIDs: []uint32{4}}
			w := types.NewWriter(nil, tc.st)
			p.Append(&w, tc.v)
			jp := JoinParam{GID: 3, AdditionalParticipants: []types.PID{}, UserPassword: "u", SystemPassword: "s", JoinMessage: "m", ParticipationCount: 1}
			if tc.v >= types.Version3_6 {
				jp.ExtraParticipants = 2
			}
			jp.Append(&w, tc.v)
			b, err := w.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			r := types.NewReader(b, tc.st)
			gotP, _ := ReadAutoMatchmakeParam(&r, "p", tc.v)
			gotJ := ReadJoinParam(&r, "j", tc.v)
			if err := r.Done(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotP, p) {
				t.Fatalf("AutoMatchmakeParam: got %+v\nwant %+v", gotP, p)
			}
			if !reflect.DeepEqual(gotJ, jp) {
				t.Fatalf("JoinParam: got %+v want %+v", gotJ, jp)
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
		h, _ := s.Holder(tc.st, tc.v)
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
		s, _, used, err := ParseHolder(types.AnyDataHolder{TypeName: name, Data: data}, tc.st, tc.v)
		if err != nil || !session {
			return
		}
		h, err := s.Holder(tc.st, used)
		if err != nil {
			return // a value that does not fit again (e.g. a huge list) is fine to refuse
		}
		s2, _, _, err := ParseHolder(h, tc.st, used)
		if err != nil {
			t.Fatalf("re-encoding does not parse back: %v", err)
		}
		// Bytes, not values: a Double in the params may be NaN.
		if h2, _ := s2.Holder(tc.st, used); !bytes.Equal(h.Data, h2.Data) {
			t.Fatalf("round trip: %x vs %x", h.Data, h2.Data)
		}
	})
}

func FuzzReadParams(f *testing.F) {
	for i, tc := range versions {
		w := types.NewWriter(nil, tc.st)
		p := AutoMatchmakeParam{Session: fullSession(), SearchCriteria: []SearchCriteria{{GameMode: "1"}}}
		p.Append(&w, tc.v)
		f.Add(w.B, uint8(i))
		w = types.NewWriter(nil, tc.st)
		u := UpdateParam{GID: 1, ModificationFlag: ModifyAttributes, Attributes: []uint32{1}, Description: "d"}
		u.Append(&w, tc.v)
		f.Add(w.B, uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, vi uint8) {
		tc := versions[int(vi)%len(versions)]
		r := types.NewReader(data, tc.st)
		ReadAutoMatchmakeParam(&r, "p", tc.v)
		r = types.NewReader(data, tc.st)
		ReadJoinParam(&r, "j", tc.v)
		r = types.NewReader(data, tc.st)
		ReadCreateParam(&r, "c", tc.v)
		r = types.NewReader(data, tc.st)
		if u := ReadUpdateParam(&r, "u", tc.v); r.Done() == nil {
			// Encode, decode, encode: the encodings agree (the input itself
			// may be non-canonical: any non-zero byte is a true Bool).
			w := types.NewWriter(nil, tc.st)
			u.Append(&w, tc.v)
			r2 := types.NewReader(w.B, tc.st)
			u2 := ReadUpdateParam(&r2, "u", tc.v)
			w2 := types.NewWriter(nil, tc.st)
			u2.Append(&w2, tc.v)
			if w.Err() == nil && (r2.Done() != nil || !bytes.Equal(w.B, w2.B)) {
				t.Fatalf("UpdateParam round trip: %v %x vs %x", r2.Done(), w.B, w2.B)
			}
		}
		r = types.NewReader(data, tc.st)
		c := ReadSearchCriteria(&r, "s", tc.v)
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
