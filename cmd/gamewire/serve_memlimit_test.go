package main

import (
	"context"
	"math"
	"net"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestServeMemoryLimit: serve sets the Go runtime's soft memory limit
// from --max-buffer (auto), from --memory-limit, not at all with off or
// when GOMEMLIMIT is set, says which on stderr, refuses a bad value with
// the flag named, and puts the previous limit back when it returns.
func TestServeMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(math.MaxInt64)

	err := runCLIContext(t, context.Background(), &syncWriter{}, "serve", "--echo", "--listen", "127.0.0.1:1", "--memory-limit", "12MB")
	if err == nil || !strings.Contains(err.Error(), `--memory-limit "12MB" is not a size`) {
		t.Errorf("--memory-limit 12MB: err %v", err)
	}
	for _, tc := range []struct {
		name, env string
		args      []string
		limit     int64
		says      string
	}{
		{"auto", "", nil, 17 << 20, "memory limit 17MiB: the budget 1MiB + 16MiB"},
		{"size", "", []string{"--memory-limit", "96MiB"}, 96 << 20, "memory limit 96MiB"},
		{"off", "", []string{"--memory-limit", "off"}, math.MaxInt64, "memory limit off"},
		{"environment", "200MiB", nil, math.MaxInt64, "memory limit from GOMEMLIMIT=200MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("GOMEMLIMIT", tc.env) // read by serve; the runtime read it at start
			}
			probe, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			addr := probe.LocalAddr().String()
			probe.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &syncWriter{}
			done := make(chan error, 1)
			go func() {
				done <- runCLIContext(t, ctx, out, append([]string{"serve", "--echo", "--listen", addr, "--max-buffer", "1MiB"}, tc.args...)...)
			}()
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(out.String(), "serving PRUDP") {
				if time.Now().After(deadline) {
					t.Fatalf("serve did not start:\n%s", out)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.limit {
				t.Errorf("limit while serving %d, want %d", got, tc.limit)
			}
			if !strings.Contains(out.String(), tc.says) {
				t.Errorf("stderr does not say %q:\n%s", tc.says, out)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("serve: %v\n%s", err, out)
			}
			if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
				t.Errorf("limit after serve returned %d, want none again", got)
			}
		})
	}
}
