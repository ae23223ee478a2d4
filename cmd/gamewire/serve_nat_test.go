package main

import (
	"context"
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
		_, out, stop := startServeNEX(t, t.TempDir(), tc.args...)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), tc.want); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%v: no %q in the banner:\n%s", tc.args, tc.want, out)
			}
		}
		stop()
	}
}
