package prudp

import (
	"encoding/binary"
	"testing"
	"time"
)

// lossPair is a manual pair whose client has a 1 ms round trip measured, for
// driving loss recovery by hand.
func lossPair(t *testing.T) *manualPair {
	t.Helper()
	p := newManualPair(t, Config{AccessKey: testKey, NoEncryption: true})
	for range 8 {
		p.client.rtt.sample(time.Millisecond)
	}
	p.client.cwnd = 64 // room for every packet of the tests despite the loss's halving
	return p
}

// sendSeqs sends one short message per index and returns the client's
// datagrams, one DATA packet each.
func (p *manualPair) sendSeqs(t *testing.T, from, n int) []datagramOut {
	t.Helper()
	for i := from; i < from+n; i++ {
		msg := binary.LittleEndian.AppendUint32(nil, uint32(i))
		p.sendNow(msg)
	}
	out := p.ccap.out
	p.ccap.out = nil
	return out
}

// deliverToServer hands datagrams to the server and its acknowledgements back.
func (p *manualPair) deliverToServer(ds []datagramOut) {
	sh := p.sep.shards[0]
	for _, d := range ds {
		p.sep.handleDatagram(sh, p.now, d.b, p.ccap.addr)
	}
	sh.flushAcks(p.now)
	sh.flushWrites()
	csh := p.cep.shards[0]
	for _, d := range p.scap.out {
		p.cep.handleDatagram(csh, p.now, d.b, p.scap.addr)
	}
	p.scap.out = p.scap.out[:0]
	csh.flushAcks(p.now)
}

// TestLostRetransmissionRecovered: a packet lost, then its fast
// retransmission lost too, is resent a couple of round trips later (not
// after the 50 ms timeout floor), and every message arrives in order.
func TestLostRetransmissionRecovered(t *testing.T) {
	p := lossPair(t)
	first := p.sendSeqs(t, 0, 10)
	p.deliverToServer(first[1:]) // the first is lost; nine later ones acknowledged
	if got := p.client.conn.Stats().Retransmits; got != 1 {
		t.Fatalf("%d retransmissions after three later acknowledgements, want 1 (fast)", got)
	}
	p.cep.shards[0].flushWrites()
	p.ccap.out = p.ccap.out[:0] // the fast retransmission is lost too

	// Three more acknowledgements of packets sent at the same moment as the
	// retransmission say nothing about it (reordering window).
	p.deliverToServer(p.sendSeqs(t, 10, 3))
	if got := p.client.conn.Stats().Retransmits; got != 1 {
		t.Fatalf("%d retransmissions after acknowledgements of packets sent with the retransmission, want 1", got)
	}

	// Some round trips later, well under MinRTO (50 ms; and the 100 ms a
	// timeout retransmission would wait), it is resent.
	p.now = p.now.Add(10 * time.Millisecond)
	p.client.tick(p.now)
	p.cep.shards[0].flushWrites()
	if got := p.client.conn.Stats().Retransmits; got != 2 {
		t.Fatalf("%d retransmissions 10 ms after a lost fast retransmission (RTT 1 ms), want 2", got)
	}
	p.deliverToServer(p.ccap.out)
	p.ccap.out = nil
	in := p.server.conn.inbox
	if len(in) != 13 {
		t.Fatalf("server received %d messages, want 13", len(in))
	}
	for i, m := range in {
		if got := binary.LittleEndian.Uint32(m.Data); got != uint32(i) {
			t.Fatalf("message %d is %d: out of order", i, got)
		}
	}
	if n := len(p.client.streams[0].inflight); n != 0 {
		t.Errorf("%d packets still in flight", n)
	}
}

// TestLostRetransmissionByLaterAcks: acknowledgements of packets sent a
// quarter of a round trip or more after a lost fast retransmission resend it
// at once, before its timer.
func TestLostRetransmissionByLaterAcks(t *testing.T) {
	p := lossPair(t)
	first := p.sendSeqs(t, 0, 10)
	p.deliverToServer(first[1:])
	p.cep.shards[0].flushWrites()
	p.ccap.out = p.ccap.out[:0] // the fast retransmission is lost
	p.now = p.now.Add(500 * time.Microsecond)
	p.deliverToServer(p.sendSeqs(t, 10, 3))
	if got := p.client.conn.Stats().Retransmits; got != 2 {
		t.Fatalf("%d retransmissions after three acknowledgements of packets sent half a round trip later, want 2", got)
	}
	p.cep.shards[0].flushWrites()
	p.deliverToServer(p.ccap.out)
	p.ccap.out = nil
	if got := len(p.server.conn.inbox); got != 13 {
		t.Fatalf("server received %d messages, want 13", got)
	}
}

// TestLossEventShrinksWindowOnce: the losses of one window halve the send
// window once, not once per lost packet.
func TestLossEventShrinksWindowOnce(t *testing.T) {
	p := lossPair(t)
	out := p.sendSeqs(t, 0, 40)
	var kept []datagramOut
	for i, d := range out {
		if i%4 != 0 { // lose every fourth
			kept = append(kept, d)
		}
	}
	p.deliverToServer(kept)
	st := p.client.conn.Stats()
	if st.Retransmits < 5 {
		t.Fatalf("%d fast retransmissions for 10 losses", st.Retransmits)
	}
	if p.client.cwnd < 32 {
		t.Fatalf("window %d after one window's losses, want about 64/2 plus growth", p.client.cwnd)
	}
}
