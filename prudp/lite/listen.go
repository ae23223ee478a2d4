package lite

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gamewire/gamewire/internal/acceptretry"
)

// Subprotocol is the WebSocket subprotocol of NEX on the Switch.
const Subprotocol = "NEX"

// Listener accepts PRUDP Lite streams: WebSocket connections (subprotocol
// NEX, path /, binary messages) and raw Lite streams, both on one TCP port,
// in plain text or TLS (Config.TLS). A connection whose first byte is the
// Lite magic 0x80 is a raw stream; anything else is taken for HTTP and
// must upgrade to a WebSocket on /. Packets reach the engine through the
// PortConn of their destination virtual port ([Listener.Port]).
type Listener struct {
	h        *hub
	ln       net.Listener
	http     *http.Server
	conns    chan net.Conn // sniffed HTTP connections for http
	mu       sync.Mutex
	httpOnce sync.Once
	done     chan struct{} // closed by Close: ends a Serve waiting out an Accept error
	doneOnce sync.Once
	serveErr error // why the Serve that Listen started stopped (under mu)
}

// NewListener returns a Listener without a socket: give it connections with
// Serve, ServeHTTP or AddStream.
func NewListener(cfg *Config) *Listener {
	l := &Listener{h: newHub(cfg), conns: make(chan net.Conn), done: make(chan struct{})}
	return l
}

// Listen binds a TCP address ("127.0.0.1:4430") and serves WebSocket and raw
// Lite streams on it (TLS with cfg.TLS) until Close.
func Listen(addr string, cfg *Config) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("prudp lite: listen %q: %w", addr, err)
	}
	l := NewListener(cfg)
	l.h.local = ln.Addr()
	go func() {
		if err := l.Serve(ln); !errors.Is(err, ErrClosed) {
			l.mu.Lock()
			l.serveErr = err
			l.mu.Unlock()
		}
	}()
	return l, nil
}

// Err returns the error that stopped the accept loop Listen started, or nil while it
// runs (and after Close). Accept errors that pass, such as running out of file
// descriptors, do not stop it.
func (l *Listener) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.serveErr
}

// Addr returns the bound address (nil without Listen or Serve).
func (l *Listener) Addr() net.Addr { return l.h.local }

// Port returns the PacketConn of a virtual port, creating it on the first
// call: pass it to prudp.Server.Serve. Packets for ports without a PortConn
// are dropped and counted (reason "no_port").
func (l *Listener) Port(port uint8) *PortConn {
	h := l.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if v := h.ports[port]; v != nil {
		return v
	}
	v := newPortConn(h, int(port))
	if h.closed {
		close(v.done)
		return v
	}
	h.ports[port] = v
	return v
}

// Stats returns the transport's counters.
func (l *Listener) Stats() Stats { return l.h.stats() }

// Close stops accepting, closes every stream and every PortConn, and waits
// for the stream goroutines to end.
func (l *Listener) Close() error {
	l.doneOnce.Do(func() { close(l.done) })
	l.mu.Lock()
	ln, hs := l.ln, l.http
	l.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	if hs != nil {
		hs.Close()
	}
	l.h.close()
	l.h.wg.Wait()
	return nil
}

// Serve accepts connections from ln until it is closed, and returns ErrClosed then.
// Accept errors that pass (running out of descriptors: EMFILE, ENFILE; ENOBUFS,
// ENOMEM; a connection aborted before it was accepted) are waited out with a backoff
// of 5 ms doubling to 1 s, as net/http does, logged at warning level and counted in
// Stats.AcceptErrors by errno; any other error ends Serve and is returned (Listen
// logs it).
func (l *Listener) Serve(ln net.Listener) error {
	l.mu.Lock()
	l.ln = ln
	if l.h.local == nil {
		l.h.local = ln.Addr()
	}
	l.mu.Unlock()
	l.h.mu.RLock()
	closed := l.h.closed
	l.h.mu.RUnlock()
	if closed {
		ln.Close()
		return ErrClosed
	}
	var backoff acceptretry.Backoff
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || l.isClosed() {
				return ErrClosed
			}
			if !acceptretry.Temporary(err) {
				l.h.log.Error("prudp lite: accept failed; the listener stops", "addr", ln.Addr(), "err", err)
				return fmt.Errorf("prudp lite: accept on %v: %w", ln.Addr(), err)
			}
			l.h.acceptErrors.add(acceptretry.Reason(err))
			pause := backoff.Next()
			l.h.log.Warn("prudp lite: accept failed; retrying", "addr", ln.Addr(), "err", err, "retry in", pause)
			if !backoff.WaitFor(pause, l.done) {
				return ErrClosed
			}
			continue
		}
		backoff.Reset()
		go l.sniff(c)
	}
}

