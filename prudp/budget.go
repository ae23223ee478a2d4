package prudp

// The memory budget: what a connection holds of received data before the
// application sees it (early packets in the reorder buffers, the fragments
// of unfinished messages) is counted in bytes, bounded per connection
// (Config.MaxReorderBytes, Config.MaxUnfinishedBytes) and, over all the
// connections of an endpoint, by Config.MaxBuffer. See docs/security.md,
// "PRUDP engine".

import "time"

// heldOverhead is what the reorder buffer's map costs per held packet
// beyond the payload: the entry (key, type, fragment id, slice header) and
// its share of the buckets.
const heldOverhead = 64

// bufferingCost is what handling p would add to the session's held bytes:
// an early packet is copied into the reorder buffer; an in-order fragment
// other than a message's last grows its unfinished message by what the
// reassembler allocates for it (its inflated size is bounded by
// maxInflated when payloads are compressed). Packets that complete a
// message, or carry none, cost nothing and are never refused by the
// budget, so a connection can always finish what it holds.
func (s *session) bufferingCost(st *substream, d int, p *pkt) int {
	switch {
	case d > 0:
		return len(p.payload) + heldOverhead
	case p.typ == typeData && p.fragment != 0:
		n := len(p.payload)
		if s.xf.inflatesAtDelivery() {
			n = max(n, maxInflated)
		}
		return st.reasm.growth(n)
	}
	return 0
}

// admit decides whether the session may buffer n more bytes for a packet
// d ahead of the next expected one. A refused packet is dropped
// unacknowledged (the peer resends it). The endpoint's total never passes
// MaxBuffer: once it would, a session holding more than an equal share is
// refused, and closed (ErrOverBudget) if still refused BudgetGrace after
// its first refusal; a session holding less is refused this once while the
// session of its shard holding the most, if above its share, is closed to
// make room, so that the connections holding the most make way for the
// others even when they have gone quiet.
func (s *session) admit(now time.Time, d, n int) bool {
	if d > 0 && s.reorderBytes+n > s.cfg.MaxReorderBytes {
		s.conn.stats.drop(dropReorderBytes)
		return false
	}
	ep := s.sh.ep
	budget := int64(s.cfg.MaxBuffer)
	if ep.buffered.Load()+int64(n) <= budget {
		s.budgetRefused = time.Time{}
		return true
	}
	s.conn.stats.drop(dropBudget)
	share := budget / max(ep.sessionsOpen.Load(), 1)
	if int64(s.reorderBytes+s.unfinishedBytes+n) <= share {
		if h := s.sh.heaviest(); h != nil && h != s && int64(h.held()) > share {
			h.closeOverBudget(now, share)
		}
		return false
	}
	if s.budgetRefused.IsZero() {
		s.budgetRefused = now
		return false
	}
	if now.Sub(s.budgetRefused) >= s.cfg.BudgetGrace {
		s.closeOverBudget(now, share)
	}
	return false
}

// held is what the session holds of the budget: its reorder buffers and
// unfinished messages, and its connection's queues (messages to send not
// yet acknowledged, received messages not yet taken).
func (s *session) held() int { return s.reorderBytes + s.unfinishedBytes + s.conn.budgetHeld() }

// makeRoom, once the session has queued an answer within its share of a
// spent budget, closes the session of its shard holding the most if that
// one holds more than its share, as admit does for received data: a peer
// that acknowledges nothing makes way.
func (s *session) makeRoom(now time.Time) {
	ep := s.sh.ep
	budget := int64(s.cfg.MaxBuffer)
	if ep.buffered.Load() <= budget {
		return
	}
	share := budget / max(ep.sessionsOpen.Load(), 1)
	if h := s.sh.heaviest(); h != nil && h != s && int64(h.held()) > share {
		h.closeOverBudget(now, share)
	}
}

// inboxOverBudget reports whether the endpoint's budget is spent while the
// session holds more than an equal share of it; more received messages
// are then refused, unacknowledged, until the application takes some.
func (s *session) inboxOverBudget() bool {
	ep := s.sh.ep
	budget := int64(s.cfg.MaxBuffer)
	if ep.buffered.Load() <= budget {
		return false
	}
	return int64(s.held()) > budget/max(ep.sessionsOpen.Load(), 1)
}

// closeOverBudget ends the session with ErrOverBudget, freeing what it holds.
func (s *session) closeOverBudget(now time.Time, share int64) {
	s.sh.ep.budgetClosed.Add(1)
	s.cfg.Logger.Warn("prudp: connection closed: over the buffer budget", "peer", s.peer,
		"held", s.held(), "share", share, "budget", s.cfg.MaxBuffer)
	if s.err == nil {
		s.err = ErrOverBudget
	}
	s.abort(now)
}

// heaviest returns the shard's session holding the most of the budget
// (nil: none holds anything). It walks the shard's sessions, which only a
// full budget makes it do, and each call is followed by freeing more than
// an equal share of the budget.
func (sh *shard) heaviest() *session {
	var h *session
	for _, s := range sh.sessions {
		if s.state < stateLinger && s.held() > 0 && (h == nil || s.held() > h.held()) {
			h = s
		}
	}
	return h
}

// chargeReorder adds n (negative: frees) bytes held in the reorder buffers.
func (s *session) chargeReorder(n int) {
	s.reorderBytes += n
	s.sh.ep.buffered.Add(int64(n))
}

// chargeUnfinished brings the budget up to date with the capacity of st's
// unfinished message, after the reassembler grew, completed or dropped it.
func (s *session) chargeUnfinished(st *substream) {
	c := cap(st.reasm.buf)
	if d := c - st.charged; d != 0 {
		st.charged = c
		s.unfinishedBytes += d
		s.sh.ep.buffered.Add(int64(d))
	}
}
