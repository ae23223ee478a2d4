package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestKeygenKerberosCLI: `gamewire keygen kerberos` prints the published
// password-derived keys (testdata/prudp/vectors.json) and refuses an unknown
// platform.
func TestKeygenKerberosCLI(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../testdata/prudp/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Kerberos []struct {
			Name     string `json:"name"`
			PID      uint64 `json:"pid"`
			Password string `json:"password"`
			KeyHex   string `json:"key_hex"`
		} `json:"kerberos"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || len(v.Kerberos) == 0 {
		t.Fatalf("vectors: %d, %v", len(v.Kerberos), err)
	}
	run := func(args ...string) (string, error) { return runCLI(t, args...) }
	for _, k := range v.Kerberos {
		out, err := run("keygen", "kerberos", "--pid", strconv.FormatUint(k.PID, 10), "--password", k.Password)
		if err != nil || strings.TrimSpace(out) != k.KeyHex {
			t.Errorf("%s: %q %v, want %s", k.Name, out, err, k.KeyHex)
		}
	}
	if _, err := run("keygen", "kerberos", "--pid", "1", "--password", "x", "--platform", "n64"); err == nil || !strings.Contains(err.Error(), "--platform") {
		t.Errorf("unknown platform: %v", err)
	}
}
