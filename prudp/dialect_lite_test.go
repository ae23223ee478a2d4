package prudp

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp/wire"
)

// TestLiteCodecPackets encodes every packet the engine sends in Lite and
// checks, with prudp/wire's decoder, the options each carries and that 8-bit
// ports and the stream type survive.
func TestLiteCodecPackets(t *testing.T) {
	c := &liteCodec{d: wire.NewLite(testKey)}
	serverSig := [16]byte{9, 8, 7, 6, 5, 4, 3, 2, 1}
	src, dst := vport(StreamRVSecure, 0x1f), vport(StreamRVSecure, 2)
	tests := []struct {
		name string
		p    pkt
		want wire.OptionMask
	}{
		{"SYN", pkt{typ: typeSyn, flags: flagNeedAck, supported: 4, maxSubstream: 3}, wire.OptSupportedFunctions},
		{"SYN-ACK", pkt{typ: typeSyn, flags: flagAck | flagHasSize, supported: 4, connSig: serverSig}, wire.OptSupportedFunctions | wire.OptConnSignature},
		{"CONNECT", pkt{typ: typeConnect, flags: flagReliable | flagNeedAck, seq: 1, supported: 4, unreliableSeq: 77, connSig: [16]byte{1}}, wire.OptSupportedFunctions | wire.OptLiteSignature},
		{"CONNECT-ACK", pkt{typ: typeConnect, flags: flagAck | flagHasSize, seq: 1, supported: 4, payload: []byte{1, 2, 3, 4, 5, 6, 7, 8}}, wire.OptSupportedFunctions},
		{"DATA", pkt{typ: typeData, flags: flagReliable | flagNeedAck, seq: 2, fragment: 3, sessionID: 0x55, substream: 0, payload: []byte("hello")}, wire.OptNone},
		{"aggregate ACK", pkt{typ: typeData, flags: flagMultiAck, substream: 1, payload: []byte{0, 0, 5, 0}}, wire.OptNone},
		{"PING", pkt{typ: typePing, flags: flagReliable | flagNeedAck, seq: 9}, wire.OptNone},
		{"DISCONNECT-ACK", pkt{typ: typeDisconnect, flags: flagAck, seq: 9}, wire.OptNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			p.src, p.dst = src, dst
			b, err := c.appendPacket(nil, &p, keys{connSig: serverSig[:]})
			if err != nil {
				t.Fatal(err)
			}
			w, n, err := wire.NewLite(testKey).Parse(b)
			if err != nil || n != len(b) {
				t.Fatalf("wire decode: %v (%d of %d bytes)", err, n, len(b))
			}
			if w.Options != tc.want {
				t.Errorf("options %v, want %v", w.Options, tc.want)
			}
			if w.Src.Port != 0x1f || w.Dst.Port != 2 || w.Src.Stream != StreamRVSecure || w.Dst.Stream != StreamRVSecure {
				t.Errorf("ports %v -> %v", w.Src, w.Dst)
			}
			if w.Seq != p.seq || w.FragmentID != uint32(p.fragment) || !bytes.Equal(w.Payload, p.payload) {
				t.Errorf("decoded %+v", w)
			}
			var q pkt
			if _, err := c.parse(b, &q); err != nil || q.src != src || q.dst != dst || q.typ != p.typ || q.flags != p.flags {
				t.Errorf("engine decode: %+v, %v", q, err)
			}
			if tc.name == "CONNECT" {
				if w.LiteSignature != wire.NewLite(testKey).Signature(serverSig) {
					t.Error("CONNECT not signed with the Lite signature over the server's connection signature")
				}
				if !c.verify(&q, keys{connSig: serverSig[:]}) {
					t.Error("the server refuses a good Lite signature")
				}
				other := serverSig
				other[0]++
				if c.verify(&q, keys{connSig: other[:]}) {
					t.Error("a Lite signature over another connection signature verified")
				}
				wrong := &liteCodec{d: wire.NewLite("another key")}
				if wrong.verify(&q, keys{connSig: serverSig[:]}) {
					t.Error("a Lite signature under another access key verified")
				}
			} else if !c.verify(&q, keys{}) {
				t.Errorf("%s refused: only a client's CONNECT carries a signature", tc.name)
			}
		})
	}
	// A CONNECT without option 0x80 is refused.
	w := wire.Packet{Src: wire.VPort{Stream: 10, Port: 0x1f}, Dst: wire.VPort{Stream: 10, Port: 1}, Type: wire.TypeConnect,
		Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 1, Options: wire.OptSupportedFunctions}
	b, err := wire.NewLite(testKey).Append(nil, &w)
	if err != nil {
		t.Fatal(err)
	}
	var q pkt
	if _, err := c.parse(b, &q); err != nil || c.verify(&q, keys{connSig: serverSig[:]}) {
		t.Errorf("a CONNECT without a Lite signature: %v, verified", err)
	}
}

