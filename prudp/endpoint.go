package prudp

import (
	"crypto/rand"
	"errors"
	"hash/maphash"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/prudp/wire"
)

// PacketConn is the datagram socket the engine runs on. *net.UDPConn
// implements it; tests use the in-memory lossy link of internal/lossy.
type PacketConn interface {
	ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	LocalAddr() net.Addr
	Close() error
}

// inlineMax is the largest datagram the socket reader always processes
// itself when its shard is idle (see shard): ACKs, PINGs and small requests,
// whose cost is mostly the hand-off saved. A larger one is processed inline
// too unless the datagram read just before it was also a large one from the
// same peer: that is a burst of fragments (a bulk transfer), which goes
// through the shard's queue so that reading the socket and decrypting overlap
// on two cores (processing every fragment inline measured 2-5x slower in
// BenchmarkBulkLoopback), while single large requests from many clients (1 KiB
// request/response) save the hand-off: at 16 clients of 1 KiB in prudpbench,
// server CPU per request 18.0-20.3 -> 15.3-16.2 us (2.5-2.7x -> 2.25x the UDP
// echo's), with the bulk transfer unchanged within the noise.
const inlineMax = 512

// endpoint is one socket with its shards: the server's, or a client's.
type endpoint struct {
	pc      PacketConn
	cfg     Config
	codec   codec
	dialect *dialectSpec
	shards  []*shard
	seed    maphash.Seed
	srv     *Server // nil on a client endpoint

	secret [32]byte // keys the server's connection signatures

	// off is the socket's batched I/O (nil without); segMax is the largest
	// datagram it may segment (lowered when the kernel refuses a size).
	off             offload
	segMax          atomic.Int32
	segmentedWrites atomic.Uint64 // writes of several datagrams in one call
	coalescedReads  atomic.Uint64 // reads that returned several datagrams

	sessionsOpen atomic.Int64
	// buffered is the bytes the sessions hold in reorder buffers and
	// unfinished messages and their connections in their receive and send
	// queues (Config.MaxBuffer); budgetClosed counts the
	// connections closed with ErrOverBudget.
	buffered     atomic.Int64
	budgetClosed atomic.Uint64

	// InlineHandler accounting (see serveInline).
	inlineLimit    time.Duration
	inlineOverruns atomic.Uint64
	inlineOff      atomic.Bool
	writeErrors    atomic.Uint64
	drops          [numEndpointDrops]atomic.Uint64
	packetsIn      atomic.Uint64
	wg             sync.WaitGroup
}

type endpointDrop int

const (
	epDropChecksum     endpointDrop = iota // checksum mismatch
	epDropMalformed                        // not a packet of the dialect
	epDropSignature                        // forged or corrupted packet signature
	epDropUnknown                          // no connection and not a SYN/CONNECT
	epDropSession                          // wrong session id for the connection
	epDropHandshake                        // refused CONNECT (bad ticket, vport)
	epDropQueue                            // shard queue full
	epDropLiteSig                          // CONNECT with a bad Lite signature (refused, logged)
	epDropSynSignature                     // SYN with a bad signature (not answered; dialectSpec.signedSyn)
	epDropConnLimit                        // CONNECT beyond Config.MaxConns (not answered)
	numEndpointDrops
)

var endpointDropNames = [numEndpointDrops]string{"checksum", "malformed", "signature", "unknown_connection", "session_id", "handshake", "queue_full", "lite_signature", "syn_signature", "conn_limit"}

func newEndpoint(pc PacketConn, cfg Config, nshards int) (*endpoint, error) {
	c, err := newCodec(&cfg)
	if err != nil {
		return nil, err
	}
	ep := &endpoint{pc: pc, cfg: cfg, codec: c, dialect: specOf(cfg.Dialect), seed: maphash.MakeSeed(), inlineLimit: defaultInlineLimit}
	// Only on dialects whose packets always carry their size (V1, Lite): a
	// capture taken on a host that segments shows each run as one large
	// datagram, which tools then read packet by packet, as they read V1's
	// coalesced datagrams. V0, Quazal and Hyperscape packets carry it only
	// with FLAG_HAS_SIZE (gamewire sets it on DATA, not on ACKs); without it
	// a packet ends where its datagram ends, so a run of acknowledgements
	// could not be told apart again.
	if !cfg.DisableOffload && ep.dialect.coalesces {
		ep.off = newOffload(pc)
		ep.segMax.Store(maxSegmentBytes)
	}
	if _, err := rand.Read(ep.secret[:]); err != nil {
		return nil, err
	}
	// A server's shards queue many peers' datagrams; a client's queue
	// serves one connection (and a client process may hold thousands).
	queue := 1024
	if nshards == 1 {
		queue = 128
	}
	for range max(nshards, 1) {
		ep.shards = append(ep.shards, newShard(ep, queue))
	}
	return ep, nil
}

