package pia

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// testVersions has one Pia version per header version and per message layout.
var testVersions = []Version{
	{5, 4}, {5, 6}, {5, 8}, {5, 11}, {5, 14}, {5, 18}, {5, 23}, {5, 27}, {5, 44}, {6, 16}, {6, 25}, {6, 29},
}

var testKey = []byte{0x1c, 0xd8, 0x38, 0x4a, 0xe3, 0xcc, 0x51, 0x98, 0x40, 0x2f, 0x8d, 0x52, 0x91, 0xeb, 0x05, 0x4c}

var testSource = Source{MAC: [6]byte{0x48, 0xf1, 0xeb, 0x20, 0x9b, 0x22}, IP: netip.MustParseAddr("192.168.0.7")}

// sampleMessages returns three messages that fit layout l, the second sharing
// most fields with the first (exercising inheritance in 5.18+).
func sampleMessages(l MessageLayout) []Message {
	fl := l.Flags()
	ms := []Message{
		{Flags: fl.Multicast | fl.SkipSourceCheck, ProtocolType: 0x68, ProtocolPort: 1, Destination: 0x0000000F, SourceConstantID: 0x1234, Payload: []byte("hello pia")},
		{Flags: fl.Multicast | fl.SkipSourceCheck, ProtocolType: 0x68, ProtocolPort: 1, Destination: 0x0000000F, SourceConstantID: 0x1234, Payload: []byte("world....")},
		{Flags: fl.NoBundle, ProtocolType: 0x7C, ProtocolPort: 2, Destination: 0xABCD, SourceConstantID: 0x99, Payload: []byte{}},
	}
	switch l {
	case MessageUpTo5_4:
		ms[0].SourceStationIndex = StationIndexHost
		ms[2].ProtocolType = 0x3000
		ms[2].ProtocolPort = 0x0102
	case Message5_14, Message5_18, Message5_27, Message6_16:
		ms[2].ProtocolPort = 0x010203
	}
	if !l.carriesSourceConstantID() {
		for i := range ms {
			ms[i].SourceConstantID = 0
		}
		ms[0].PresenceExtra = 0x70
		ms[1].PresenceExtra = 0x70
	}
	if l == Message5_18 {
		ms[0].PresenceExtra = 0x60
	}
	return ms
}

