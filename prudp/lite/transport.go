package lite

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/gamewire/gamewire/prudp/wire"
)

// Config configures the stream transport of a Listener or a client stream.
// The zero value works: every zero field takes the default written beside it.
type Config struct {
	// TLS, on a Listener, makes every accepted connection TLS (wss:// and
	// raw TLS); it needs a certificate. On a client, it configures wss:// and
	// tls:// (nil: the system roots and the URL's host name).
	TLS *tls.Config
	// MaxPacket bounds one received Lite packet; default 4096 (the engine's
	// datagram buffer). A stream whose packet header declares more is closed.
	MaxPacket int
	// MaxQueued bounds the bytes waiting to be written to one stream; default
	// 1 MiB. The engine never blocks on a stream: a peer that reads so slowly
	// that this fills up is dropped (reason "slow_reader"). The engine's send
	// window keeps a well-behaved connection far below it (256 fragments of
	// about 1.3 KB), so only a peer that stopped reading reaches it.
	MaxQueued int
	// WriteTimeout bounds one write to a stream; default 10 s. A peer that
	// accepts no bytes for that long is dropped (reason "slow_reader").
	WriteTimeout time.Duration
	// IdleTimeout closes a stream on which no complete packet was received
	// for this long; default 60 s (peers send a PING every 5 s). Bytes that
	// complete no packet do not count.
	IdleTimeout time.Duration
	// PacketTimeout closes a stream whose packet, once its first byte has
	// arrived, is not complete within this long; default 10 s (peers write a
	// packet at once).
	PacketTimeout time.Duration
	// HandshakeTimeout bounds the TLS handshake, the first byte and the
	// WebSocket upgrade of an accepted connection, and a client's dial when
	// its context has no deadline; default 10 s.
	HandshakeTimeout time.Duration
	// ReadQueue is the number of received packets waiting for the engine per
	// virtual port; default 1024. When it is full the stream readers wait,
	// which pushes back on the peers through TCP flow control: nothing is
	// buffered without bound and nothing is dropped.
	ReadQueue int
	// Logger receives the transport's logs; default none.
	Logger *slog.Logger
}

func (c *Config) resolved() Config {
	var r Config
	if c != nil {
		r = *c
	}
	if r.MaxPacket <= 0 {
		r.MaxPacket = DefaultMaxPacket
	}
	r.MaxPacket = min(r.MaxPacket, MaxPacketSize)
	if r.MaxQueued <= 0 {
		r.MaxQueued = 1 << 20
	}
	if r.WriteTimeout <= 0 {
		r.WriteTimeout = 10 * time.Second
	}
	if r.IdleTimeout <= 0 {
		r.IdleTimeout = 60 * time.Second
	}
	if r.PacketTimeout <= 0 {
		r.PacketTimeout = 10 * time.Second
	}
	if r.HandshakeTimeout <= 0 {
		r.HandshakeTimeout = 10 * time.Second
	}
	if r.ReadQueue <= 0 {
		r.ReadQueue = 1024
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r
}

// Errors of the transport, wrapped with context; compare with errors.Is.
var (
	// ErrSlowReader: a peer did not read what was sent to it (MaxQueued bytes
	// waiting, or one write blocked for WriteTimeout); its stream was closed.
	ErrSlowReader = errors.New("prudp lite: slow reader")
	// ErrNoStream: a write to an address that has no open stream.
	ErrNoStream = errors.New("prudp lite: no open stream for address")
	// ErrIdle: no complete packet was received on a stream for IdleTimeout.
	ErrIdle = errors.New("prudp lite: stream idle")
	// ErrClosed: the listener, port or stream was closed locally.
	ErrClosed = errors.New("prudp lite: closed")
)

// Stream kinds, as counted in Stats.
const (
	KindWS     = "ws"
	KindWSS    = "wss"
	KindTCP    = "tcp"
	KindTLS    = "tls"
	KindStream = "stream" // attached with AddStream
)

// Reasons why streams close and packets are dropped, as counted in Stats.
const (
	reasonEOF        = "eof"         // the peer closed the stream on a packet boundary
	reasonTruncated  = "truncated"   // the peer closed the stream inside a packet
	reasonFraming    = "framing"     // bad magic or oversized packet
	reasonSlowReader = "slow_reader" // MaxQueued or WriteTimeout
	reasonIdle       = "idle"        // IdleTimeout (no complete packet)
	reasonReadError  = "read_error"  // any other read error
	reasonWriteError = "write_error" // any other write error
	reasonClosed     = "closed"      // closed locally

	dropNoPort      = "no_port"      // no PortConn for the destination port
	dropShortBuffer = "short_buffer" // the engine's buffer was smaller than the packet
)

// Stats are a transport's counters.
type Stats struct {
	Streams    int               // open now
	Accepted   map[string]uint64 // streams opened, by kind (ws, wss, tcp, tls, stream)
	Closed     map[string]uint64 // streams closed, by reason
	Refused    map[string]uint64 // connections refused before they became streams, by reason
	PacketsIn  uint64
	PacketsOut uint64 // packets written (several may share one write)
	BytesIn    uint64
	BytesOut   uint64
	Writes     uint64            // writes to streams (WebSocket messages on ws/wss)
	Drops      map[string]uint64 // received packets not handed to the engine, by reason
	// AcceptErrors counts the Accept errors a Listener waited out, by errno
	// ("EMFILE", "ENFILE", "ECONNABORTED", ...).
	AcceptErrors map[string]uint64
}

// counters is a small set of named counters.
type counters struct {
	mu sync.Mutex
	m  map[string]uint64
}

func (c *counters) add(k string) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]uint64{}
	}
	c.m[k]++
	c.mu.Unlock()
}

