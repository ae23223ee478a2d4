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
	"slices"
	"strings"
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
	DropDestination                   // the message is addressed to another station (and not relayed)
	// DropMessages: the packet authenticated (or was not encrypted) but one of its
	// messages does not parse. The whole packet is dropped, as consoles drop it;
	// `gamewire decode` shows what did parse (Codec.Open's *MessageError).
	DropMessages
	numDropReasons
)

var dropNames = [numDropReasons]string{"malformed", "auth", "version", "replay", "unknown-peer", "connection-id", "no-handler", "inflate", "destination", "messages"}

// ErrUnaddressable is returned by the send helpers (SendTo, Multicast,
// MulticastStations, Broadcast) when a message cannot be addressed as asked: the
// peer has no constant id, a station index that does not fit the destination
// bitmap, two peers share a station index, or no peer has a station of the bitmap.
var ErrUnaddressable = errors.New("cannot address the message")

// BroadcastStations is the destination bitmap of a message to every station: the
// low 32 bits set, as in the multicast message of the published 5.27 packet
// (testdata/pia/vectors.json). Broadcast sends it.
const BroadcastStations uint64 = 0xFFFFFFFF

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
	// ConstantID is this station's constant id ("Constant ID" in
	// nintendo-wiki docs/pia/terminology.md). It fills the source constant id of
	// outgoing messages whose layout carries one (up to 5.26) when the message
	// leaves it zero. When it is non-zero, a received unicast message whose
	// destination is another constant id is not delivered: it is dropped under
	// DropDestination (or relayed, see Relay). 0 means unknown: every unicast
	// message is delivered. Up to 5.4 the field is 32 bits wide, so it must fit.
	ConstantID uint64
	// StationIndex is this station's index in the mesh ("Station index" in
	// the Pia Protocol wiki). It fills the source station index of messages up to 5.4 when
	// the message leaves it zero. A received multicast message whose destination
	// bitmap lacks this station's bit is not delivered (DropDestination, or relayed).
	// Zero is station 0: give StationIndexInvalid (253) while the station has not
	// joined a mesh, and every multicast message is delivered; SetStationIndex
	// changes it when the mesh assigns one. The host (254) and broadcast (255)
	// values, and indexes beyond the bitmap (32 bits up to 5.4, 64 later), filter
	// nothing either.
	StationIndex uint8
	// Relay forwards received messages that carry the relay flag to the peers their
	// destination names (a known peer with that constant id, or the peers whose
	// station bits are set, never back to the sender), with the relay flag cleared and
	// the relayed flag set, and delivers them here only if they are addressed to this
	// station too. Default: no forwarding; a relay request addressed to another
	// station is dropped under DropDestination.
	Relay bool
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
	// ConstantID is the peer's constant id: SendTo writes it as the destination of
	// unicast messages, and relaying finds the peer by it. 0 means unknown: it is
	// then learnt from the first message the peer sends that carries a source
	// constant id (up to 5.26) and was not relayed; until then SendTo refuses.
	// Peer.SetConstantID changes it.
	ConstantID uint64
	// StationIndex is the peer's index in the mesh: Multicast sets its bit in the
	// destination bitmap, and MulticastStations and relaying find the peer by it.
	// Zero is station 0: give StationIndexInvalid (253) for a peer that has no
	// index yet. Peer.SetStationIndex changes it. Peers created by
	// AcceptUnknownPeers start with StationIndexInvalid.
	StationIndex uint8
}

