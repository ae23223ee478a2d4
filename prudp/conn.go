package prudp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Message is one whole message received on a connection.
type Message struct {
	// Substream is the reliable substream it arrived on (0 for unreliable data).
	Substream uint8
	// Reliable is true for messages of a reliable substream.
	Reliable bool
	// Unreliable is true for unreliable DATA; such messages may be lost,
	// duplicated or reordered by the network.
	Unreliable bool
	// Data is the message; the receiver owns it.
	Data []byte
}

// Conn is one PRUDP connection, client or server side. Its methods are safe
// for concurrent use. The connection's protocol state lives in its shard's
// goroutine; Conn only queues requests to it and holds received messages.
type Conn struct {
	s     *session // touched only by the shard goroutine
	sh    *shard
	peer  netip.AddrPort
	srv   *Server
	stats connStats

	mu     sync.Mutex
	inbox  []Message
	err    error // set once the connection ended
	queued int   // bytes queued for sending and not yet acknowledged (charged to the budget until the connection ends)
	// inboxBytes is what received messages not yet taken by Recv or the
	// handler hold (charged to the budget); beyond Config.MaxRecvQueue new
	// data is not accepted.
	inboxBytes atomic.Int64
	maxQueue   int
	serving    bool // a handler goroutine is draining the inbox
	// sendsQueued counts Send and SendUnreliable calls queued to the shard
	// and not yet run: an InlineHandler's answer must not overtake the
	// answers ServePRUDP gave before it.
	sendsQueued atomic.Int64
	readable    chan struct{}
	writable    chan struct{}
	done        chan struct{}

	handler Handler
	// inline is handler as an InlineHandler, nil when it is not one or its
	// calls overran (shard goroutine only).
	inline InlineHandler
	pid    uint64 // the secure connection's user, 0 otherwise

	// fixed once established
	maxSubstream  uint8
	minor         uint8
	maxMessage    int
	maxUnreliable int

	ready         chan struct{} // client: closed once the handshake completed
	closeEndpoint func()        // client: releases the socket and shard
	closeOnce     sync.Once
}

// release frees a client connection's socket and shard once its state is
// gone. It must not run on the shard goroutine (stopping waits for it).
func (c *Conn) release() {
	if c.closeEndpoint != nil {
		c.closeOnce.Do(c.closeEndpoint)
	}
}

// established marks the handshake complete (shard goroutine).
func (c *Conn) established() {
	if c.ready != nil {
		close(c.ready)
	}
}