func (l *Listener) isClosed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// sniff completes TLS, then reads the first byte: 0x80 starts a raw Lite
// stream, anything else goes to the HTTP server for the WebSocket upgrade.
func (l *Listener) sniff(c net.Conn) {
	cfg := &l.h.cfg
	deadline := time.Now().Add(cfg.HandshakeTimeout)
	_ = c.SetDeadline(deadline)
	remote := c.RemoteAddr()
	secure := false
	if cfg.TLS != nil {
		tc := tls.Server(c, cfg.TLS)
		if err := tc.Handshake(); err != nil {
			l.h.refused.add("tls_handshake")
			l.h.log.Debug("prudp lite: TLS handshake failed", "remote", remote, "err", err)
			c.Close()
			return
		}
		c, secure = tc, true
	}
	br := bufio.NewReaderSize(c, 512)
	first, err := br.Peek(1)
	if err != nil {
		l.h.refused.add("no_data")
		l.h.log.Debug("prudp lite: connection sent nothing", "remote", remote, "err", err)
		c.Close()
		return
	}
	pc := &peekedConn{Conn: c, r: br, secure: secure}
	if first[0] == Magic {
		_ = c.SetDeadline(time.Time{})
		kind := KindTCP
		if secure {
			kind = KindTLS
		}
		_, _ = l.h.addStream(pc, kind, remote)
		return
	}
	// http.Server sets its own read deadline for the request header; the
	// upgraded WebSocket keeps its deadlines in the websocket layer.
	_ = c.SetDeadline(time.Time{})
	l.httpOnce.Do(l.startHTTP)
	select {
	case l.conns <- pc:
	case <-time.After(time.Until(deadline)):
		l.h.refused.add("http_busy")
		c.Close()
	}
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r      *bufio.Reader
	secure bool
}

func (c *peekedConn) Read(b []byte) (int, error) {
	if c.r != nil {
		if c.r.Buffered() > 0 {
			return c.r.Read(b)
		}
		c.r = nil // drained: read the connection directly from now on
	}
	return c.Conn.Read(b)
}

// chanListener hands sniffed connections to http.Server.
type chanListener struct {
	l    *Listener
	done chan struct{}
	once sync.Once
}

func (cl *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-cl.l.conns:
		return c, nil
	case <-cl.done:
		return nil, net.ErrClosed
	}
}

func (cl *chanListener) Close() error {
	cl.once.Do(func() { close(cl.done) })
	return nil
}

func (cl *chanListener) Addr() net.Addr { return cl.l.Addr() }

type secureKey struct{}

func (l *Listener) startHTTP() {
	cl := &chanListener{l: l, done: make(chan struct{})}
	l.mu.Lock()
	l.http = &http.Server{
		Handler:           l,
		ReadHeaderTimeout: l.h.cfg.HandshakeTimeout,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if pc, ok := c.(*peekedConn); ok && pc.secure {
				return context.WithValue(ctx, secureKey{}, true)
			}
			return ctx
		},
	}
	srv := l.http
	l.mu.Unlock()
	go srv.Serve(cl) //nolint:errcheck // ends with Close
}