// Peer is a remote station of an Endpoint.
type Peer struct {
	addr netip.AddrPort
	src  Source
	cfg  PeerConfig

	// addressing: settable at any time (a mesh assigns station indexes after join)
	constantID atomic.Uint64
	station    atomic.Uint32

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

// ConstantID returns the peer's constant id (0 if unknown).
func (p *Peer) ConstantID() uint64 { return p.constantID.Load() }

// SetConstantID sets the peer's constant id (see PeerConfig.ConstantID).
func (p *Peer) SetConstantID(id uint64) { p.constantID.Store(id) }

// StationIndex returns the peer's station index (StationIndexInvalid if it has none).
func (p *Peer) StationIndex() uint8 { return uint8(p.station.Load()) }

// SetStationIndex sets the peer's station index, for example when the mesh's join
// response or update names it (see PeerConfig.StationIndex).
func (p *Peer) SetStationIndex(i uint8) { p.station.Store(uint32(i)) }

// RTT returns the peer's smoothed round-trip time and the number of samples.
func (p *Peer) RTT() (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rtt.SRTT(), p.rtt.Samples()
}

// Endpoint speaks Pia over a UDP socket: it keeps per-peer connection ids and
// packet id counters, bundles queued messages into packets up to the MTU
// (honouring the no-bundle flag), seals and opens them, measures per-peer RTT (header
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

	station  atomic.Uint32 // this station's index (EndpointConfig.StationIndex)
	destBits uint          // width of the destination field: 32 up to 5.4, else 64
	flags    MessageFlags  // the message flag bits of the version

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
	messagesRelayed         atomic.Uint64
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
	if cfg.NonceParams.Network.NonceInputs(cfg.Version.HeaderLayout())&NonceSourceIP != 0 &&
		(!cfg.Source.IP.IsValid() || cfg.Source.IP.IsUnspecified()) {
		return nil, fmt.Errorf("pia endpoint: %w: %s nonces of Pia %s use this station's IP; set EndpointConfig.Source.IP to the address peers see", ErrWildcardSource, cfg.NonceParams.Network, cfg.Version)
	}
	cc := Config{Version: cfg.Version, NonceParams: cfg.NonceParams, SessionKey: cfg.SessionKey, AllowPlaintext: cfg.AllowPlaintext}
	send, err := NewCodec(cc)
	if err != nil {
		return nil, fmt.Errorf("pia endpoint: %w", err)
	}
	recv, _ := NewCodec(cc)
	destBits := send.MessageLayout().DestinationBits()
	if destBits < 64 && cfg.ConstantID>>destBits != 0 {
		return nil, fmt.Errorf("pia endpoint: %w: constant id 0x%x does not fit the %d-bit fields of Pia %s", ErrBadField, cfg.ConstantID, destBits, cfg.Version)
	}
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
		destBits: destBits,
		flags:    send.MessageLayout().Flags(),
	}
	e.station.Store(uint32(cfg.StationIndex))
	// The timer starts at 1: an RTT timer field of 0 means "nothing heard yet".
	e.timer = SessionTimer{Start: e.start.Add(-time.Millisecond)}
	return e, nil
}

// Listen binds a UDP socket on addr (for example "127.0.0.1:0"; the library never
// picks 0.0.0.0 on its own) and returns an endpoint on it.
func Listen(addr string, cfg EndpointConfig) (*Endpoint, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("pia endpoint: address %q: %w", addr, err)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("pia endpoint: %w", err)
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
	p := newPeer(addr, pc)
	e.peers[addr] = p
	return p
}

func newPeer(addr netip.AddrPort, pc PeerConfig) *Peer {
	p := &Peer{addr: addr, cfg: pc, src: Source{MAC: pc.MAC, IP: addr.Addr()}, nextPacketID: 1}
	p.constantID.Store(pc.ConstantID)
	p.station.Store(uint32(pc.StationIndex))
	return p
}

// StationIndex returns this station's index in the mesh (EndpointConfig.StationIndex).
func (e *Endpoint) StationIndex() uint8 { return uint8(e.station.Load()) }

// SetStationIndex changes this station's index, for example once the mesh host
// has assigned one; it takes effect for the next message received or queued.
func (e *Endpoint) SetStationIndex(i uint8) { e.station.Store(uint32(i)) }

// Peer returns the peer at addr, if known.
func (e *Endpoint) Peer(addr netip.AddrPort) (*Peer, bool) {
	e.peersMu.RLock()
	defer e.peersMu.RUnlock()
	p, ok := e.peers[netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())]
	return p, ok
}

// Drops returns how many packets or messages were dropped for reason r.
func (e *Endpoint) Drops(r DropReason) uint64 { return e.drops[r].Load() }