// start runs the shard loops and the socket reader.
func (ep *endpoint) start() {
	for _, sh := range ep.shards {
		ep.wg.Add(1)
		go func() {
			defer ep.wg.Done()
			sh.loop()
		}()
	}
}

// shardFor picks the shard of a peer: all of one peer's connections share one.
func (ep *endpoint) shardFor(addr netip.AddrPort) *shard {
	if len(ep.shards) == 1 {
		return ep.shards[0]
	}
	var h maphash.Hash
	h.SetSeed(ep.seed)
	a := addr.Addr().As16()
	h.Write(a[:])
	p := addr.Port()
	h.WriteByte(byte(p))
	h.WriteByte(byte(p >> 8))
	return ep.shards[h.Sum64()%uint64(len(ep.shards))]
}

// readLoop reads datagrams and queues each to its shard until the socket is closed.
func (ep *endpoint) readLoop() error {
	var r reader
	if ep.off != nil && ep.off.coalesces() {
		return ep.readCoalesced(&r)
	}
	for {
		bp := datagramPool.Get().(*[]byte)
		n, from, err := ep.pc.ReadFromUDPAddrPort(*bp)
		if err != nil {
			datagramPool.Put(bp)
			if fatalReadError(err) {
				return err
			}
			continue
		}
		if err := ep.dispatch(&r, (*bp)[:n], bp, from); err != nil {
			return err
		}
	}
}

// readCoalesced is readLoop on a socket with offload: one read may return a
// run of datagrams of one size from one peer (UDP_GRO), each dispatched on
// its own.
func (ep *endpoint) readCoalesced(r *reader) error {
	buf := make([]byte, maxCoalescedRead)
	oob := make([]byte, oobScratch)
	for {
		n, seg, from, err := ep.off.read(buf, oob)
		if err != nil {
			if fatalReadError(err) {
				return err
			}
			continue
		}
		if seg <= 0 || seg >= n {
			seg = n
		} else {
			ep.coalescedReads.Add(1)
		}
		for b := buf[:n]; len(b) > 0; {
			k := min(seg, len(b))
			if err := ep.dispatch(r, b[:k], nil, from); err != nil {
				return err
			}
			b = b[k:]
		}
	}
}

