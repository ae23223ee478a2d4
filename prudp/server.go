package prudp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Handler answers the messages of a server's connections. ServePRUDP is
// called for every received message in order, one call at a time per
// connection, on a goroutine that exists only while messages are waiting (an
// idle connection costs no goroutine). It may call c.Send to reply.
type Handler interface {
	ServePRUDP(c *Conn, m Message)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(c *Conn, m Message)

// ServePRUDP calls f(c, m).
func (f HandlerFunc) ServePRUDP(c *Conn, m Message) { f(c, m) }

// InlineHandler is a Handler that can answer a message on the goroutine that
// owns its connection (the connection's shard, which owns many), with no
// goroutine and no queue between a request and its reply. The engine offers
// every complete message to ServeInline first, while the connection has no
// message waiting for ServePRUDP (so that messages stay in order), and hands
// it to ServePRUDP, on the connection's handler goroutine as for any
// Handler, when ServeInline declines it.
//
// ServeInline must not block: no I/O, no waiting on channels, other
// goroutines or locks held for long, and no call of c's methods that wait
// for the shard (Send, SendUnreliable, Recv, Close, Abort): the other
// connections of the shard wait while it runs. The rule is measured: a
// call that takes longer than Server.InlineLimit turns ServeInline off for
// its connection (its messages then go to ServePRUDP), and after
// maxInlineOverruns such calls for the whole server; each overrun is logged
// and counted (ServerStats.InlineOverruns). The engine cannot preempt a
// call that never returns.
type InlineHandler interface {
	Handler
	// ServeInline answers m: it appends the reply to dst (a buffer the
	// engine recycles; the reply must be dst extended, as append returns
	// it, never m.Data) and returns it with ok true. The engine sends the
	// reply as m came: reliably on m.Substream, or unreliably; an empty
	// reply sends nothing. A reliable reply that would overflow
	// Config.MaxSendQueue is dropped and counted ("inline_reply_queue"). ok
	// false hands m to ServePRUDP instead. m.Data is valid only during the
	// call.
	ServeInline(c *Conn, m Message, dst []byte) (reply []byte, ok bool)
}

// EchoHandler sends every reliable message back on the same connection and
// substream, and every unreliable one back unreliably: the diagnostic
// service of `gamewire serve --echo`. It is an InlineHandler, and the
// engine treats it as any other.
var EchoHandler Handler = echoHandler{}

type echoHandler struct{}

// ServeInline echoes m on the connection's goroutine.
func (echoHandler) ServeInline(_ *Conn, m Message, dst []byte) ([]byte, bool) {
	return append(dst, m.Data...), true
}

// ServePRUDP echoes m (after an inline overrun turned ServeInline off).
func (echoHandler) ServePRUDP(c *Conn, m Message) {
	ctx := context.Background()
	if m.Reliable {
		_ = c.Send(ctx, m.Substream, m.Data)
	} else {
		_ = c.SendUnreliable(ctx, m.Data)
	}
}

// maxInlineOverruns is how many ServeInline calls over Server.InlineLimit a
// server tolerates before it stops calling ServeInline on every connection:
// one overrun may be the host's hiccup (a descheduled shard), several are a
// handler that blocks.
const maxInlineOverruns = 3

// defaultInlineLimit is Server.InlineLimit's default.
const defaultInlineLimit = 10 * time.Millisecond

// ConnState is a connection's lifecycle event for Server.ConnState.
type ConnState int

const (
	// StateNew: the handshake completed.
	StateNew ConnState = iota
	// StateClosed: the connection ended (Conn.Err says why).
	StateClosed
)

// Server is a PRUDP server: one UDP socket, many connections, demultiplexed
// by peer address, virtual ports and session id. The zero value is a working
// echo server on 127.0.0.1:60000 speaking NEX V1 without an access key.
type Server struct {
	// Addr is the UDP address ListenAndServe binds; default "127.0.0.1:60000".
	Addr string
	// Config configures the connections (dialect, access key, virtual port,
	// timers, windows); its zero value works, see Config. Config.Port is the
	// server's virtual port (default 1).
	Config Config
	// Handler receives the messages; default EchoHandler.
	Handler Handler
	// ConnState, if set, is called when a connection is established or ends.
	// It runs while the connection's shard is held (on the shard's goroutine
	// or the socket reader) and must not block.
	ConnState func(c *Conn, state ConnState)
	// ServerKey makes the server a secure server: its Kerberos key opens the
	// tickets of CONNECT requests. Default nil: an authentication server.
	ServerKey []byte
	// MaxTicketAge bounds the age of tickets; default 2 minutes (kerberos.DefaultMaxAge).
	MaxTicketAge time.Duration
	// Shards is the number of goroutines owning connections; default GOMAXPROCS.
	Shards int
	// InlineLimit is how long one InlineHandler.ServeInline call may take
	// before its connection stops calling it (see InlineHandler); default
	// 10 ms, far above what a handler that does not block takes, so that
	// only a handler that waits, or a host too loaded to run the shard,
	// crosses it.
	InlineLimit time.Duration

	mu     sync.Mutex
	ep     *endpoint
	conns  map[*Conn]struct{}
	closed bool

	synsAnswered atomic.Uint64
	accepted     atomic.Uint64
	ended        endedTotals // counters of connections that have ended
}

// endedTotals keeps the counters of ended connections so that the server's
// totals only ever grow.
type endedTotals struct {
	mu                                                    sync.Mutex
	retransmits, packetsIn, packetsOut, bytesIn, bytesOut uint64
	messagesIn, messagesOut                               uint64
	drops                                                 map[string]uint64
	reasons                                               map[string]uint64 // why connections ended
}

func (e *endedTotals) add(cs Stats, why error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.retransmits += cs.Retransmits
	e.packetsIn += cs.PacketsIn
	e.packetsOut += cs.PacketsOut
	e.bytesIn += cs.BytesIn
	e.bytesOut += cs.BytesOut
	e.messagesIn += cs.MessagesIn
	e.messagesOut += cs.MessagesOut
	if e.drops == nil {
		e.drops = map[string]uint64{}
		e.reasons = map[string]uint64{}
	}
	for k, v := range cs.Drops {
		e.drops[k] += v
	}
	e.reasons[endReason(why)]++
}

// endReason names why a connection ended, for metrics.
func endReason(err error) string {
	switch {
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, ErrPeerClosed):
		return "peer_closed"
	case errors.Is(err, ErrPeerReset):
		return "peer_reset"
	case errors.Is(err, ErrTimeout):
		return "retransmit_limit"
	case errors.Is(err, ErrPeerDead):
		return "idle_timeout"
	case errors.Is(err, ErrOverBudget):
		return "over_budget"
	}
	return "other"
}

