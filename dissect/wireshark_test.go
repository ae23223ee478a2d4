package dissect

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/wireshark"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/wire"
)

// TestWiresharkPluginV0: a PRUDP V0 (3DS) conversation of RMC calls, one of them
// fragmented, written by --write-decrypted, read by tshark with the plugin
// generated from the built-in descriptions and the V0 access key preference:
// methods named, parameters shown. (cmd/gamewire's
// TestWiresharkPluginOnDecryptedCapture covers V1 on real traffic.)
func TestWiresharkPluginV0(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tshark is required under CI: %v", err)
		}
		t.Skip("tshark not installed")
	}
	set, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	const key = "12345678"
	st := types.Settings{} // V0: 4-byte PIDs, no structure headers
	c := newConvo(t, wire.NewV0(key, wire.ModeGames), key, 40)
	c.handshake()
	c.message(0, rmcCall(t, set, st, "Ranking", "UploadScore", 1, true, `{"score_data":{"category":7,"score":4321,"groups":[1,2]},"unique_id":3}`), false)
	c.message(1, rmcCall(t, set, st, "Ranking", "UploadScore", 1, false, `{}`), false)
	c.message(0, rmcCall(t, set, st, "Health", "PingDaemon", 2, true, `{}`), false)
	c.message(1, rmcCall(t, set, st, "Health", "PingDaemon", 2, false, `{"result":true}`), false)

	var plain bytes.Buffer
	dw := NewDecryptedWriter(&plain)
	if _, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{key}}, Decrypted: dw}, c.pcap()); err != nil {
		t.Fatal(err)
	}
	if err := dw.Flush(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pcapng, lua := filepath.Join(dir, "plain.pcapng"), filepath.Join(dir, "nex.lua")
	var script bytes.Buffer
	if err := wireshark.Write(&script, set); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lua, script.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pcapng, plain.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tshark, "-n", "-X", "lua_script:"+lua, "-o", "nexrmc.access_key:"+key, "-r", pcapng, "-V")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	tree := string(out)
	for _, want := range []string{"Method: UploadScore", "            score: 4321\n", "        unique_id: 3\n", "Method: PingDaemon", "        result: true\n", "PRUDP V0 DATA"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tshark -V lacks %q", want)
		}
	}
	if strings.Contains(tree, "Lua: Error") || strings.Contains(tree, "Not decoded:") {
		t.Errorf("tshark:\n%s", tree)
	}
}
