package prudp

// Timers: retransmission, keepalive, dead-peer detection and lingering,
// driven by the shard with the current time.

import (
	"fmt"
	"time"
)

// tick runs the timers: retransmissions, keepalive, dead-peer detection,
// lingering. It returns the next time it must run.
func (s *session) tick(now time.Time) {
	switch s.state {
	case stateClosed:
		return
	case stateLinger:
		if !now.Before(s.lingerTill) {
			s.state = stateClosed
			s.sh.remove(s)
		}
		return
	case stateSynSent, stateConnecting:
		if s.hs != nil && !now.Before(s.hs.deadline) {
			if s.hs.retries >= s.cfg.MaxRetransmits {
				s.fail(now, fmt.Errorf("%w: no answer to %s after %d retransmissions", ErrHandshake, typeName(s.hs.typ), s.hs.retries))
				return
			}
			s.hs.retries++
			s.hs.deadline = now.Add(s.rtt.backoff(s.hs.retries))
			s.sh.writeTo(s.hs.buf, s.peer)
			s.conn.stats.retransmits.Add(1)
		}
		return
	}
	if s.ackDelayed && !now.Before(s.ackDue) {
		s.flushAcks(now)
	}
	if now.Sub(s.lastRecv) >= s.cfg.IdleTimeout {
		s.fail(now, fmt.Errorf("%w: nothing received for %v", ErrPeerDead, now.Sub(s.lastRecv).Round(time.Millisecond)))
		return
	}
	for i := range s.streams {
		st := &s.streams[i]
		for _, o := range st.inflight {
			if now.Before(o.deadline) {
				continue
			}
			if o.timeouts >= s.cfg.MaxRetransmits {
				s.fail(now, fmt.Errorf("%w: %s seq %d on substream %d unacknowledged after %d timeouts (%d retransmissions)", ErrTimeout, typeName(o.typ), o.seq, st.id, o.timeouts, o.retries))
				return
			}
			s.retransmit(now, o, false)
		}
	}
	if s.cfg.MaxUnansweredPings > 0 {
		// A PING every KeepAlive, busy or not (a dialect default); the
		// connection is dead once MaxUnansweredPings in a row went unanswered.
		if s.lastPing.IsZero() {
			s.lastPing = s.created
		}
		if now.Sub(s.lastPing) >= s.cfg.KeepAlive {
			if s.pingsUnanswered >= s.cfg.MaxUnansweredPings {
				s.fail(now, fmt.Errorf("%w: %d PINGs in a row unanswered", ErrPeerDead, s.pingsUnanswered))
				return
			}
			s.sendPing(now)
			s.lastPing = now
			s.pingsUnanswered++
		}
	} else if now.Sub(s.lastSend) >= s.cfg.KeepAlive {
		s.sendPing(now)
	}
	s.pump(now)
}

func (s *session) sendPing(now time.Time) {
	p := pkt{typ: typePing, flags: flagNeedAck, seq: s.pingSeq}
	s.pingSeq++
	_, _ = s.write(now, &p)
}

// nextDeadline computes when tick must run next.
func (s *session) nextDeadline() time.Time {
	switch s.state {
	case stateClosed:
		return time.Time{}
	case stateLinger:
		return s.lingerTill
	case stateSynSent, stateConnecting:
		if s.hs != nil {
			return s.hs.deadline
		}
		return time.Time{}
	}
	d := s.lastRecv.Add(s.cfg.IdleTimeout)
	ping := s.lastSend
	if s.cfg.MaxUnansweredPings > 0 {
		ping = s.lastPing
		if ping.IsZero() {
			ping = s.created
		}
	}
	if k := ping.Add(s.cfg.KeepAlive); k.Before(d) {
		d = k
	}
	if s.ackDelayed && s.ackDue.Before(d) {
		d = s.ackDue
	}
	for i := range s.streams {
		for _, o := range s.streams[i].inflight {
			if o.deadline.Before(d) {
				d = o.deadline
			}
		}
	}
	return d
}

// publish copies the RTT estimate and window into the Conn's counters.
func (s *session) publish() {
	st := &s.conn.stats
	st.srtt.Store(int64(s.rtt.srtt))
	st.rttvar.Store(int64(s.rtt.rttvar))
	st.latest.Store(int64(s.rtt.latest))
	st.rto.Store(int64(s.rtt.rto()))
	st.samples.Store(s.rtt.samples)
	st.window.Store(int64(s.cwnd))
}
