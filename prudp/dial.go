package prudp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Dial connects to a PRUDP server at addr ("host:port") and completes the
// handshake (and, with cfg.Ticket, the secure CONNECT) before returning. The
// connection owns its UDP socket, which is connected to addr. cfg may be nil;
// cfg.Port is the server's virtual port (default 1) and the client's own
// virtual port is 15. ctx bounds the handshake only.
func Dial(ctx context.Context, addr string, cfg *Config) (*Conn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("prudp: dial %q: %w", addr, err)
	}
	uc, err := net.DialUDP("udp", nil, ua)
	if err != nil {
		return nil, fmt.Errorf("prudp: dial %q: %w", addr, err)
	}
	setSocketBuffers(uc)
	raddr := ua.AddrPort()
	raddr = netip.AddrPortFrom(raddr.Addr().Unmap(), raddr.Port())
	return DialPacketConn(ctx, connectedConn{uc}, raddr, cfg, true)
}

// connectedConn adapts a connected UDP socket to PacketConn.
type connectedConn struct{ *net.UDPConn }

func (c connectedConn) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	return c.Write(b)
}

// DialPacketConn is Dial over an existing socket (for example the
// in-memory lossy link in tests). If own is true the connection closes pc
// when it ends.
func DialPacketConn(ctx context.Context, pc PacketConn, raddr netip.AddrPort, cfg *Config, own bool) (*Conn, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	rc := cfg.resolved()
	if rc.Port == 0 {
		rc.Port = 1
	}
	if err := rc.validateEnd(false); err != nil {
		if own {
			pc.Close()
		}
		return nil, err
	}
	ep, err := newEndpoint(pc, rc, 1)
	if err != nil {
		if own {
			pc.Close()
		}
		return nil, err
	}
	ep.start()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_ = ep.readLoop()
	}()
	sh := ep.shards[0]
	c := newConn(sh, raddr, ep.cfg.MaxSendQueue)
	c.ready = make(chan struct{})
	c.closeEndpoint = func() {
		pc.Close()
		ep.stopShards()
	}
	if !own {
		c.closeEndpoint = func() { ep.stopShards() }
	}
	err = sh.do(ctx, nil, func(now time.Time, _ *session) error {
		s := newSession(sh, &ep.cfg, ep.codec, true, raddr, now)
		s.conn = c
		c.s = s
		s.localPort = vport(ep.cfg.StreamType, ep.dialect.clientPort)
		s.remotePort = vport(ep.cfg.StreamType, ep.cfg.Port)
		s.key = demuxKey{addr: raddr, local: s.localPort, remote: s.remotePort}
		if err := s.startClient(now); err != nil {
			return err
		}
		sh.add(s)
		return nil
	})
	if err != nil {
		c.release()
		return nil, err
	}
	select {
	case <-c.ready:
		return c, nil
	case <-c.done:
		return nil, c.Err()
	case <-ctx.Done():
		c.Abort()
		return nil, fmt.Errorf("%w: %w", ErrHandshake, ctx.Err())
	}
}
