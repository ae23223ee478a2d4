package main

import (
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

// TestServeNEXVersion: --nex-version wins over --game's version, which wins
// over none; a bad value is refused naming the flag before anything binds.
func TestServeNEXVersion(t *testing.T) {
	for _, c := range []struct {
		flag, game string
		want       types.Version
		from       string
	}{
		{"3.4", "", 30400, "--nex-version"},
		{"30504", "", 30504, "--nex-version"},
		{"3.6", "1010EB00", 30600, "--nex-version"},
		{"", "1010EB00", 30504, "--game 1010EB00"},
		{"", "", 0, ""},
	} {
		o := serveOptions{nex: serveNEXOptions{nexVersion: c.flag}}
		o.game = c.game
		v, from, err := o.nexVersion()
		if err != nil || v != c.want || from != c.from {
			t.Errorf("--nex-version %q --game %q: %v from %q (%v), want %v from %q", c.flag, c.game, v, from, err, c.want, c.from)
		}
	}
	_, err := runCLI(t, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--nex-version", "3.x")
	if err == nil || !strings.Contains(err.Error(), "--nex-version") {
		t.Fatalf("bad --nex-version: %v", err)
	}
}
