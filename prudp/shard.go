package prudp

import (
	"container/heap"
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/prudp/wire"
)

// demuxKey identifies a connection on a socket: the peer's address and the
// virtual ports on both ends. The session id is checked after the lookup.
type demuxKey struct {
	addr   netip.AddrPort
	local  uint16 // virtual ports, see vport
	remote uint16
}

// event is what reaches a shard's goroutine: a received datagram or a call
// from the API (Send, Close, Dial, ...).
type event struct {
	buf  *[]byte // received datagram (pooled); nil for calls
	n    int
	from netip.AddrPort

	conn  *Conn
	fn    func(now time.Time, s *session) error
	reply chan error

	op   uint8 // opSend, opSendUnreliable: fire-and-forget sends
	sub  uint8
	data []byte
}

const (
	opCall = iota
	opSend
	opSendUnreliable
)

// shard owns a set of connections: their state is touched only by its loop,
// which drains a queue of events, runs the connections' timers from a heap
// (one timer for the whole shard, none per packet or per connection) and
// sends acknowledgements at the end of every batch.
//
// One exception, measured: when the loop is idle and its queue empty, the
// socket reader processes a datagram itself instead of queueing it, which
// saves a goroutine wake-up per datagram. mu makes the two exclusive, so the
// state still has one owner at a time; the loop holds it for every batch.
type shard struct {
	mu     sync.Mutex
	ep     *endpoint
	events chan event
	// pending counts events put into events and not yet handled (it stays
	// above zero between the loop's receive and its taking mu). Work runs
	// inline only when it is zero: an empty channel alone would let a
	// datagram or a send overtake the one the loop has just received.
	pending  atomic.Int64
	sessions map[demuxKey]*session
	timers   timerHeap
	timer    *time.Timer
	stop     chan struct{}
	stopped  chan struct{}

	ackPending []*session
	payloadBuf []byte
	plainBuf   []byte // the fragment being handled, opened on arrival (Hyperscape)
	msgs       msgPool
	ackBuf     []byte
	outBuf     []byte
	freeBufs   [][]byte
	pkt        pkt
	signer     *wire.ConnectionSigner // connection signatures (see connSig)
	outPkt     pkt                    // scratch of session.write
	ackExtra   []uint16               // scratch of session.sendAggregate
	freeOut    []*outPacket

	armed time.Time // when the timer is set to fire
	fired bool      // the timer fired since it was last armed

	batch uint64 // counts batches (see session.ackNow)

	coalesce bool // several packets per datagram (V1)
	pend     []byte
	pendTo   netip.AddrPort

	// The segment run (see rawWrite): datagrams to segTo, every one segSize
	// bytes but the last, which closes the run if shorter (segShort).
	seg      []byte
	segTo    netip.AddrPort
	segSize  int
	segN     int
	segShort bool
	oob      []byte
}

func (sh *shard) getOut() *outPacket {
	if n := len(sh.freeOut); n > 0 {
		o := sh.freeOut[n-1]
		sh.freeOut = sh.freeOut[:n-1]
		return o
	}
	return new(outPacket)
}

func (sh *shard) putOut(o *outPacket) {
	if len(sh.freeOut) < 4096 {
		*o = outPacket{}
		sh.freeOut = append(sh.freeOut, o)
	}
}

func newShard(ep *endpoint, queue int) *shard {
	return &shard{
		ep:       ep,
		coalesce: ep.dialect.coalesces,
		events:   make(chan event, queue),
		sessions: make(map[demuxKey]*session),
		timer:    time.NewTimer(time.Hour),
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
	}
}

// loop is the shard's goroutine.
func (sh *shard) loop() {
	defer close(sh.stopped)
	defer sh.timer.Stop()
	for {
		select {
		case ev := <-sh.events:
			sh.mu.Lock()
			now := time.Now()
			sh.handle(now, ev)
			sh.pending.Add(-1)
			// Drain what else is queued before acknowledging, so that a burst
			// is acknowledged with few (aggregate) packets.
		drain:
			for range 256 {
				select {
				case ev := <-sh.events:
					// A fresh clock per event: RTT samples taken against a stale
					// batch time would shrink towards zero.
					now = time.Now()
					sh.handle(now, ev)
					sh.pending.Add(-1)
				default:
					break drain
				}
			}
			sh.endBatch(now)
			sh.mu.Unlock()
		case <-sh.timer.C:
			sh.mu.Lock()
			sh.fired = true
			now := time.Now()
			for len(sh.timers) > 0 && !now.Before(sh.timers[0].deadline) {
				s := sh.timers[0]
				s.tick(now)
				sh.schedule(s)
				if s.heapIndex >= 0 && !now.Before(s.deadline) {
					// Nothing moved the deadline (it cannot happen by design);
					// never spin on it.
					s.deadline = now.Add(time.Millisecond)
					heap.Fix(&sh.timers, s.heapIndex)
				}
			}
			sh.endBatch(now)
			sh.mu.Unlock()
		case <-sh.stop:
			return
		}
	}
}

