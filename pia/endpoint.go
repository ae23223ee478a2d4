package pia

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DropReason says why the Endpoint dropped a packet or a message.
type DropReason int

// The drop reasons. Every dropped packet or message is counted under one of them
// (Endpoint.Drops) and logged at debug level; nothing is dropped silently.
const (
	DropMalformed   DropReason = iota // header or messages do not parse (truncated, bad magic, bad field)
	DropAuth                          // tag or HMAC mismatch, or plaintext in an encrypted session
	DropVersion                       // header version differs from the configured Pia version
	DropReplay                        // packet id or nonce already seen
	DropUnknownPeer                   // sender is not a known peer
	DropConnection                    // connection id differs from the one the peer uses
	DropNoHandler                     // no handler for the message's protocol type and port
	DropInflate                       // a compressed payload does not inflate
	numDropReasons
)

var dropNames = [numDropReasons]string{"malformed", "auth", "version", "replay", "unknown-peer", "connection-id", "no-handler", "inflate"}

func (r DropReason) String() string {
	if r >= 0 && r < numDropReasons {
		return dropNames[r]
	}
	return fmt.Sprintf("drop(%d)", int(r))
}

// Handler receives the messages of one protocol type and port. The message and its
// payload are valid only during the call: copy what you keep.
type Handler interface {
	ServePia(from *Peer, m *Message)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(from *Peer, m *Message)

// ServePia calls f.
func (f HandlerFunc) ServePia(from *Peer, m *Message) { f(from, m) }

// EndpointConfig configures an Endpoint. The zero value of every optional field
// works.
type EndpointConfig struct {
	// Version, NonceParams, SessionKey and AllowPlaintext are as in Config. Without a
	// session key the endpoint sends and accepts unencrypted packets only.
	Version        Version
	NonceParams    NonceParams
	SessionKey     []byte
	AllowPlaintext bool
	// Source is this endpoint's own address as its nonces use it. An invalid IP
	// defaults to the socket's local address; the MAC matters for LDN up to 5.44.
	Source Source
	// VariableID is this station's variable id (5.27 and later headers).
	VariableID uint32
	// ConstantID and StationIndex fill the source fields of outgoing messages
	// whose layout carries them, when the message leaves them zero.
	ConstantID   uint64
	StationIndex uint8
	// MTU bounds the size of a packet (UDP payload). Default 1364.
	MTU int
	// FlushInterval makes Serve flush queued messages periodically; 0 means the
	// caller calls Flush.
	FlushInterval time.Duration
	// AcceptUnknownPeers creates a peer on the first authenticated packet from an
	// address that was not added with AddPeer (its MAC is unknown, so this cannot
	// work for LDN up to 5.44). Default: such packets are dropped.
	AcceptUnknownPeers bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives debug logs of drops; default: no logging.
	Logger *slog.Logger
}

// DefaultMTU is the default packet size bound of an Endpoint.
const DefaultMTU = 1364

// PeerConfig describes a peer added with AddPeer.
type PeerConfig struct {
	// MAC is the peer's MAC address (nonces of LDN up to 5.44).
	MAC [6]byte
	// VariableID is the peer's variable id (5.27 and later headers).
	VariableID uint32
	// ConnectionID is the connection id this endpoint writes in packets to the peer
	// (up to 5.26); 0 picks a random one in 2..255 as the spec describes.
	ConnectionID uint8
	// PeerConnectionID is the connection id the peer writes; 0 learns it from the
	// peer's first authenticated packet.
	PeerConnectionID uint8
}

// Peer is a remote station of an Endpoint.
type Peer struct {
	addr netip.AddrPort
	src  Source
	cfg  PeerConfig

	// send side, guarded by Endpoint.sendMu
	nextPacketID uint16
	queue        []Message
	arena        []byte

	// receive side, guarded by mu
	mu        sync.Mutex
	clock     PeerClock
	rtt       RTTEstimator
	highest   uint16
	window    uint64 // bit i: packet id highest-i was seen
	seenAny   bool
	nonces    [replayNonces][8]byte
	nonceNext int
	nonceLen  int
}

const replayNonces = 128

// Addr returns the peer's UDP address.
func (p *Peer) Addr() netip.AddrPort { return p.addr }

// RTT returns the peer's smoothed round-trip time and the number of samples.
func (p *Peer) RTT() (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rtt.SRTT(), p.rtt.Samples()
}

// Endpoint speaks Pia over a UDP socket: it keeps per-peer connection ids and
// packet id counters, bundles queued messages into packets up to the MTU
// (honouring FlagNoBundle), seals and opens them, measures per-peer RTT (header
// timers up to 5.10, the RTT protocol from 5.11) and delivers messages to handlers
// by protocol type and port. Tampered, truncated and replayed packets are dropped
// and counted by reason.
type Endpoint struct {
	cfg   EndpointConfig
	conn  *net.UDPConn
	start time.Time
	timer SessionTimer
	log   *slog.Logger
	rttT  uint16

	sendMu   sync.Mutex
	send     *Codec
	sendBuf  []byte
	sendPkt  Packet
	nonceCtr uint64

	recv    *Codec
	recvPkt Packet

	peersMu  sync.RWMutex
	peers    map[netip.AddrPort]*Peer
	handlers map[handlerKey]Handler

	drops                   [numDropReasons]atomic.Uint64
	packetsIn, packetsOut   atomic.Uint64
	messagesIn, messagesOut atomic.Uint64
	closed                  atomic.Bool
}

type handlerKey struct {
	typ  uint16
	port uint32
}

// NewEndpoint returns an endpoint on conn. It does not read until Serve runs.
func NewEndpoint(conn *net.UDPConn, cfg EndpointConfig) (*Endpoint, error) {
	if conn == nil {
		return nil, errors.New("pia endpoint: nil connection")
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if !cfg.Source.IP.IsValid() {
		if la, ok := conn.LocalAddr().(*net.UDPAddr); ok {
			cfg.Source.IP = la.AddrPort().Addr().Unmap()
		}
	}
	cc := Config{Version: cfg.Version, NonceParams: cfg.NonceParams, SessionKey: cfg.SessionKey, AllowPlaintext: cfg.AllowPlaintext}
	send, err := NewCodec(cc)
	if err != nil {
		return nil, fmt.Errorf("pia endpoint: %w", err)
	}
	recv, _ := NewCodec(cc)
	if min := send.Overhead(0) + 32 + 16; cfg.MTU < min {
		return nil, fmt.Errorf("pia endpoint: %w: MTU %d below %d", ErrBadField, cfg.MTU, min)
	}
	var seed [8]byte
	rand.Read(seed[:])
	e := &Endpoint{
		cfg: cfg, conn: conn, send: send, recv: recv, log: cfg.Logger,
		start:    cfg.Now(),
		nonceCtr: binary.BigEndian.Uint64(seed[:]),
		peers:    make(map[netip.AddrPort]*Peer),
		handlers: make(map[handlerKey]Handler),
		rttT:     RTTProtocolType(cfg.Version),
	}
	// The timer starts at 1: an RTT timer field of 0 means "nothing heard yet".
	e.timer = SessionTimer{Start: e.start.Add(-time.Millisecond)}
	return e, nil
}

// Listen binds a UDP socket on addr (for example "127.0.0.1:0"; the library never
// picks 0.0.0.0 on its own) and returns an endpoint on it.
func Listen(addr string, cfg EndpointConfig) (*Endpoint, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("pia listen %q: %w", addr, err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("pia listen: %w", err)
	}
	e, err := NewEndpoint(conn, cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return e, nil
}

// LocalAddr returns the socket's address.
func (e *Endpoint) LocalAddr() netip.AddrPort {
	return e.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Handle registers h for messages of protocol type typ and port.
func (e *Endpoint) Handle(typ uint16, port uint32, h Handler) {
	e.peersMu.Lock()
	e.handlers[handlerKey{typ, port}] = h
	e.peersMu.Unlock()
}

// AddPeer adds (or returns the existing) peer at addr.
func (e *Endpoint) AddPeer(addr netip.AddrPort, pc PeerConfig) *Peer {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	e.peersMu.Lock()
	defer e.peersMu.Unlock()
	if p, ok := e.peers[addr]; ok {
		return p
	}
	if pc.ConnectionID == 0 {
		var b [1]byte
		rand.Read(b[:])
		pc.ConnectionID = 2 + b[0]%254
	}
	p := &Peer{addr: addr, cfg: pc, src: Source{MAC: pc.MAC, IP: addr.Addr()}, nextPacketID: 1}
	e.peers[addr] = p
	return p
}

// Peer returns the peer at addr, if known.
func (e *Endpoint) Peer(addr netip.AddrPort) (*Peer, bool) {
	e.peersMu.RLock()
	defer e.peersMu.RUnlock()
	p, ok := e.peers[netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())]
	return p, ok
}

// Drops returns how many packets or messages were dropped for reason r.
func (e *Endpoint) Drops(r DropReason) uint64 { return e.drops[r].Load() }

// EndpointStats are an endpoint's counters.
type EndpointStats struct {
	PacketsIn, PacketsOut, MessagesIn, MessagesOut uint64
	Drops                                          map[string]uint64
}

// Stats returns the endpoint's counters.
func (e *Endpoint) Stats() EndpointStats {
	s := EndpointStats{
		PacketsIn: e.packetsIn.Load(), PacketsOut: e.packetsOut.Load(),
		MessagesIn: e.messagesIn.Load(), MessagesOut: e.messagesOut.Load(),
		Drops: make(map[string]uint64),
	}
	for r := DropReason(0); r < numDropReasons; r++ {
		if n := e.drops[r].Load(); n != 0 {
			s.Drops[r.String()] = n
		}
	}
	return s
}

// Send queues m for p; Flush (or Serve with a FlushInterval) sends it, bundled
// with other queued messages. The payload is copied. A message too large for one
// packet is refused with ErrTooLarge.
func (e *Endpoint) Send(p *Peer, m Message) error {
	ml := e.send.MessageLayout()
	if m.SourceConstantID == 0 && ml != Message5_27 {
		m.SourceConstantID = e.cfg.ConstantID
	}
	if ml == MessageUpTo5_4 && m.SourceStationIndex == 0 {
		m.SourceStationIndex = e.cfg.StationIndex
	}
	if err := m.check(ml); err != nil {
		return fmt.Errorf("pia send: %w", err)
	}
	if size := e.packetSize(EncodedSize(&m, ml, nil)); size > e.cfg.MTU {
		return fmt.Errorf("pia send: %w: a packet with this message is %d bytes, MTU %d", ErrTooLarge, size, e.cfg.MTU)
	}
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	start := len(p.arena)
	p.arena = append(p.arena, m.Payload...)
	m.Payload = p.arena[start:len(p.arena):len(p.arena)]
	p.queue = append(p.queue, m)
	return nil
}

// packetSize is the size of a packet whose messages take n bytes.
func (e *Endpoint) packetSize(n int) int {
	if e.cfg.SessionKey != nil {
		n = (n + 15) &^ 15
	}
	return e.send.Overhead(0) + n
}

// Flush sends every queued message of every peer.
func (e *Endpoint) Flush() error {
	e.peersMu.RLock()
	peers := make([]*Peer, 0, len(e.peers))
	for _, p := range e.peers {
		peers = append(peers, p)
	}
	e.peersMu.RUnlock()
	var first error
	for _, p := range peers {
		if err := e.FlushPeer(p); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// FlushPeer sends p's queued messages, as few packets as the MTU and FlagNoBundle
// allow.
func (e *Endpoint) FlushPeer(p *Peer) error {
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	ml := e.send.MessageLayout()
	q := p.queue
	var err error
	for i := 0; i < len(q) && err == nil; {
		j := i + 1
		size := EncodedSize(&q[i], ml, nil)
		if q[i].Flags&FlagNoBundle == 0 {
			for j < len(q) && q[j].Flags&FlagNoBundle == 0 {
				next := size + EncodedSize(&q[j], ml, &q[j-1])
				if e.packetSize(next) > e.cfg.MTU {
					break
				}
				size = next
				j++
			}
		}
		err = e.sendPacket(p, q[i:j])
		i = j
	}
	clear(p.queue)
	p.queue = p.queue[:0]
	p.arena = p.arena[:0]
	return err
}

// sendPacket seals msgs into one packet to p. Called with sendMu held.
func (e *Endpoint) sendPacket(p *Peer, msgs []Message) error {
	now := e.cfg.Now()
	pkt := &e.sendPkt
	pkt.Messages = msgs
	pkt.Footer = nil
	h := &pkt.Header
	*h = Header{Encrypted: e.cfg.SessionKey != nil}
	hl := e.send.HeaderLayout()
	if hl.hasConnectionID() {
		h.ConnectionID = p.cfg.ConnectionID
	} else {
		h.DestinationVariableID = p.cfg.VariableID
		h.SourceVariableID = e.cfg.VariableID
	}
	h.PacketID = p.nextPacketID
	p.nextPacketID++
	if p.nextPacketID == 0 {
		p.nextPacketID = 1 // 0 means "no connection"
	}
	if hl <= Header5_7 {
		h.SessionTimer = e.timer.Value(now)
		p.mu.Lock()
		h.RTTTimer, _ = p.clock.Estimate(now)
		p.mu.Unlock()
	}
	if hl != HeaderUpTo5_6 {
		e.nonceCtr++
		binary.BigEndian.PutUint64(h.Nonce[:], e.nonceCtr)
	}
	var err error
	e.sendBuf, err = e.send.Seal(e.sendBuf[:0], pkt, e.cfg.Source)
	pkt.Messages = nil
	if err != nil {
		return err
	}
	if _, err := e.conn.WriteToUDPAddrPort(e.sendBuf, p.addr); err != nil {
		return fmt.Errorf("pia send to %s: %w", p.addr, err)
	}
	e.packetsOut.Add(1)
	e.messagesOut.Add(uint64(len(msgs)))
	return nil
}

// Ping sends an RTT protocol request to p; its response feeds p's RTT estimate.
// Up to 5.10 every packet's header timers feed it as well.
func (e *Endpoint) Ping(p *Peer) error {
	return e.sendRTT(p, RTTPayload{Time: uint64(e.cfg.Now().Sub(e.start))})
}

func (e *Endpoint) sendRTT(p *Peer, r RTTPayload) error {
	var buf [rttPayloadSize]byte
	payload, _ := r.Append(buf[:0])
	if err := e.Send(p, Message{ProtocolType: e.rttT, ProtocolPort: RTTPort, Payload: payload}); err != nil {
		return err
	}
	return e.FlushPeer(p)
}

// Serve reads and handles packets until ctx is done or the endpoint is closed. It
// returns nil after Close.
func (e *Endpoint) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { e.Close() })
	defer stop()
	if e.cfg.FlushInterval > 0 {
		// The flusher ends before Serve returns, so nothing is sent after it.
		done, flusherDone := make(chan struct{}), make(chan struct{})
		defer func() { close(done); <-flusherDone }()
		go func() {
			defer close(flusherDone)
			t := time.NewTicker(e.cfg.FlushInterval)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					if err := e.Flush(); err != nil {
						e.log.Debug("pia flush", "err", err)
					}
				}
			}
		}()
	}
	buf := make([]byte, 64<<10)
	for {
		n, addr, err := e.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if e.closed.Load() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("pia endpoint: read: %w", err)
		}
		e.handlePacket(buf[:n], addr)
	}
}