// fatalReadError reports whether a read error ends the read loop: every one
// but a timeout (a deadline someone set on the socket), as before batched
// reads; net.ErrClosed is the usual end.
func fatalReadError(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

// reader is the read loop's memory of the datagram before.
type reader struct {
	lastLarge netip.AddrPort // source of the last datagram larger than inlineMax
}

// dispatch runs one received datagram inline or queues it to its shard. bp
// is the pooled buffer b lies in, or nil if b must be copied to be queued.
// It returns an error only when the endpoint is stopping.
func (ep *endpoint) dispatch(r *reader, b []byte, bp *[]byte, from netip.AddrPort) error {
	if len(b) > maxDatagram {
		// Larger than any packet of a dialect (a pooled read would have
		// truncated it); counted, as an unparsable datagram is.
		ep.drops[epDropMalformed].Add(1)
		if bp != nil {
			datagramPool.Put(bp)
		}
		return nil
	}
	ep.packetsIn.Add(1)
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	sh := ep.shardFor(from)
	n := len(b)
	small := n <= inlineMax
	burst := !small && from == r.lastLarge
	if small {
		r.lastLarge = netip.AddrPort{}
	} else {
		r.lastLarge = from
	}
	if !burst && sh.pending.Load() == 0 && sh.mu.TryLock() {
		// The shard is idle: run the datagram to completion here.
		select {
		case <-sh.stop:
			sh.mu.Unlock()
			if bp != nil {
				datagramPool.Put(bp)
			}
			return net.ErrClosed
		default:
		}
		now := time.Now()
		ep.handleDatagram(sh, now, b, from)
		sh.endBatch(now)
		sh.mu.Unlock()
		if bp != nil {
			datagramPool.Put(bp)
		}
		return nil
	}
	if bp == nil {
		bp = datagramPool.Get().(*[]byte)
		copy(*bp, b)
	}
	sh.pending.Add(1)
	select {
	case sh.events <- event{buf: bp, n: n, from: from}:
	case <-sh.stop:
		sh.pending.Add(-1)
		datagramPool.Put(bp)
		return net.ErrClosed
	}
	return nil
}

func (ep *endpoint) putDatagram(bp *[]byte) { datagramPool.Put(bp) }

// stopShards ends the shard loops (after their connections were dealt with).
func (ep *endpoint) stopShards() {
	for _, sh := range ep.shards {
		select {
		case <-sh.stop:
		default:
			close(sh.stop)
		}
	}
	ep.wg.Wait()
}

// handleDatagram decodes every packet of one datagram and routes it.
func (ep *endpoint) handleDatagram(sh *shard, now time.Time, b []byte, from netip.AddrPort) {
	for len(b) > 0 {
		p := &sh.pkt
		*p = pkt{}
		n, err := ep.codec.parse(b, p)
		if err != nil {
			if errors.Is(err, wire.ErrBadChecksum) {
				ep.drops[epDropChecksum].Add(1)
			} else {
				ep.drops[epDropMalformed].Add(1)
			}
			ep.cfg.Logger.Debug("prudp: dropped datagram", "peer", from, "err", err)
			return
		}
		p.raw = b[:n]
		b = b[n:]
		ep.route(sh, now, p, from)
	}
}

// route delivers one packet to its connection, or to the stateless
// handshake of the server.
func (ep *endpoint) route(sh *shard, now time.Time, p *pkt, from netip.AddrPort) {
	key := demuxKey{addr: from, local: p.dst, remote: p.src}
	s := sh.sessions[key]
	if s == nil {
		if ep.srv != nil {
			ep.srv.stateless(sh, now, p, from, key)
			return
		}
		ep.drops[epDropUnknown].Add(1)
		return
	}
	if s.client && s.state < stateEstablished {
		s.clientHandshake(now, p)
		sh.schedule(s)
		return
	}
	if !s.client && p.typ == typeSyn && !p.has(flagAck) {
		ep.srv.stateless(sh, now, p, from, key) // a restarted client; its CONNECT will replace s
		return
	}
	if !s.client && p.typ == typeConnect && !p.has(flagAck) && p.sessionID != s.remoteSID {
		ep.srv.stateless(sh, now, p, from, key)
		return
	}
	if p.sessionID != s.remoteSID {
		ep.drops[epDropSession].Add(1)
		return
	}
	if !ep.codec.verify(p, s.keysFor(p.typ, false)) {
		ep.drops[epDropSignature].Add(1)
		s.conn.stats.drop(dropSignature)
		return
	}
	s.handle(now, p)
	sh.schedule(s)
}

// connSig computes the server's connection signature for a client address:
// wire.ConnectionSignature (an HMAC-MD5 of the address and port under the
// server's secret, so that the server recognises its own SYN-ACK in a CONNECT
// without keeping state), with the shard's reusable wire.ConnectionSigner so
// that answering a SYN allocates nothing.
func (sh *shard) connSig(addr netip.AddrPort) [16]byte {
	if sh.signer == nil {
		sh.signer = wire.NewConnectionSigner(sh.ep.secret[:])
	}
	return sh.signer.Sign(addr)
}

// keysFor returns the signing keys of a packet type: the handshake packets
// (SYN, CONNECT and their acks) are signed without the session key, as
// nex-go and NintendoClients do. out selects the outgoing or incoming keys.
func (s *session) keysFor(typ uint8, out bool) keys {
	k := keys{sessionKey: s.sessionKey, connSig: s.sigIn}
	if out {
		k.connSig = s.sigOut
	}
	if typ == typeSyn || typ == typeConnect {
		k.sessionKey = nil
	}
	return k
}
