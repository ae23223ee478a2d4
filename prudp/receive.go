package prudp

// Receiving: one verified packet of a session, ordered, opened by the
// payload transform, reassembled and delivered.

import (
	"fmt"
	"time"
)

// handle processes one verified packet addressed to this session.
func (s *session) handle(now time.Time, p *pkt) {
	s.lastRecv = now
	s.conn.stats.packetsIn.Add(1)
	s.conn.stats.bytesIn.Add(uint64(len(p.raw)))
	if s.state == stateClosed {
		return
	}
	if s.connectB != nil && p.typ != typeConnect {
		s.connectB = nil // the client has our CONNECT-ACK
	}
	if s.state == stateLinger {
		if p.typ == typeDisconnect && p.has(flagNeedAck) {
			s.queueAck(typeDisconnect, p.substream, p.seq, 0, 3)
			// The peer is still retransmitting: our acknowledgements were
			// lost, and its next retransmission comes after a backoff twice
			// as long as the last; linger that much longer too.
			if s.lingerN < 8 {
				s.lingerN++
			}
			s.lingerTill = now.Add(s.lingerTime())
		}
		return
	}
	if s.dialect.multiAck && p.has(flagMultiAck) {
		// "Multi Ack" in the Hyperscape "PRUDP" wiki page: no aggregate
		// acknowledgements here; a packet needing an ACK with this flag is
		// answered with ACK and MULTI_ACK both set.
		p.flags &^= flagMultiAck
		if !p.has(flagAck) {
			s.multiAck = true
			defer func() { s.multiAck = false }()
		}
	}
	if p.has(flagAck) || p.has(flagMultiAck) {
		s.handleAck(now, p)
		return
	}
	switch p.typ {
	case typeSyn:
		// A retransmitted SYN on an established connection: the server answers
		// SYNs statelessly in the shard, so nothing reaches here.
	case typeConnect:
		if !s.client && s.connectB != nil {
			// Our CONNECT-ACK was lost: send the same one again.
			s.sh.writeTo(s.connectB, s.peer)
			s.conn.stats.duplicates.Add(1)
		}
	case typeData:
		if p.has(flagReliable) {
			s.handleReliable(now, p)
		} else {
			s.handleUnreliable(now, p)
		}
	case typeUser:
		// The USER stage (dialectSpec.userStage): acknowledged, nothing to deliver. A
		// reliable USER takes its place in the ordering.
		if p.has(flagReliable) {
			s.handleReliable(now, p)
		} else if p.has(flagNeedAck) {
			s.queueAck(typeUser, 0, p.seq, 0, 1)
		}
	case typePing:
		if p.has(flagReliable) {
			// NintendoClients numbers its PINGs on substream 0's reliable
			// counter; they must pass through ordering or the window stalls.
			s.handleReliable(now, p)
		} else if p.has(flagNeedAck) {
			s.queueAck(typePing, 0, p.seq, 0, 1)
		}
	case typeDisconnect:
		switch {
		case p.has(flagReliable):
			s.handleReliable(now, p)
		case p.has(flagNeedAck):
			s.queueAck(typeDisconnect, p.substream, p.seq, 0, 3)
			s.peerClosed(now, ErrPeerClosed)
		default:
			s.fail(now, ErrPeerReset)
		}
	default:
		s.conn.stats.drop(dropType)
	}
}

func (s *session) substreamOf(p *pkt) (*substream, bool) {
	if int(p.substream) >= len(s.streams) {
		s.conn.stats.drop(dropSubstream)
		return nil, false
	}
	return &s.streams[p.substream], true
}