// endBatch flushes acknowledgements and re-arms the shard's timer.
func (sh *shard) endBatch(now time.Time) {
	sh.flushAcks(now)
	next := now.Add(time.Hour)
	if len(sh.timers) > 0 {
		next = sh.timers[0].deadline
	}
	// Re-arm only when the earliest deadline moved: most batches leave it be.
	if !next.Equal(sh.armed) || sh.fired {
		sh.armed, sh.fired = next, false
		sh.timer.Reset(max(next.Sub(now), 0))
	}
}

// flushAcks sends the acknowledgements the batch queued.
func (sh *shard) flushAcks(now time.Time) {
	for i := 0; i < len(sh.ackPending); i++ {
		s := sh.ackPending[i]
		if s.ackNow(now) {
			s.flushAcks(now)
		} else {
			// Wait for a packet of ours to carry them, AckDelay at most.
			s.ackQueued = false
			if !s.ackDelayed {
				s.ackDelayed = true
				s.ackDue = now.Add(s.cfg.AckDelay)
			}
		}
		s.publish()
		sh.schedule(s)
	}
	clear(sh.ackPending)
	sh.ackPending = sh.ackPending[:0]
	sh.flushWrites()
	sh.batch++
}

func (sh *shard) handle(now time.Time, ev event) {
	if ev.buf != nil {
		b := (*ev.buf)[:ev.n]
		sh.ep.handleDatagram(sh, now, b, ev.from)
		sh.ep.putDatagram(ev.buf)
		return
	}
	var err error
	if ev.op != opCall {
		c := ev.conn
		defer c.sendsQueued.Add(-1)
		s := c.s
		if s == nil || s.state != stateEstablished {
			if ev.op == opSend {
				c.releaseQueued(len(ev.data))
			}
			return
		}
		c.stats.messagesOut.Add(1)
		if ev.op == opSend {
			err = s.send(now, ev.sub, ev.data)
		} else {
			err = s.sendUnreliable(now, ev.data)
		}
		if err != nil {
			s.cfg.Logger.Warn("prudp: send failed", "peer", s.peer, "err", err)
		}
		sh.schedule(s)
		return
	}
	if ev.conn != nil && ev.conn.s == nil {
		err = ErrClosed
	} else {
		var s *session
		if ev.conn != nil {
			s = ev.conn.s
		}
		err = ev.fn(now, s)
		if s != nil {
			s.publish()
			sh.schedule(s)
		}
	}
	if ev.reply != nil {
		// What the call wrote goes out before the caller learns it ran:
		// Server.Close closes the socket as soon as its Aborts returned, and a
		// forced DISCONNECT still waiting to be coalesced was then lost.
		sh.flushWrites()
		ev.reply <- err
	}
}

// do runs fn on the shard's goroutine with c's session and waits for it.
func (sh *shard) do(ctx context.Context, c *Conn, fn func(now time.Time, s *session) error) error {
	reply := make(chan error, 1)
	sh.pending.Add(1)
	select {
	case sh.events <- event{conn: c, fn: fn, reply: reply}:
	case <-sh.stopped:
		sh.pending.Add(-1)
		return ErrClosed
	case <-ctx.Done():
		sh.pending.Add(-1)
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-sh.stopped:
		return ErrClosed
	}
}

// send runs a Send or SendUnreliable event. When the shard is idle (its
// queue empty, its mutex free) and none of the connection's earlier sends
// still waits in the queue, the calling goroutine runs it to completion
// itself, as the socket reader does with small datagrams: a request then
// costs no goroutine hand-off (and no wake-up of the shard), which is most
// of a small request's CPU on the client side. Otherwise it is queued;
// sh.pending keeps one connection's messages in order across the two paths.
func (sh *shard) send(ctx context.Context, ev event) error {
	ev.conn.sendsQueued.Add(1) // handle takes it off
	if sh.pending.Load() == 0 && sh.mu.TryLock() {
		select {
		case <-sh.stop:
			sh.mu.Unlock()
		default:
			now := time.Now()
			sh.handle(now, ev)
			sh.endBatch(now)
			sh.mu.Unlock()
			return nil
		}
	}
	if err := sh.post(ctx, ev); err != nil {
		ev.conn.sendsQueued.Add(-1)
		if ev.op == opSend {
			ev.conn.releaseQueued(len(ev.data))
		}
		return err
	}
	return nil
}

