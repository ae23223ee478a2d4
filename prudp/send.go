package prudp

// Sending: messages queued per substream, cut into fragments while the
// window allows, sealed by the payload transform, kept until acknowledged
// and retransmitted.

import (
	"fmt"
	"time"
)

// outPacket is a reliable packet waiting for its acknowledgement. Its bytes
// are encoded (encrypted, signed) once and resent as they are.
type outPacket struct {
	seq       uint16
	substream uint8
	typ       uint8
	buf       []byte
	deadline  time.Time
	retries   int       // retransmissions, fast or timed out (Karn's rule)
	timeouts  int       // retransmissions on a timeout: back-off and MaxRetransmits
	skipped   int       // acknowledgements of packets sent after this one's last transmission
	tx        uint64    // order of its last transmission on the session (see ackOne)
	lastSent  time.Time // its last transmission (the only one while retries is 0: the RTT sample)
	size      int       // message bytes it carries, for the send-queue accounting
}

// send queues a reliable message on a substream (or the DISCONNECT marker).
func (s *session) send(now time.Time, sub uint8, data []byte) error {
	return s.enqueue(now, sub, sendItem{data: data})
}

// sendOwned is send for a buffer of the shard's message buffers (an inline
// handler's reply): it goes back to them once its last fragment is sealed.
func (s *session) sendOwned(now time.Time, sub uint8, data []byte) error {
	return s.enqueue(now, sub, sendItem{data: data, owned: true})
}

func (s *session) enqueue(now time.Time, sub uint8, item sendItem) error {
	if int(sub) >= len(s.streams) {
		return fmt.Errorf("%w: %d (negotiated maximum %d)", ErrBadSubstream, sub, s.maxSubstream)
	}
	st := &s.streams[sub]
	if st.qHead > 1024 && 2*st.qHead > len(st.queue) {
		// Slide a long backlog down so the array does not grow forever.
		n := copy(st.queue, st.queue[st.qHead:])
		clear(st.queue[n:])
		st.queue, st.qHead = st.queue[:n], 0
	}
	st.queue = append(st.queue, item)
	s.pump(now)
	return nil
}

// pump sends queued fragments while the window allows.
func (s *session) pump(now time.Time) {
	if s.state != stateEstablished && s.state != stateClosing {
		return
	}
	for s.inflight < s.cwnd {
		sent := false
		for i := range s.streams {
			if s.inflight >= s.cwnd {
				break
			}
			st := &s.streams[i]
			// The window also bounds the span of sequence ids from the oldest
			// unacknowledged packet, so that a packet stuck in loss never lets
			// the sender run past the receiver's reorder buffer.
			if len(st.inflight) > 0 && seqDiff(st.inflight[0].seq, st.sendSeq) >= s.cwnd {
				continue
			}
			if s.sendFragment(now, st) {
				sent = true
			}
		}
		if !sent {
			break
		}
	}
	if s.closeReq && s.state == stateEstablished && s.idle() {
		s.sendDisconnect(now)
	}
}

// idle reports whether nothing is queued or in flight.
func (s *session) idle() bool {
	for i := range s.streams {
		if s.streams[i].qHead < len(s.streams[i].queue) || len(s.streams[i].inflight) > 0 {
			return false
		}
	}
	return true
}

// sendFragment sends the next fragment of st's queue, if any.
func (s *session) sendFragment(now time.Time, st *substream) bool {
	if st.qHead == len(st.queue) {
		return false
	}
	item := &st.queue[st.qHead]
	rest := item.data[st.queuePos:]
	chunk := s.xf.room()
	frag := uint32(0)
	if len(rest) > chunk {
		rest = rest[:chunk]
		if st.nextFrag == 0 {
			st.nextFrag = 1
		}
		frag = st.nextFrag
		st.nextFrag++
		if st.nextFrag > s.dialect.fragMax {
			st.nextFrag = 1 // ids 1..fragMax, then wrap past the terminator id 0
		}
	}
	st.queuePos += len(rest)
	var done sendItem // the message whose last fragment this is
	if frag == 0 {
		done = *item
		st.queue[st.qHead] = sendItem{}
		st.qHead++
		if st.qHead == len(st.queue) {
			// Empty: keep a small backing array for the next message, let a
			// large one (after a burst) go.
			st.qHead = 0
			st.queue = st.queue[:0]
			if cap(st.queue) > 64 {
				st.queue = nil
			}
		}
		st.queuePos, st.nextFrag = 0, 0
	}
	payload := s.xf.sealReliable(s.sh.payloadBuf[:0], rest, st.id, st.sendSeq)
	s.sh.payloadBuf = payload
	if done.owned {
		s.sh.msgs.put(done.data)
	}
	p := pkt{typ: typeData, flags: flagReliable | flagNeedAck, substream: st.id, seq: st.sendSeq, fragment: frag, payload: payload}
	s.transmitNew(now, st, &p, len(rest))
	return true
}

// transmitNew sends a new reliable packet and keeps it until acknowledged.
func (s *session) transmitNew(now time.Time, st *substream, p *pkt, size int) {
	st.sendSeq++
	b, err := s.write(now, p)
	if err != nil {
		s.fail(now, fmt.Errorf("prudp: encoding %s: %w", typeName(p.typ), err))
		return
	}
	o := s.sh.getOut()
	s.tx++
	*o = outPacket{seq: p.seq, substream: st.id, typ: p.typ, buf: append(s.sh.getBuf(), b...), lastSent: now, size: size, tx: s.tx}
	o.deadline = now.Add(s.rtt.rto())
	st.inflight = append(st.inflight, o)
	s.inflight++
}

// retransmit resends o: on a timeout with its timer backed off, or fast
// (three later packets acknowledged) with a fresh timer.
func (s *session) retransmit(now time.Time, o *outPacket, fast bool) {
	o.retries++
	if !fast {
		o.timeouts++
	}
	o.skipped = 0
	s.tx++
	o.tx, o.lastSent = s.tx, now
	if fast {
		o.deadline = now.Add(s.rtt.recheck())
	} else {
		o.deadline = now.Add(s.rtt.backoff(o.timeouts))
	}
	s.sh.writeTo(o.buf, s.peer)
	s.lastSend = now
	s.conn.stats.retransmits.Add(1)
	s.conn.stats.packetsOut.Add(1)
	s.conn.stats.bytesOut.Add(uint64(len(o.buf)))
	// Multiplicative decrease, at most once per round trip: the losses of
	// one window are one congestion event.
	if now.Sub(s.lastShrink) > s.rtt.srtt {
		s.cwnd = max(s.cwnd/2, 2)
		s.lastShrink = now
	}
}

// sendDisconnect starts a graceful close: a reliable DISCONNECT on
// substream 0, acknowledged (three times) by the peer.
func (s *session) sendDisconnect(now time.Time) {
	st := &s.streams[0]
	s.state = stateClosing
	p := pkt{typ: typeDisconnect, flags: flagReliable | flagNeedAck, seq: st.sendSeq}
	s.transmitNew(now, st, &p, 0)
}

// sendUnreliable sends one unreliable DATA packet with its per-packet key.
func (s *session) sendUnreliable(now time.Time, data []byte) error {
	seq := s.unrelSendSeq
	payload, err := s.xf.sealUnreliable(s.sh.payloadBuf[:0], data, seq, s.localSID)
	if err != nil {
		return err
	}
	s.unrelSendSeq++
	s.sh.payloadBuf = payload
	p := pkt{typ: typeData, seq: seq, payload: payload}
	_, err = s.write(now, &p)
	return err
}
