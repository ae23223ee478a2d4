package nattraversal

import (
	"strings"
	"testing"
)

// reachTable is the rule of docs/nex.md "NAT-aware matchmaking", written out
// by hand for every pair of reported properties: row a, column b, each as
// mapping/filtering with 0 unknown (0/0 0/1 0/2 1/0 1/1 1/2 2/0 2/1 2/2).
// R reachable, X unreachable, ? unknown.
var reachTable = []string{
	/* 0/0 */ "? ? ? ? R ? ? ? ?",
	/* 0/1 */ "? ? ? ? R ? ? ? ?",
	/* 0/2 */ "? ? ? ? R ? X X X",
	/* 1/0 */ "? ? ? R R R ? ? ?",
	/* 1/1 */ "R R R R R R R R R",
	/* 1/2 */ "? ? ? R R R X X X",
	/* 2/0 */ "? ? X ? R X X X X",
	/* 2/1 */ "? ? X ? R X X X X",
	/* 2/2 */ "? ? X ? R X X X X",
}

// TestReachTable checks Reach against the whole table, and that it is
// symmetric and ignores the RTT.
func TestReachTable(t *testing.T) {
	want := map[string]Reachability{"R": Reachable, "X": Unreachable, "?": ReachUnknown}
	for i, row := range reachTable {
		cells := strings.Fields(row)
		if len(cells) != 9 {
			t.Fatalf("row %d has %d cells", i, len(cells))
		}
		a := Properties{Mapping: uint32(i / 3), Filtering: uint32(i % 3), RTT: 10}
		for j, cell := range cells {
			b := Properties{Mapping: uint32(j / 3), Filtering: uint32(j % 3), RTT: uint32(j)}
			if got := Reach(a, b); got != want[cell] {
				t.Errorf("Reach(%v, %v) = %v, want %v", a, b, got, want[cell])
			}
			if Reach(a, b) != Reach(b, a) {
				t.Errorf("Reach(%v, %v) is not symmetric", a, b)
			}
		}
	}
}

// TestReachUnnamedValues: a value the page does not name counts as unknown.
func TestReachUnnamedValues(t *testing.T) {
	odd := Properties{Mapping: 7, Filtering: 0xFFFFFFFF}
	if odd.Known() {
		t.Fatal("unnamed values reported as known")
	}
	for m := range uint32(3) {
		for f := range uint32(3) {
			p := Properties{Mapping: m, Filtering: f}
			if got, want := Reach(odd, p), Reach(Properties{}, p); got != want {
				t.Errorf("Reach(%v, %v) = %v, want %v (as unknown)", odd, p, got, want)
			}
		}
	}
	if s := odd.String(); s != "?/?" {
		t.Errorf("String %q", s)
	}
	if s := (Properties{Mapping: 1, Filtering: 2}).String(); s != "EIM/PDF" {
		t.Errorf("String %q", s)
	}
	if s := Reachability(9).String(); s != "Reachability(9)" {
		t.Errorf("String %q", s)
	}
}
