package pia

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

// vectorFile mirrors testdata/pia/vectors.json.
type vectorFile struct {
	SessionKeys []struct {
		Name            string `json:"name"`
		GameKeyHex      string `json:"game_key_hex"`
		SessionParamU32 string `json:"session_param_u32"`
		SessionKeyHex   string `json:"session_key_hex"`
		SeedU32         string `json:"seed_u32"`
	} `json:"session_keys"`
	Packets []struct {
		Name          string `json:"name"`
		SessionKeyHex string `json:"session_key_hex"`
		NetworkIDU32  string `json:"network_id_u32"`
		SrcMACHex     string `json:"src_mac_hex"`
		Hex           string `json:"hex"`
		PlaintextHex  string `json:"plaintext_hex"`
	} `json:"packets"`
}

func loadVectors(t testing.TB) vectorFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "pia", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.SessionKeys) == 0 || len(v.Packets) == 0 {
		t.Fatal("vectors.json has no session keys or packets")
	}
	return v
}

func mustU32(t testing.TB, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		t.Fatalf("u32 %q: %v", s, err)
	}
	return uint32(v)
}

func TestVectorSessionKeys(t *testing.T) {
	v := loadVectors(t)
	for _, k := range v.SessionKeys {
		t.Run(k.Name, func(t *testing.T) {
			want := testutil.Unhex(t, k.GameKeyHex)
			switch {
			case k.SessionParamU32 != "":
				got, err := LDNSessionKey5(testutil.Unhex(t, k.GameKeyHex), mustU32(t, k.SessionParamU32))
				if err != nil {
					t.Fatal(err)
				}
				if want := testutil.Unhex(t, k.SessionKeyHex); !bytes.Equal(got, want) {
					t.Fatalf("session key %x, want %x", got, want)
				}
			case k.SeedU32 != "":
				var table []uint32
				for _, p := range ENLPresets {
					if p.Seed == mustU32(t, k.SeedU32) {
						table = p.Table
					}
				}
				if table == nil {
					t.Fatalf("no ENL preset with seed %s", k.SeedU32)
				}
				got, err := ENLGameKey(mustU32(t, k.SeedU32), table, len(want))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("game key %x, want %x", got, want)
				}
			default:
				t.Fatalf("vector %s: unknown kind", k.Name)
			}
		})
	}
}

// TestENLPresetsMatchGameKeys checks every ENL preset against the key table of
// nintendo-wiki docs/pia/game-keys.md.
func TestENLPresetsMatchGameKeys(t *testing.T) {
	want := map[string]string{
		"splatoon2": "ee182a63e216cdb1f51ad4bed8cf6508",
		"smm2":      "667c18475889faab61f93ef1da180971",
	}
	for _, p := range ENLPresets {
		got, err := ENLGameKey(p.Seed, p.Table, 16)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(got) != want[p.Name] {
			t.Errorf("%s: %x, want %s", p.Name, got, want[p.Name])
		}
	}
}

// TestLDNNonceCRCVector checks the CRC fact of the ldn-5x-session-key vector.
func TestLDNNonceCRCVector(t *testing.T) {
	mac := [6]byte{0x48, 0xf1, 0xeb, 0x20, 0x9b, 0x22}
	if got := LDNNonceCRC(0xf85cc8b4, mac); got != 0xda291352 {
		t.Fatalf("CRC %08x, want da291352", got)
	}
}

func TestVectorPackets(t *testing.T) {
	v := loadVectors(t)
	for _, pv := range v.Packets {
		t.Run(pv.Name, func(t *testing.T) {
			raw := testutil.Unhex(t, pv.Hex)
			ver, err := DetectVersion(raw)
			if err != nil {
				t.Fatal(err)
			}
			if ver.HeaderVersion() != 9 {
				t.Fatalf("detected header version %d, want 9", ver.HeaderVersion())
			}
			var src Source
			copy(src.MAC[:], testutil.Unhex(t, pv.SrcMACHex))
			c, err := NewCodec(Config{
				Version:     ver,
				NonceParams: NonceParams{Network: NetworkLDN, NetworkID: mustU32(t, pv.NetworkIDU32)},
				SessionKey:  testutil.Unhex(t, pv.SessionKeyHex),
			})
			if err != nil {
				t.Fatal(err)
			}
			var p Packet
			if err := c.Open(&p, raw, src); err != nil {
				t.Fatal(err)
			}
			if want := testutil.Unhex(t, pv.PlaintextHex); !bytes.Equal(p.plain, want) {
				t.Fatalf("plaintext %x, want %x", p.plain, want)
			}
			if p.Header.FooterSize != 4 || !bytes.Equal(p.Footer, raw[len(raw)-4:]) {
				t.Fatalf("footer %x (size %d), want the last 4 bytes %x", p.Footer, p.Header.FooterSize, raw[len(raw)-4:])
			}
			ids, err := p.FooterVariableIDs(nil)
			if err != nil || len(ids) != 2 || ids[0] != 0x8028 || ids[1] != 0x4c11 {
				t.Fatalf("footer variable ids %x, %v", ids, err)
			}
			if len(p.Messages) != 1 {
				t.Fatalf("%d messages, want 1", len(p.Messages))
			}
			m := p.Messages[0]
			if m.Flags != FlagMulticast || m.ProtocolType != 0x68 || m.ProtocolPort != 0 ||
				m.Destination != 0xFFFFFFFF || !bytes.Equal(m.Payload, []byte{4, 0, 2, 0, 0}) || m.PresenceExtra != 0x70 {
				t.Fatalf("message %+v", m)
			}
			// Sealing the decoded packet again with its own nonce reproduces the bytes.
			q := Packet{Header: p.Header, Messages: p.Messages, Footer: p.Footer}
			out, err := c.Seal(nil, &q, src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, raw) {
				t.Fatalf("re-sealed\n%x\nwant\n%x", out, raw)
			}
		})
	}
}
