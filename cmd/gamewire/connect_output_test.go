package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConnectOutput: connect's report names drops in words (no Go maps),
// --format json is one record with the counts, and the echo server's
// shutdown line too.
func TestConnectOutput(t *testing.T) {
	addr := startEcho(t, prudpFlags{dialect: "nex-v1", accessKey: defaultAccessKey, vport: 1})
	out, err := runCLI(t, "connect", "--server", addr, "--count", "3", "--timeout", "20s")
	if err != nil || !strings.Contains(out, "3/3 echoed") || !strings.Contains(out, "drops none") || strings.Contains(out, "map[") {
		t.Fatalf("connect: %v\n%s", err, out)
	}
	out, err = runCLI(t, "connect", "--server", addr, "--count", "2", "--format", "json", "--timeout", "20s")
	var rep struct {
		Sent, Echoed int
		Dialect      string
	}
	if err != nil || json.Unmarshal([]byte(strings.TrimSpace(out)), &rep) != nil || rep.Sent != 2 || rep.Echoed != 2 || rep.Dialect != "nex-v1" {
		t.Fatalf("connect --format json: %v %+v\n%s", err, rep, out)
	}
}

// TestConnectToNEXServerExplains: a NEX server accepts the connection but
// answers RMC requests only; connect says it is not an echo server.
func TestConnectToNEXServerExplains(t *testing.T) {
	addr, _, _ := startServeNEX(t, t.TempDir())
	_, err := runCLI(t, "connect", "--server", addr, "--count", "1", "--timeout", "3s")
	if err == nil || !strings.Contains(err.Error(), "not an echo server") {
		t.Fatalf("connect to a NEX server: %v", err)
	}
}

// TestKeygenDefaultOut: keygen hyperscape without --out writes to the data
// directory, not the working directory.
func TestKeygenDefaultOut(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	wd := t.TempDir()
	t.Chdir(wd)
	if out, err := runCLI(t, "keygen", "hyperscape"); err != nil {
		t.Fatalf("keygen hyperscape: %v\n%s", err, out)
	}
	for _, f := range []string{"key.pem", "key.pub.pem"} {
		if _, err := os.Stat(filepath.Join(data, "gamewire", "hyperscape", f)); err != nil {
			t.Error(err)
		}
	}
	if ents, _ := os.ReadDir(wd); len(ents) != 0 {
		t.Errorf("keygen wrote into the working directory: %v", ents)
	}
}
