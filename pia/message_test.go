package pia

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

// TestMessageGolden checks each layout against bytes written by hand from the
// offset tables of "Messages" in the Pia Protocol wiki.
func TestMessageGolden(t *testing.T) {
	cases := []struct {
		l    MessageLayout
		m    Message
		wire string
	}{
		{MessageUpTo5_4,
			Message{Flags: 1, SourceStationIndex: 254, Destination: 0x11223344, SourceConstantID: 0x55667788, ProtocolType: 0x2000, ProtocolPort: 0x0102, Payload: []byte{0xAA, 0xBB, 0xCC}},
			"01 fe 0003 11223344 55667788 2000 0102 00000000 | aabbcc 00"},
		{Message5_6,
			Message{Flags: 8, Destination: 0x0102030405060708, SourceConstantID: 0x1112131415161718, ProtocolType: 0x14, ProtocolPort: 3, Payload: []byte{1, 2, 3, 4}},
			"08 0004 0102030405060708 1112131415161718 14 03 000000 | 01020304"},
		{Message5_11,
			Message{Flags: 2, Destination: 0x0102030405060708, SourceConstantID: 0x1112131415161718, ProtocolType: 0x14, ProtocolPort: 3, Payload: []byte{9}},
			"02 01 0001 14 03 0102030405060708 1112131415161718 | 09 00"},
		{Message5_14,
			Message{Flags: 0x10, Destination: 1, SourceConstantID: 2, ProtocolType: 0x7C, ProtocolPort: 0x010203, Payload: []byte{7, 7}},
			"10 02 0002 7c 010203 0000000000000001 0000000000000002 | 0707 0000"},
		{Message5_18,
			Message{Flags: 1, Destination: 0xF, SourceConstantID: 0x99, ProtocolType: 0x68, ProtocolPort: 1, Payload: []byte{1}},
			"1f 01 0001 68 000001 000000000000000f 0000000000000099 | 01 000000"},
		{Message5_27,
			Message{Flags: 1, Destination: 0xFFFFFFFF, ProtocolType: 0x68, PresenceExtra: 0x70, Payload: []byte{4, 0, 2, 0, 0}},
			"7f 01 0005 68 000000 00000000ffffffff | 0400020000 000000"},
		// 6.16-6.30 does not pad a message (MessageLayout.Aligned).
		{Message6_16,
			Message{Flags: 0x11, Destination: 1, ProtocolType: 0x2C, PresenceExtra: 0x70, Payload: []byte{4, 0, 2, 0, 0}},
			"7f 11 0005 2c 000000 0000000000000001 | 0400020000"},
	}
	for _, tc := range cases {
		t.Run(tc.l.String(), func(t *testing.T) {
			want := testutil.Unhex(t, tc.wire)
			got, err := AppendMessage(nil, &tc.m, tc.l, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("append\n got %x\nwant %x", got, want)
			}
			m, n, err := ParseMessage(want, tc.l, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n != len(want) || !reflect.DeepEqual(m, tc.m) {
				t.Fatalf("parse: %d bytes %+v, want %d %+v", n, m, len(want), tc.m)
			}
			if EncodedSize(&tc.m, tc.l, nil) != len(want) {
				t.Fatalf("EncodedSize %d, want %d", EncodedSize(&tc.m, tc.l, nil), len(want))
			}
			for i := 0; i < len(want); i++ {
				if _, _, err := ParseMessage(want[:i], tc.l, nil); !errors.Is(err, ErrTruncated) {
					t.Fatalf("prefix %d: %v, want ErrTruncated", i, err)
				}
			}
		})
	}
}

// TestMessageInheritance decodes a 5.27 packet body whose second message carries
// only its payload size and inherits the rest ("5.27 - 6.30" in the Pia Protocol wiki).
func TestMessageInheritance(t *testing.T) {
	body := testutil.Unhex(t, "0f 01 0002 68 000005 000000000000000f | aabb 0000"+
		"02 0003 | 010203 0000"+
		"00 | 040506 ffffffff")
	ms, err := ParseMessages(nil, body, Message5_27)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 {
		t.Fatalf("%d messages, want 3", len(ms))
	}
	for i, m := range ms {
		if m.Flags != 1 || m.ProtocolType != 0x68 || m.ProtocolPort != 5 || m.Destination != 0xF {
			t.Fatalf("message %d did not inherit: %+v", i, m)
		}
	}
	if !bytes.Equal(ms[1].Payload, []byte{1, 2, 3}) || !bytes.Equal(ms[2].Payload, []byte{4, 5, 6}) {
		t.Fatalf("payloads %x %x", ms[1].Payload, ms[2].Payload)
	}
	// Re-encoding chooses the same minimal presence bytes.
	var out []byte
	for i := range ms {
		var prev *Message
		if i > 0 {
			prev = &ms[i-1]
		}
		if out, err = AppendMessage(out, &ms[i], Message5_27, prev); err != nil {
			t.Fatal(err)
		}
	}
	if want := body[:len(body)-4]; !bytes.Equal(out, want) {
		t.Fatalf("re-encoded\n%x\nwant\n%x", out, want)
	}
}

func TestMessageRoundTripAllLayouts(t *testing.T) {
	for _, l := range AllMessageLayouts {
		t.Run(l.String(), func(t *testing.T) {
			ms := sampleMessages(l)
			var b []byte
			var err error
			for i := range ms {
				var prev *Message
				if i > 0 {
					prev = &ms[i-1]
				}
				if b, err = AppendMessage(b, &ms[i], l, prev); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ParseMessages(nil, b, l)
			if err != nil {
				t.Fatal(err)
			}
			equalMessages(t, got, ms)
		})
	}
}

func TestMessageRejectsFieldsTheLayoutCannotCarry(t *testing.T) {
	cases := []struct {
		l MessageLayout
		m Message
	}{
		{MessageUpTo5_4, Message{Destination: 1 << 40}},
		{MessageUpTo5_4, Message{ProtocolPort: 0x10000}},
		{Message5_6, Message{ProtocolType: 0x100}},
		{Message5_6, Message{ProtocolPort: 0x100}},
		{Message5_6, Message{SourceStationIndex: 1}},
		{Message5_14, Message{ProtocolPort: 0x1000000}},
		{Message5_27, Message{SourceConstantID: 1}},
		{Message5_27, Message{PresenceExtra: 0x01}},
		{Message5_11, Message{PresenceExtra: 0x40}},
		{Message5_27, Message{Payload: make([]byte, 0x10000)}},
	}
	for i, tc := range cases {
		if _, err := AppendMessage(nil, &tc.m, tc.l, nil); err == nil {
			t.Errorf("case %d (%s %+v): accepted", i, tc.l, tc.m)
		}
	}
}

func TestMessageVersionByteChecked(t *testing.T) {
	b := testutil.Unhex(t, "00 07 0000 00 00 0000000000000000 0000000000000000 0000")
	if _, _, err := ParseMessage(b, Message5_11, nil); !errors.Is(err, ErrBadField) {
		t.Fatalf("version 7: %v, want ErrBadField", err)
	}
}

func TestZlibPayload(t *testing.T) {
	var m Message
	text := bytes.Repeat([]byte("pia "), 100)
	if err := m.Deflate(text, ZlibFlag(Version{5, 27})); err != nil {
		t.Fatal(err)
	}
	if !m.Compressed(Version{5, 27}) || !m.Compressed(Version{6, 16}) || m.Compressed(Version{5, 26}) {
		t.Fatalf("flags 0x%02x: compressed flag is 0x20 from 5.27, 0x10 before", m.Flags)
	}
	out, err := m.Inflate(nil)
	if err != nil || !bytes.Equal(out, text) {
		t.Fatalf("inflate: %v", err)
	}
	m.Payload = m.Payload[:len(m.Payload)/2]
	if _, err := m.Inflate(nil); err == nil {
		t.Fatal("truncated zlib accepted")
	}
}

func TestDestinationStations(t *testing.T) {
	m := Message{Flags: FlagMulticast, Destination: 1<<0 | 1<<3 | 1<<63}
	if got := m.DestinationStations(nil, Message5_27); !bytes.Equal(got, []byte{0, 3, 63}) {
		t.Fatalf("stations %v", got)
	}
	// 0x01 is "skip the source variable id check" in 6.16-6.30, not multicast.
	if got := m.DestinationStations(nil, Message6_16); len(got) != 0 {
		t.Fatalf("6.16 stations %v", got)
	}
	m.Flags = 0
	if got := m.DestinationStations(nil, Message5_27); len(got) != 0 {
		t.Fatalf("unicast stations %v", got)
	}
}

// TestHeaderGolden checks each header layout against bytes written by hand from
// "Header" in the Pia Protocol wiki, and every prefix against ErrTruncated.
func TestHeaderGolden(t *testing.T) {
	nonce := [8]byte{0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8}
	var tag [16]byte
	for i := range tag {
		tag[i] = 0xB0 + byte(i)
	}
	var tag8 [16]byte
	copy(tag8[:8], tag[:8])
	cases := []struct {
		h    Header
		wire string
	}{
		{Header{Layout: HeaderUpTo5_6, Encrypted: true, ConnectionID: 7, PacketID: 0x102, SessionTimer: 234, RTTTimer: 244},
			"32ab9864 02 07 0102 00ea 00f4"},
		{Header{Layout: Header5_7, ConnectionID: 7, PacketID: 1, SessionTimer: 2, RTTTimer: 3, Nonce: nonce, Tag: tag},
			"32ab9864 01 07 0001 0002 0003 a1a2a3a4a5a6a7a8 b0b1b2b3b4b5b6b7b8b9babbbcbdbebf"},
		{Header{Layout: Header5_11, Encrypted: true, Version: 4, ConnectionID: 9, PacketID: 5, Nonce: nonce, Tag: tag},
			"32ab9864 84 09 0005 a1a2a3a4a5a6a7a8 b0b1b2b3b4b5b6b7b8b9babbbcbdbebf"},
		{Header{Layout: Header5_23, Encrypted: true, Version: 5, ConnectionID: 9, PacketID: 5, Nonce: nonce, Tag: tag8},
			"32ab9864 85 09 0005 a1a2a3a4a5a6a7a8 b0b1b2b3b4b5b6b7"},
		{Header{Layout: Header5_27, Encrypted: true, Version: 9, DestinationVariableID: 1, SourceVariableID: 0xab358028, PacketID: 5, FooterSize: 4, Nonce: nonce, Tag: tag8},
			"32ab9864 89 00000001 ab358028 0005 04 a1a2a3a4a5a6a7a8 b0b1b2b3b4b5b6b7"},
		{Header{Layout: Header6_16, Version: 12, DestinationVariableID: 1, SourceVariableID: 0x8028, PacketID: 5, FooterSize: 2, Nonce: nonce, Tag: tag8},
			"32ab9864 0c 0001 8028 0005 02 a1a2a3a4a5a6a7a8 b0b1b2b3b4b5b6b7"},
	}
	for _, tc := range cases {
		t.Run(tc.h.Layout.String(), func(t *testing.T) {
			want := testutil.Unhex(t, tc.wire)
			if len(want) != tc.h.Layout.Size() {
				t.Fatalf("golden is %d bytes, layout says %d", len(want), tc.h.Layout.Size())
			}
			got, err := tc.h.Append(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("append\n got %x\nwant %x", got, want)
			}
			h, n, err := ParseHeader(want, tc.h.Layout)
			if err != nil || n != len(want) || h != tc.h {
				t.Fatalf("parse: %+v %d %v", h, n, err)
			}
			for i := 0; i < len(want); i++ {
				if _, _, err := ParseHeader(want[:i], tc.h.Layout); !errors.Is(err, ErrTruncated) {
					t.Fatalf("prefix %d: %v", i, err)
				}
			}
		})
	}
}

func TestHeaderErrors(t *testing.T) {
	b := testutil.Unhex(t, "32ab9864 89 00000001 ab358028 0005 04 a1a2a3a4a5a6a7a8 b0b1b2b3b4b5b6b7")
	if _, _, err := ParseHeader(b, Header6_16); !errors.Is(err, ErrBadVersion) {
		t.Fatalf("v9 bytes as 6.x: %v", err)
	}
	bad := append([]byte{0x32, 0xab, 0x98, 0x65}, b[4:]...)
	if _, _, err := ParseHeader(bad, Header5_27); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("bad magic: %v", err)
	}
	old := testutil.Unhex(t, "32ab9864 03 07 0102 00ea 00f4")
	if _, _, err := ParseHeader(old, HeaderUpTo5_6); !errors.Is(err, ErrBadField) {
		t.Fatalf("encrypted byte 3: %v", err)
	}
	old[4] = 6
	if _, err := DetectVersion(old[:5]); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("DetectVersion of header version 6: %v", err)
	}
	old[4] = 2
	if _, err := DetectVersion(old); !errors.Is(err, ErrNoVersionBits) {
		t.Fatalf("DetectVersion of a 5.6 packet: %v", err)
	}
	h := Header{Layout: Header6_16, Version: 11, SourceVariableID: 0x10000}
	if _, err := h.Append(nil); !errors.Is(err, ErrBadField) {
		t.Fatalf("17-bit variable id in 6.x: %v", err)
	}
	h = Header{Layout: Header5_27, Version: 9, ConnectionID: 3}
	if _, err := h.Append(nil); !errors.Is(err, ErrBadField) {
		t.Fatalf("connection id in 5.27: %v", err)
	}
}