// socketBuffer is the socket buffer size asked for: a full send window of
// 256 fragments is about 350 KB, more than the usual 208 KB default, and a
// burst overflowing the buffer looks like loss.
const socketBuffer = 4 << 20

// setSocketBuffers enlarges the kernel buffers (best effort: the kernel caps
// them at net.core.rmem_max / wmem_max).
func setSocketBuffers(c *net.UDPConn) {
	_ = c.SetReadBuffer(socketBuffer)
	_ = c.SetWriteBuffer(socketBuffer)
}

func (srv *Server) handler() Handler {
	if srv.Handler == nil {
		return EchoHandler
	}
	return srv.Handler
}

// ListenAndServe binds Addr and serves until Shutdown or Close.
func (srv *Server) ListenAndServe() error {
	addr := srv.Addr
	if addr == "" {
		addr = "127.0.0.1:60000"
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return fmt.Errorf("prudp: listen address %q: %w", addr, err)
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return fmt.Errorf("prudp: %w", err)
	}
	return srv.Serve(pc)
}

// Serve serves on pc until Shutdown or Close and then returns
// ErrServerClosed. It closes pc. A *net.UDPConn gets 4 MiB kernel buffers
// (best effort: the kernel caps them at net.core.rmem_max and wmem_max):
// with the usual 208 KB default, a burst of requests from a few hundred
// clients, or one client's window of fragments, overflows the receive
// buffer and looks like loss.
func (srv *Server) Serve(pc PacketConn) error {
	if uc, ok := pc.(*net.UDPConn); ok {
		setSocketBuffers(uc)
	}
	cfg := srv.Config.resolved()
	if cfg.Port == 0 {
		cfg.Port = 1
	}
	if err := cfg.validateEnd(true); err != nil {
		pc.Close()
		return err
	}
	n := srv.Shards
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	ep, err := newEndpoint(pc, cfg, n)
	if err != nil {
		pc.Close()
		return err
	}
	ep.srv = srv
	if srv.InlineLimit > 0 {
		ep.inlineLimit = srv.InlineLimit
	}
	srv.mu.Lock()
	if srv.closed || srv.ep != nil {
		srv.mu.Unlock()
		pc.Close()
		return ErrServerClosed
	}
	srv.ep = ep
	srv.conns = make(map[*Conn]struct{})
	srv.mu.Unlock()
	ep.start()
	err = ep.readLoop()
	ep.stopShards()
	srv.mu.Lock()
	closed := srv.closed
	srv.mu.Unlock()
	if closed {
		return ErrServerClosed
	}
	return err
}

// LocalAddr returns the bound address once Serve runs, else nil.
func (srv *Server) LocalAddr() net.Addr {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.ep == nil {
		return nil
	}
	return srv.ep.pc.LocalAddr()
}

func (srv *Server) connStarted(c *Conn) {
	srv.accepted.Add(1)
	srv.mu.Lock()
	srv.conns[c] = struct{}{}
	srv.mu.Unlock()
	if srv.ConnState != nil {
		srv.ConnState(c, StateNew)
	}
}

func (srv *Server) connEnded(c *Conn) {
	srv.mu.Lock()
	delete(srv.conns, c)
	srv.mu.Unlock()
	srv.ended.add(c.Stats(), c.err)
	if srv.ConnState != nil {
		srv.ConnState(c, StateClosed)
	}
}

