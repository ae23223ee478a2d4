package prudp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestSeqCompareWraps(t *testing.T) {
	cases := []struct {
		a, b   uint16
		before bool
		diff   int
	}{
		{1, 2, true, 1},
		{2, 1, false, -1},
		{65535, 0, true, 1},
		{65530, 4, true, 10},
		{4, 65530, false, -10},
		{7, 7, false, 0},
		{0, 32767, true, 32767},
	}
	for _, c := range cases {
		if got := seqBefore(c.a, c.b); got != c.before {
			t.Errorf("seqBefore(%d, %d) = %v", c.a, c.b, got)
		}
		if got := seqDiff(c.a, c.b); got != c.diff {
			t.Errorf("seqDiff(%d, %d) = %d, want %d", c.a, c.b, got, c.diff)
		}
	}
}

func TestRTTEstimator(t *testing.T) {
	r := newRTTEstimator(time.Second, 10*time.Millisecond, 5*time.Second)
	if r.rto() != time.Second {
		t.Fatalf("initial rto %v", r.rto())
	}
	r.sample(100 * time.Millisecond)
	if r.srtt != 100*time.Millisecond || r.rttvar != 50*time.Millisecond || r.rto() != 300*time.Millisecond {
		t.Fatalf("after one sample: srtt %v rttvar %v rto %v", r.srtt, r.rttvar, r.rto())
	}
	for range 50 {
		r.sample(20 * time.Millisecond)
	}
	if r.srtt < 19*time.Millisecond || r.srtt > 22*time.Millisecond {
		t.Fatalf("srtt %v, want about 20ms", r.srtt)
	}
	if r.rto() < 10*time.Millisecond {
		t.Fatalf("rto %v below the floor", r.rto())
	}
	if b1, b3 := r.backoff(1), r.backoff(3); b1 != 2*r.rto() || b3 != 8*r.rto() {
		t.Fatalf("backoff 1: %v, 3: %v (rto %v)", b1, b3, r.rto())
	}
	if r.backoff(30) != 5*time.Second {
		t.Fatalf("backoff not capped: %v", r.backoff(30))
	}
}

func TestReassembler(t *testing.T) {
	type step struct {
		frag    uint32
		payload string
		want    string
		err     error
	}
	cases := map[string][]step{
		"single":         {{0, "abc", "abc", nil}},
		"three":          {{1, "a", "", nil}, {2, "b", "", nil}, {0, "c", "abc", nil}},
		"starts late":    {{2, "b", "", ErrBadFragment}, {0, "c", "", nil}, {0, "d", "d", nil}},
		"gap":            {{1, "a", "", nil}, {3, "c", "", ErrBadFragment}, {0, "x", "", nil}, {0, "ok", "ok", nil}},
		"too large":      {{1, "aaaa", "", nil}, {2, "bbbb", "", nil}, {3, "ccc", "", ErrMessageTooLarge}, {4, "d", "", nil}, {0, "e", "", nil}, {0, "f", "f", nil}},
		"large last":     {{1, "aaaa", "", nil}, {0, "bbbbbbb", "", ErrMessageTooLarge}, {0, "g", "g", nil}},
		"exactly at max": {{1, "aaaaa", "", nil}, {0, "bbbbb", "aaaaabbbbb", nil}},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			r := reassembler{max: 10}
			for i, s := range steps {
				msg, err := r.add(s.frag, []byte(s.payload))
				if !errors.Is(err, s.err) || (s.err == nil && err != nil) {
					t.Fatalf("step %d: err %v, want %v", i, err, s.err)
				}
				if string(msg) != s.want {
					t.Fatalf("step %d: message %q, want %q", i, msg, s.want)
				}
			}
		})
	}
}

func TestFragmentIDsWrapPastZero(t *testing.T) {
	// A message of more than 255 fragments: ids run 1..255, then 1 again
	// (never 0, which ends a message), on both ends.
	p := newManualPair(t, Config{AccessKey: testKey, FragmentSize: 100, MaxWindow: 1024})
	msg := make([]byte, 300*100+7)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	_ = p.client.send(p.now, 0, msg)
	for range 20 {
		p.deliver()
	}
	inbox := p.server.conn.inbox
	if len(inbox) != 1 || !bytes.Equal(inbox[0].Data, msg) {
		t.Fatalf("got %d messages", len(inbox))
	}
}