// ServeHTTP upgrades a request for / to a WebSocket with subprotocol NEX
// and runs it as a stream of binary messages. Mount it on your own HTTP
// server to serve Lite next to other paths.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		l.h.refused.add("path")
		http.Error(w, "PRUDP Lite is served on /", http.StatusNotFound)
		return
	}
	w, r, err := acceptAnyKey(w, r)
	if err != nil {
		l.h.refused.add("upgrade")
		l.h.log.Debug("prudp lite: WebSocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	wc, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// Consoles are not browsers and NEX authenticates with its own
		// tickets, not with cookies: there is no origin to check.
		InsecureSkipVerify: true,
	})
	if err != nil {
		l.h.refused.add("upgrade")
		l.h.log.Debug("prudp lite: WebSocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	if wc.Subprotocol() != Subprotocol {
		l.h.log.Debug("prudp lite: client did not offer the NEX subprotocol; serving it anyway", "remote", r.RemoteAddr)
	}
	kind := KindWS
	if r.TLS != nil || r.Context().Value(secureKey{}) != nil {
		kind = KindWSS
	}
	// The stream outlives this handler: its context is its own.
	nc := newWSConn(wc, nil, kind)
	nc.addr = nc.Conn.RemoteAddr()
	_, _ = l.h.addStream(nc, kind, nc.addr)
}

// wsKeyGUID is the GUID RFC 6455 section 4.2.2 appends to the client's key
// before hashing it into Sec-WebSocket-Accept.
const wsKeyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// rfcNonce stands in for a client's key that websocket.Accept would refuse;
// the Sec-WebSocket-Accept sent is still the hash of the client's own key.
const rfcNonce = "AAAAAAAAAAAAAAAAAAAAAA==" // 16 zero bytes

// acceptAnyKey lets the upgrade accept any non-empty Sec-WebSocket-Key.
// RFC 6455 asks clients for a base64-encoded 16-byte nonce, and
// websocket.Accept refuses anything else, but the key is only ever hashed
// into Sec-WebSocket-Accept, and clients in the field send other keys:
// NintendoClients' Switch client (anynet's websocket.py) sends
// secrets.token_urlsafe(), 43 characters for 32 random bytes. For such a key
// the request handed on carries a placeholder nonce, and the returned
// ResponseWriter replaces the Accept websocket.Accept computed from it with
// the hash of the key the client sent. A missing, repeated or empty key is
// still refused, and every other check of the handshake (GET, HTTP/1.1,
// Upgrade, Connection, version 13) stays websocket.Accept's.
func acceptAnyKey(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, error) {
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return w, r, nil // websocket.Accept refuses a missing or repeated key
	}
	key := strings.TrimSpace(keys[0])
	if key == "" {
		return w, r, errors.New("WebSocket handshake: empty Sec-WebSocket-Key")
	}
	if b, err := base64.StdEncoding.DecodeString(key); err == nil && len(b) == 16 {
		return w, r, nil // RFC 6455's nonce: websocket.Accept hashes it itself
	}
	r = r.Clone(r.Context())
	r.Header.Set("Sec-WebSocket-Key", rfcNonce)
	return &keyAcceptWriter{ResponseWriter: w, accept: secWebSocketAccept(key)}, r, nil
}

// secWebSocketAccept is RFC 6455's Sec-WebSocket-Accept for a client's key.
func secWebSocketAccept(key string) string {
	h := sha1.Sum([]byte(key + wsKeyGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// keyAcceptWriter sets Sec-WebSocket-Accept to accept as the 101 response
// leaves. websocket.Accept finds the connection to hijack through Unwrap.
type keyAcceptWriter struct {
	http.ResponseWriter
	accept string
}

func (w *keyAcceptWriter) WriteHeader(code int) {
	if code == http.StatusSwitchingProtocols {
		w.Header().Set("Sec-WebSocket-Accept", w.accept)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *keyAcceptWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// AddStream serves an already established stream (any net.Conn carrying Lite
// packets back to back) and returns the address the engine sees it as.
func (l *Listener) AddStream(c net.Conn) (string, error) {
	s, err := l.h.addStream(c, KindStream, c.RemoteAddr())
	if err != nil {
		return "", err
	}
	return s.peer.String(), nil
}