func (c *counters) snapshot() map[string]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := make(map[string]uint64, len(c.m))
	for k, v := range c.m {
		r[k] = v
	}
	return r
}

// hub is the core both sides share: open streams by peer address, and the
// PortConns that receive their packets.
type hub struct {
	cfg Config
	log *slog.Logger

	mu        sync.RWMutex
	streams   map[netip.AddrPort]*stream
	ports     [256]*PortConn // by destination virtual port
	all       *PortConn      // client side: every packet, whatever its port
	closed    bool
	synthetic uint32
	local     net.Addr

	bufs sync.Pool

	accepted, closedBy, refused, drops counters
	acceptErrors                       counters // Listener.Serve
	packetsIn, packetsOut              atomic.Uint64
	bytesIn, bytesOut, writes          atomic.Uint64
	wg                                 sync.WaitGroup
}

func newHub(cfg *Config) *hub {
	h := &hub{cfg: cfg.resolved(), streams: map[netip.AddrPort]*stream{}}
	h.log = h.cfg.Logger
	size := h.cfg.MaxPacket
	h.bufs.New = func() any { b := make([]byte, size); return &b }
	return h
}

func (h *hub) stats() Stats {
	h.mu.RLock()
	n := len(h.streams)
	h.mu.RUnlock()
	return Stats{
		Streams: n, Accepted: h.accepted.snapshot(), Closed: h.closedBy.snapshot(), Refused: h.refused.snapshot(),
		PacketsIn: h.packetsIn.Load(), PacketsOut: h.packetsOut.Load(), BytesIn: h.bytesIn.Load(),
		BytesOut: h.bytesOut.Load(), Writes: h.writes.Load(), Drops: h.drops.snapshot(),
		AcceptErrors: h.acceptErrors.snapshot(),
	}
}

// syntheticPrefix is the unique-local IPv6 prefix (fd67:7700::/32) of the
// addresses given to streams whose real remote address is unknown or
// already taken by another open stream.
var syntheticPrefix = [4]byte{0xfd, 0x67, 0x77, 0x00}

// addStream registers c and starts its reader and writer. The stream's
// address is its real remote address when that is known and free (TCP
// guarantees it unique among open connections of one listener), else a
// synthetic one in fd67:7700::/32.
func (h *hub) addStream(c net.Conn, kind string, remote net.Addr) (*stream, error) {
	s := &stream{h: h, c: c, kind: kind, done: make(chan struct{})}
	var peer netip.AddrPort
	if ta, ok := remote.(*net.TCPAddr); ok && ta != nil {
		ap := ta.AddrPort()
		peer = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	} else if remote != nil {
		if ap, err := netip.ParseAddrPort(remote.String()); err == nil {
			peer = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		c.Close()
		return nil, ErrClosed
	}
	if _, taken := h.streams[peer]; !peer.IsValid() || taken {
		h.synthetic++
		var a [16]byte
		copy(a[:], syntheticPrefix[:])
		n := h.synthetic
		a[12], a[13], a[14], a[15] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		peer = netip.AddrPortFrom(netip.AddrFrom16(a), peer.Port())
	}
	s.peer = peer
	h.streams[peer] = s
	h.wg.Add(1)
	h.mu.Unlock()
	h.accepted.add(kind)
	h.log.Debug("prudp lite: stream opened", "kind", kind, "peer", peer, "remote", remote)
	go s.readLoop()
	return s, nil
}

// view returns the PortConn receiving packets for a destination port.
func (h *hub) view(port byte) *PortConn {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.all != nil {
		return h.all
	}
	return h.ports[port]
}

// write queues b on the stream of addr.
func (h *hub) write(b []byte, addr netip.AddrPort) (int, error) {
	h.mu.RLock()
	s := h.streams[addr]
	if s == nil && h.all != nil && len(h.streams) == 1 {
		for _, only := range h.streams {
			s = only // a client has one stream, whatever address the engine names
		}
	}
	h.mu.RUnlock()
	if s == nil {
		return 0, fmt.Errorf("%w %v", ErrNoStream, addr)
	}
	return s.enqueue(b)
}

// close closes every stream and port.
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	streams := make([]*stream, 0, len(h.streams))
	for _, s := range h.streams {
		streams = append(streams, s)
	}
	views := make([]*PortConn, 0, 2)
	for _, v := range h.ports {
		if v != nil {
			views = append(views, v)
		}
	}
	if h.all != nil {
		views = append(views, h.all)
	}
	h.mu.Unlock()
	for _, s := range streams {
		s.close(ErrClosed, reasonClosed)
	}
	for _, v := range views {
		v.closeView()
	}
}