func TestSequenceIDsWrap(t *testing.T) {
	for _, d := range []Dialect{NEXV1, NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			p := newManualPair(t, Config{Dialect: d, AccessKey: testKey})
			p.client.streams[0].sendSeq = 65500
			p.server.streams[0].recvNext = 65500
			for i := range 100 {
				_ = p.client.send(p.now, 0, []byte{byte(i)})
				if i%7 == 0 {
					p.deliver()
				}
			}
			for range 5 {
				p.deliver()
			}
			inbox := p.server.conn.inbox
			if len(inbox) != 100 {
				t.Fatalf("%d messages across the wrap", len(inbox))
			}
			for i, m := range inbox {
				if m.Data[0] != byte(i) {
					t.Fatalf("message %d is %d", i, m.Data[0])
				}
			}
			if p.client.inflight != 0 {
				t.Fatalf("%d unacknowledged", p.client.inflight)
			}
		})
	}
}

// TestFirstDataSeqIsTwo: the client's CONNECT takes id 1 of substream 0, so
// its first DATA is 2 (as NintendoClients numbers them); the server starts at 1.
func TestFirstDataSeqIsTwo(t *testing.T) {
	p := newManualPair(t, Config{AccessKey: testKey})
	p.sendNow([]byte("x"))
	var q pkt
	if _, err := p.cep.codec.parse(p.ccap.out[0].b, &q); err != nil {
		t.Fatal(err)
	}
	if q.typ != typeData || q.seq != 2 {
		t.Fatalf("first client DATA: type %d seq %d", q.typ, q.seq)
	}
	p.deliver()
	p.server.sh = p.sep.shards[0]
	_ = p.server.send(p.now, 0, []byte("y"))
	p.sep.shards[0].flushWrites()
	if _, err := p.sep.codec.parse(p.scap.out[0].b, &q); err != nil {
		t.Fatal(err)
	}
	if q.seq != 1 {
		t.Fatalf("first server DATA seq %d", q.seq)
	}
}

// rawToServer encodes a packet as the client session would and hands it to
// the server, returning what the server sent back.
func (p *manualPair) rawToServer(t *testing.T, q *pkt) []pkt {
	t.Helper()
	c := p.client
	q.src, q.dst, q.sessionID = c.localPort, c.remotePort, c.localSID
	b, err := c.codec.appendPacket(nil, q, c.keysFor(q.typ, true))
	if err != nil {
		t.Fatal(err)
	}
	sh := p.sep.shards[0]
	p.sep.handleDatagram(sh, p.now, b, p.ccap.addr)
	sh.flushAcks(p.now)
	var out []pkt
	for _, o := range p.scap.out {
		var r pkt
		if _, err := p.sep.codec.parse(o.b, &r); err != nil {
			t.Fatal(err)
		}
		r.payload = append([]byte(nil), r.payload...)
		out = append(out, r)
	}
	p.scap.out = p.scap.out[:0]
	return out
}

// TestReliablePingsOnSubstreamZero: NintendoClients sends PINGs with
// RELIABLE|NEED_ACK numbered on substream 0's counter, between DATA packets.
// They must be acknowledged and consume their sequence id, or the DATA after
// them would wait forever.
func TestReliablePingsOnSubstreamZero(t *testing.T) {
	for _, d := range []Dialect{NEXV1, NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			p := newManualPair(t, Config{Dialect: d, AccessKey: testKey, IndividualAcks: true})
			enc := func(s string) []byte {
				b := []byte(s)
				p.client.xf.(*rc4Transform).pairs[0].enc.XORPacket(b, b)
				return b
			}
			acks := p.rawToServer(t, &pkt{typ: typeData, flags: flagReliable | flagNeedAck, seq: 2, payload: enc("one")})
			acks = append(acks, p.rawToServer(t, &pkt{typ: typePing, flags: flagReliable | flagNeedAck, seq: 3})...)
			acks = append(acks, p.rawToServer(t, &pkt{typ: typeData, flags: flagReliable | flagNeedAck, seq: 4, payload: enc("two")})...)
			want := []struct {
				typ uint8
				seq uint16
			}{{typeData, 2}, {typePing, 3}, {typeData, 4}}
			if len(acks) != 3 {
				t.Fatalf("%d acks, want 3 (individual): %+v", len(acks), acks)
			}
			for i, a := range acks {
				if a.typ != want[i].typ || a.seq != want[i].seq || !a.has(flagAck) {
					t.Errorf("ack %d: type %d seq %d flags %#x, want %s %d ACK", i, a.typ, a.seq, a.flags, typeName(want[i].typ), want[i].seq)
				}
			}
			inbox := p.server.conn.inbox
			if len(inbox) != 2 || string(inbox[0].Data) != "one" || string(inbox[1].Data) != "two" {
				t.Fatalf("delivered %+v", inbox)
			}
		})
	}
}