// EndpointStats are an endpoint's counters. MessagesRelayed counts the copies
// forwarded for relay-flagged messages (EndpointConfig.Relay); they are in MessagesOut too.
type EndpointStats struct {
	PacketsIn, PacketsOut, MessagesIn, MessagesOut uint64
	MessagesRelayed                                uint64
	Drops                                          map[string]uint64
}

// String renders the counters as one line, drops sorted by reason
// ("packets 3 in, 3 out; messages 3 in, 3 out, 0 relayed; drops: auth=1"), so that
// printing a Stats value never shows a Go map.
func (s EndpointStats) String() string {
	drops := "none"
	if len(s.Drops) > 0 {
		keys := make([]string, 0, len(s.Drops))
		for k := range s.Drops {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			keys[i] = fmt.Sprintf("%s=%d", k, s.Drops[k])
		}
		drops = strings.Join(keys, " ")
	}
	return fmt.Sprintf("packets %d in, %d out; messages %d in, %d out, %d relayed; drops: %s",
		s.PacketsIn, s.PacketsOut, s.MessagesIn, s.MessagesOut, s.MessagesRelayed, drops)
}

// Stats returns the endpoint's counters.
func (e *Endpoint) Stats() EndpointStats {
	s := EndpointStats{
		PacketsIn: e.packetsIn.Load(), PacketsOut: e.packetsOut.Load(),
		MessagesIn: e.messagesIn.Load(), MessagesOut: e.messagesOut.Load(),
		MessagesRelayed: e.messagesRelayed.Load(),
		Drops:           make(map[string]uint64),
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
// packet is refused with ErrTooLarge. Send writes m's Flags and Destination as
// given; SendTo, Multicast, MulticastStations and Broadcast fill them.
func (e *Endpoint) Send(p *Peer, m Message) error {
	if err := e.prepare(&m, true); err != nil {
		return fmt.Errorf("pia send: %w", err)
	}
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	e.enqueueLocked(p, &m)
	return nil
}

// prepare fills the source fields of m (when fillSource and m leaves them zero)
// and checks that m fits the layout and one packet.
func (e *Endpoint) prepare(m *Message, fillSource bool) error {
	ml := e.send.MessageLayout()
	if fillSource {
		if m.SourceConstantID == 0 && ml.carriesSourceConstantID() {
			m.SourceConstantID = e.cfg.ConstantID
		}
		if ml == MessageUpTo5_4 && m.SourceStationIndex == 0 {
			m.SourceStationIndex = e.StationIndex()
		}
	}
	if err := m.check(ml); err != nil {
		return err
	}
	if size := e.packetSize(EncodedSize(m, ml, nil)); size > e.cfg.MTU {
		return fmt.Errorf("%w: a packet with this message is %d bytes, MTU %d", ErrTooLarge, size, e.cfg.MTU)
	}
	return nil
}

// enqueueLocked appends m to p's queue, copying the payload into p's arena.
// Called with sendMu held.
func (e *Endpoint) enqueueLocked(p *Peer, m *Message) {
	mm := *m
	start := len(p.arena)
	p.arena = append(p.arena, m.Payload...)
	mm.Payload = p.arena[start:len(p.arena):len(p.arena)]
	p.queue = append(p.queue, mm)
}

// SendTo queues m for p as a unicast message ("Destination" in the Pia Protocol wiki): it
// clears the multicast flag and sets Destination to p's constant id, which a receiver
// that knows its own constant id checks. The peer needs a constant id
// (PeerConfig.ConstantID or Peer.SetConstantID); otherwise SendTo returns
// ErrUnaddressable. Flush sends the message as Send does.
func (e *Endpoint) SendTo(p *Peer, m Message) error {
	if err := e.destinationCarried("send to"); err != nil {
		return err
	}
	cid := p.ConstantID()
	if cid == 0 {
		return fmt.Errorf("pia send to %s: %w: the peer has no constant id (PeerConfig.ConstantID)", p.addr, ErrUnaddressable)
	}
	if e.destBits == 32 && cid > 0xFFFFFFFF {
		return fmt.Errorf("pia send to %s: %w: constant id 0x%x does not fit the 32-bit destination of Pia %s", p.addr, ErrUnaddressable, cid, e.cfg.Version)
	}
	m.Flags &^= e.flags.Multicast
	m.Destination = cid
	if err := e.prepare(&m, true); err != nil {
		return fmt.Errorf("pia send to %s: %w", p.addr, err)
	}
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	e.enqueueLocked(p, &m)
	return nil
}

// Multicast queues m for each of peers as one multicast message ("Destination" in
// the Pia Protocol wiki): it sets the multicast flag and a destination bitmap with bit 1<<index
// for each peer's station index, so that every receiver finds its own bit. Every
// peer needs a distinct station index that fits the bitmap (0-31 up to 5.4, 0-63
// later); otherwise nothing is queued and Multicast returns ErrUnaddressable.
// 6.16-6.30 has no multicast flag: there Multicast returns ErrUnaddressable.
func (e *Endpoint) Multicast(peers []*Peer, m Message) error {
	if err := e.multicastCarried("multicast"); err != nil {
		return err
	}
	if len(peers) == 0 {
		return fmt.Errorf("pia multicast: %w: no peers", ErrUnaddressable)
	}
	var bitmap uint64
	for i, p := range peers {
		idx := p.StationIndex()
		if uint(idx) >= e.destBits {
			return fmt.Errorf("pia multicast: %w: peer %s has station index %d, which has no bit in the %d-bit destination of Pia %s", ErrUnaddressable, p.addr, idx, e.destBits, e.cfg.Version)
		}
		if bitmap&(1<<idx) != 0 {
			for _, q := range peers[:i] {
				if q.StationIndex() == idx {
					return fmt.Errorf("pia multicast: %w: peers %s and %s both have station index %d", ErrUnaddressable, q.addr, p.addr, idx)
				}
			}
		}
		bitmap |= 1 << idx
	}
	return e.queueMulticast("multicast", peers, m, bitmap)
}

// MulticastStations queues m as a multicast message with destination bitmap
// stations (bit 1<<index per station) for every known peer whose station index has
// its bit set. Bits that name no known peer are sent as they are (a broadcast
// bitmap names every possible station). It returns ErrUnaddressable when no peer
// matches or two matching peers share a station index.
func (e *Endpoint) MulticastStations(stations uint64, m Message) error {
	if err := e.multicastCarried("multicast"); err != nil {
		return err
	}
	if e.destBits == 32 && stations > 0xFFFFFFFF {
		return fmt.Errorf("pia multicast: %w: bitmap 0x%x does not fit the 32-bit destination of Pia %s", ErrUnaddressable, stations, e.cfg.Version)
	}
	peers := e.peersWithStations(stations, nil)
	if len(peers) == 0 {
		return fmt.Errorf("pia multicast: %w: no known peer has a station in bitmap 0x%x", ErrUnaddressable, stations)
	}
	var seen uint64
	for _, p := range peers {
		idx := p.StationIndex()
		if seen&(1<<idx) != 0 {
			return fmt.Errorf("pia multicast: %w: two peers have station index %d (one is %s)", ErrUnaddressable, idx, p.addr)
		}
		seen |= 1 << idx
	}
	return e.queueMulticast("multicast", peers, m, stations)
}

// Broadcast queues m for every known peer as a multicast message to
// BroadcastStations, the bitmap every station accepts.
func (e *Endpoint) Broadcast(m Message) error {
	if err := e.multicastCarried("broadcast"); err != nil {
		return err
	}
	e.peersMu.RLock()
	peers := make([]*Peer, 0, len(e.peers))
	for _, p := range e.peers {
		peers = append(peers, p)
	}
	e.peersMu.RUnlock()
	if len(peers) == 0 {
		return fmt.Errorf("pia broadcast: %w: no peers", ErrUnaddressable)
	}
	return e.queueMulticast("broadcast", peers, m, BroadcastStations)
}

// queueMulticast queues m with the multicast flag and bitmap to every peer.
func (e *Endpoint) queueMulticast(op string, peers []*Peer, m Message, bitmap uint64) error {
	m.Flags |= e.flags.Multicast
	m.Destination = bitmap
	if err := e.prepare(&m, true); err != nil {
		return fmt.Errorf("pia %s: %w", op, err)
	}
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	for _, p := range peers {
		e.enqueueLocked(p, &m)
	}
	return nil
}

// peersWithStations appends to dst the known peers whose station index has its
// bit set in bitmap.
func (e *Endpoint) peersWithStations(bitmap uint64, dst []*Peer) []*Peer {
	e.peersMu.RLock()
	defer e.peersMu.RUnlock()
	for _, p := range e.peers {
		if idx := uint(p.StationIndex()); idx < e.destBits && bitmap&(1<<idx) != 0 {
			dst = append(dst, p)
		}
	}
	return dst
}

// destinationCarried refuses the send helpers on a message layout without a
// destination field. Every layout of "Messages" in the Pia Protocol wiki carries one (32-bit
// up to 5.4, 64-bit later), so this only guards layouts the package does not know.
func (e *Endpoint) destinationCarried(op string) error {
	switch e.send.MessageLayout() {
	case MessageUpTo5_4, Message5_6, Message5_11, Message5_14, Message5_18, Message5_27, Message6_16:
		return nil
	}
	return fmt.Errorf("pia %s: %w: the message layout of Pia %s carries no destination", op, ErrUnsupported, e.cfg.Version)
}

// multicastCarried refuses the multicast helpers in a layout without a multicast
// flag (6.16-6.30: 0x01 means "skip the source variable id check" there).
func (e *Endpoint) multicastCarried(op string) error {
	if err := e.destinationCarried(op); err != nil {
		return err
	}
	if e.flags.Multicast == 0 {
		return fmt.Errorf("pia %s: %w: Pia %s messages have no multicast flag (docs/pia.md)", op, ErrUnaddressable, e.cfg.Version)
	}
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

// FlushPeer sends p's queued messages, as few packets as the MTU and the
// no-bundle flag allow.
func (e *Endpoint) FlushPeer(p *Peer) error {
	e.sendMu.Lock()
	defer e.sendMu.Unlock()
	ml := e.send.MessageLayout()
	q := p.queue
	var err error
	for i := 0; i < len(q) && err == nil; {
		j := i + 1
		size := EncodedSize(&q[i], ml, nil)
		if q[i].Flags&e.flags.NoBundle == 0 {
			for j < len(q) && q[j].Flags&e.flags.NoBundle == 0 {
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
	m := Message{ProtocolType: e.rttT, ProtocolPort: RTTPort, Payload: payload}
	// Addressed to the peer when its constant id is known, so that a peer that
	// filters by destination takes it as its own.
	if cid := p.ConstantID(); cid <= allOnes(e.destBits) {
		m.Destination = cid
	}
	if err := e.Send(p, m); err != nil {
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
		p = newPeer(from, PeerConfig{StationIndex: StationIndexInvalid})
	}
	pkt := &e.recvPkt
	if err := e.recv.Open(pkt, b, p.src); err != nil {
		switch {
		case errors.Is(err, ErrAuth):
			e.drop(DropAuth, from, err)
		case errors.Is(err, ErrBadVersion):
			e.drop(DropVersion, from, err)
		case errors.As(err, new(*MessageError)):
			e.drop(DropMessages, from, err)
		default:
			e.drop(DropMalformed, from, err)
		}
		return
	}
	if !ok {
		p = e.AddPeer(from, PeerConfig{VariableID: pkt.Header.SourceVariableID, StationIndex: StationIndexInvalid})
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

// addressed implements the receiver's side of "Destination" and "Station index"
// in the Pia Protocol wiki: it returns nil when m is for this station, and otherwise says
// whose it is. A zero destination names no one (a 5.18+ packet's first message
// without the field inherits zero; constant ids are never zero), so it is
// delivered, as is everything this station cannot judge: a unicast message when
// its own constant id is unknown, a multicast one when its station index is
// StationIndexInvalid, host, broadcast, or has no bit in the field. A unicast
// destination of all ones (no constant id can be: NEX principal ids are small,
// LAN ids have bits 16-31 clear and LDN ids bits 0-15) and a multicast bitmap with this station's
// bit (BroadcastStations has them all) are broadcasts and delivered.
// The relay flag plays no part: a relay request addressed to this station is for it.
func (e *Endpoint) addressed(m *Message) error {
	if m.Destination == 0 {
		return nil
	}
	if m.Multicast(e.send.MessageLayout()) {
		idx := uint(e.station.Load())
		if idx >= e.destBits || m.Destination&(1<<idx) != 0 {
			return nil
		}
		return fmt.Errorf("multicast to stations 0x%x, this station is %d", m.Destination, idx)
	}
	self := e.cfg.ConstantID
	if self == 0 || m.Destination == self || m.Destination == allOnes(e.destBits) {
		return nil
	}
	return fmt.Errorf("unicast to constant id 0x%x, this station is 0x%x", m.Destination, self)
}

func allOnes(bits uint) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// relay forwards a relay-flagged message received from the peer from to the peers its
// destination names, other than from: the peer with that constant id (unicast) or
// the peers with a station bit set (multicast). The copies carry the relayed flag
// instead of the relay flag and keep every other field (the source constant id or
// station index of the layouts up to 5.26 still names the original sender) and the
// payload as received, compressed or not; they are sent at once. A unicast relay
// request for this station itself is not forwarded. relay returns the number of
// copies sent, and why none was; deliver counts a message that is neither for this
// station nor forwarded under DropDestination, with that reason.
func (e *Endpoint) relay(from *Peer, m *Message) (int, error) {
	var buf [8]*Peer
	targets := buf[:0]
	if m.Multicast(e.send.MessageLayout()) {
		targets = e.peersWithStations(m.Destination, targets)
	} else {
		if m.Destination == 0 || m.Destination == e.cfg.ConstantID {
			return 0, nil
		}
		e.peersMu.RLock()
		for _, p := range e.peers {
			if p.ConstantID() == m.Destination {
				targets = append(targets, p)
			}
		}
		e.peersMu.RUnlock()
	}
	targets = slices.DeleteFunc(targets, func(p *Peer) bool { return p == from })
	if len(targets) == 0 {
		return 0, errors.New("no known peer to relay it to")
	}
	fm := *m
	fm.Flags = fm.Flags&^e.flags.Relay | e.flags.Relayed
	if err := e.prepare(&fm, false); err != nil {
		return 0, fmt.Errorf("cannot relay it: %w", err)
	}
	sent := 0
	var lastErr error
	for _, p := range targets {
		e.sendMu.Lock()
		e.enqueueLocked(p, &fm)
		e.sendMu.Unlock()
		if err := e.FlushPeer(p); err != nil {
			e.log.Debug("pia relay", "from", from.addr, "to", p.addr, "err", err)
			lastErr = err
			continue
		}
		sent++
	}
	e.messagesRelayed.Add(uint64(sent))
	if sent == 0 {
		return 0, fmt.Errorf("relay failed: %w", lastErr)
	}
	return sent, nil
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
	if m.SourceConstantID != 0 && m.Flags&e.flags.Relayed == 0 && p.constantID.Load() == 0 {
		p.constantID.CompareAndSwap(0, m.SourceConstantID)
	}
	relayed := 0
	var relayErr error
	if m.Flags&e.flags.Relay != 0 && e.cfg.Relay {
		relayed, relayErr = e.relay(p, m)
	}
	if err := e.addressed(m); err != nil {
		if relayed == 0 {
			if relayErr != nil {
				err = fmt.Errorf("%w; %w", err, relayErr)
			}
			e.drop(DropDestination, p.addr, err)
		}
		return
	}
	if relayed > 0 && !m.Multicast(e.send.MessageLayout()) {
		return // a unicast message forwarded to its addressee is not for this station
	}
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