// inbound is one received packet on its way to the engine.
type inbound struct {
	buf  *[]byte
	n    int
	from netip.AddrPort
}

// PortConn is the datagram view of a transport that the PRUDP engine runs on:
// it implements prudp.PacketConn. Every packet read is one whole Lite packet
// from one stream, and the address it comes from names that stream; a write
// to that address goes to that stream. On a Listener there is one PortConn
// per virtual port (Listener.Port), so that the authentication server (port
// 1) and the secure server (port 2) share one listener.
type PortConn struct {
	h    *hub
	port int // -1: every port (client side)
	in   chan inbound
	done chan struct{}
	once sync.Once
	// closeHub closes the whole transport with the view (client side).
	closeHub bool
}

func newPortConn(h *hub, port int) *PortConn {
	return &PortConn{h: h, port: port, in: make(chan inbound, h.cfg.ReadQueue), done: make(chan struct{})}
}

// ReadFromUDPAddrPort returns the next received packet and the address of its
// stream. It blocks until one arrives or the PortConn is closed (then it
// returns an error wrapping net.ErrClosed). A packet longer than b is dropped
// and counted (reason "short_buffer"), never truncated.
func (p *PortConn) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	for {
		var in inbound
		select {
		case in = <-p.in:
		case <-p.done:
			return 0, netip.AddrPort{}, fmt.Errorf("prudp lite port %d: %w", p.port, net.ErrClosed)
		}
		if in.n > len(b) {
			p.h.drops.add(dropShortBuffer)
			p.h.log.Warn("prudp lite: packet longer than the read buffer dropped", "peer", in.from, "bytes", in.n, "buffer", len(b))
			p.h.bufs.Put(in.buf)
			continue
		}
		n := copy(b, (*in.buf)[:in.n])
		p.h.bufs.Put(in.buf)
		return n, in.from, nil
	}
}

// WriteToUDPAddrPort queues b (one or more whole packets) on the stream of
// addr and returns without waiting for the peer. It fails with ErrNoStream
// if the stream is gone and with ErrSlowReader when the stream is dropped
// because its peer stopped reading.
func (p *PortConn) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	return p.h.write(b, addr)
}

// LocalAddr returns the listener's address (the server's address on a client).
func (p *PortConn) LocalAddr() net.Addr {
	if p.h.local != nil {
		return p.h.local
	}
	return liteAddr("lite")
}

// Close stops the view; on a client it also closes the stream.
func (p *PortConn) Close() error {
	p.closeView()
	if p.closeHub {
		p.h.close()
		p.h.wg.Wait()
	}
	return nil
}

func (p *PortConn) closeView() {
	p.once.Do(func() {
		p.h.mu.Lock()
		if p.port >= 0 && p.h.ports[p.port] == p {
			p.h.ports[p.port] = nil
		}
		p.h.mu.Unlock()
		close(p.done)
	})
}

// liteAddr is the net.Addr of a transport without a socket address.
type liteAddr string

func (a liteAddr) Network() string { return "prudp-lite" }
func (a liteAddr) String() string  { return string(a) }

// portTuple is what a stream's packets said about a PRUDP connection: the
// stream-type byte and both ports as the peer sent them.
type portTuple struct{ streams, src, dst byte }