// TestAggregateAckFormats: the minor version decides the format the server
// sends, and both formats are read.
func TestAggregateAckFormats(t *testing.T) {
	for _, minor := range []uint8{1, 2, 4} {
		t.Run(fmt.Sprintf("minor%d", minor), func(t *testing.T) {
			p := newManualPair(t, Config{AccessKey: testKey, MinorVersion: minor})
			if p.server.minor != minor || p.client.minor != minor {
				t.Fatalf("negotiated %d/%d", p.server.minor, p.client.minor)
			}
			// Three packets reach the server in one batch, the second missing.
			for i := range 3 {
				p.sendNow([]byte{byte(i)})
			}
			pkts := p.ccap.out
			p.ccap.out = nil
			sh := p.sep.shards[0]
			p.sep.handleDatagram(sh, p.now, pkts[0].b, p.ccap.addr)
			p.sep.handleDatagram(sh, p.now, pkts[2].b, p.ccap.addr)
			sh.coalesce = false // one datagram per packet, to look at each
			sh.flushAcks(p.now)
			wantPackets := 1
			if minor < 2 {
				wantPackets = 2 // the aggregate and the individual ACK of 4
			}
			if len(p.scap.out) != wantPackets {
				t.Fatalf("%d ack packets, want %d", len(p.scap.out), wantPackets)
			}
			var a pkt
			if _, err := p.sep.codec.parse(p.scap.out[0].b, &a); err != nil {
				t.Fatal(err)
			}
			if !a.has(flagMultiAck) || a.typ != typeData {
				t.Fatalf("ack flags %#x", a.flags)
			}
			if minor >= 2 {
				// New format: header substream 1 and seq 0; payload substream 0,
				// one extra id (4) after the cumulative 2.
				want := []byte{0, 1, 2, 0, 4, 0}
				if a.substream != 1 || a.seq != 0 || !bytes.Equal(a.payload, want) {
					t.Fatalf("new format: substream %d seq %d payload % x", a.substream, a.seq, a.payload)
				}
			} else {
				// Old format: seq 2 acknowledges up to 2; the payload repeats 2
				// (NintendoClients reads it as "up to"); 4 gets an ACK of its own.
				want := binary.LittleEndian.AppendUint16(nil, 2)
				if a.seq != 2 || !bytes.Equal(a.payload, want) {
					t.Fatalf("old format: seq %d payload % x", a.seq, a.payload)
				}
			}
			p.deliver() // the client reads it
			if p.client.inflight != 1 || p.client.streams[0].inflight[0].seq != 3 {
				t.Fatalf("after the aggregate ack %d in flight", p.client.inflight)
			}
		})
	}
}

// TestConnectAckMustEchoNegotiation: a CONNECT-ACK whose values differ from
// what the SYN-ACK settled fails the handshake (NintendoClients checks it too).
func TestConnectAckMustEchoNegotiation(t *testing.T) {
	p := &manualPair{}
	_ = p
	pair := newManualPair(t, Config{AccessKey: testKey, MaxSubstreamID: 2})
	if pair.client.maxSubstream != 2 || pair.server.maxSubstream != 2 {
		t.Fatalf("max substream %d/%d", pair.client.maxSubstream, pair.server.maxSubstream)
	}
	// Replay the handshake by hand with a CONNECT-ACK that lies.
	c := newSession(pair.cep.shards[0], &pair.cep.cfg, pair.cep.codec, true, pair.scap.addr, pair.now)
	c.conn = newConn(pair.cep.shards[0], pair.scap.addr, 1<<20)
	c.conn.s = c
	c.localPort, c.remotePort = pair.client.localPort, pair.client.remotePort
	c.state = stateConnecting
	c.supported, c.minor, c.maxSubstream = 4, 4, 2
	c.sigIn = []byte("0123456789abcdef")
	c.hs = &outPacket{typ: typeConnect}
	lie := pkt{typ: typeConnect, flags: flagAck, seq: 1, supported: 4, maxSubstream: 1}
	lie.src, lie.dst = c.remotePort, c.localPort
	b, err := c.codec.appendPacket(nil, &lie, keys{connSig: c.sigIn})
	if err != nil {
		t.Fatal(err)
	}
	var q pkt
	if _, err := c.codec.parse(b, &q); err != nil {
		t.Fatal(err)
	}
	q.raw = b
	c.clientHandshake(pair.now, &q)
	if c.state != stateClosed || !errors.Is(c.err, ErrHandshake) {
		t.Fatalf("state %d err %v, want a failed handshake", c.state, c.err)
	}
}

