package prudp

// Acknowledgements: queued while a batch is handled and sent at its end
// (aggregated where the dialect and minor version allow), and the peer's
// acknowledgements taking packets out of flight.

import (
	"encoding/binary"
	"time"

	"github.com/gamewire/gamewire/prudp/wire"
)

type ackItem struct {
	typ       uint8
	substream uint8
	seq       uint16
	fragment  uint32
	times     uint8
	multi     bool // answer with ACK and MULTI_ACK (dialectSpec.multiAck)
	// unreliable marks the ACK of an unreliable packet: its sequence id is
	// in another space than the substream's, so it never joins an aggregate.
	unreliable bool
}

// aggregatable reports whether a is a reliable DATA acknowledgement that an
// aggregate ACK can carry.
func (a *ackItem) aggregatable() bool {
	return a.typ == typeData && a.times <= 1 && !a.unreliable && !a.multi
}

// queueAck records an acknowledgement to send at the end of the batch.
func (s *session) queueAck(typ uint8, substream uint8, seq uint16, fragment uint32, times uint8) {
	s.acks = append(s.acks, ackItem{typ: typ, substream: substream, seq: seq, fragment: fragment, times: times, multi: s.multiAck})
	if !s.ackQueued {
		s.ackQueued = true
		s.sh.ackPending = append(s.sh.ackPending, s)
	}
}

// flushAcks sends the queued acknowledgements: aggregated per substream when
// the negotiated minor version allows ("Aggregate acknowledgement" in
// NintendoClients wiki "PRUDP Protocol"; minor 1 the old format, minor 2 and up the new one),
// otherwise one ACK packet each.
func (s *session) flushAcks(now time.Time) {
	s.ackQueued, s.ackDelayed, s.ackDue = false, false, time.Time{}
	if s.state == stateClosed {
		s.acks = s.acks[:0]
		return
	}
	acks := s.acks
	aggregate := s.dialect.negotiates && (s.minor >= 1 || s.dialect.newAcks) && !s.cfg.IndividualAcks
	for i := range acks {
		a := &acks[i]
		if aggregate && a.aggregatable() {
			continue
		}
		for range max(a.times, 1) {
			p := pkt{typ: a.typ, flags: flagAck, substream: a.substream, seq: a.seq, fragment: a.fragment}
			if a.multi {
				p.flags |= flagMultiAck
			}
			_, _ = s.write(now, &p)
			if a.times > 1 {
				// A DISCONNECT is acknowledged three times so that one lost
				// datagram does not lose the acknowledgement: never coalesce
				// the copies into one datagram.
				s.sh.flushWrites()
			}
		}
		s.conn.stats.acksOut.Add(uint64(max(a.times, 1)))
	}
	if aggregate {
		for sub := range s.streams {
			s.sendAggregate(now, uint8(sub), acks)
		}
	}
	s.acks = acks[:0]
}

// ackNow reports whether the queued acknowledgements go out at the end of
// this batch or may wait (AckDelay) for a packet to share a datagram with.
func (s *session) ackNow(now time.Time) bool {
	if s.cfg.AckDelay < 0 || s.wroteIn == s.sh.batch || len(s.acks) >= 2 || s.state != stateEstablished {
		return true
	}
	if !s.ackDue.IsZero() && !now.Before(s.ackDue) {
		return true
	}
	for i := range s.acks {
		if s.acks[i].typ != typeData || s.acks[i].times > 1 {
			return true
		}
	}
	return false
}

// sendAggregate acknowledges every queued DATA ack of one substream in one
// packet: everything up to the last in-order sequence id, plus the ids held
// out of order.
func (s *session) sendAggregate(now time.Time, sub uint8, acks []ackItem) {
	n := 0
	for i := range acks {
		if acks[i].aggregatable() && acks[i].substream == sub {
			n++
		}
	}
	if n == 0 {
		return
	}
	st := &s.streams[sub]
	cum := st.recvNext - 1
	extra := s.sh.ackExtra[:0]
	defer func() { s.sh.ackExtra = extra[:0] }()
	for i := range acks {
		a := &acks[i]
		if a.aggregatable() && a.substream == sub && seqBefore(cum, a.seq) {
			extra = append(extra, a.seq)
		}
	}
	if s.minor < 2 && sub != 0 {
		// The old format has no substream field and peers read it as
		// substream 0: acknowledge other substreams one by one.
		for i := range acks {
			if a := &acks[i]; a.aggregatable() && a.substream == sub {
				ack := pkt{typ: typeData, flags: flagAck, substream: sub, seq: a.seq, fragment: a.fragment}
				_, _ = s.write(now, &ack)
				s.conn.stats.acksOut.Add(1)
			}
		}
		return
	}
	if s.minor < 2 && !s.dialect.newAcks {
		// Old format: the header's sequence id acknowledges everything up to
		// it. The payload, by the spec a list of further ids, carries that
		// same id once: NintendoClients reads an old-format payload as one
		// u16 "acknowledged up to", nex-go as additional ids, and both agree
		// on this. Ids held out of order get ACKs of their own.
		var p pkt
		p.typ, p.flags, p.substream, p.seq = typeData, flagMultiAck, sub, cum
		p.payload = binary.LittleEndian.AppendUint16(s.sh.ackBuf[:0], cum)
		s.sh.ackBuf = p.payload
		_, _ = s.write(now, &p)
		s.conn.stats.acksOut.Add(1)
		for _, q := range extra {
			ack := pkt{typ: typeData, flags: flagAck, substream: sub, seq: q}
			_, _ = s.write(now, &ack)
			s.conn.stats.acksOut.Add(1)
		}
		return
	}
	const maxExtra = 255
	for len(extra) > 0 || n > 0 {
		chunk := extra[:min(len(extra), maxExtra)]
		extra = extra[len(chunk):]
		n = 0
		// New format: header sequence id 0, substream id 1 (how NintendoClients
		// and nex-go tell the formats apart), the real substream in the payload.
		var p pkt
		p.typ, p.flags, p.substream = typeData, flagMultiAck, 1
		buf := append(s.sh.ackBuf[:0], sub, byte(len(chunk)))
		buf = binary.LittleEndian.AppendUint16(buf, cum)
		for _, q := range chunk {
			buf = binary.LittleEndian.AppendUint16(buf, q)
		}
		s.sh.ackBuf = buf
		p.payload = buf
		_, _ = s.write(now, &p)
		s.conn.stats.acksOut.Add(1)
	}
}

