package prudp

import (
	"encoding/binary"
	"testing"
	"time"
)

// seedDatagrams records the datagrams of a short real exchange (handshake,
// data both ways, acks, a ping) for fuzz seeds.
func seedDatagrams(tb testing.TB, d Dialect) [][]byte {
	p := newManualPair(tb, fuzzConfig(d))
	var seeds [][]byte
	grab := func() {
		for _, c := range []*capture{p.ccap, p.scap} {
			for _, o := range c.out {
				seeds = append(seeds, append([]byte(nil), o.b...))
			}
		}
	}
	_ = p.client.send(p.now, 0, []byte("hello"))
	_ = p.client.send(p.now, 0, make([]byte, 3000)) // fragmented
	grab()
	p.deliver()
	grab()
	p.now = p.now.Add(time.Minute)
	p.client.tick(p.now) // keepalive PING
	grab()
	p.deliver()
	return seeds
}

// fuzzConfig is the configuration the fuzz targets run dialect d with.
func fuzzConfig(d Dialect) Config {
	cfg := Config{Dialect: d, AccessKey: testKey, MaxSubstreamID: 1}
	if d == Hyperscape {
		k := testCertKey()
		cfg.CertKey, cfg.CertPub = k, &k.PublicKey
	}
	return cfg
}

// FuzzServerDatagram feeds arbitrary datagrams to an established connection's
// server and client endpoints: nothing may panic, and a datagram that fails
// the checksum or signature must not reach the application.
func FuzzServerDatagram(f *testing.F) {
	// The datagram dialects; the fuzzer's first argument picks one.
	dialects := []Dialect{NEXV1, NEXV0, NEXV0Friends, Quazal, Hyperscape}
	for i, d := range dialects {
		if d == NEXV0Friends {
			continue // its packets are NEX V0's
		}
		for _, s := range seedDatagrams(f, d) {
			f.Add(byte(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, dialect byte, b []byte) {
		d := dialects[int(dialect)%len(dialects)]
		p := newManualPair(t, fuzzConfig(d))
		before := len(p.server.conn.inbox)
		p.sep.handleDatagram(p.sep.shards[0], p.now, append([]byte(nil), b...), p.ccap.addr)
		p.sep.shards[0].flushAcks(p.now)
		p.cep.handleDatagram(p.cep.shards[0], p.now, append([]byte(nil), b...), p.scap.addr)
		p.cep.shards[0].flushAcks(p.now)
		p.server.tick(p.now.Add(time.Hour))
		p.client.tick(p.now.Add(time.Hour))
		_ = before
	})
}

// FuzzSessionPacket drives a server session with packets whose fields come
// from the fuzzer, past the signature check: ordering, duplicates, the
// reorder buffer, reassembly limits and aggregate-ack parsing must hold up
// (no panic, nothing beyond the limits, sequence state consistent).
func FuzzSessionPacket(f *testing.F) {
	f.Add([]byte{typeData, flagReliable | flagNeedAck, 0, 2, 0, 0, 'h', 'i'})
	f.Add([]byte{typeData, 0, 2, 1, 0, 0, 0, 0, 3, 0, 5, 0}) // new-format aggregate ack
	f.Add([]byte{typeData, 0, 2, 0, 5, 0, 6, 0, 7, 0})       // old-format aggregate ack
	f.Add([]byte{typePing, flagReliable | flagNeedAck, 0, 0, 2, 0})
	f.Add([]byte{typeDisconnect, flagReliable | flagNeedAck, 0, 0, 3, 0})
	f.Add([]byte{typeData, flagReliable | flagNeedAck, 0, 0, 3, 1, 'a', typeData, flagReliable | flagNeedAck, 0, 0, 2, 0, 'b'})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := newManualPair(t, Config{AccessKey: testKey, MaxSubstreamID: 1, MaxMessageSize: 4096, ReorderWindow: 64})
		s := p.server
		for len(b) >= 6 && s.state != stateClosed {
			var q pkt
			q.typ = b[0] % 6
			q.flags = uint16(b[1]) | uint16(b[2]&0x02)<<8
			q.substream = b[3] % 3
			q.seq = binary.LittleEndian.Uint16(b[4:])
			b = b[6:]
			if len(b) > 0 {
				q.fragment = uint32(b[0])
				b = b[1:]
			}
			n := 0
			if len(b) > 0 {
				n = min(int(b[0]), len(b)-1)
				q.payload = append([]byte(nil), b[1:1+n]...)
				b = b[1+n:]
			}
			q.sessionID = s.remoteSID
			s.handle(p.now, &q)
			p.sep.shards[0].flushAcks(p.now)
			for i := range s.streams {
				st := &s.streams[i]
				if len(st.reorder) > s.cfg.ReorderWindow {
					t.Fatalf("reorder buffer holds %d > %d", len(st.reorder), s.cfg.ReorderWindow)
				}
				if st.reasm.pending() > s.cfg.MaxMessageSize {
					t.Fatalf("reassembly holds %d > %d", st.reasm.pending(), s.cfg.MaxMessageSize)
				}
			}
			for _, m := range p.server.conn.inbox {
				if len(m.Data) > s.cfg.MaxMessageSize {
					t.Fatalf("delivered %d bytes > limit", len(m.Data))
				}
			}
		}
	})
}
