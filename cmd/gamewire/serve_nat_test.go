package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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
