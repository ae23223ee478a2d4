package pia

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// vectorPacket is the ldn-v9-with-footer packet of testdata/pia/vectors.json.
const vectorPacket = "32ab98648900000001ab358028000504100d649b1ec312c65bc4bc05c88237c05acc7a796988059a6f997bede1c55e308972518adcbd59256ebdf3d5f6aa69c780284c11"

func seedPackets(f *testing.F, add func(raw []byte, vi int)) {
	raw, _ := hex.DecodeString(vectorPacket)
	add(raw, 7)
	for vi, v := range testVersions {
		for _, n := range []Network{NetworkLDN, NetworkLAN} {
			for _, enc := range []bool{true, false} {
				c := testCodec(f, v, n, testKey)
				p := samplePacket(c, enc)
				b, err := c.Seal(nil, &p, testSource)
				if err != nil {
					f.Fatal(err)
				}
				add(b, vi)
			}
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	seedPackets(f, func(raw []byte, vi int) { f.Add(raw, uint8(testVersions[vi].HeaderLayout()-1)) })
	f.Fuzz(func(t *testing.T, data []byte, li uint8) {
		l := AllHeaderLayouts[int(li)%len(AllHeaderLayouts)]
		h, n, err := ParseHeader(data, l)
		if err != nil {
			return
		}
		out, err := h.Append(nil)
		if err != nil {
			t.Fatalf("append of a parsed header: %v", err)
		}
		if !bytes.Equal(out, data[:n]) {
			t.Fatalf("re-encoded %x, parsed %x", out, data[:n])
		}
		h2, _, err := ParseHeader(out, l)
		if err != nil || h2 != h {
			t.Fatalf("reparse: %+v %v", h2, err)
		}
	})
}

func FuzzParseMessages(f *testing.F) {
	seedPackets(f, func(raw []byte, vi int) {
		v := testVersions[vi]
		if hs := v.HeaderLayout().Size(); len(raw) > hs && raw[4]&0x80 == 0 && raw[4] != 2 {
			f.Add(raw[hs:], uint8(v.MessageLayout()-1))
		}
	})
	f.Fuzz(func(t *testing.T, data []byte, li uint8) {
		l := AllMessageLayouts[int(li)%len(AllMessageLayouts)]
		ms, err := ParseMessages(nil, data, l)
		if err != nil {
			return
		}
		var out []byte
		for i := range ms {
			var prev *Message
			if i > 0 {
				prev = &ms[i-1]
			}
			if out, err = AppendMessage(out, &ms[i], l, prev); err != nil {
				t.Fatalf("append of parsed message %d: %v", i, err)
			}
		}
		again, err := ParseMessages(nil, out, l)
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		equalMessages(t, again, ms)
	})
}

func FuzzOpen(f *testing.F) {
	seedPackets(f, func(raw []byte, vi int) { f.Add(raw, uint8(vi), uint8(0)) })
	f.Fuzz(func(t *testing.T, data []byte, vi, ni uint8) {
		v := testVersions[int(vi)%len(testVersions)]
		n := AllNetworks[int(ni)%len(AllNetworks)]
		if n == NetworkNPLN && v.Major < 6 || n == NetworkNEX && v.Major >= 6 {
			n = NetworkLDN
		}
		c, err := NewCodec(Config{Version: v, NonceParams: NonceParams{Network: n, NetworkID: 0x19EC1D90}, SessionKey: testKey, AllowPlaintext: true})
		if err != nil {
			t.Fatal(err)
		}
		var p Packet
		if err := c.Open(&p, data, testSource); err != nil {
			return
		}
		q := Packet{Header: p.Header, Messages: append([]Message(nil), p.Messages...), Footer: p.Footer}
		out, err := c.Seal(nil, &q, testSource)
		if err != nil {
			t.Fatalf("seal of an opened packet: %v", err)
		}
		var p2 Packet
		if err := c.Open(&p2, out, testSource); err != nil {
			t.Fatalf("reopen: %v", err)
		}
		equalMessages(t, p2.Messages, p.Messages)
		if !bytes.Equal(p2.Footer, p.Footer) {
			t.Fatalf("footer %x, want %x", p2.Footer, p.Footer)
		}
	})
}
