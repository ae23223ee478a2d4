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
// an early packet is copied into the reorder buffer, an in-order fragment
// other than a message's last grows its unfinished message. Packets that
// complete a message, or carry none, cost nothing and are never refused by
// the budget, so a connection can always finish what it holds.
func bufferingCost(d int, p *pkt) int {
	switch {
	case d > 0:
		return len(p.payload) + heldOverhead
	case p.typ == typeData && p.fragment != 0:
		return len(p.payload)
	}
	return 0
}

// admit decides whether the session may buffer n more bytes for a packet
// d ahead of the next expected one. A refused packet is dropped
// unacknowledged (the peer resends it). Over the endpoint's budget only a
// session holding more than an equal share is refused, and one still
// refused BudgetGrace after its first refusal is closed (ErrOverBudget).
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
	share := budget / max(ep.sessionsOpen.Load(), 1)
	if int64(s.reorderBytes+s.unfinishedBytes+n) <= share {
		return true
	}
	s.conn.stats.drop(dropBudget)
	if s.budgetRefused.IsZero() {
		s.budgetRefused = now
		return false
	}
	if now.Sub(s.budgetRefused) >= s.cfg.BudgetGrace {
		ep.budgetClosed.Add(1)
		s.cfg.Logger.Warn("prudp: connection closed: over the buffer budget", "peer", s.peer,
			"held", s.reorderBytes+s.unfinishedBytes, "share", share, "budget", budget)
		if s.err == nil {
			s.err = ErrOverBudget
		}
		s.abort(now)
	}
	return false
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
