package matchmaking

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// gapWait is how long notifications of a gathering wait for an earlier change
// whose notifications have not been handed over yet (its handler is between
// commit and notify, or another secure server made it) before going anyway.
const gapWait = 200 * time.Millisecond

// delivery is the notifications of one committed change.
type delivery struct {
	seq    uint64
	events []addressed
}

type addressed struct {
	to []types.PID
	ev notifications.Event
}

// sequencer hands each gathering's notifications to the hub in the order the
// store committed the changes (Change.Seq), whatever order the handlers that
// made them finish in. One goroutine drains a gathering at a time, outside the
// lock, so sends to one gathering never hold up another.
type sequencer struct {
	mu    sync.Mutex
	gaths map[uint32]*gathQueue
}

type gathQueue struct {
	next     uint64 // the seq expected next (0: not known yet)
	pending  map[uint64]delivery
	draining bool
	timer    *time.Timer
	deleted  bool
}

// submit queues d for gathering gid and delivers what is in order. fresh says
// this node had nobody in the gathering before d's change (secure nodes
// sharing a store, remote.go): the changes before it never come here.
func (q *sequencer) submit(ctx context.Context, gid uint32, d delivery, deleted, fresh bool, send func(ctx context.Context, a addressed)) {
	q.mu.Lock()
	if q.gaths == nil {
		q.gaths = make(map[uint32]*gathQueue)
	}
	g := q.gaths[gid]
	if g == nil {
		g = &gathQueue{pending: make(map[uint64]delivery)}
		q.gaths[gid] = g
	}
	if deleted {
		g.deleted = true
	}
	if fresh && g.next != 0 && d.seq > g.next {
		// Deliver what waits below d (arrived out of order), then go on from d.
		for _, older := range sortedBelow(g.pending, d.seq) {
			delete(g.pending, older.seq)
			q.mu.Unlock()
			for _, a := range older.events {
				send(ctx, a)
			}
			q.mu.Lock()
		}
		g.next = d.seq
	}
	if g.next == 0 || d.seq < g.next {
		// First sight of this gathering here (made on this node: seq 1; or on
		// another), or a change older than one delivered already (its wait
		// timed out): deliver it now rather than drop it.
		if g.next == 0 {
			g.next = d.seq
		} else {
			q.mu.Unlock()
			for _, a := range d.events {
				send(ctx, a)
			}
			return
		}
	}
	g.pending[d.seq] = d
	q.drain(ctx, gid, g, send)
}

// drain delivers g's deliveries in order. Called with q.mu held; returns with
// it released.
func (q *sequencer) drain(ctx context.Context, gid uint32, g *gathQueue, send func(ctx context.Context, a addressed)) {
	if g.draining {
		q.mu.Unlock()
		return
	}
	g.draining = true
	for {
		d, ok := g.pending[g.next]
		if !ok {
			break
		}
		delete(g.pending, g.next)
		g.next++
		q.mu.Unlock()
		for _, a := range d.events {
			send(ctx, a)
		}
		q.mu.Lock()
	}
	g.draining = false
	switch {
	case len(g.pending) == 0 && g.deleted:
		if g.timer != nil {
			g.timer.Stop()
		}
		delete(q.gaths, gid)
	case len(g.pending) > 0 && g.timer == nil:
		// A gap: wait for the missing change, then skip it.
		g.timer = time.AfterFunc(gapWait, func() {
			q.mu.Lock()
			g.timer = nil
			lowest := uint64(0)
			for s := range g.pending {
				if lowest == 0 || s < lowest {
					lowest = s
				}
			}
			if lowest > g.next {
				g.next = lowest
			}
			q.drain(context.WithoutCancel(ctx), gid, g, send)
		})
	}
	q.mu.Unlock()
}

// reason says why a participant left, for the notification type.
type reason int

const (
	reasonCancelled    reason = iota // CancelParticipation: 3002
	reasonEnded                      // EndParticipation, leaving: 3008
	reasonDisconnected               // the connection ended: 3007
)

// events turns a committed change into notifications ("Notification Types" in
// notifications.md). The page sends 3001 to 3008 to the owner; gamewire sends
// them to every remaining participant (the owner included), so that every
// client learns of every membership change within one round trip; 4000,
// 109000 and 110000 go to every participant, as the page says. actor is who
// made the change; msg its message.
func events(c Change, actor types.PID, msg string, why reason, hostChanged bool) []addressed {
	gid := uint64(c.Session.ID)
	var out []addressed
	others := func(except types.PID) []types.PID {
		var to []types.PID
		for _, p := range c.Participants {
			if p.PID != except {
				to = append(to, p.PID)
			}
		}
		return to
	}
	if c.Deleted {
		to := others(actor)
		if c.Left != nil {
			to = others(c.Left.PID)
		}
		return append(out, addressed{to, notifications.Event{Source: actor, Type: notifications.TypeGatheringUnregistered, Param1: gid}})
	}
	if c.Joined != nil {
		out = append(out, addressed{others(c.Joined.PID), notifications.Event{Source: c.Joined.PID, Type: notifications.TypeNewParticipant,
			Param1: gid, Param2: uint64(c.Joined.PID), StrParam: c.Joined.Message, Param3: uint64(c.Joined.SlotCount())}})
	}
	if c.Left != nil {
		t := notifications.TypeParticipationEnded
		switch why {
		case reasonCancelled:
			t = notifications.TypeParticipationCancelled
		case reasonDisconnected:
			t = notifications.TypeParticipantDisconnected
		}
		out = append(out, addressed{others(c.Left.PID), notifications.Event{Source: c.Left.PID, Type: t,
			Param1: gid, Param2: uint64(c.Left.PID), StrParam: msg}})
	}
	if c.PrevOwner != 0 {
		out = append(out, addressed{others(0), notifications.Event{Source: c.PrevOwner, Type: notifications.TypeOwnershipChanged,
			Param1: gid, Param2: uint64(c.Session.Owner)}})
	}
	if hostChanged {
		out = append(out, addressed{others(0), notifications.Event{Source: c.Session.Host, Type: notifications.TypeHostChanged,
			Param1: gid}})
	}
	return out
}

// sortedBelow returns the pending deliveries with a seq below seq, in order.
func sortedBelow(pending map[uint64]delivery, seq uint64) []delivery {
	var out []delivery
	for s, d := range pending {
		if s < seq {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b delivery) int { return cmp.Compare(a.seq, b.seq) })
	return out
}