// Conns returns the number of open connections.
func (srv *Server) Conns() int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return len(srv.conns)
}

// Shutdown disconnects every connection gracefully (queued messages are
// sent first), waits until they are acknowledged or ctx ends (the rest are
// then dropped with a forced disconnect), and closes the socket.
func (srv *Server) Shutdown(ctx context.Context) error {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		return nil
	}
	srv.closed = true
	ep := srv.ep
	conns := make([]*Conn, 0, len(srv.conns))
	for c := range srv.conns {
		conns = append(conns, c)
	}
	srv.mu.Unlock()
	if ep == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Close(ctx)
		}()
	}
	wg.Wait()
	err := ctx.Err()
	ep.pc.Close()
	return err
}

// Close drops every connection with a forced disconnect and closes the socket.
func (srv *Server) Close() error {
	srv.mu.Lock()
	srv.closed = true
	ep := srv.ep
	conns := make([]*Conn, 0, len(srv.conns))
	for c := range srv.conns {
		conns = append(conns, c)
	}
	srv.mu.Unlock()
	for _, c := range conns {
		c.Abort()
	}
	if ep != nil {
		return ep.pc.Close()
	}
	return nil
}

// ServerStats are a server's counters.
type ServerStats struct {
	Connections  int    // open now
	Accepted     uint64 // connections established since start
	SYNsAnswered uint64 // SYN-ACKs sent (statelessly)
	DatagramsIn  uint64 // datagrams read
	WriteErrors  uint64 // failed socket writes
	// SegmentedWrites and CoalescedReads count system calls that sent or
	// read several datagrams at once (batched I/O, docs/prudp.md).
	SegmentedWrites, CoalescedReads uint64
	Drops                           map[string]uint64 // packets dropped before reaching a connection, by reason
	ConnDrops                       map[string]uint64 // packets dropped inside connections, by reason
	Retransmits                     uint64            // over all connections, open and ended
	PacketsIn                       uint64            // over all connections
	PacketsOut                      uint64            // over all connections
	BytesIn                         uint64            // over all connections
	BytesOut                        uint64            // over all connections
	MessagesIn                      uint64            // over all connections
	MessagesOut                     uint64            // over all connections
	Ended                           map[string]uint64 // ended connections by reason
	Sessions                        int64             // connection states held, including lingering ones
	// Buffered is the bytes held now in reorder buffers, unfinished
	// messages and the connections' receive and send queues
	// (Config.MaxBuffer is the budget); BudgetClosed counts the
	// connections closed for going on holding more than their share of it
	// (ErrOverBudget, also in Ended as "over_budget").
	Buffered     int64
	BudgetClosed uint64
	// InlineOverruns counts InlineHandler.ServeInline calls that took longer
	// than InlineLimit (each turned inline answering off for its connection).
	InlineOverruns uint64
}

// Stats returns the server's counters.
func (srv *Server) Stats() ServerStats {
	srv.mu.Lock()
	ep := srv.ep
	conns := make([]*Conn, 0, len(srv.conns))
	for c := range srv.conns {
		conns = append(conns, c)
	}
	srv.mu.Unlock()
	st := ServerStats{Connections: len(conns), Accepted: srv.accepted.Load(), SYNsAnswered: srv.synsAnswered.Load(),
		Drops: map[string]uint64{}, ConnDrops: map[string]uint64{}}
	if ep != nil {
		st.DatagramsIn = ep.packetsIn.Load()
		st.WriteErrors = ep.writeErrors.Load()
		st.SegmentedWrites, st.CoalescedReads = ep.segmentedWrites.Load(), ep.coalescedReads.Load()
		st.Sessions = ep.sessionsOpen.Load()
		st.InlineOverruns = ep.inlineOverruns.Load()
		st.Buffered, st.BudgetClosed = ep.buffered.Load(), ep.budgetClosed.Load()
		for i := range ep.drops {
			if v := ep.drops[i].Load(); v > 0 {
				st.Drops[endpointDropNames[i]] = v
			}
		}
	}
	e := &srv.ended
	e.mu.Lock()
	st.Retransmits, st.PacketsIn, st.PacketsOut = e.retransmits, e.packetsIn, e.packetsOut
	st.BytesIn, st.BytesOut, st.MessagesIn, st.MessagesOut = e.bytesIn, e.bytesOut, e.messagesIn, e.messagesOut
	st.Ended = map[string]uint64{}
	for k, v := range e.drops {
		st.ConnDrops[k] = v
	}
	for k, v := range e.reasons {
		st.Ended[k] = v
	}
	e.mu.Unlock()
	for _, c := range conns {
		cs := c.Stats()
		st.MessagesIn += cs.MessagesIn
		st.MessagesOut += cs.MessagesOut
		st.Retransmits += cs.Retransmits
		st.PacketsIn += cs.PacketsIn
		st.PacketsOut += cs.PacketsOut
		st.BytesIn += cs.BytesIn
		st.BytesOut += cs.BytesOut
		for k, v := range cs.Drops {
			st.ConnDrops[k] += v
		}
	}
	return st
}
