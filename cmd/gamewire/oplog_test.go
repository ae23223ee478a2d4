package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestOpsLogOneLinePerClass: without --verbose a failed login is a warning
// of its result's class, a handler error (a database failure) an error of
// its protocol and method; each class prints once per window, the next line
// saying how many were left out; successful logins and Info records are only
// counted; the summary has every count.
func TestOpsLogOneLinePerClass(t *testing.T) {
	var buf bytes.Buffer
	log, h := newOpsLogger(&buf)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.st.now = func() time.Time { return now }
	ctx := context.Background()
	login := func(result string) {
		log.LogAttrs(ctx, slog.LevelInfo, "nex login", slog.String("user", "bob"), slog.String("result", result))
	}
	dbErr := func() {
		log.LogAttrs(ctx, slog.LevelError, "rmc handler failed", slog.Uint64("protocol", 10), slog.Uint64("method", 1),
			slog.String("error", "dial unix /run/postgresql/.s.PGSQL.5432: connect: no such file or directory"))
	}
	login("success")
	login("RendezVous::InvalidUsername (0x80030064)")
	login("RendezVous::InvalidUsername (0x80030064)")
	login("RendezVous::MaxConnectionsReached (0x8003000E)")
	dbErr()
	dbErr()
	dbErr()
	log.Info("prudp connection opened")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want one per class (3):\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"level=WARN msg=\"nex login\"", "MaxConnectionsReached", "level=ERROR msg=\"rmc handler failed\""} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s; want %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[2], "no such file or directory") {
		t.Errorf("the database error is not named: %s", lines[2])
	}
	now = now.Add(opsLogWindow)
	dbErr()
	if last := strings.TrimSpace(buf.String()); !strings.Contains(last[strings.LastIndex(last, "\n")+1:], "left_out=\"2 more like this in the last 10s\"") {
		t.Errorf("after the window: %s", last)
	}
	want := "logins 1; login failed: RendezVous::InvalidUsername: 2; login failed: RendezVous::MaxConnectionsReached: 1; rmc handler failed protocol 10 method 1: 4"
	if got := h.summary(); got != want {
		t.Errorf("summary %q\nwant    %q", got, want)
	}
}

// TestServeLogsFailuresWithoutVerbose: serve without -v prints a failed
// login's cause, and its shutdown summary counts the logins.
func TestServeLogsFailuresWithoutVerbose(t *testing.T) {
	addr, out, stop := startServeNEX(t, t.TempDir())
	if _, err := runCLI(t, "login", addr, "--user", "nobody", "--password", "x", "--timeout", "20s"); err == nil {
		t.Fatal("login as an unknown user succeeded")
	}
	if got, err := runCLI(t, "login", addr, "--user", "guest", "--password", "MMQea3n!fsik", "--timeout", "20s"); err != nil {
		t.Fatalf("guest login: %v\n%s", err, got)
	}
	stop()
	log := out.String()
	if !strings.Contains(log, `level=WARN msg="nex login" user=nobody`) || !strings.Contains(log, "InvalidUsername") {
		t.Errorf("no line for the failed login:\n%s", log)
	}
	if !strings.Contains(log, "stopped: authentication server ") || !strings.Contains(log, "logins 1; login failed: RendezVous::InvalidUsername: 1") {
		t.Errorf("no shutdown summary with the logins:\n%s", log)
	}
}

// TestServeAuthWithoutSecureNode: `serve --role auth` with no secure node
// registered says so at start; a login fails naming what to start, on the
// client and in the server's log (without -v).
func TestServeAuthWithoutSecureNode(t *testing.T) {
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--role", "auth", "--listen", addr, "--data", t.TempDir())
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out)
		}
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "role auth"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", out)
		}
	}
	if !strings.Contains(out.String(), "note: no secure node is registered") {
		t.Errorf("no note about the missing secure node:\n%s", out)
	}
	got, err := runCLI(t, "login", addr, "--user", "guest", "--password", "MMQea3n!fsik", "--timeout", "20s")
	if err == nil || !strings.Contains(err.Error(), "MaxConnectionsReached") || !strings.Contains(err.Error(), "serve --role secure") {
		t.Fatalf("login with no secure node: %v\n%s", err, got)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "no live secure node"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's log does not name the missing node:\n%s", out)
		}
	}
}
