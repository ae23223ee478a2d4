package prudp

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// capture is a PacketConn that keeps what is written, for driving sessions
// by hand without goroutines (benchmarks, memory measurements).
type capture struct {
	addr netip.AddrPort
	out  []datagramOut
	keep bool
}

type datagramOut struct {
	b  []byte
	to netip.AddrPort
}

func (c *capture) ReadFromUDPAddrPort([]byte) (int, netip.AddrPort, error) {
	return 0, netip.AddrPort{}, net.ErrClosed
}
func (c *capture) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	if c.keep {
		// Reuse the slot's buffer: the benchmarks consume datagrams at once.
		if len(c.out) < cap(c.out) {
			c.out = c.out[:len(c.out)+1]
			d := &c.out[len(c.out)-1]
			d.b = append(d.b[:0], b...)
			d.to = to
		} else {
			c.out = append(c.out, datagramOut{b: append([]byte(nil), b...), to: to})
		}
	}
	return len(b), nil
}
func (c *capture) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.addr) }
func (c *capture) Close() error        { return nil }

// manualPair is a client and a server endpoint joined by hand: no goroutine
// runs; deliver moves the captured datagrams across.
type manualPair struct {
	srv            *Server
	sep, cep       *endpoint
	scap, ccap     *capture
	client, server *session
	now            time.Time
}

func newManualPair(tb testing.TB, cfg Config) *manualPair {
	tb.Helper()
	p := &manualPair{now: time.Unix(1e9, 0)}
	p.scap = &capture{addr: netip.MustParseAddrPort("127.0.0.1:60000"), keep: true}
	p.ccap = &capture{addr: netip.MustParseAddrPort("127.0.0.1:50000"), keep: true}
	if cfg.AckDelay == 0 {
		cfg.AckDelay = -1 // the manual clock does not move: acknowledge at once
	}
	rc := cfg.resolved()
	rc.Port = 1
	var err error
	if p.sep, err = newEndpoint(p.scap, rc, 1); err != nil {
		tb.Fatal(err)
	}
	p.srv = &Server{Handler: HandlerFunc(func(*Conn, Message) {})}
	p.srv.conns = map[*Conn]struct{}{}
	p.sep.srv = p.srv
	if p.cep, err = newEndpoint(p.ccap, rc, 1); err != nil {
		tb.Fatal(err)
	}
	sh := p.cep.shards[0]
	c := newConn(sh, p.scap.addr, rc.MaxSendQueue)
	s := newSession(sh, &p.cep.cfg, p.cep.codec, true, p.scap.addr, p.now)
	s.conn, c.s = c, s
	s.localPort = vport(rc.StreamType, 0xf)
	s.remotePort = vport(rc.StreamType, 1)
	s.key = demuxKey{addr: p.scap.addr, local: s.localPort, remote: s.remotePort}
	if err := s.startClient(p.now); err != nil {
		tb.Fatal(err)
	}
	sh.add(s)
	p.client = s
	for range 4 {
		p.deliver()
	}
	if s.state != stateEstablished {
		tb.Fatalf("manual handshake: client state %d", s.state)
	}
	for _, v := range p.sep.shards[0].sessions {
		p.server = v
	}
	p.server.conn.handler = nil // messages stay in the inbox
	return p
}

// deliver hands every captured datagram to the other side and flushes acks.
func (p *manualPair) deliver() {
	p.sep.shards[0].flushWrites()
	p.cep.shards[0].flushWrites()
	for _, pair := range [][2]*capture{{p.ccap, p.scap}, {p.scap, p.ccap}} {
		from, to := pair[0], pair[1]
		ep := p.sep
		if to == p.ccap {
			ep = p.cep
		}
		sh := ep.shards[0]
		for i := range from.out {
			ep.handleDatagram(sh, p.now, from.out[i].b, from.addr)
		}
		from.out = from.out[:0]
		sh.flushAcks(p.now)
	}
}

// sendNow sends a message from the client and puts its packets on the wire
// at once (one datagram per packet).
func (p *manualPair) sendNow(msg []byte) {
	sh := p.cep.shards[0]
	sh.coalesce = false
	_ = p.client.send(p.now, 0, msg)
	sh.coalesce = p.cep.dialect.coalesces
}

// drain empties the server's inbox as Recv would.
func (p *manualPair) drain() {
	p.server.conn.inbox = p.server.conn.inbox[:0]
	p.server.conn.inboxBytes.Store(0)
}
