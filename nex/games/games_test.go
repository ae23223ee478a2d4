package games

import (
	"strings"
	"testing"

	"github.com/gamewire/gamewire/prudp"
)

func TestTable(t *testing.T) {
	ids := map[uint32]string{}
	for _, g := range Table {
		if g.Name == "" || g.Source == "" || len(g.AccessKey) != 8 || g.ServerID == 0 {
			t.Errorf("incomplete row %+v", g)
		}
		if prev, dup := ids[g.ServerID]; dup {
			t.Errorf("server id %s twice: %s and %s", g.ID(), prev, g.Name)
		}
		ids[g.ServerID] = g.Name
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
		{"mario kart 7", "Mario Kart 7", "6181dff1", prudp.NEXV0, ""},
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
