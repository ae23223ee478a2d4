package lite

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/coder/websocket"

	"github.com/gamewire/gamewire/prudp"
)

// DialStream opens a Lite stream to a URL: ws://host:port/ and
// wss://host:port/ (a WebSocket with subprotocol NEX whose binary messages
// carry the packets), tcp://host:port and tls://host:port (raw streams). The
// returned net.Conn carries Lite packets back to back; on a WebSocket every
// Write is one message. ctx bounds the dial only.
func DialStream(ctx context.Context, rawURL string, cfg *Config) (net.Conn, error) {
	rc := cfg.resolved()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("prudp lite: dial %q: %w", rawURL, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rc.HandshakeTimeout)
		defer cancel()
	}
	switch u.Scheme {
	case "ws", "wss":
		opts := &websocket.DialOptions{Subprotocols: []string{Subprotocol}}
		if u.Scheme == "wss" && rc.TLS != nil {
			opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: rc.TLS, ForceAttemptHTTP2: false}}
		}
		if u.Path == "" {
			u.Path = "/"
		}
		wc, _, err := websocket.Dial(ctx, u.String(), opts)
		if err != nil {
			return nil, fmt.Errorf("prudp lite: dial %s: %w", u.Redacted(), err)
		}
		if wc.Subprotocol() != Subprotocol {
			rc.Logger.Debug("prudp lite: server did not select the NEX subprotocol", "url", u.Redacted(), "got", wc.Subprotocol())
		}
		var addr net.Addr = liteAddr(u.Host)
		if ap, err := netip.ParseAddrPort(u.Host); err == nil {
			addr = net.TCPAddrFromAddrPort(ap)
		}
		return newWSConn(wc, addr, u.Scheme), nil
	case "tcp", "tls":
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return nil, fmt.Errorf("prudp lite: dial %s: %w", u.Redacted(), err)
		}
		if u.Scheme == "tcp" {
			return c, nil
		}
		tcfg := rc.TLS
		if tcfg == nil {
			tcfg = &tls.Config{}
		}
		if tcfg.ServerName == "" && !tcfg.InsecureSkipVerify {
			tcfg = tcfg.Clone()
			tcfg.ServerName = u.Hostname()
		}
		tc := tls.Client(c, tcfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("prudp lite: dial %s: TLS: %w", u.Redacted(), err)
		}
		return tc, nil
	}
	return nil, fmt.Errorf("prudp lite: dial %q: scheme %q is not ws, wss, tcp or tls", rawURL, u.Scheme)
}

// NewClient wraps one dialed stream as the PacketConn of a PRUDP client
// (prudp.DialPacketConn): every packet read comes from the returned address,
// and every write goes to the stream whatever address it names. Closing the
// PortConn closes the stream. When the stream ends, the engine receives a
// forced DISCONNECT for each connection it carried.
func NewClient(c net.Conn, cfg *Config) (*PortConn, netip.AddrPort) {
	h := newHub(cfg)
	h.local = c.RemoteAddr()
	v := newPortConn(h, -1)
	v.closeHub = true
	h.all = v
	s, err := h.addStream(c, streamKind(c), c.RemoteAddr())
	if err != nil {
		v.closeView()
		return v, netip.AddrPort{}
	}
	return v, s.peer
}

func streamKind(c net.Conn) string {
	switch c := c.(type) {
	case *wsConn:
		return c.kind
	case *tls.Conn:
		return KindTLS
	case *net.TCPConn:
		return KindTCP
	}
	return KindStream
}

// Stats returns the counters of the transport under a PortConn (the whole
// Listener's on a server).
func (p *PortConn) Stats() Stats { return p.h.stats() }

// Dial connects a PRUDP Lite client to a URL (ws://, wss://, tcp://, tls://)
// and completes the handshake: DialStream, NewClient, then
// prudp.DialPacketConn with pcfg (its Dialect must be prudp.NEXLite; nil
// means a default Lite configuration). pcfg.Port is the server's virtual port
// (1 authentication, 2 secure). The connection owns the stream: it is closed
// when the connection ends. ctx bounds the dial and the handshake.
func Dial(ctx context.Context, rawURL string, pcfg *prudp.Config, cfg *Config) (*prudp.Conn, error) {
	if pcfg == nil {
		pcfg = &prudp.Config{Dialect: prudp.NEXLite}
	}
	if pcfg.Dialect != prudp.NEXLite {
		return nil, fmt.Errorf("prudp lite: dial %q: dialect %v, want nex-lite", rawURL, pcfg.Dialect)
	}
	c, err := DialStream(ctx, rawURL, cfg)
	if err != nil {
		return nil, err
	}
	pc, raddr := NewClient(c, cfg)
	conn, err := prudp.DialPacketConn(ctx, pc, raddr, pcfg, true)
	if err != nil {
		return nil, fmt.Errorf("prudp lite: dial %s: %w", rawURL, err)
	}
	return conn, nil
}
