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

	"github.com/gamewire/gamewire/pia"
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

// TestPiaPartialInPcap is issue 13.3: a packet whose second message breaks is
// reported with its first message, footer, error offset and rest, marked partial.
func TestPiaPartialInPcap(t *testing.T) {
	c, err := pia.NewCodec(pia.Config{Version: pia.Version{Major: 5, Minor: 27}, NonceParams: pia.NonceParams{Network: pia.NetworkLAN}})
	if err != nil {
		t.Fatal(err)
	}
	p := pia.Packet{Messages: []pia.Message{{ProtocolType: 0x68, ProtocolPort: 1, Payload: []byte("ok")}}, Footer: []byte{0x12, 0x34}}
	pkt, err := c.Seal(nil, &p, pia.Source{})
	if err != nil {
		t.Fatal(err)
	}
	pkt = append(append(pkt[:len(pkt)-2:len(pkt)-2], 0x02, 0x00, 0x09, 0xAA), 0x12, 0x34)
	a := netip.MustParseAddrPort("169.254.1.2:49152")
	b := netip.MustParseAddrPort("169.254.1.3:49152")
	frame := serialize(t, &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, EthernetType: layers.EthernetTypeIPv4}, gopacket.Payload(udpIP(t, a, b, pkt)))
	keys, err := ParseKeys(strings.NewReader("pia-version 5.27\npia-network lan\n"))
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
	for _, want := range []string{`"messages":1`, `"partial":true`, `"error_offset":20`, `"rest_hex":"020009aa"`, `"footer_hex":"1234"`, "message 1 at offset 20", "inherited"} {
		if !strings.Contains(recs[0], want) {
			t.Errorf("packet record %s lacks %s", recs[0], want)
		}
	}
	if !strings.Contains(recs[1], `"plain_hex":"6f6b"`) {
		t.Errorf("message record %s", recs[1])
	}
}