func TestVersionTable(t *testing.T) {
	cases := []struct {
		v      string
		hv     uint8
		hl     HeaderLayout
		ml     MessageLayout
		detect string
	}{
		{"5.4", 0, HeaderUpTo5_6, MessageUpTo5_4, ""},
		{"5.6", 0, HeaderUpTo5_6, Message5_6, ""},
		{"5.10", 0, Header5_7, Message5_6, ""},
		{"5.11", 3, Header5_11, Message5_11, "5.11"},
		{"5.17", 3, Header5_11, Message5_14, "5.11"},
		{"5.18", 4, Header5_11, Message5_18, "5.18"},
		{"5.26", 5, Header5_23, Message5_18, "5.23"},
		{"5.27", 9, Header5_27, Message5_27, "5.27"},
		{"6.23", 11, Header6_16, Message6_16, "6.16"},
		{"6.26", 12, Header6_16, Message6_16, "6.25"},
		{"6.30", 13, Header6_16, Message6_16, "6.29"},
	}
	for _, tc := range cases {
		v, err := ParseVersion(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if v.HeaderVersion() != tc.hv || v.HeaderLayout() != tc.hl || v.MessageLayout() != tc.ml {
			t.Errorf("%s: header version %d layout %s messages %s", tc.v, v.HeaderVersion(), v.HeaderLayout(), v.MessageLayout())
		}
		if tc.detect != "" {
			_, dv, ok := LayoutForHeaderVersion(tc.hv)
			if !ok || dv.String() != tc.detect {
				t.Errorf("%s: header version %d detected as %s", tc.v, tc.hv, dv)
			}
		}
	}
	for _, bad := range []string{"", "5", "x.1", "5.x", "9.1", "5.1.2.3"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
}

// TestUnalignedMessages6x is issue 13.2: Pia 6.16-6.30 starts a message on the
// byte after the previous payload, and only the packet's plaintext is padded, with
// 0xFF, to the AES block (Decryptu/pokeldn docs/pla.md, "Reading and writing a
// packet"; pokeldn/ldn/pia5.py parse_messages with no alignment). A 4-byte walk
// lands inside the second message and fails ("message 1 ... truncated").
func TestUnalignedMessages6x(t *testing.T) {
	plain := testutil.Unhex(t, "7f 01 0005 68 000000 0000000000000000 | 0400020000"+ // 21 bytes
		"02 0003 | aabbcc"+ // size only; flags, protocol, destination inherited
		"00 | 112233"+ // presence 0: every field inherited, size included
		"ff") // 0xFF to the AES block (32 bytes)
	for _, v := range []Version{{6, 16}, {6, 23}, {6, 25}, {6, 30}} {
		l := v.MessageLayout()
		ms, err := ParseMessages(nil, plain, l)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if len(ms) != 3 {
			t.Fatalf("%s: %d messages, want 3", v, len(ms))
		}
		for i, want := range []string{"0400020000", "aabbcc", "112233"} {
			if got := hex.EncodeToString(ms[i].Payload); got != want || ms[i].ProtocolType != 0x68 || ms[i].Flags != 0x01 {
				t.Errorf("%s message %d: payload %s protocol 0x%x flags 0x%x, want %s 0x68 0x01", v, i, got, ms[i].ProtocolType, ms[i].Flags, want)
			}
		}
		// The encoder writes the same bytes, and EncodedSize agrees with it.
		var out []byte
		size := 0
		for i := range ms {
			var prev *Message
			if i > 0 {
				prev = &ms[i-1]
			}
			size += EncodedSize(&ms[i], l, prev)
			if out, err = AppendMessage(out, &ms[i], l, prev); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out, plain[:len(plain)-1]) || size != len(out) {
			t.Fatalf("%s: re-encoded %x (EncodedSize %d), want %x", v, out, size, plain[:len(plain)-1])
		}
	}
	// 5.27-5.44 pads each message to 4 bytes: the same bytes do not parse there.
	if _, err := ParseMessages(nil, plain, Version{5, 27}.MessageLayout()); err == nil {
		t.Fatal("5.27 layout parsed unaligned messages")
	}
}

// TestUnalignedPacket6x seals and opens a 6.x packet of several messages whose
// sizes are not multiples of 4: the plaintext is the messages back to back, then
// 0xFF to 16 bytes.
func TestUnalignedPacket6x(t *testing.T) {
	v := Version{6, 16}
	c := testCodec(t, v, NetworkLAN, testKey)
	p := Packet{Messages: []Message{
		{Flags: FlagSkipSourceCheck, ProtocolType: 0x98, Payload: []byte("join")},
		{Flags: FlagSkipSourceCheck, ProtocolType: 0x98, Payload: []byte("x")},
		{Flags: FlagSkipSourceCheck, ProtocolType: 0x58, ProtocolPort: 1, Payload: []byte("rtt-a")},
	}}
	p.Header.Encrypted = true
	raw, err := c.Seal(nil, &p, testSource)
	if err != nil {
		t.Fatal(err)
	}
	// 16+4, 3+1 and 7+5 = 36 bytes of messages, padded to 48.
	if n := len(raw) - v.HeaderLayout().Size(); n != 48 {
		t.Fatalf("ciphertext of %d bytes, want 48", n)
	}
	var q Packet
	if err := c.Open(&q, raw, testSource); err != nil {
		t.Fatal(err)
	}
	if len(q.Messages) != 3 || string(q.Messages[1].Payload) != "x" || string(q.Messages[2].Payload) != "rtt-a" || q.Messages[2].ProtocolType != 0x58 {
		t.Fatalf("opened %+v", q.Messages)
	}
	if !bytes.Equal(q.plain[36:], bytes.Repeat([]byte{0xFF}, 12)) {
		t.Fatalf("plaintext tail %x, want 0xFF padding", q.plain[36:])
	}
}

// TestMessageFlagTables: the bits of 5.27-5.44 and 6.16-6.30 follow the consoles'
// parsers (Decryptu/pokeldn), not the wiki's table (docs/pia.md).
func TestMessageFlagTables(t *testing.T) {
	for _, tc := range []struct {
		v     Version
		flags uint8
		names string
	}{
		{Version{5, 18}, 0x1F, "multicast,relay,relayed,no-bundle,zlib"},
		{Version{5, 27}, 0x3F, "multicast,relay,relay-many,relayed,no-bundle,zlib"},
		{Version{5, 27}, 0x11, "multicast,no-bundle"},
		{Version{6, 16}, 0x11, "skip-source-check,no-bundle"},
		{Version{6, 30}, 0xE0, "zlib,0x40,0x80"},
	} {
		if got := strings.Join(tc.v.MessageLayout().Flags().Names(tc.flags), ","); got != tc.names {
			t.Errorf("%s flags 0x%02x: %s, want %s", tc.v, tc.flags, got, tc.names)
		}
	}
	if ZlibFlag(Version{5, 26}) != 0x10 || ZlibFlag(Version{5, 27}) != 0x20 || ZlibFlag(Version{6, 16}) != 0x20 {
		t.Fatal("zlib flag: want 0x10 up to 5.26, 0x20 from 5.27")
	}
}