// Close closes the socket; Serve returns.
func (e *Endpoint) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	return e.conn.Close()
}

func (e *Endpoint) drop(r DropReason, from netip.AddrPort, err error) {
	e.drops[r].Add(1)
	e.log.Debug("pia drop", "reason", r.String(), "from", from, "err", err)
}

// HandlePacket processes one received datagram as Serve does; it is exported for
// callers that own the socket reads (and for tests). It must not run concurrently
// with Serve or with itself: the receive side reuses one buffer.
func (e *Endpoint) HandlePacket(b []byte, from netip.AddrPort) { e.handlePacket(b, from) }

func (e *Endpoint) handlePacket(b []byte, from netip.AddrPort) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	e.packetsIn.Add(1)
	p, ok := e.Peer(from)
	if !ok {
		if !e.cfg.AcceptUnknownPeers {
			e.drop(DropUnknownPeer, from, nil)
			return
		}
		p = &Peer{addr: from, src: Source{IP: from.Addr()}, nextPacketID: 1}
	}
	pkt := &e.recvPkt
	if err := e.recv.Open(pkt, b, p.src); err != nil {
		switch {
		case errors.Is(err, ErrAuth):
			e.drop(DropAuth, from, err)
		case errors.Is(err, ErrBadVersion):
			e.drop(DropVersion, from, err)
		default:
			e.drop(DropMalformed, from, err)
		}
		return
	}
	if !ok {
		p = e.AddPeer(from, PeerConfig{VariableID: pkt.Header.SourceVariableID})
	}
	now := e.cfg.Now()
	h := &pkt.Header
	p.mu.Lock()
	if h.Layout.hasConnectionID() {
		if p.cfg.PeerConnectionID == 0 {
			p.cfg.PeerConnectionID = h.ConnectionID
		} else if h.ConnectionID != p.cfg.PeerConnectionID {
			p.mu.Unlock()
			e.drop(DropConnection, from, fmt.Errorf("connection id %d, peer uses %d", h.ConnectionID, p.cfg.PeerConnectionID))
			return
		}
	}
	if !p.acceptLocked(h) {
		p.mu.Unlock()
		e.drop(DropReplay, from, fmt.Errorf("packet id %d", h.PacketID))
		return
	}
	if h.Layout <= Header5_7 {
		p.clock.Observe(h.SessionTimer, now)
		if h.RTTTimer != 0 {
			p.rtt.Add(RTTFromTimers(e.timer.Value(now), h.RTTTimer))
		}
	}
	p.mu.Unlock()
	for i := range pkt.Messages {
		e.deliver(p, &pkt.Messages[i], now)
	}
}