func samplePacket(c *Codec, encrypted bool) Packet {
	p := Packet{Messages: sampleMessages(c.MessageLayout())}
	h := &p.Header
	h.Encrypted = encrypted
	switch c.HeaderLayout() {
	case HeaderUpTo5_6:
		h.ConnectionID, h.PacketID, h.SessionTimer, h.RTTTimer = 7, 3, 234, 244
	case Header5_7:
		h.ConnectionID, h.PacketID, h.SessionTimer, h.RTTTimer = 7, 3, 234, 244
		h.Nonce = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	case Header5_11, Header5_23:
		h.ConnectionID, h.PacketID = 7, 3
		h.Nonce = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	case Header5_27:
		h.DestinationVariableID, h.SourceVariableID, h.PacketID = 1, 0xab358028, 5
		h.Nonce = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
		p.Footer = []byte{0x80, 0x28, 0x4c, 0x11}
	case Header6_16:
		h.DestinationVariableID, h.SourceVariableID, h.PacketID = 1, 0x8028, 5
		h.Nonce = [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
		p.Footer = []byte{0x80, 0x28}
	}
	return p
}

func testCodec(t testing.TB, v Version, n Network, key []byte) *Codec {
	t.Helper()
	c, err := NewCodec(Config{Version: v, NonceParams: NonceParams{Network: n, GatheringID: 0x01020304, NetworkID: 0x19EC1D90}, SessionKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// equalMessages compares decoded messages with the originals (nil and empty
// payloads are equal).
func equalMessages(t *testing.T, got, want []Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Payload, w.Payload) {
			t.Fatalf("message %d payload %q, want %q", i, g.Payload, w.Payload)
		}
		g.Payload, w.Payload = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("message %d\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// forEachCombination runs f for every test version and every network whose nonce
// is defined for that version, and checks the others are refused.
func forEachCombination(t *testing.T, f func(t *testing.T, v Version, n Network)) {
	for _, v := range testVersions {
		for _, n := range AllNetworks {
			name := fmt.Sprintf("%s/%s", v, n)
			if !NonceSupported(n, v.HeaderLayout()) {
				t.Run(name+"/unsupported", func(t *testing.T) {
					_, err := NewCodec(Config{Version: v, NonceParams: NonceParams{Network: n}, SessionKey: testKey})
					if !errors.Is(err, ErrUnsupported) {
						t.Fatalf("NewCodec: %v, want ErrUnsupported", err)
					}
				})
				continue
			}
			t.Run(name, func(t *testing.T) { f(t, v, n) })
		}
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	forEachCombination(t, func(t *testing.T, v Version, n Network) {
		for _, enc := range []bool{true, false} {
			c := testCodec(t, v, n, testKey)
			if !enc {
				c = testCodec(t, v, n, nil)
			}
			p := samplePacket(c, enc)
			raw, err := c.Seal(nil, &p, testSource)
			if err != nil {
				t.Fatal(err)
			}
			if enc && c.HeaderLayout() != HeaderUpTo5_6 && p.Header.Tag == ([16]byte{}) {
				t.Fatal("seal left the tag empty")
			}
			var q Packet
			if err := c.Open(&q, raw, testSource); err != nil {
				t.Fatalf("open (encrypted=%v): %v\n%x", enc, err, raw)
			}
			if q.Header != p.Header {
				t.Fatalf("header\n got %+v\nwant %+v", q.Header, p.Header)
			}
			equalMessages(t, q.Messages, p.Messages)
			if !bytes.Equal(q.Footer, p.Footer) {
				t.Fatalf("footer %x, want %x", q.Footer, p.Footer)
			}
			// Sealing the opened packet again gives the same bytes.
			again, err := c.Seal(nil, &q, testSource)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, raw) {
				t.Fatalf("re-seal differs\n%x\n%x", again, raw)
			}
		}
	})
}

// unauthenticated reports whether byte i of a sealed packet lies in a field that
// Pia does not authenticate: GCM has no associated data (the published vector
// verifies only without it), so header fields outside the nonce and the plaintext
// footer are not covered. Up to 5.6 the HMAC-MD5 covers the whole packet.
func unauthenticated(l HeaderLayout, n Network, i, total, footer int) bool {
	if i >= total-footer {
		return true // footer
	}
	switch l {
	case HeaderUpTo5_6:
		return false
	case Header5_7:
		if i >= 6 && i < 12 { // packet id, session timer, RTT timer
			return true
		}
		return n == NetworkLAN && i == 12 // LAN up to 5.44 uses the last 7 nonce bytes
	case Header5_11, Header5_23:
		if i == 6 || i == 7 { // packet id
			return true
		}
		return n == NetworkLAN && i == 8
	case Header5_27:
		if i >= 5 && i < 12 { // destination variable id, high bytes of the source variable id
			return true
		}
		if i == 13 || i == 14 { // packet id
			return true
		}
		return n == NetworkLAN && i == 16
	case Header6_16:
		return i >= 5 && i < 11 // variable ids (not in any 6.x nonce), packet id
	}
	return false
}

func TestFlippedBitRejected(t *testing.T) {
	forEachCombination(t, func(t *testing.T, v Version, n Network) {
		c := testCodec(t, v, n, testKey)
		p := samplePacket(c, true)
		raw, err := c.Seal(nil, &p, testSource)
		if err != nil {
			t.Fatal(err)
		}
		var q Packet
		flipped := make([]byte, len(raw))
		for i := range raw {
			for bit := 0; bit < 8; bit++ {
				copy(flipped, raw)
				flipped[i] ^= 1 << bit
				err := c.Open(&q, flipped, testSource)
				if err == nil && !unauthenticated(c.HeaderLayout(), n, i, len(raw), len(p.Footer)) {
					t.Fatalf("flip of byte %d bit %d accepted", i, bit)
				}
				if err == nil {
					// Accepted flips only change the unauthenticated field itself.
					equalMessages(t, q.Messages, p.Messages)
				}
				if err != nil && !(errors.Is(err, ErrAuth) || errors.Is(err, ErrBadMagic) || errors.Is(err, ErrBadVersion) ||
					errors.Is(err, ErrBadField) || errors.Is(err, ErrTruncated)) {
					t.Fatalf("flip of byte %d bit %d: unexpected error kind %v", i, bit, err)
				}
			}
		}
	})
}

func TestEveryPrefixRejected(t *testing.T) {
	forEachCombination(t, func(t *testing.T, v Version, n Network) {
		c := testCodec(t, v, n, testKey)
		p := samplePacket(c, true)
		raw, err := c.Seal(nil, &p, testSource)
		if err != nil {
			t.Fatal(err)
		}
		var q Packet
		for i := 0; i < len(raw); i++ {
			if err := c.Open(&q, raw[:i:i], testSource); err == nil {
				t.Fatalf("prefix of %d/%d bytes accepted", i, len(raw))
			}
		}
		// Unencrypted: a prefix that cuts a message is rejected.
		pc := testCodec(t, v, n, nil)
		pp := samplePacket(pc, false)
		pp.Footer = nil
		plain, err := pc.Seal(nil, &pp, testSource)
		if err != nil {
			t.Fatal(err)
		}
		hs := pc.HeaderLayout().Size()
		boundaries := map[int]bool{hs: true}
		off := hs
		for i := range pp.Messages {
			var prev *Message
			if i > 0 {
				prev = &pp.Messages[i-1]
			}
			off += EncodedSize(&pp.Messages[i], pc.MessageLayout(), prev)
			boundaries[off] = true
		}
		if off != len(plain) {
			t.Fatalf("EncodedSize sums to %d, packet is %d", off, len(plain))
		}
		for i := 0; i < len(plain); i++ {
			err := pc.Open(&q, plain[:i:i], testSource)
			if boundaries[i] != (err == nil) {
				t.Fatalf("unencrypted prefix %d/%d: err %v (message boundary %v)", i, len(plain), err, boundaries[i])
			}
		}
	})
}

func TestOpenRefusesPlaintextInEncryptedSession(t *testing.T) {
	c := testCodec(t, Version{5, 27}, NetworkLDN, testKey)
	p := samplePacket(c, false)
	raw, err := c.Seal(nil, &p, testSource)
	if err != nil {
		t.Fatal(err)
	}
	var q Packet
	if err := c.Open(&q, raw, testSource); !errors.Is(err, ErrAuth) {
		t.Fatalf("open plaintext: %v, want ErrAuth", err)
	}
	c2, _ := NewCodec(Config{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLDN}, SessionKey: testKey, AllowPlaintext: true})
	if err := c2.Open(&q, raw, testSource); err != nil {
		t.Fatalf("AllowPlaintext: %v", err)
	}
}

func TestOpenWrongSourceOrKey(t *testing.T) {
	c := testCodec(t, Version{6, 16}, NetworkLAN, testKey)
	p := samplePacket(c, true)
	raw, err := c.Seal(nil, &p, testSource)
	if err != nil {
		t.Fatal(err)
	}
	var q Packet
	other := testSource
	other.IP = netip.MustParseAddr("192.168.0.8")
	if err := c.Open(&q, raw, other); !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong source IP: %v, want ErrAuth", err)
	}
	key2 := append([]byte(nil), testKey...)
	key2[0] ^= 1
	if err := testCodec(t, Version{6, 16}, NetworkLAN, key2).Open(&q, raw, testSource); !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong key: %v, want ErrAuth", err)
	}
}

func TestHeaderVersionMustMatch(t *testing.T) {
	c := testCodec(t, Version{6, 25}, NetworkNPLN, testKey)
	p := samplePacket(c, true)
	raw, _ := c.Seal(nil, &p, testSource)
	var q Packet
	if err := testCodec(t, Version{6, 29}, NetworkNPLN, testKey).Open(&q, raw, testSource); !errors.Is(err, ErrBadVersion) {
		t.Fatalf("6.29 codec opening a 6.25 packet: %v, want ErrBadVersion", err)
	}
}

func TestNonceLayouts(t *testing.T) {
	h := Header{Layout: Header5_11, ConnectionID: 0x42, Nonce: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	ip := netip.MustParseAddr("10.0.0.1")
	cases := []struct {
		name string
		p    NonceParams
		h    Header
		src  Source
		want [12]byte
	}{
		{"nex", NonceParams{Network: NetworkNEX, GatheringID: 0xAA123456}, h, Source{}, [12]byte{0x42, 0x12, 0x34, 0x56, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"lan5", NonceParams{Network: NetworkLAN}, h, Source{IP: ip}, [12]byte{10, 0, 0, 1, 0x42, 2, 3, 4, 5, 6, 7, 8}},
		{"lan6", NonceParams{Network: NetworkLAN}, Header{Layout: Header6_16, Nonce: h.Nonce}, Source{IP: ip}, [12]byte{10, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"ldn6", NonceParams{Network: NetworkLDN, NetworkID: 0x01010101}, Header{Layout: Header6_16, Nonce: h.Nonce}, Source{IP: ip}, [12]byte{11, 1, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"npln", NonceParams{Network: NetworkNPLN, NetworkID: 0xDEADBEEF}, Header{Layout: Header6_16, Nonce: h.Nonce}, Source{}, [12]byte{0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BuildNonce(tc.p, &tc.h, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("nonce % x, want % x", got, tc.want)
			}
		})
	}
	// LAN 6.x with an IPv6 source uses the CRC-32 of the address.
	v6 := Source{IP: netip.MustParseAddr("fe80::1")}
	got, err := BuildNonce(NonceParams{Network: NetworkLAN}, &Header{Layout: Header6_16}, v6)
	if err != nil {
		t.Fatal(err)
	}
	if got == ([12]byte{}) {
		t.Fatal("IPv6 LAN nonce is zero")
	}
	if _, err := BuildNonce(NonceParams{Network: NetworkLAN}, &h, v6); !errors.Is(err, ErrBadField) {
		t.Fatalf("IPv6 LAN 5.x nonce: %v, want ErrBadField", err)
	}
}

// partialPacket returns an unencrypted 5.27 packet with a footer whose first
// message parses and whose second claims 9 payload bytes but has 1.
func partialPacket(t *testing.T) []byte {
	t.Helper()
	c := testCodec(t, Version{5, 27}, NetworkLAN, nil)
	p := Packet{Messages: []Message{{ProtocolType: 0x68, ProtocolPort: 1, Payload: []byte("ok")}}, Footer: []byte{0x12, 0x34}}
	raw, err := c.Seal(nil, &p, testSource)
	if err != nil {
		t.Fatal(err)
	}
	body := len(raw) - len(p.Footer)
	return append(append(raw[:body:body], 0x02, 0x00, 0x09, 0xAA), p.Footer...)
}

// TestOpenPartial is issue 13.3: a packet that authenticates but whose messages
// break keeps its header, footer, the messages before the break and the rest.
func TestOpenPartial(t *testing.T) {
	// Encrypted: a 6.16 packet opened with the 4-byte walk of 5.27 breaks at
	// message 1 (the 13.2 failure), after the tag checked out.
	v := Version{6, 16}
	c := testCodec(t, v, NetworkLAN, testKey)
	p := Packet{Messages: []Message{
		{ProtocolType: 0x68, ProtocolPort: 1, Payload: []byte("hello")},
		{ProtocolType: 0x68, ProtocolPort: 1, Payload: []byte("world!")},
	}, Footer: []byte{0xAB, 0xCD}}
	p.Header.Encrypted = true
	raw, err := c.Seal(nil, &p, testSource)
	if err != nil {
		t.Fatal(err)
	}
	c.ml = Message5_27
	var q Packet
	err = c.Open(&q, raw, testSource)
	var me *MessageError
	if !errors.As(err, &me) || me.Index != 1 || me.Offset != 24 || errors.Is(err, ErrAuth) {
		t.Fatalf("open: %v, want a *MessageError for message 1 at offset 24", err)
	}
	if len(q.Messages) != 1 || string(q.Messages[0].Payload) != "hello" {
		t.Fatalf("messages %+v, want the first one", q.Messages)
	}
	if !bytes.Equal(q.Footer, []byte{0xAB, 0xCD}) || q.Header.PacketID != p.Header.PacketID {
		t.Fatalf("footer %x header %+v", q.Footer, q.Header)
	}
	if !bytes.Equal(q.Rest, q.plain[24:]) || len(q.Rest) != 32-24 {
		t.Fatalf("rest %x of plaintext %x", q.Rest, q.plain)
	}

	// Unencrypted, through Describe: the record shows it all, marked partial.
	rec, err := Describe(partialPacket(t), Config{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLAN}}, testSource)
	if !errors.As(err, &me) || !errors.Is(err, ErrTruncated) {
		t.Fatalf("describe: %v, want a truncated *MessageError", err)
	}
	if !rec.Partial || rec.ErrorOffset == nil || *rec.ErrorOffset != 20 || rec.RestHex != "020009aa" ||
		len(rec.Messages) != 1 || rec.Messages[0].PayloadHex != "6f6b" || rec.FooterHex != "1234" || rec.Note == "" {
		t.Fatalf("record %+v", rec)
	}
	text := rec.Text()
	for _, want := range []string{"message 0:", "payload(2)=6f6b", "footer=1234", "rest(4)=020009aa", "error: pia open: message 1 at offset 20", "note: partial"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
