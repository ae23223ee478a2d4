package dissect

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	in := `# gamewire keys
access-key 6f599f81
access-key 8dtRv2oj   # Ghost Recon Online
password 1750087940 my secret password
kerberos-key 2 00112233445566778899aabbccddeeff
session-key 00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff
hyperscape-key 0f0e0d0c0b0a09080706050403020100
pia-key 101112131415161718191a1b1c1d1e1f
pia-game-key 202122232425262728292a2b2c2d2e2f
pia-version 5.18
pia-network ldn
pia-network-id 0x1234abcd
compression on
`
	k, err := ParseKeys(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(k.AccessKeys, ",") != "6f599f81,8dtRv2oj" {
		t.Errorf("access keys %q", k.AccessKeys)
	}
	if k.Passwords[1750087940] != "my secret password" {
		t.Errorf("password %q", k.Passwords[1750087940])
	}
	if len(k.KerberosKeys[2]) != 16 || len(k.SessionKeys) != 1 || k.SessionKeys[0][15] != 0xff {
		t.Errorf("keys %x %x", k.KerberosKeys[2], k.SessionKeys)
	}
	if k.Pia.Network != "ldn" || !k.Pia.HasNetworkID || k.Pia.NetworkID != 0x1234abcd || k.Pia.Version != "5.18" || len(k.Pia.SessionKeys) != 1 || len(k.Pia.GameKey) != 16 || len(k.HyperscapeKeys) != 1 {
		t.Errorf("pia %+v", k.Pia)
	}
	if k.Compression != "on" {
		t.Errorf("compression %q", k.Compression)
	}
	if got := k.accessKeys(); got[len(got)-1] != "" {
		t.Errorf("accessKeys does not end with the empty key: %q", got)
	}
}

func TestParseKeysErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"frobnicate 1", `line 1: unknown keyword "frobnicate"`},
		{"\n\nsession-key 0011", "line 3 (session-key): key is 2 bytes, want 16 or 32"},
		{"session-key zz", "is not hex"},
		{"password x y", `PID "x" is not a number`},
		{"password 12", "want PID and a value"},
		{"access-key", "missing value"},
		{"pia-network wifi", `network "wifi"`},
		{"compression maybe", `"maybe" is not on, off or auto`},
	} {
		_, err := ParseKeys(strings.NewReader(tc.in))
		if !errors.Is(err, ErrKeysFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseKeys(bytes.NewReader(nil)); err != nil {
		t.Errorf("empty file: %v", err)
	}
}

// TestPiaSessionKeyDerivation uses the published LDN 5.x vector
// (testdata/pia/vectors.json): game key + session param give the session key.
func TestPiaSessionKeyDerivation(t *testing.T) {
	k, err := ParseKeys(strings.NewReader("pia-game-key 9900bd0cdcfa65639918bd0fc7fa6577\npia-session-param 0x36dee059\n"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := k.Pia.sessionKeys()
	if err != nil || len(keys) != 1 || hex.EncodeToString(keys[0]) != "7b182cb087eeabd228a2efd91a8be147" {
		t.Fatalf("%x %v", keys, err)
	}
	k, _ = ParseKeys(strings.NewReader("pia-ssid 000102030405060708090a0b0c0d0e0f\n"))
	if _, err := k.Pia.sessionKeys(); !errors.Is(err, ErrKeysFile) {
		t.Fatalf("ssid without game key: %v", err)
	}
}