// maxTuples bounds the connections a stream remembers for the forced
// DISCONNECT sent to the engine when the stream ends (one per virtual port is
// what peers open; the rest find out by their idle timeout).
const maxTuples = 8

// stream is one accepted or dialed connection.
type stream struct {
	h    *hub
	c    net.Conn
	kind string
	peer netip.AddrPort

	mu      sync.Mutex
	out     []byte // waiting to be written
	spare   []byte // the buffer the writer last used, for reuse
	queued  int    // len(out) + the batch being written
	closed  bool
	writing bool // a writeLoop goroutine runs (only while something is queued)
	why     error
	done    chan struct{}
	tuples  []portTuple // touched only by readLoop
}

// enqueue copies b to the stream's queue and starts the writer if it is not
// running. An idle stream has no writer goroutine.
func (s *stream) enqueue(b []byte) (int, error) {
	s.mu.Lock()
	if s.closed {
		why := s.why
		s.mu.Unlock()
		return 0, fmt.Errorf("%w %v: %w", ErrNoStream, s.peer, why)
	}
	if queued := s.queued; queued+len(b) > s.h.cfg.MaxQueued {
		s.mu.Unlock()
		err := fmt.Errorf("%w: %d bytes waiting for %v, limit %d", ErrSlowReader, queued, s.peer, s.h.cfg.MaxQueued)
		s.close(err, reasonSlowReader)
		return 0, err
	}
	if s.out == nil && s.spare != nil {
		s.out, s.spare = s.spare[:0], nil
	}
	s.out = append(s.out, b...)
	s.queued += len(b)
	start := !s.writing
	if start {
		s.writing = true
		s.h.wg.Add(1) // the reader's count is held while the stream is open
	}
	s.mu.Unlock()
	s.h.packetsOut.Add(1)
	if start {
		go s.writeLoop()
	}
	return len(b), nil
}

// maxKeptBuffer is the largest write buffer a stream keeps between bursts.
const maxKeptBuffer = 16 << 10

// writeLoop writes what is queued, everything waiting in one write (one
// WebSocket message, which may carry several packets), until the queue is
// empty or the stream closed.
func (s *stream) writeLoop() {
	defer s.h.wg.Done()
	for {
		s.mu.Lock()
		batch := s.out
		s.out = nil
		if len(batch) == 0 || s.closed {
			s.writing = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		_ = s.c.SetWriteDeadline(time.Now().Add(s.h.cfg.WriteTimeout))
		n, err := s.c.Write(batch)
		s.h.bytesOut.Add(uint64(n))
		s.h.writes.Add(1)
		s.mu.Lock()
		s.queued -= len(batch)
		if cap(batch) <= maxKeptBuffer {
			s.spare = batch[:0]
		}
		s.mu.Unlock()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				s.close(fmt.Errorf("%w: a write to %v blocked for %v", ErrSlowReader, s.peer, s.h.cfg.WriteTimeout), reasonSlowReader)
			} else {
				s.close(fmt.Errorf("prudp lite: writing to %v: %w", s.peer, err), reasonWriteError)
			}
			s.mu.Lock()
			s.writing = false
			s.mu.Unlock()
			return
		}
	}
}

// aborter is a stream that can be dropped without a closing handshake (a
// WebSocket; TCP and TLS connections close without waiting anyway).
type aborter interface{ abort() }

// wsConn is a WebSocket as a stream.
type wsConn struct {
	net.Conn
	ws   *websocket.Conn
	addr net.Addr // the peer's address (the websocket package has none for dialed connections)
	kind string   // ws or wss
}

func newWSConn(ws *websocket.Conn, addr net.Addr, kind string) *wsConn {
	return &wsConn{Conn: websocket.NetConn(context.Background(), ws, websocket.MessageBinary), ws: ws, addr: addr, kind: kind}
}

func (c *wsConn) abort()               { _ = c.ws.CloseNow() }
func (c *wsConn) RemoteAddr() net.Addr { return c.addr }