// handleAck processes ACK and aggregate-ACK packets.
func (s *session) handleAck(now time.Time, p *pkt) {
	s.conn.stats.acksIn.Add(1)
	switch p.typ {
	case typeSyn, typeConnect:
		// Late duplicates of the handshake acknowledgements.
		return
	case typePing:
		// Keepalive answered; lastRecv is already updated.
		s.pingsUnanswered = 0
	case typeData, typeDisconnect, typeUser:
		if s.state < stateEstablished {
			return
		}
		if p.has(flagMultiAck) {
			s.handleAggregateAck(now, p)
		} else if st, ok := s.substreamOf(p); ok {
			s.ackOne(now, st, p.seq)
		}
	}
	s.pump(now)
	s.publish()
}

// handleAggregateAck reads both formats: the new one (minor >= 2, header
// substream id 1, sequence id 0; NintendoClients' rule) and the old one.
func (s *session) handleAggregateAck(now time.Time, p *pkt) {
	var a wire.AggregateAck
	var err error
	if s.dialect.newAcks || (p.substream == 1 && p.seq == 0) {
		// New format, as nex-go and NintendoClients recognise it: header
		// substream id 1, the real substream in the payload.
		a, err = wire.ParseAggregateAck(p.payload)
	} else {
		a, err = wire.ParseAggregateAckOld(p.payload, p.seq)
		a.SubstreamID = p.substream
	}
	if err != nil {
		s.conn.stats.drop(dropMalformed)
		s.cfg.Logger.Debug("prudp: bad aggregate ACK", "peer", s.peer, "err", err)
		return
	}
	if int(a.SubstreamID) >= len(s.streams) {
		s.conn.stats.drop(dropSubstream)
		return
	}
	st := &s.streams[a.SubstreamID]
	s.ackUpTo(now, st, a.Seq)
	for i := range a.Len() {
		s.ackOne(now, st, a.At(i))
	}
}

// ackUpTo acknowledges every in-flight packet at or before seq.
func (s *session) ackUpTo(now time.Time, st *substream, seq uint16) {
	for len(st.inflight) > 0 && !seqBefore(seq, st.inflight[0].seq) {
		s.ackOne(now, st, st.inflight[0].seq)
	}
}

// ackOne removes an acknowledged packet from flight, takes an RTT sample if
// it was sent only once (Karn's rule), grows the window, and counts the ack
// against older packets still in flight (fast retransmit after three).
func (s *session) ackOne(now time.Time, st *substream, seq uint16) {
	idx := -1
	for i, o := range st.inflight {
		if o.seq == seq {
			idx = i
			break
		}
		if seqBefore(seq, o.seq) {
			break
		}
	}
	if idx < 0 {
		return // duplicate or stale acknowledgement
	}
	o := st.inflight[idx]
	copy(st.inflight[idx:], st.inflight[idx+1:])
	st.inflight[len(st.inflight)-1] = nil
	st.inflight = st.inflight[:len(st.inflight)-1]
	s.inflight--
	if o.retries == 0 {
		s.rtt.sample(now.Sub(o.lastSent))
	}
	if s.cwnd < s.cfg.MaxWindow {
		s.cwnd++
	}
	s.conn.releaseQueued(o.size)
	for i := 0; i < idx && i < len(st.inflight); i++ {
		// An acknowledgement of a packet sent after e's last transmission
		// counts against e; after three, e is taken as lost and resent at
		// once. A retransmission too, since its own loss would otherwise wait
		// for the timeout (50 ms at least) with the window stuck behind it;
		// but then only packets sent a quarter of a round trip after it count
		// (as RACK's reordering window, RFC 8985), so that reordering does
		// not resend it again and again.
		e := st.inflight[i]
		if e.tx > o.tx || (e.retries > 0 && o.lastSent.Sub(e.lastSent) < s.rtt.srtt/4) {
			continue
		}
		e.skipped++
		if e.skipped >= 3 {
			s.retransmit(now, e, true)
		}
	}
	if o.typ == typeDisconnect && s.state == stateClosing {
		s.sh.putBuf(o.buf)
		s.sh.putOut(o)
		s.state = stateClosed
		s.err = ErrClosed
		s.release()
		s.conn.finish(ErrClosed)
		s.sh.remove(s)
		return
	}
	s.sh.putBuf(o.buf)
	s.sh.putOut(o)
}
