package games

import (
	"slices"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/prudp"
)

func TestTable(t *testing.T) {
	ids := map[uint32]string{}
	for _, g := range Table {
		if g.Name == "" || g.Source == "" || len(g.AccessKey) != 8 || g.ServerID == 0 && g.Note != noID {
			t.Errorf("incomplete row %+v", g)
		}
		for _, id := range g.IDs() {
			if prev, dup := ids[id]; dup {
				t.Errorf("server id %08X twice: %s and %s", id, prev, g.Name)
			}
			ids[id] = g.Name
		}
		if _, err := matchmaking.ParseNATOrder(g.NATMatchmaking); g.NATMatchmaking != "" && err != nil {
			t.Errorf("%s: NATMatchmaking: %v", g.Name, err)
		}
		if g.Build != "" && g.NEXVersion == 0 {
			t.Errorf("%s: build %q without a version", g.Name, g.Build)
		}
	}
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		q, name, key string
		dialect      prudp.Dialect
		version      string
	}{
		{"Terraria", "Terraria", "3d37fbdb", prudp.NEXV1, "3.8.13"},
		{"10198f00", "Terraria", "3d37fbdb", prudp.NEXV1, "3.8.13"},
		{"0x1010EB00", "MARIO KART 8", "25dbf96a", prudp.NEXV1, "3.5.4"},
		{"mario kart 8", "MARIO KART 8", "25dbf96a", prudp.NEXV1, "3.5.4"},
		{"splatoon", "Splatoon", "6f599f81", prudp.NEXV1, "3.8.15"},
		{"new horizons", "Animal Crossing: New Horizons", "v43a10em", prudp.NEXLite, "4.6.4"},
		{"friends", "Friends", "ridfebb9", prudp.NEXV0Friends, "2.0.0"},
		{"mario kart 7", "Mario Kart 7", "6181dff1", prudp.NEXV0, "2.4.3"},
		{"monster-hunter-xx", "Monster Hunter XX", "4152f312", prudp.NEXV0, "4.4.0"},
		{"0016E400", "Metroid Prime: Federation Force", "f79fb3c5", prudp.NEXV0, "3.9.1"},
		{"wii u chat", "Wii U Chat", "e7a47214", prudp.NEXV1, "3.3.2"},
	} {
		g, err := Find(tc.q)
		if err != nil {
			t.Errorf("%q: %v", tc.q, err)
			continue
		}
		if g.Name != tc.name || g.AccessKey != tc.key || g.Dialect != tc.dialect || g.Version() != tc.version {
			t.Errorf("%q: %+v (version %q)", tc.q, g, g.Version())
		}
	}
	if _, err := Find("mario"); err == nil || !strings.Contains(err.Error(), "names") {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := Find("no such game"); err == nil {
		t.Error("unknown game found")
	}
	if n := len(Filter("switch")); n != 21 {
		t.Errorf("Filter(switch): %d games", n)
	}
}

// TestPretendoTitles: the table has every title Pretendo Network runs a NEX
// game server for (testdata/pretendo-titles/titles.tsv, current rows), with
// that repository's access key, and the variants its methods.tsv names.
func TestPretendoTitles(t *testing.T) {
	titles, err := ReadPretendoTitles()
	if err != nil {
		t.Fatal(err)
	}
	methods, err := ReadPretendoMethods()
	if err != nil {
		t.Fatal(err)
	}
	byRepo := map[string]Game{}
	for _, g := range Table {
		if g.Pretendo != "" {
			byRepo[g.Pretendo] = g
		}
	}
	n := 0
	for _, pt := range titles {
		if pt.Superseded {
			continue
		}
		g, ok := byRepo[pt.Repo]
		if pt.Repo == "nintendo-badge-arcade-authentication" {
			continue // the same title as nintendo-badge-arcade-secure
		}
		n++
		if !ok {
			t.Errorf("%s (%s): not in the table", pt.Repo, pt.Title)
			continue
		}
		if pt.AccessKey != "" && g.AccessKey != pt.AccessKey {
			t.Errorf("%s: access key %s, Pretendo's %s", g.Name, g.AccessKey, pt.AccessKey)
		}
		for _, id := range pt.ServerIDs {
			if !slices.Contains(g.IDs(), id) {
				t.Errorf("%s: game server id %08X missing", g.Name, id)
			}
		}
		for _, v := range methods.Variants(pt.Repo) {
			if !g.HasVariant(v) {
				t.Errorf("%s: variant %q missing (has %q)", g.Name, v, g.Variants)
			}
		}
	}
	if n != 42 || len(byRepo) != 42 {
		t.Errorf("%d Pretendo titles, %d table rows with a repository; want 42", n, len(byRepo))
	}
}
