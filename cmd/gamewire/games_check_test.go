package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/games"
)

// TestGamesCheck: games check starts serve --game in process for each title,
// calls every method the title's Pretendo server answers and prints
// served/total, the missing methods and the totals. Titles whose methods
// gamewire serves all are full; the totals are the Pretendo table's.
func TestGamesCheck(t *testing.T) {
	out, err := runCLI(t, "games", "check", "PIKMIN 3", "mario-kart-7", "Luigi's Mansion 2", "dr-luigi")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	methods, err := games.ReadPretendoMethods()
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^(.+?)[ \t]+(\d+)/(\d+)[ \t]*(.*)$`)
	got := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		got[strings.TrimSpace(m[1])] = m[2:]
	}
	for _, name := range []string{"PIKMIN 3", "Mario Kart 7", "Luigi's Mansion 2", "Dr. Luigi"} {
		g, err := games.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := got[name]
		if !ok {
			t.Errorf("no row for %s:\n%s", name, out)
			continue
		}
		if want := len(methods.Of(g.Pretendo)); r[1] != itoa(want) {
			t.Errorf("%s: total %s, the table has %d methods", name, r[1], want)
		}
		if r[0] == r[1] && r[2] != "" || r[0] != r[1] && r[2] == "" {
			t.Errorf("%s: served %s/%s, missing %q", name, r[0], r[1], r[2])
		}
	}
	if r := got["PIKMIN 3"]; r == nil || r[0] != r[1] {
		t.Errorf("PIKMIN 3 not fully served: %v\n%s", r, out)
	}
	if !regexp.MustCompile(`total: \d+ of \d+ \(title, method\) pairs served; \d+ of 4 titles fully served`).MatchString(out) {
		t.Errorf("no totals line:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"games", "check", "no such game"}, `no game "no such game"`},
		{[]string{"games", "check", "Tetris 99"}, "Pretendo Network runs no server for it"},
		{[]string{"games", "check", "--server", "127.0.0.1:1"}, "--server checks one game"},
	} {
		out, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
