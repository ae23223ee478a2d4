package matchmaking

import (
	"testing"

	"github.com/gamewire/gamewire/nex/nattraversal"
)

// TestParseNATOrder reads every policy, with and without ",all", and refuses
// anything else naming what it wants.
func TestParseNATOrder(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want NATOrder
	}{
		{"off", NATOrder{Policy: NATOff}},
		{"prefer", NATOrder{}},
		{"Strict", NATOrder{Policy: NATStrict}},
		{"prefer,all", NATOrder{AllParticipants: true}},
		{"strict,ALL", NATOrder{Policy: NATStrict, AllParticipants: true}},
	} {
		got, err := ParseNATOrder(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseNATOrder(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := ParseNATOrder(got.String()); err != nil || back != got {
			t.Errorf("%q: String %q reads back as %+v, %v", tc.in, got.String(), back, err)
		}
	}
	for _, bad := range []string{"", "on", "prefer,", "prefer,some", "all", "strict,all,all"} {
		if _, err := ParseNATOrder(bad); err == nil {
			t.Errorf("ParseNATOrder(%q) accepted", bad)
		}
	}
	if s := NATPolicy(7).String(); s != "NATPolicy(7)" {
		t.Errorf("String %q", s)
	}
}

// natOnlyStore is a Store that is no NATStore: NAT reports are ignored and
// auto-matchmaking keeps the usual order, whatever the policy.
type natOnlyStore struct{ Store }

// TestNATWithoutNATStore: reports to a store that keeps none are no error,
// and ranking leaves the list as it is.
func TestNATWithoutNATStore(t *testing.T) {
	s := &Server{Store: natOnlyStore{}, NAT: NATOrder{Policy: NATStrict}}
	if err := s.ReportNAT(t.Context(), nil, nattraversal.Properties{Mapping: 1, Filtering: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.ReportNATResult(t.Context(), nil, true); err != nil {
		t.Fatal(err)
	}
	gids, err := s.rankNAT(t.Context(), 1, []uint32{3, 2, 1})
	if err != nil || len(gids) != 3 || gids[0] != 3 {
		t.Fatalf("rank %v %v", gids, err)
	}
	if p, r := s.NATStats(); p != 0 || r != 0 {
		t.Fatalf("stats %d %d", p, r)
	}
}