// post queues an event without waiting for it to run.
func (sh *shard) post(ctx context.Context, ev event) error {
	sh.pending.Add(1)
	select {
	case sh.events <- ev:
		return nil
	case <-sh.stopped:
		sh.pending.Add(-1)
		return ErrClosed
	case <-ctx.Done():
		sh.pending.Add(-1)
		return ctx.Err()
	}
}

// schedule puts s in the timer heap at its next deadline.
func (sh *shard) schedule(s *session) {
	if s.state == stateClosed {
		if s.heapIndex >= 0 {
			heap.Remove(&sh.timers, s.heapIndex)
		}
		return
	}
	s.deadline = s.nextDeadline()
	switch {
	case s.deadline.IsZero() && s.heapIndex >= 0:
		heap.Remove(&sh.timers, s.heapIndex)
	case s.deadline.IsZero():
	case s.heapIndex >= 0:
		heap.Fix(&sh.timers, s.heapIndex)
	default:
		heap.Push(&sh.timers, s)
	}
}

// add registers a new session.
func (sh *shard) add(s *session) {
	sh.sessions[s.key] = s
	sh.ep.sessionsOpen.Add(1)
	sh.schedule(s)
}

// remove forgets a session (called from its own methods).
func (sh *shard) remove(s *session) {
	if cur, ok := sh.sessions[s.key]; ok && cur == s {
		delete(sh.sessions, s.key)
		sh.ep.sessionsOpen.Add(-1)
	}
	if s.heapIndex >= 0 {
		heap.Remove(&sh.timers, s.heapIndex)
	}
	s.conn.s = nil
	if s.client {
		sh.flushWrites() // a last DISCONNECT or ACK goes out before the socket closes
		go s.conn.release()
	}
}

// coalesceLimit bounds a datagram built from several packets: below the
// usual 1500-byte MTU minus IP and UDP headers.
const coalesceLimit = 1400

// writeTo sends one packet. On dialects whose headers carry the payload size
// (V1), packets to the same peer within a batch share a datagram (an echo
// reply and the acknowledgement of its request travel together); the
// datagram goes out when the next packet does not fit or is for another
// peer, and at the end of every batch (flushWrites).
func (sh *shard) writeTo(b []byte, to netip.AddrPort) {
	if !sh.coalesce {
		sh.rawWrite(b, to)
		return
	}
	if len(sh.pend) > 0 && (to != sh.pendTo || len(sh.pend)+len(b) > coalesceLimit) {
		sh.flushPend()
	}
	if len(b) > coalesceLimit {
		sh.rawWrite(b, to)
		return
	}
	sh.pend = append(sh.pend, b...)
	sh.pendTo = to
}

// flushWrites sends the datagram being built and the segment run, if any.
func (sh *shard) flushWrites() {
	sh.flushPend()
	sh.flushSegments()
}

// flushPend ends the datagram being built, if any (rawWrite may still hold
// it back in the segment run).
func (sh *shard) flushPend() {
	if len(sh.pend) > 0 {
		sh.rawWrite(sh.pend, sh.pendTo)
		sh.pend = sh.pend[:0]
	}
}

// getBuf and putBuf recycle the buffers of packets kept for retransmission.
func (sh *shard) getBuf() []byte {
	if n := len(sh.freeBufs); n > 0 {
		b := sh.freeBufs[n-1]
		sh.freeBufs = sh.freeBufs[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 1536)
}

func (sh *shard) putBuf(b []byte) {
	if cap(b) >= 1536 && cap(b) <= 4096 && len(sh.freeBufs) < 4096 {
		sh.freeBufs = append(sh.freeBufs, b[:0])
	}
}

// timerHeap orders sessions by deadline.
type timerHeap []*session

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}
func (h *timerHeap) Push(x any) {
	s := x.(*session)
	s.heapIndex = len(*h)
	*h = append(*h, s)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	s := old[n-1]
	old[n-1] = nil
	s.heapIndex = -1
	*h = old[:n-1]
	return s
}

var datagramPool = sync.Pool{New: func() any { b := make([]byte, maxDatagram); return &b }}

// maxDatagram is the receive buffer size; PRUDP packets stay near 1400 bytes.
const maxDatagram = 4096
