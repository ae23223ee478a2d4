package matchmaking

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

func fullCommunity() PersistentGathering {
	return PersistentGathering{
		Gathering: Gathering{ID: 7, Owner: 1000, Host: 1001, MinParticipants: 1, MaxParticipants: 8,
			ParticipationPolicy: 98, Flags: FlagMigrateOwner, Description: "club"},
		CommunityType: 1, Password: "pw", Attributes: []uint32{7, 9}, ApplicationBuffer: []byte{0xaa, 0xbb},
		ParticipationStartDate: types.MakeDateTime(2026, 1, 1, 0, 0, 0),
		ParticipationEndDate:   types.MakeDateTime(2026, 6, 30, 12, 0, 0),
		MatchmakeSessionCount:  2, ParticipationCount: 3,
	}
}

// The goldens are written field by field from the PersistentGathering and
// SimpleCommunity tables of the match-making types page (Gathering's fields
// first, then the structure's own; with structure headers each level has its
// own: version 0, u32 length).
func unhex(t testing.TB, parts ...string) []byte {
	b, err := hex.DecodeString(strings.Join(parts, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var communityGoldens = []struct {
	name string
	st   types.Settings
	hex  []string
}{
	{"no headers, 4-byte PIDs", types.Settings{}, []string{
		"07000000", "e8030000", "e9030000", "0100", "0800", "62000000", "00000000", "10000000", "00000000", "0500636c756200", // Gathering
		"01000000", "0300707700", "02000000" + "07000000" + "09000000", "02000000aabb", // type, password, attribs, buffer
		"000042a81f000000", "00c0bca91f000000", "02000000", "03000000", // dates, session count, participation count
	}},
	{"headers, 8-byte PIDs", types.Settings{StructureHeader: true, PIDSize: 8}, []string{
		"002f000000", "07000000", "e803000000000000", "e903000000000000", "0100", "0800", "62000000", "00000000", "10000000", "00000000", "0500636c756200",
		"0033000000", "01000000", "0300707700", "02000000" + "07000000" + "09000000", "02000000aabb",
		"000042a81f000000", "00c0bca91f000000", "02000000", "03000000",
	}},
}

func TestPersistentGatheringGolden(t *testing.T) {
	for _, tc := range communityGoldens {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex...)
			g := fullCommunity()
			w := types.NewWriter(nil, tc.st)
			g.Append(&w)
			b, err := w.Bytes()
			if err != nil || !bytes.Equal(b, want) {
				t.Fatalf("Append = %x, %v\nwant     %x", b, err, want)
			}
			r := types.NewReader(want, tc.st)
			got := ReadPersistentGathering(&r, "community")
			if err := r.Done(); err != nil || !reflect.DeepEqual(got, g) {
				t.Fatalf("Read = %+v, %v\nwant %+v", got, err, g)
			}
			for n := range len(want) {
				r := types.NewReader(want[:n], tc.st)
				ReadPersistentGathering(&r, "community")
				if r.Done() == nil {
					t.Fatalf("prefix of %d bytes accepted", n)
				}
			}
		})
	}
}

func TestSimpleCommunityGolden(t *testing.T) {
	for _, tc := range []struct {
		st   types.Settings
		want string
	}{{types.Settings{}, "0700000002000000"}, {types.Settings{StructureHeader: true}, "00080000000700000002000000"}} {
		c := SimpleCommunity{GID: 7, MatchmakeSessionCount: 2}
		w := types.NewWriter(nil, tc.st)
		c.Append(&w)
		if got := hex.EncodeToString(w.B); got != tc.want {
			t.Fatalf("SimpleCommunity = %s, want %s", got, tc.want)
		}
		b := unhex(t, tc.want)
		r := types.NewReader(b, tc.st)
		var got SimpleCommunity
		if got.Read(&r, "c"); r.Done() != nil || got != c {
			t.Fatalf("SimpleCommunity.Read = %+v, %v", got, r.Done())
		}
		for n := range len(b) {
			r := types.NewReader(b[:n], tc.st)
			var got SimpleCommunity
			if got.Read(&r, "c"); r.Done() == nil {
				t.Fatalf("prefix of %d bytes accepted", n)
			}
		}
	}
}

func TestValidateCommunity(t *testing.T) {
	ok := fullCommunity()
	if err := ValidateCommunity(&ok); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(g *PersistentGathering){
		"attributes":   func(g *PersistentGathering) { g.Attributes = make([]uint32, MaxAttributes+1) },
		"buffer":       func(g *PersistentGathering) { g.ApplicationBuffer = make([]byte, MaxApplicationBuffer+1) },
		"description":  func(g *PersistentGathering) { g.Description = strings.Repeat("d", MaxDescription+1) },
		"password":     func(g *PersistentGathering) { g.Password = strings.Repeat("p", MaxPassword+1) },
		"max 0":        func(g *PersistentGathering) { g.MaxParticipants, g.MinParticipants = 0, 0 },
		"min over max": func(g *PersistentGathering) { g.MinParticipants = 9 },
		"ends first":   func(g *PersistentGathering) { g.ParticipationEndDate = types.MakeDateTime(2025, 1, 1, 0, 0, 0) },
	} {
		g := fullCommunity()
		f(&g)
		if err := ValidateCommunity(&g); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	g := fullCommunity()
	for _, tc := range []struct {
		at   types.DateTime
		open bool
	}{{types.MakeDateTime(2025, 12, 31, 23, 59, 59), false}, {types.MakeDateTime(2026, 1, 1, 0, 0, 0), true},
		{types.MakeDateTime(2026, 6, 30, 12, 0, 0), true}, {types.MakeDateTime(2026, 6, 30, 12, 0, 1), false}} {
		if g.Open(tc.at) != tc.open {
			t.Errorf("Open(%v) = %v", tc.at, !tc.open)
		}
	}
}

// FuzzReadPersistentGathering: no panic, and what decodes re-encodes to the
// same bytes and decodes the same.
func FuzzReadPersistentGathering(f *testing.F) {
	for i, tc := range communityGoldens {
		f.Add(uint8(i), unhex(f, tc.hex...))
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		st := communityGoldens[int(which)%len(communityGoldens)].st
		r := types.NewReader(b, st)
		g := ReadPersistentGathering(&r, "community")
		if r.Done() != nil {
			return
		}
		w := types.NewWriter(nil, st)
		g.Append(&w)
		out, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		r2 := types.NewReader(out, st)
		g2 := ReadPersistentGathering(&r2, "community")
		if err := r2.Done(); err != nil || !reflect.DeepEqual(normal(g), normal(g2)) {
			t.Fatalf("round trip: %+v, %v\nwant %+v", g2, err, g)
		}
	})
}

// normal makes empty lists and buffers compare equal to nil ones.
func normal(g PersistentGathering) PersistentGathering {
	if len(g.Attributes) == 0 {
		g.Attributes = nil
	}
	if len(g.ApplicationBuffer) == 0 {
		g.ApplicationBuffer = nil
	}
	return g
}