// acceptLocked implements replay protection: a window of 64 packet ids behind the
// highest seen, and a ring of the last 128 header nonces. The packet id is not
// authenticated by AES-GCM (Pia uses no associated data), so a replay with an edited
// packet id is caught by its nonce.
func (p *Peer) acceptLocked(h *Header) bool {
	if h.Layout != HeaderUpTo5_6 && h.Encrypted {
		// The first nonce byte is not authenticated in LAN up to 5.44: compare the rest.
		for i := 0; i < p.nonceLen; i++ {
			if [7]byte(p.nonces[i][1:]) == [7]byte(h.Nonce[1:]) {
				return false
			}
		}
	}
	id := h.PacketID
	if id != 0 {
		if !p.seenAny {
			p.seenAny, p.highest, p.window = true, id, 1
		} else if d := int16(id - p.highest); d > 0 {
			if d >= 64 {
				p.window = 1
			} else {
				p.window = p.window<<uint(d) | 1
			}
			p.highest = id
		} else {
			back := uint(-d)
			if back >= 64 || p.window&(1<<back) != 0 {
				return false
			}
			p.window |= 1 << back
		}
	}
	if h.Layout != HeaderUpTo5_6 && h.Encrypted {
		p.nonces[p.nonceNext] = h.Nonce
		p.nonceNext = (p.nonceNext + 1) % replayNonces
		if p.nonceLen < replayNonces {
			p.nonceLen++
		}
	}
	return true
}