func newConn(sh *shard, peer netip.AddrPort, maxQueue int) *Conn {
	return &Conn{
		sh:       sh,
		peer:     peer,
		maxQueue: maxQueue,
		readable: make(chan struct{}, 1),
		writable: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
}

// RemoteAddr is the peer's UDP address.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.peer }

// LocalAddr is the local UDP address the connection's packets go out from:
// for a client its own socket's (the port the OS chose, to register with a
// server), for a server connection the server's socket's. It is the zero
// AddrPort if the socket's address is not a UDP address.
func (c *Conn) LocalAddr() netip.AddrPort {
	if ua, ok := c.sh.ep.pc.LocalAddr().(*net.UDPAddr); ok {
		ap := ua.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// MinorVersion is the PRUDP minor version negotiated in the handshake, the
// lower of both sides' ("Supported Functions" in NintendoClients wiki "PRUDP Protocol": from
// minor version 3 on, NEX structures carry a version header, so RMC code
// reads it per connection). NEX V0 negotiates nothing and reports 0.
func (c *Conn) MinorVersion() uint8 { return c.minor }

// PID is the principal id a secure connection's ticket named, 0 otherwise.
func (c *Conn) PID() uint64 { return c.pid }

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (ErrClosed after a local Close,
// ErrPeerClosed, ErrPeerReset, ErrTimeout, ErrPeerDead, ...), or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// deliver appends a received message (shard goroutine).
func (c *Conn) deliver(m Message) {
	c.stats.messagesIn.Add(1)
	c.inboxBytes.Add(int64(len(m.Data)))
	c.sh.ep.buffered.Add(int64(len(m.Data)))
	c.mu.Lock()
	c.inbox = append(c.inbox, m)
	startServe := c.handler != nil && !c.serving
	if startServe {
		c.serving = true
	}
	c.mu.Unlock()
	if startServe {
		go c.serve()
	} else {
		notify(c.readable)
	}
}

// serve hands queued messages to the server's handler in order, then exits;
// no goroutine exists while a connection is idle.
func (c *Conn) serve() {
	for {
		c.mu.Lock()
		if len(c.inbox) == 0 {
			c.serving = false
			c.mu.Unlock()
			return
		}
		m := c.inbox[0]
		c.inbox[0] = Message{}
		c.inbox = c.inbox[1:]
		if len(c.inbox) == 0 {
			c.inbox = nil
		}
		c.mu.Unlock()
		c.took(m)
		c.handler.ServePRUDP(c, m)
	}
}

// finish records the end of the connection (shard goroutine).
func (c *Conn) finish(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	// What is still queued to send is dropped with the connection.
	c.sh.ep.buffered.Add(-int64(c.queued))
	c.queued = 0
	c.mu.Unlock()
	close(c.done)
	notify(c.readable)
	notify(c.writable)
	if c.srv != nil {
		c.srv.connEnded(c)
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Recv returns the next received message. After the connection ended and its
// messages were read, it returns the reason (ErrPeerClosed on a graceful
// disconnect by the peer).
func (c *Conn) Recv(ctx context.Context) (Message, error) {
	for {
		c.mu.Lock()
		if len(c.inbox) > 0 {
			m := c.inbox[0]
			c.inbox[0] = Message{}
			c.inbox = c.inbox[1:]
			if len(c.inbox) == 0 {
				c.inbox = nil
			}
			c.mu.Unlock()
			c.took(m)
			return m, nil
		}
		err := c.err
		c.mu.Unlock()
		if err != nil {
			return Message{}, err
		}
		select {
		case <-c.readable:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Send queues data as one reliable message on substream (0 unless more were
// negotiated). It copies data and returns once the message is queued; a
// failure of the connection afterwards is reported by Err, Recv and Done. It
// blocks while more than Config.MaxSendQueue bytes wait for acknowledgement,
// until ctx ends.
func (c *Conn) Send(ctx context.Context, substream uint8, data []byte) error {
	if substream > c.maxSubstream {
		return fmt.Errorf("%w: %d (negotiated maximum %d)", ErrBadSubstream, substream, c.maxSubstream)
	}
	if len(data) > c.maxMessage {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrMessageTooLarge, len(data), c.maxMessage)
	}
	if err := c.reserve(ctx, len(data)); err != nil {
		return err
	}
	return c.sh.send(ctx, event{conn: c, op: opSend, sub: substream, data: append([]byte(nil), data...)})
}

// SendUnreliable sends data as one unreliable DATA packet (it must fit in one
// fragment); it may be lost or arrive out of order.
func (c *Conn) SendUnreliable(ctx context.Context, data []byte) error {
	if len(data) > c.maxUnreliable {
		return fmt.Errorf("%w: unreliable message of %d bytes exceeds the fragment size %d", ErrMessageTooLarge, len(data), c.maxUnreliable)
	}
	if err := c.Err(); err != nil {
		return err
	}
	return c.sh.send(ctx, event{conn: c, op: opSendUnreliable, data: append([]byte(nil), data...)})
}

// reserve waits for room in the send queue.
func (c *Conn) reserve(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return err
		}
		if c.queued == 0 || c.queued+n <= c.maxQueue && !c.overBudget(n) {
			c.queued += n
			c.sh.ep.buffered.Add(int64(n))
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		select {
		case <-c.writable:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrSendQueueFull, ctx.Err())
		}
	}
}

// reserveNow takes send-queue room without waiting (shard goroutine).
func (c *Conn) reserveNow(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if c.queued > 0 && (c.queued+n > c.maxQueue || c.overBudget(n)) {
		return ErrSendQueueFull
	}
	c.queued += n
	c.sh.ep.buffered.Add(int64(n))
	return nil
}

// overBudget reports whether n more bytes queued to send would take the
// endpoint's total past Config.MaxBuffer while the connection holds more
// than an equal share (c.mu held). Such a connection waits for its peer's
// acknowledgements (Send blocks, an inline reply is dropped), so that a
// peer which never acknowledges cannot pile answers up beyond its share;
// a connection with nothing queued may always queue one message.
func (c *Conn) overBudget(n int) bool {
	ep := c.sh.ep
	budget := int64(ep.cfg.MaxBuffer)
	if budget <= 0 || ep.buffered.Load()+int64(n) <= budget {
		return false
	}
	share := budget / max(ep.sessionsOpen.Load(), 1)
	return int64(c.queued+n)+c.inboxBytes.Load() > share
}

// took uncharges a message taken from the inbox.
func (c *Conn) took(m Message) {
	c.inboxBytes.Add(-int64(len(m.Data)))
	c.sh.ep.buffered.Add(-int64(len(m.Data)))
}

// budgetHeld is what the connection's queues hold of the budget: messages
// queued to send and received messages not yet taken.
func (c *Conn) budgetHeld() int {
	c.mu.Lock()
	q := c.queued
	c.mu.Unlock()
	return q + int(c.inboxBytes.Load())
}

// releaseQueued returns n bytes of send-queue room (shard goroutine).
func (c *Conn) releaseQueued(n int) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	if c.err == nil { // else finish dropped it all
		c.queued -= n
		c.sh.ep.buffered.Add(-int64(n))
	}
	c.mu.Unlock()
	notify(c.writable)
}

// Close disconnects gracefully: queued messages are sent, then a reliable
// DISCONNECT, and Close returns once the peer acknowledged it, the
// connection failed, or ctx ended (the connection is then dropped with a
// forced disconnect).
func (c *Conn) Close(ctx context.Context) error {
	err := c.sh.do(ctx, c, func(now time.Time, s *session) error {
		if s.state == stateEstablished {
			s.closeReq = true
			s.pump(now)
		}
		return nil
	})
	if err == nil {
		select {
		case <-c.done:
		case <-ctx.Done():
			c.Abort()
			return fmt.Errorf("prudp: graceful close not acknowledged, connection dropped: %w", ctx.Err())
		}
	} else if c.Err() == nil {
		c.Abort()
		return fmt.Errorf("prudp: close: %w", err)
	}
	if e := c.Err(); e != nil && !errors.Is(e, ErrClosed) && !errors.Is(e, ErrPeerClosed) {
		return e
	}
	return nil
}

// Abort drops the connection at once with a forced (unreliable) DISCONNECT.
// On a server connection the peer already closed gracefully it does
// nothing: the state lingers a moment to acknowledge the peer's
// retransmitted DISCONNECT (else the peer's Close could wait for its
// context) and is then freed.
func (c *Conn) Abort() {
	_ = c.sh.do(context.Background(), c, func(now time.Time, s *session) error {
		s.abort(now)
		return nil
	})
}

// Stats is a snapshot of a connection's counters.
type Stats struct {
	SRTT, RTTVar, LatestRTT, RTO time.Duration
	RTTSamples                   uint64
	Window                       int
	PacketsIn, PacketsOut        uint64
	BytesIn, BytesOut            uint64
	MessagesIn, MessagesOut      uint64
	AcksIn, AcksOut              uint64
	Retransmits                  uint64
	Duplicates                   uint64 // received again and acknowledged again
	Reordered                    uint64 // held in the reorder buffer
	Drops                        map[string]uint64
}

type dropReason int

const (
	dropWindow       dropReason = iota // beyond the reorder window
	dropSubstream                      // substream id above the negotiated maximum
	dropType                           // unknown packet type
	dropMalformed                      // bad aggregate-ack payload
	dropDecompress                     // bad compressed payload
	dropReassembly                     // message refused (too large, fragments out of order)
	dropSignature                      // forged or corrupted signature
	dropInlineQueue                    // inline handler's reply refused: send queue full
	dropRecvQueue                      // data refused (unacknowledged): the application is not reading
	dropDecrypt                        // Hyperscape DATA that does not decrypt (IV, ciphertext, padding, suffix)
	dropBudget                         // data refused (unacknowledged): the endpoint's MaxBuffer is spent and the connection holds more than its share
	dropReorderBytes                   // early packet refused (unacknowledged): MaxReorderBytes
	dropUnfinished                     // message refused: the connection's unfinished messages crossed MaxUnfinishedBytes
	numDropReasons
)

var dropNames = [numDropReasons]string{"window", "substream", "type", "malformed", "decompress", "reassembly", "signature", "inline_reply_queue", "recv_queue", "decrypt", "budget", "reorder_bytes", "unfinished_bytes"}

type connStats struct {
	packetsIn, packetsOut   atomic.Uint64
	bytesIn, bytesOut       atomic.Uint64
	messagesIn, messagesOut atomic.Uint64
	acksIn, acksOut         atomic.Uint64
	retransmits             atomic.Uint64
	duplicates, reordered   atomic.Uint64
	drops                   [numDropReasons]atomic.Uint64
	srtt, rttvar, latest    atomic.Int64
	rto                     atomic.Int64
	samples                 atomic.Uint64
	window                  atomic.Int64
}

func (s *connStats) drop(r dropReason) { s.drops[r].Add(1) }

// Stats returns the connection's counters.
func (c *Conn) Stats() Stats {
	st := Stats{
		SRTT:        time.Duration(c.stats.srtt.Load()),
		RTTVar:      time.Duration(c.stats.rttvar.Load()),
		LatestRTT:   time.Duration(c.stats.latest.Load()),
		RTO:         time.Duration(c.stats.rto.Load()),
		RTTSamples:  c.stats.samples.Load(),
		Window:      int(c.stats.window.Load()),
		PacketsIn:   c.stats.packetsIn.Load(),
		PacketsOut:  c.stats.packetsOut.Load(),
		BytesIn:     c.stats.bytesIn.Load(),
		BytesOut:    c.stats.bytesOut.Load(),
		MessagesIn:  c.stats.messagesIn.Load(),
		MessagesOut: c.stats.messagesOut.Load(),
		AcksIn:      c.stats.acksIn.Load(),
		AcksOut:     c.stats.acksOut.Load(),
		Retransmits: c.stats.retransmits.Load(),
		Duplicates:  c.stats.duplicates.Load(),
		Reordered:   c.stats.reordered.Load(),
		Drops:       map[string]uint64{},
	}
	for i := range c.stats.drops {
		if v := c.stats.drops[i].Load(); v > 0 {
			st.Drops[dropNames[i]] = v
		}
	}
	return st
}
