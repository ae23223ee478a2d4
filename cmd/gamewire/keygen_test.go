package main

import (
	"bytes"
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
	run := func(args ...string) (string, error) {
		defer func() {
			keygenKerberos.platform = "3ds"
			for _, name := range []string{"pid", "password", "platform"} {
				keygenKerberosCmd.Flags().Lookup(name).Changed = false
			}
			rootCmd.SetArgs(nil)
			rootCmd.SetOut(nil)
			rootCmd.SetErr(nil)
		}()
		var out bytes.Buffer
		rootCmd.SetOut(&out)
		rootCmd.SetErr(&out)
		rootCmd.SetArgs(args)
		err := rootCmd.Execute()
		return out.String(), err
	}
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