func (e *Endpoint) deliver(p *Peer, m *Message, now time.Time) {
	e.messagesIn.Add(1)
	if m.ProtocolType == e.rttT && m.ProtocolPort == RTTPort {
		r, _, err := ParseRTTPayload(m.Payload)
		if err != nil {
			e.drop(DropMalformed, p.addr, err)
			return
		}
		if r.Response {
			sample := now.Sub(e.start) - time.Duration(r.Time)
			p.mu.Lock()
			p.rtt.Add(sample)
			p.mu.Unlock()
			return
		}
		if err := e.sendRTT(p, RTTPayload{Response: true, Time: r.Time}); err != nil {
			e.log.Debug("pia rtt response", "to", p.addr, "err", err)
		}
		return
	}
	e.peersMu.RLock()
	h := e.handlers[handlerKey{m.ProtocolType, m.ProtocolPort}]
	e.peersMu.RUnlock()
	if h == nil {
		e.drop(DropNoHandler, p.addr, fmt.Errorf("protocol type 0x%x port %d", m.ProtocolType, m.ProtocolPort))
		return
	}
	if m.Compressed(e.cfg.Version) {
		out, err := m.Inflate(nil)
		if err != nil {
			e.drop(DropInflate, p.addr, err)
			return
		}
		mm := *m
		mm.Payload = out
		h.ServePia(p, &mm)
		return
	}
	h.ServePia(p, m)
}
