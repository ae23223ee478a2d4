package pia

import (
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

// primitiveVectors mirrors testdata/pia/primitive-vectors.json: published AES-128
// and HMAC-SHA256 vectors (FIPS 197, RFC 4231).
type primitiveVectors struct {
	AES128 []struct {
		Name          string `json:"name"`
		KeyHex        string `json:"key_hex"`
		PlaintextHex  string `json:"plaintext_hex"`
		CiphertextHex string `json:"ciphertext_hex"`
	} `json:"aes128"`
	HMACSHA256 []struct {
		Name     string `json:"name"`
		KeyText  string `json:"key_text"`
		KeyHex   string `json:"key_hex"`
		DataText string `json:"data_text"`
		DataHex  string `json:"data_hex"`
		MACHex   string `json:"mac_hex"`
	} `json:"hmac_sha256"`
}

func loadPrimitiveVectors(t *testing.T) primitiveVectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "pia", "primitive-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v primitiveVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.AES128) == 0 || len(v.HMACSHA256) == 0 {
		t.Fatal("primitive-vectors.json has no vectors")
	}
	return v
}

// TestSeadRandomVector checks the SEAD generator against the published LDN
// session-key vector (testdata/pia/vectors.json): the session key is the AES
// encryption of four SEAD outputs (little-endian) under the game key, so
// decrypting it gives the generator's first outputs for the session param.
func TestSeadRandomVector(t *testing.T) {
	for _, k := range loadVectors(t).SessionKeys {
		if k.SessionParamU32 == "" {
			continue
		}
		blk, err := aes.NewCipher(testutil.Unhex(t, k.GameKeyHex))
		if err != nil {
			t.Fatal(err)
		}
		var outputs [16]byte
		blk.Decrypt(outputs[:], testutil.Unhex(t, k.SessionKeyHex))
		r := NewSeadRandom(mustU32(t, k.SessionParamU32))
		for i := 0; i < 4; i++ {
			if got, want := r.Uint32(), binary.LittleEndian.Uint32(outputs[4*i:]); got != want {
				t.Fatalf("%s: output %d %08x, want %08x", k.Name, i, got, want)
			}
		}
		if got := r.Uint(4); got >= 4 {
			t.Fatalf("Uint(4) = %d", got)
		}
	}
}

// TestLDNSessionKey6 checks the 6.x LDN key (AES-128-ECB of the SSID under the
// game key) against the FIPS 197 AES-128 vector.
func TestLDNSessionKey6(t *testing.T) {
	for _, v := range loadPrimitiveVectors(t).AES128 {
		gameKey, ssid := testutil.Unhex(t, v.KeyHex), testutil.Unhex(t, v.PlaintextHex)
		got, err := LDNSessionKey6(gameKey, ssid)
		if err != nil {
			t.Fatal(err)
		}
		if want := testutil.Unhex(t, v.CiphertextHex); !bytes.Equal(got, want) {
			t.Fatalf("%s: %x, want %x", v.Name, got, want)
		}
		if _, err := LDNSessionKey6(gameKey, ssid[:15]); err == nil {
			t.Fatal("15-byte SSID accepted")
		}
	}
}

// TestLANSessionKeyVectors checks the LAN key (the first 16 bytes of the
// HMAC-SHA256 of the param with its last byte incremented) against RFC 4231: the
// param is the RFC's data with its last byte decremented.
func TestLANSessionKeyVectors(t *testing.T) {
	for _, v := range loadPrimitiveVectors(t).HMACSHA256 {
		key, data := []byte(v.KeyText), []byte(v.DataText)
		if v.KeyHex != "" {
			key = testutil.Unhex(t, v.KeyHex)
		}
		if v.DataHex != "" {
			data = testutil.Unhex(t, v.DataHex)
		}
		param := bytes.Clone(data)
		param[len(param)-1]--
		orig := bytes.Clone(param)
		got, err := LANSessionKey(key, param)
		if err != nil {
			t.Fatal(err)
		}
		if want := testutil.Unhex(t, v.MACHex)[:16]; !bytes.Equal(got, want) {
			t.Fatalf("%s: %x, want %x", v.Name, got, want)
		}
		if !bytes.Equal(param, orig) {
			t.Fatalf("%s: LANSessionKey modified its input", v.Name)
		}
	}
}

func TestENLGameKeyErrors(t *testing.T) {
	if _, err := ENLGameKey(1, []uint32{1}, 6); err == nil {
		t.Error("size 6 accepted")
	}
	if _, err := ENLGameKey(1, nil, 16); err == nil {
		t.Error("empty table accepted")
	}
}