// readLoop splits the stream into packets and hands each to the PortConn of
// its destination port, waiting while that PortConn's queue is full. When the
// stream ends, every PRUDP connection it carried gets a forced DISCONNECT
// from the peer, so the engine frees it at once instead of after its idle
// timeout.
func (s *stream) readLoop() {
	defer s.h.wg.Done()
	// Timers rather than read deadlines: a WebSocket's deadlines act through its
	// contexts, which do not interrupt a read waiting for the next frame.
	clock := newStreamClock(s, time.Now())
	defer clock.stop()
	r := NewReader(clockReader{r: s.c, clock: clock}, s.h.cfg.MaxPacket)
	for {
		p, err := r.Next()
		if err != nil {
			s.readFailed(err)
			break
		}
		clock.packetDone(r.Buffered() > 0)
		s.h.packetsIn.Add(1)
		s.h.bytesIn.Add(uint64(len(p)))
		if len(p) < HeaderSize {
			s.h.drops.add("malformed")
			continue
		}
		v := s.h.view(p[6])
		if v == nil {
			s.h.drops.add(dropNoPort)
			s.h.log.Debug("prudp lite: packet for a virtual port nobody serves dropped", "peer", s.peer, "port", p[6])
			continue
		}
		s.remember(portTuple{p[4], p[5], p[6]})
		if !s.deliver(v, p) {
			// The stream was closed, or the server of this port stopped:
			// nobody will read the stream's packets any more.
			s.close(fmt.Errorf("%w: the server of virtual port %d stopped", ErrClosed, p[6]), reasonClosed)
			break
		}
	}
	s.disconnectAll()
	s.h.mu.Lock()
	if s.h.streams[s.peer] == s {
		delete(s.h.streams, s.peer)
	}
	s.h.mu.Unlock()
}

// deliver hands p to v; false once the stream or the view is closed.
func (s *stream) deliver(v *PortConn, p []byte) bool {
	bp := s.h.bufs.Get().(*[]byte)
	n := copy(*bp, p)
	select {
	case v.in <- inbound{buf: bp, n: n, from: s.peer}:
		return true
	case <-v.done:
	case <-s.done:
	}
	s.h.bufs.Put(bp)
	return false
}

func (s *stream) remember(t portTuple) {
	for _, have := range s.tuples {
		if have == t {
			return
		}
	}
	if len(s.tuples) < maxTuples {
		s.tuples = append(s.tuples, t)
	}
}

// disconnectAll hands the engine a forced (unreliable) DISCONNECT from the
// peer for every connection the stream carried.
func (s *stream) disconnectAll() {
	lite := wire.NewLite("")
	var buf [HeaderSize]byte
	for _, t := range s.tuples {
		v := s.h.view(t.dst)
		if v == nil {
			continue
		}
		pk := wire.Packet{
			Src:  wire.VPort{Stream: wire.StreamType(t.streams >> 4), Port: t.src},
			Dst:  wire.VPort{Stream: wire.StreamType(t.streams & 0xf), Port: t.dst},
			Type: wire.TypeDisconnect, Options: wire.OptNone,
		}
		b, err := lite.Append(buf[:0], &pk)
		if err != nil {
			continue
		}
		bp := s.h.bufs.Get().(*[]byte)
		n := copy(*bp, b)
		select {
		case v.in <- inbound{buf: bp, n: n, from: s.peer}:
		case <-v.done:
			s.h.bufs.Put(bp)
		}
	}
}

// readFailed closes the stream after a read error, naming why.
func (s *stream) readFailed(err error) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF):
		s.close(fmt.Errorf("prudp lite: %v closed the stream", s.peer), reasonEOF)
	case errors.Is(err, ErrTruncatedStream):
		s.close(fmt.Errorf("prudp lite: %v: %w", s.peer, err), reasonTruncated)
	case errors.Is(err, wire.ErrBadMagic), errors.Is(err, ErrPacketTooLarge):
		s.close(fmt.Errorf("prudp lite: %v: %w", s.peer, err), reasonFraming)
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		s.close(fmt.Errorf("%w: nothing from %v for %v", ErrIdle, s.peer, s.h.cfg.IdleTimeout), reasonIdle)
	default:
		s.close(fmt.Errorf("prudp lite: reading from %v: %w", s.peer, err), reasonReadError)
	}
}

// close ends the stream once, with why (logged) and a metrics reason. A
// stream closed locally keeps the first reason.
func (s *stream) close(why error, reason string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.why = why
	s.out = nil
	s.mu.Unlock()
	close(s.done)
	// Never wait here: close runs on the engine's goroutine when a write
	// finds the queue full, and a WebSocket's closing handshake waits for the
	// peer (which, being slow, may never answer).
	if a, ok := s.c.(aborter); ok && reason != reasonClosed {
		a.abort()
	} else {
		go s.c.Close()
	}
	s.h.closedBy.add(reason)
	if reason == reasonEOF || reason == reasonClosed {
		s.h.log.Debug("prudp lite: stream closed", "peer", s.peer, "kind", s.kind, "reason", reason, "err", why)
	} else {
		s.h.log.Warn("prudp lite: stream dropped", "peer", s.peer, "kind", s.kind, "reason", reason, "err", why)
	}
}