// handleReliable orders a reliable packet: in-order packets are delivered at
// once along with whatever they unblock, early ones are held in the bounded
// reorder buffer, duplicates are dropped but acknowledged again (the earlier
// ACK may be what was lost).
func (s *session) handleReliable(now time.Time, p *pkt) {
	st, ok := s.substreamOf(p)
	if !ok {
		return
	}
	times := uint8(1)
	if p.typ == typeDisconnect {
		times = 3
	}
	d := seqDiff(st.recvNext, p.seq)
	switch {
	case d < 0:
		s.conn.stats.duplicates.Add(1)
		s.queueAck(p.typ, p.substream, p.seq, p.fragment, times)
		return
	case d >= s.cfg.ReorderWindow:
		s.conn.stats.drop(dropWindow)
		return
	case p.typ == typeData && s.conn.inboxBytes.Load() > int64(s.cfg.MaxRecvQueue):
		// Receive-side flow control: refuse, unacknowledged, until the
		// application reads; the peer's retransmissions bring it back.
		s.conn.stats.drop(dropRecvQueue)
		return
	}
	if p.typ == typeData && s.conn.inboxBytes.Load() > 0 && s.inboxOverBudget() {
		// The application is behind on this connection and it holds more
		// than its share of a full budget: as above, until it reads.
		s.conn.stats.drop(dropBudget)
		return
	}
	if p.typ == typeData && !s.openArrival(p) {
		return // refused unacknowledged: an intact copy may still come
	}
	if n := s.bufferingCost(st, d, p); n > 0 && !s.admit(now, d, n) {
		return // refused unacknowledged: the peer resends it
	}
	if p.has(flagNeedAck) {
		s.queueAck(p.typ, p.substream, p.seq, p.fragment, times)
	}
	if d > 0 {
		if st.reorder == nil {
			st.reorder = make(map[uint16]heldPacket)
		}
		if _, dup := st.reorder[p.seq]; dup {
			s.conn.stats.duplicates.Add(1)
			return
		}
		held := append([]byte(nil), p.payload...)
		st.reorder[p.seq] = heldPacket{typ: p.typ, fragment: p.fragment, payload: held}
		s.chargeReorder(cap(held) + heldOverhead)
		s.conn.stats.reordered.Add(1)
		return
	}
	s.deliverReliable(now, st, p.typ, p.fragment, p.payload)
	st.recvNext++
	for len(st.reorder) > 0 && s.state != stateClosed {
		h, ok := st.reorder[st.recvNext]
		if !ok {
			break
		}
		delete(st.reorder, st.recvNext)
		s.chargeReorder(-cap(h.payload) - heldOverhead)
		s.deliverReliable(now, st, h.typ, h.fragment, h.payload)
		st.recvNext++
	}
}

// deliverReliable decrypts, decompresses and reassembles one in-order packet.
// payload may be modified in place.
func (s *session) deliverReliable(now time.Time, st *substream, typ uint8, fragment uint32, payload []byte) {
	switch typ {
	case typePing:
		return
	case typeDisconnect:
		s.peerClosed(now, ErrPeerClosed)
		return
	case typeData:
	default:
		return
	}
	// The rest of a refused message is deciphered (the stream cipher must
	// advance) but not inflated: its bytes would be thrown away.
	inflate := !st.reasm.skipping
	payload, err := s.xf.openReliable(payload, st.id, inflate)
	if !inflate {
		_, _ = st.reasm.add(fragment, nil)
		s.chargeUnfinished(st)
		return
	}
	if err != nil {
		s.conn.stats.drop(dropDecompress)
		s.cfg.Logger.Warn("prudp: bad compressed payload", "peer", s.peer, "substream", st.id, "err", err)
		// The stream is ordered: a lost fragment would corrupt the message,
		// so refuse the message being built.
		st.reasm.reset(fragment != 0)
		s.chargeUnfinished(st)
		return
	}
	msg, err := st.reasm.add(fragment, payload)
	s.chargeUnfinished(st)
	if err == nil && msg == nil && st.charged > 0 && s.unfinishedBytes > s.cfg.MaxUnfinishedBytes {
		st.reasm.reset(true)
		s.chargeUnfinished(st)
		s.conn.stats.drop(dropUnfinished)
		s.cfg.Logger.Warn("prudp: message refused: unfinished messages over the connection's limit", "peer", s.peer,
			"substream", st.id, "limit", s.cfg.MaxUnfinishedBytes)
		return
	}
	if err != nil {
		s.conn.stats.drop(dropReassembly)
		s.cfg.Logger.Warn("prudp: message refused", "peer", s.peer, "substream", st.id, "err", err)
		return
	}
	if msg != nil {
		m := Message{Substream: st.id, Reliable: true, Data: msg}
		if s.serveInline(now, m) {
			s.sh.msgs.put(msg) // the handler no longer holds it
			return
		}
		s.conn.deliver(m)
	}
}

