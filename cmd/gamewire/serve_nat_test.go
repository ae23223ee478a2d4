package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/nattraversal"
)

// TestServeNATMatchmakingFlag: --nat-matchmaking is read before anything
// listens (a bad value is refused naming the flag and the values it takes),
// and the banner names the policy the secure server runs: the flag's, else
// the default, prefer.
func TestServeNATMatchmakingFlag(t *testing.T) {
	for _, bad := range []string{"sometimes", "prefer,most"} {
		err := runCLIContext(t, context.Background(), &syncWriter{}, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:1", "--nat-matchmaking", bad)
		if err == nil || !strings.Contains(err.Error(), "--nat-matchmaking") || !strings.Contains(err.Error(), bad) {
			t.Errorf("--nat-matchmaking %s: %v", bad, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "NAT-aware auto-matchmaking prefer "},
		{[]string{"--nat-matchmaking", "Strict,all"}, "NAT-aware auto-matchmaking strict,all "},
	} {
		metricsAddr := freeTCPAddr(t)
		_, out, stop := startServeNEX(t, t.TempDir(), append(tc.args, "--metrics", metricsAddr)...)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), tc.want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%v: no %q in the banner:\n%s", tc.args, tc.want, out)
			}
		}
		// The NAT-steered auto-matchmakes are counted in the metrics (none
		// yet: nex TestNATAwareAutoMatchmake drives the counts).
		text := getMetrics(t, metricsAddr)
		for _, want := range []string{`gamewire_nex_nat_matchmaking_total{choice="preferred",server="matchmaking"} 0`,
			`gamewire_nex_nat_matchmaking_total{choice="refused",server="matchmaking"} 0`} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %q:\n%s", want, text)
			}
		}
		stop()
	}
}

// getMetrics reads serve's Prometheus text at addr, waiting (10 s at most)
// for the listener.
func getMetrics(t *testing.T, addr string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				return string(body)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /metrics on %s: %v", addr, err)
		}
	}
}

// TestNexMatchmakeNAT: `nex matchmake --nat 2,1` reports its NAT before it
// auto-matchmakes, and a server doing NAT-aware matchmaking (the default)
// puts it in the session whose owner it can reach (endpoint-independent
// mapping and port-independent filtering), not the older one whose owner is
// behind a symmetric NAT; a --nat value outside 0-2 is refused before
// anything is sent.
func TestNexMatchmakeNAT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := runCLIContext(t, ctx, &syncWriter{}, "nex", "matchmake", "127.0.0.1:1", "--user", "guest", "--nat", "3,1"); err == nil ||
		!strings.Contains(err.Error(), `--nat "3,1"`) {
		t.Fatalf("--nat 3,1: %v", err)
	}
	addr := serveMatchmaking(t, ctx, 2)
	var gids []uint32
	for i, props := range []nattraversal.Properties{{Mapping: 2, Filtering: 2}, {Mapping: 1, Filtering: 1}} {
		sess, c, _ := mmClient(t, ctx, addr, strconv.Itoa(1000+i), "pw")
		gid, _, err := c.CreateMatchmakeSession(ctx, session2(), "", 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := (&nattraversal.Client{RMC: sess.RMC}).ReportNATProperties(ctx, props); err != nil {
			t.Fatal(err)
		}
		gids = append(gids, gid)
	}
	out := &syncWriter{}
	if err := runCLIContext(t, ctx, out, "nex", "matchmake", addr, "--user", "guest", "--password", auth.GuestPassword,
		"--game-mode", "7", "--max-participants", "2", "--nat", "2,1", "--for", "10ms"); err != nil {
		t.Fatalf("nex matchmake: %v\n%s", err, out)
	}
	for _, want := range []string{"reported NAT EDM/PIF (natm 2, natf 1)", fmt.Sprintf("session %d: owner 1001, host 1001, 2/2 participants", gids[1])} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q (sessions %v):\n%s", want, gids, out)
		}
	}
}