// TestDelayedAckRidesWithData: on V1 a lone acknowledgement waits (AckDelay)
// for our next packet and shares its datagram; without one it goes out when
// the delay expires.
func TestDelayedAckRidesWithData(t *testing.T) {
	p := newManualPair(t, Config{AccessKey: testKey, AckDelay: 2 * time.Millisecond})
	ssh, csh := p.sep.shards[0], p.cep.shards[0]
	// The server sends a message; the client receives it and owes an ACK.
	_ = p.server.send(p.now, 0, []byte("response"))
	ssh.flushWrites()
	for _, o := range p.scap.out {
		p.cep.handleDatagram(csh, p.now, o.b, p.scap.addr)
	}
	p.scap.out = p.scap.out[:0]
	csh.flushAcks(p.now)
	if len(p.ccap.out) != 0 {
		t.Fatalf("the ACK went out alone at once (%d datagrams)", len(p.ccap.out))
	}
	// The client's next request carries it.
	_ = p.client.send(p.now, 0, []byte("request"))
	csh.flushAcks(p.now)
	if len(p.ccap.out) != 1 {
		t.Fatalf("%d datagrams, want request and ACK in one", len(p.ccap.out))
	}
	b := p.ccap.out[0].b
	var first, second pkt
	n, err := p.cep.codec.parse(b, &first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.cep.codec.parse(b[n:], &second); err != nil {
		t.Fatalf("one packet in the datagram: %v", err)
	}
	if !(first.has(flagReliable) && (second.has(flagAck) || second.has(flagMultiAck))) {
		t.Fatalf("datagram holds %s %#x and %s %#x", typeName(first.typ), first.flags, typeName(second.typ), second.flags)
	}
	p.ccap.out = p.ccap.out[:0]
	// Without a packet to ride on, the ACK leaves when the delay expires.
	_ = p.server.send(p.now, 0, []byte("another"))
	ssh.flushWrites()
	for _, o := range p.scap.out {
		p.cep.handleDatagram(csh, p.now, o.b, p.scap.addr)
	}
	p.scap.out = p.scap.out[:0]
	csh.flushAcks(p.now)
	if len(p.ccap.out) != 0 {
		t.Fatal("ACK not delayed")
	}
	later := p.now.Add(2 * time.Millisecond)
	if d := p.client.nextDeadline(); d.After(later) {
		t.Fatalf("next deadline %v after the ACK delay", d.Sub(p.now))
	}
	p.client.tick(later)
	csh.flushAcks(later)
	if len(p.ccap.out) != 1 {
		t.Fatalf("%d datagrams after the delay, want the ACK", len(p.ccap.out))
	}
}

// TestUnreliableNeedAckAcknowledgedAlone: an unreliable DATA with NEED_ACK
// gets an ACK of its own; its sequence id never enters an aggregate ACK of
// the reliable substream, where it could acknowledge the wrong packet.
func TestUnreliableNeedAckAcknowledgedAlone(t *testing.T) {
	p := newManualPair(t, Config{AccessKey: testKey})
	acks := p.rawToServer(t, &pkt{typ: typeData, flags: flagNeedAck, seq: 7, payload: []byte("u")})
	if len(acks) != 1 || acks[0].has(flagMultiAck) || !acks[0].has(flagAck) || acks[0].seq != 7 {
		t.Fatalf("acks %+v", acks)
	}
	if len(p.server.conn.inbox) != 1 || !p.server.conn.inbox[0].Unreliable {
		t.Fatalf("inbox %+v", p.server.conn.inbox)
	}
}