// serveInline offers a complete message to the connection's InlineHandler
// on the shard goroutine and sends its reply. It reports whether the
// handler took the message; if not, the caller delivers it.
func (s *session) serveInline(now time.Time, m Message) bool {
	c := s.conn
	h := c.inline
	if h == nil {
		return false
	}
	ep := s.sh.ep
	if ep.inlineOff.Load() {
		c.inline = nil
		return false
	}
	c.mu.Lock()
	waiting := c.serving || len(c.inbox) > 0 || c.sendsQueued.Load() > 0
	c.mu.Unlock()
	if waiting {
		// After the messages ServePRUDP has yet to see, and after the
		// answers it queued.
		return false
	}
	start := time.Now()
	reply, ok := h.ServeInline(c, m, s.sh.msgs.get())
	if took := time.Since(start); took > ep.inlineLimit {
		c.inline = nil
		n := ep.inlineOverruns.Add(1)
		if n >= maxInlineOverruns {
			ep.inlineOff.Store(true)
		}
		s.cfg.Logger.Warn("prudp: InlineHandler.ServeInline overran its limit; the connection's messages now go to ServePRUDP",
			"peer", s.peer, "took", took, "limit", ep.inlineLimit, "overruns", n, "server_wide_off", n >= maxInlineOverruns)
	}
	if !ok {
		s.sh.msgs.put(reply)
		return false
	}
	c.stats.messagesIn.Add(1)
	if len(reply) == 0 {
		s.sh.msgs.put(reply)
		return true
	}
	if len(m.Data) > 0 && &reply[0] == &m.Data[0] {
		// Against the contract (the reply must extend dst): send a copy, as
		// m.Data goes back to the buffers when this returns.
		reply = append(s.sh.msgs.get(), reply...)
	}
	if !m.Reliable {
		if err := s.sendUnreliable(now, reply); err != nil {
			s.cfg.Logger.Warn("prudp: inline reply not sent", "peer", s.peer, "err", err)
		} else {
			c.stats.messagesOut.Add(1)
		}
		s.sh.msgs.put(reply)
		return true
	}
	if len(reply) > c.maxMessage {
		s.cfg.Logger.Warn("prudp: inline reply not sent", "peer", s.peer,
			"err", fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooLarge, len(reply), c.maxMessage))
		return true
	}
	c.stats.messagesOut.Add(1)
	if err := c.reserveNow(len(reply)); err != nil {
		c.stats.drop(dropInlineQueue)
		s.sh.msgs.put(reply)
		return true
	}
	s.makeRoom(now)
	_ = s.sendOwned(now, m.Substream, reply)
	return true
}

// openArrival opens a DATA payload as it arrives, for transforms that
// authenticate (AES-CBC with its padding and sequence id suffix), into the shard's buffer, and points p.payload at the fragment. A
// payload that does not open is counted, logged and refused.
func (s *session) openArrival(p *pkt) bool {
	plain, opened, err := s.xf.openArrival(s.sh.plainBuf[:0], p.payload, p.seq)
	if !opened {
		return true // opened in delivery order
	}
	if err != nil {
		s.conn.stats.drop(dropDecrypt)
		s.cfg.Logger.Warn("prudp: DATA payload refused", "peer", s.peer, "seq", p.seq, "err", err)
		return false
	}
	s.sh.plainBuf = plain
	p.payload = plain
	return true
}

// handleUnreliable decrypts an unreliable DATA packet with its own key and
// delivers it at once.
func (s *session) handleUnreliable(now time.Time, p *pkt) {
	if !s.openArrival(p) {
		return
	}
	if p.has(flagNeedAck) {
		s.queueAck(typeData, p.substream, p.seq, p.fragment, 1)
		s.acks[len(s.acks)-1].unreliable = true
	}
	if s.state != stateEstablished && s.state != stateClosing {
		return
	}
	payload, err := s.xf.openUnreliable(p.payload, p.seq, p.sessionID)
	if err != nil {
		s.conn.stats.drop(dropDecompress)
		return
	}
	if s.serveInline(now, Message{Unreliable: true, Data: payload}) {
		return
	}
	s.conn.deliver(Message{Unreliable: true, Data: append([]byte(nil), payload...)})
}

// peerClosed handles the peer's DISCONNECT once every message before it was
// delivered: the acknowledgements are queued; the session lingers long
// enough to acknowledge retransmissions of it.
func (s *session) peerClosed(now time.Time, err error) {
	if s.err == nil {
		s.err = err
	}
	s.release() // the acknowledgements already queued still go out
	s.state = stateLinger
	s.lingerTill = now.Add(s.lingerTime())
	s.conn.finish(s.err)
}

// lingerTime is how long a session closed by its peer stays to acknowledge
// retransmissions of the peer's DISCONNECT: two backed-off timeouts of ours,
// and at least twice the initial timeout, since the peer's may still be that
// (a peer whose handshake was retransmitted has no RTT sample). Every
// retransmission received restarts it, doubled as the peer's backoff
// doubles, up to twice the maximum timeout.
func (s *session) lingerTime() time.Duration {
	base := max(2*s.rtt.backoff(1), 2*s.cfg.InitialRTO)
	d := base << s.lingerN
	if s.cfg.MaxRTO > 0 && d > 2*s.cfg.MaxRTO {
		d = max(base, 2*s.cfg.MaxRTO)
	}
	return d
}
