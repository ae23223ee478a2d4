package dissect

import (
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// TestPublishedPRUDPVectorsInPcap carries every published PRUDP packet of
// testdata/prudp/vectors.json in a UDP datagram of a flow of its own and
// checks that recognition finds its dialect under its access key (given with
// the other vectors' keys, as a keys file would) and that its checksum (V0,
// Quazal) or SYN signature (V1) verifies. The DO Join Request (Quazal stream
// type 1, checksum base 0) is also decoded: DO payloads are compressed and
// not RC4-encrypted, and the published facts say it inflates to 39 bytes.
func TestPublishedPRUDPVectorsInPcap(t *testing.T) {
	raw, err := os.ReadFile("../testdata/prudp/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Packets []struct {
			Name      string `json:"name"`
			Dialect   string `json:"dialect"`
			AccessKey string `json:"access_key"`
			Hex       string `json:"hex"`
		} `json:"packets"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var keys Keys
	for _, p := range v.Packets {
		if p.AccessKey != "" {
			keys.AccessKeys = append(keys.AccessKeys, p.AccessKey)
		}
	}
	if len(v.Packets) < 4 {
		t.Fatalf("only %d vectors", len(v.Packets))
	}
	for i, p := range v.Packets {
		t.Run(p.Name, func(t *testing.T) {
			b, err := hex.DecodeString(p.Hex)
			if err != nil {
				t.Fatal(err)
			}
			src := netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), uint16(40000+i))
			dst := netip.MustParseAddrPort("10.0.0.1:21005")
			recs, err := collect(t, Config{Keys: &keys}, pcapFile(t, layers.LinkTypeEthernet, wrapLink(t, layers.LinkTypeEthernet, udpIP(t, src, dst, b))))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				t.Fatal("no record")
			}
			var m map[string]any
			json.Unmarshal([]byte(recs[0]), &m)
			want := "quazal"
			if strings.HasPrefix(p.Dialect, "v1") {
				want = "nex-v1"
			}
			if m["protocol"] != "prudp" || m["dialect"] != want || m["record"] != "packet" {
				t.Fatalf("record %s", recs[0])
			}
			if want == "nex-v1" {
				if m["signature_ok"] != true {
					t.Fatalf("V1 SYN signature not verified under its key: %s", recs[0])
				}
			} else if m["checksum_ok"] != true {
				t.Fatalf("checksum not verified: %s", recs[0])
			}
			if m["payload_hex"] == nil || m["length"] != float64(len(b)) {
				t.Fatalf("record %s", recs[0])
			}
			if p.Name == "quazal-gro-do-join-request" {
				if ph, _ := m["plain_hex"].(string); len(ph) != 2*39 {
					t.Fatalf("DO Join Request inflates to %d bytes, want 39: %s", len(ph)/2, recs[0])
				}
			}
		})
	}
}