// TestLiteConfigDefaults: stream timers unless set, 8-bit server ports, no substreams.
func TestLiteConfigDefaults(t *testing.T) {
	r := (&Config{Dialect: NEXLite, MaxSubstreamID: 3}).resolved()
	if r.InitialRTO != 5*time.Second || r.MinRTO != 5*time.Second || r.MaxRTO != 20*time.Second || r.MaxRetransmits != 2 {
		t.Errorf("timers %v %v %v %d", r.InitialRTO, r.MinRTO, r.MaxRTO, r.MaxRetransmits)
	}
	if r.MinorVersion != 4 || r.MaxSubstreamID != 0 || r.FragmentSize != 1300 || r.KeepAlive != 5*time.Second {
		t.Errorf("minor %d, max substream %d, fragment %d, keepalive %v", r.MinorVersion, r.MaxSubstreamID, r.FragmentSize, r.KeepAlive)
	}
	r = (&Config{Dialect: NEXLite, MinRTO: time.Second, MaxRetransmits: 5}).resolved()
	if r.MinRTO != time.Second || r.MaxRetransmits != 5 {
		t.Errorf("explicit values overridden: %v %d", r.MinRTO, r.MaxRetransmits)
	}
	if v := (&Config{Dialect: NEXV1}).resolved(); v.MinRTO == 5*time.Second {
		t.Error("V1 got the Lite timers")
	}
	for _, tc := range []struct {
		d  Dialect
		ok bool
	}{{NEXLite, true}, {NEXV1, false}} {
		c := Config{Dialect: tc.d, Port: 0x1f}
		c = c.resolved()
		if err := c.validate(); (err == nil) != tc.ok {
			t.Errorf("%v port 0x1f: %v", tc.d, err)
		}
	}
	if d, err := ParseDialect("nex-lite"); err != nil || d != NEXLite || d.String() != "nex-lite" {
		t.Errorf("ParseDialect(nex-lite) = %v, %v", d, err)
	}
}

// TestLiteSessionPlainAndNewAcks: over a Lite connection payloads travel
// unencrypted, and DATA is acknowledged with a new-format aggregate ACK even
// when minor version 1 (old format in V1) was negotiated.
func TestLiteSessionPlainAndNewAcks(t *testing.T) {
	p := newManualPair(t, Config{Dialect: NEXLite, AccessKey: testKey, MinorVersion: 1, IndividualAcks: false})
	if p.client.minor != 1 || p.server.minor != 1 {
		t.Fatalf("negotiated minor %d/%d, want 1", p.client.minor, p.server.minor)
	}
	msg := []byte("in the clear inside TLS")
	p.sendNow(msg)
	lite := wire.NewLite(testKey)
	if len(p.ccap.out) != 1 {
		t.Fatalf("%d datagrams for one short message", len(p.ccap.out))
	}
	w, _, err := lite.Parse(p.ccap.out[0].b)
	if err != nil || !bytes.Equal(w.Payload, msg) {
		t.Fatalf("DATA on the wire: %q, %v; want the plaintext", w.Payload, err)
	}
	sh := p.sep.shards[0]
	p.sep.handleDatagram(sh, p.now, p.ccap.out[0].b, p.ccap.addr)
	p.ccap.out = p.ccap.out[:0]
	sh.flushAcks(p.now)
	sh.flushWrites()
	var sawAck bool
	for _, o := range p.scap.out {
		for b := o.b; len(b) > 0; {
			a, n, err := lite.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			b = b[n:]
			if a.Flags&wire.FlagMultiAck == 0 {
				continue
			}
			sawAck = true
			if a.Seq != 0 || len(a.Payload) != 4 || a.Payload[0] != 0 || a.Payload[1] != 0 || binary.LittleEndian.Uint16(a.Payload[2:]) != w.Seq {
				t.Errorf("aggregate ACK seq %d payload % x: want the new format acknowledging %d", a.Seq, a.Payload, w.Seq)
			}
		}
	}
	if !sawAck {
		t.Fatal("no aggregate ACK")
	}
	in := p.server.conn.inbox
	if len(in) != 1 || !bytes.Equal(in[0].Data, msg) {
		t.Fatalf("server inbox %v", in)
	}
	p.deliver() // the client reads the new-format ACK (no substream byte in a Lite header)
	if n := len(p.client.streams[0].inflight); n != 0 {
		t.Errorf("%d packets still unacknowledged at the client", n)
	}
}

// FuzzLiteDatagram feeds arbitrary datagrams to both ends of an established
// Lite connection: nothing may panic.
func FuzzLiteDatagram(f *testing.F) {
	for _, s := range seedDatagrams(f, NEXLite) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := newManualPair(t, Config{Dialect: NEXLite, AccessKey: testKey})
		p.sep.handleDatagram(p.sep.shards[0], p.now, append([]byte(nil), b...), p.ccap.addr)
		p.sep.shards[0].flushAcks(p.now)
		p.cep.handleDatagram(p.cep.shards[0], p.now, append([]byte(nil), b...), p.scap.addr)
		p.cep.shards[0].flushAcks(p.now)
		p.server.tick(p.now.Add(time.Hour))
		p.client.tick(p.now.Add(time.Hour))
	})
}
