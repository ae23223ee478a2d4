package nintendoclients

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNEXCallAgainstNintendoClientsServer runs `gamewire nex call` against a
// server made of NintendoClients' own classes (nc_server.py): it logs in with
// NintendoClients' tickets, encodes Health.PingDaemon by its description and
// prints NintendoClients' answer as JSON. The server runs with
// --tolerate-syn-session-id as TestGamewireLogsInToNintendoClientsServer's does
// (docs/interop.md).
func TestNEXCallAgainstNintendoClientsServer(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	addr, _, stop := ncServer(t, dir, python, "--profile", "default", "--access-key", "3d37fbdb",
		"--tolerate-syn-session-id", "--pid", strconv.Itoa(userPID), "--password", userPassword)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "nex", "call", addr, "Health.PingDaemon", "{}", "--compact",
		"--dialect", "nex-v1", "--access-key", "3d37fbdb", "--user", strconv.Itoa(userPID), "--password", userPassword).CombinedOutput()
	lines := stop()
	if err != nil || strings.TrimSpace(string(out)) != `{"result":true}` {
		t.Fatalf("gamewire nex call: %v\n%s\nNintendoClients server:\n%s", err, out, strings.Join(lines, "\n"))
	}
	if n := lines.count("ping-daemon"); n != 1 {
		t.Errorf("NintendoClients answered %d PingDaemon calls, want 1:\n%s", n, strings.Join(lines, "\n"))
	}
}
