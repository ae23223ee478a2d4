package dissect

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestPiaVectorInPcap carries the published LDN packet (testdata/pia/vectors.json)
// in an Ethernet frame from its source MAC and decrypts it with the vector's keys.
func TestPiaVectorInPcap(t *testing.T) {
	raw, err := os.ReadFile("../testdata/pia/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Packets []struct {
			Name          string `json:"name"`
			SessionKeyHex string `json:"session_key_hex"`
			NetworkIDU32  string `json:"network_id_u32"`
			SrcMACHex     string `json:"src_mac_hex"`
			Hex           string `json:"hex"`
			PlaintextHex  string `json:"plaintext_hex"`
		} `json:"packets"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, pv := range v.Packets {
		t.Run(pv.Name, func(t *testing.T) {
			pkt, _ := hex.DecodeString(pv.Hex)
			mac, _ := hex.DecodeString(pv.SrcMACHex)
			a := netip.MustParseAddrPort("169.254.1.2:49152")
			b := netip.MustParseAddrPort("169.254.1.3:49152")
			ip := udpIP(t, a, b, pkt)
			frame := serialize(t, &layers.Ethernet{SrcMAC: mac, DstMAC: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, EthernetType: layers.EthernetTypeIPv4}, gopacket.Payload(ip))
			keys, err := ParseKeys(strings.NewReader("pia-network ldn\npia-network-id " + pv.NetworkIDU32 + "\npia-key " + pv.SessionKeyHex + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := collect(t, Config{Keys: keys}, pcapFile(t, layers.LinkTypeEthernet, frame))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2 {
				t.Fatalf("records %q", recs)
			}
			for _, want := range []string{`"protocol":"pia"`, `"encrypted":true`, `"messages":1`} {
				if !strings.Contains(recs[0], want) {
					t.Errorf("packet record %s lacks %s", recs[0], want)
				}
			}
			// The message is the vector's plaintext message: type 0x68, payload 04 00 02 00 00.
			for _, want := range []string{`"record":"message"`, `"protocol_type":104`, `"plain_hex":"0400020000"`} {
				if !strings.Contains(recs[1], want) {
					t.Errorf("message record %s lacks %s", recs[1], want)
				}
			}
			// --write-decrypted writes the packet unencrypted with the same message.
			var out bytes.Buffer
			dw := NewDecryptedWriter(&out)
			if _, err := collect(t, Config{Keys: keys, Decrypted: dw}, pcapFile(t, layers.LinkTypeEthernet, frame)); err != nil {
				t.Fatal(err)
			}
			dw.Flush()
			nr, err := pcapgo.NewNgReader(&out, pcapgo.DefaultNgReaderOptions)
			if err != nil {
				t.Fatal(err)
			}
			data, _, err := nr.ReadPacketData()
			if err != nil {
				t.Fatal(err)
			}
			plainRecs, err := collect(t, Config{Keys: &Keys{Pia: PiaKeys{Network: "ldn", NetworkID: keys.Pia.NetworkID, HasNetworkID: true}}}, pcapFile(t, layers.LinkTypeEthernet, data))
			if err != nil || len(plainRecs) != 2 || !strings.Contains(plainRecs[0], `"encrypted":false`) || !strings.Contains(plainRecs[1], `"plain_hex":"0400020000"`) {
				t.Fatalf("decrypted copy: %v %q", err, plainRecs)
			}
			// Without the key the packet is reported, not dropped.
			recs, _ = collect(t, Config{Keys: &Keys{Pia: PiaKeys{Network: "ldn"}}}, pcapFile(t, layers.LinkTypeEthernet, frame))
			if len(recs) != 1 || !strings.Contains(recs[0], `"record":"note"`) || !strings.Contains(recs[0], "no session key") {
				t.Fatalf("without key: %q", recs)
			}
		})
	}
}
