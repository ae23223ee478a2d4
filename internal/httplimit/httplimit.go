// Package httplimit serves HTTP with the limits a public endpoint needs, the
// same for every HTTP listener gamewire runs (the DataStore body endpoint,
// the Prometheus metrics, the Pip-Boy dashboard, NASC/NNAS):
//
//   - timeouts: request headers (ReadHeaderTimeout), keep-alive idleness
//     (IdleTimeout), a whole request and a whole response (ReadTimeout,
//     WriteTimeout);
//   - a minimum transfer rate: once Grace has passed, a request body must
//     have arrived at MinRate bytes a second on average, and each response
//     write must be taken within Grace plus its size at MinRate, or the
//     connection's deadline passes and the read or write fails (so a
//     client trickling a byte every 10 s holds a connection for Grace, not
//     for ReadTimeout);
//   - a cap on open connections (MaxConns): at the cap a new connection
//     evicts the open one that has waited longest without a request in a
//     handler (still sending its headers, or idle between requests); when
//     every connection is in a handler the new one is closed. Slow or idle
//     clients therefore cannot keep a legitimate one out, and the process
//     keeps descriptors for its files and databases;
//   - an accept loop that survives running out of descriptors (EMFILE,
//     ENFILE, ...) by waiting and retrying, as the UDP and PRUDP Lite
//     listeners do (internal/acceptretry), counting each reason.
//
// Use it as an http.Server:
//
//	s := &httplimit.Server{Handler: h, Limits: httplimit.Limits{MaxConns: 64}}
//	go s.Serve(ln)
//	defer s.Shutdown(ctx)
//
// Concurrency caps that depend on the request (uploads per player) are the
// handler's: see nex/datastore.
package httplimit

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/internal/acceptretry"
)

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 30 * time.Second
	DefaultReadTimeout       = 10 * time.Minute
	DefaultWriteTimeout      = 10 * time.Minute
	DefaultMinRate           = 1 << 10 // bytes a second
	DefaultGrace             = 10 * time.Second
	DefaultMaxHeaderBytes    = 16 << 10
)

// Limits are a Server's limits. A zero field takes its default.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's line and headers, and
	// how long a new connection may stay silent; default 10 s.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request; default 30 s.
	IdleTimeout time.Duration
	// ReadTimeout bounds reading a request's body, however fast it comes;
	// default 10 min.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, however fast it goes;
	// default 10 min. A hijacked connection (a WebSocket) has no deadline.
	WriteTimeout time.Duration
	// MinRate is the average rate, in bytes a second, at which a request
	// body must arrive once Grace has passed since the handler started, and
	// the rate at which each response write must be taken after a Grace of
	// its own; default 1 KiB/s. Negative: no minimum.
	MinRate int64
	// Grace is how long a body may take before MinRate applies; default 10 s.
	Grace time.Duration
	// MaxHeaderBytes bounds a request's headers; default 16 KiB.
	MaxHeaderBytes int
	// MaxConns bounds the open connections; default DefaultMaxConns().
	MaxConns int
}

func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.WriteTimeout, DefaultWriteTimeout)
	def(&l.Grace, DefaultGrace)
	if l.MinRate == 0 {
		l.MinRate = DefaultMinRate
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns()
	}
	return l
}

// DefaultMaxConns is MaxConns' default: an eighth of the process's
// descriptor limit (RLIMIT_NOFILE), at least 16 and at most 4096, so that
// several listeners, the database and the body files share what is left.
func DefaultMaxConns() int {
	n := nofile()
	if n <= 0 {
		return 1024
	}
	return int(min(max(n/8, 16), 4096))
}

// Server is an http.Server with Limits. Set its fields before calling any
// method; the zero value (with a Handler) serves with the defaults.
type Server struct {
	Handler http.Handler
	Limits  Limits
	// Logger gets accept failures (Warn) and evictions (Debug); nil logs
	// nothing.
	Logger *slog.Logger
	// TLSConfig, when set, serves HTTPS with it (its Certificates or
	// GetCertificate). A connection still in its handshake is outside a
	// handler: evicted first at the cap, and bounded by ReadHeaderTimeout.
	TLSConfig *tls.Config

	once   sync.Once
	http   *http.Server
	lim    Limits
	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	done   chan struct{}
	stats  struct {
		accepted, evicted, refused atomic.Uint64
		acceptErrors               sync.Map // reason -> *atomic.Uint64
	}
}

// Stats are a Server's counters.
type Stats struct {
	Open         int               // connections open now
	Accepted     uint64            // connections accepted
	Evicted      uint64            // open connections closed to make room for a new one
	Refused      uint64            // new connections closed at the cap
	AcceptErrors map[string]uint64 // failed accepts retried, by reason (EMFILE, ...)
}

func (s *Server) init() {
	s.once.Do(func() {
		s.lim = s.Limits.withDefaults()
		s.conns = make(map[*conn]struct{})
		s.done = make(chan struct{})
		errLog := log.New(io.Discard, "", 0)
		if s.Logger != nil {
			errLog = slog.NewLogLogger(s.Logger.Handler(), slog.LevelDebug)
		}
		s.http = &http.Server{
			Handler:           s.wrap(s.Handler),
			ReadHeaderTimeout: s.lim.ReadHeaderTimeout,
			IdleTimeout:       s.lim.IdleTimeout,
			WriteTimeout:      s.lim.WriteTimeout,
			MaxHeaderBytes:    s.lim.MaxHeaderBytes,
			ErrorLog:          errLog,
			ConnContext: func(ctx context.Context, c net.Conn) context.Context {
				if t, ok := c.(*tls.Conn); ok {
					c = t.NetConn()
				}
				if tc, ok := c.(*conn); ok {
					return context.WithValue(ctx, connKey{}, tc)
				}
				return ctx
			},
			TLSConfig: s.TLSConfig,
		}
	})
}

// Serve accepts connections on ln and serves them until Shutdown or Close,
// returning http.ErrServerClosed then.
func (s *Server) Serve(ln net.Listener) error {
	s.init()
	if s.TLSConfig != nil {
		return s.http.ServeTLS(&listener{Listener: ln, s: s}, "", "")
	}
	return s.http.Serve(&listener{Listener: ln, s: s})
}

// ListenAndServe listens on addr (TCP) and serves.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Shutdown stops accepting, waits for the requests in handlers to finish
// (or ctx to end) and closes the connections, as http.Server.Shutdown does.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	s.stop()
	return s.http.Shutdown(ctx)
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error {
	s.init()
	s.stop()
	return s.http.Close()
}

func (s *Server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.init()
	s.mu.Lock()
	open := len(s.conns)
	s.mu.Unlock()
	st := Stats{Open: open, Accepted: s.stats.accepted.Load(), Evicted: s.stats.evicted.Load(),
		Refused: s.stats.refused.Load(), AcceptErrors: map[string]uint64{}}
	s.stats.acceptErrors.Range(func(k, v any) bool {
		st.AcceptErrors[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return st
}

// EffectiveLimits returns the limits the server applies (defaults filled in).
func (s *Server) EffectiveLimits() Limits {
	s.init()
	return s.lim
}

// listener retries temporary Accept failures and admits connections under
// the cap.
type listener struct {
	net.Listener
	s *Server
}

func (l *listener) Accept() (net.Conn, error) {
	s := l.s
	var backoff acceptretry.Backoff
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if !acceptretry.Temporary(err) {
				return nil, err
			}
			reason := acceptretry.Reason(err)
			v, _ := s.stats.acceptErrors.LoadOrStore(reason, new(atomic.Uint64))
			v.(*atomic.Uint64).Add(1)
			pause := backoff.Next()
			if s.Logger != nil {
				s.Logger.Warn("http: accept failed; retrying", "addr", l.Addr(), "err", err, "retry in", pause)
			}
			if !backoff.WaitFor(pause, s.done) {
				return nil, net.ErrClosed
			}
			continue
		}
		backoff.Reset()
		if tc := s.admit(c); tc != nil {
			return tc, nil
		}
	}
}

// admit tracks c, evicting the connection that has waited longest outside
// a handler when the cap is reached, or refusing c when every connection is
// in a handler.
func (s *Server) admit(c net.Conn) *conn {
	s.stats.accepted.Add(1)
	now := time.Now()
	tc := &conn{Conn: c, s: s}
	tc.since.Store(now.UnixNano())
	s.mu.Lock()
	var victim *conn
	if len(s.conns) >= s.lim.MaxConns {
		for o := range s.conns {
			if o.busy.Load() == 0 && (victim == nil || o.since.Load() < victim.since.Load()) {
				victim = o
			}
		}
		if victim == nil {
			s.mu.Unlock()
			s.stats.refused.Add(1)
			c.Close()
			return nil
		}
		delete(s.conns, victim)
	}
	s.conns[tc] = struct{}{}
	s.mu.Unlock()
	if victim != nil {
		s.stats.evicted.Add(1)
		if s.Logger != nil {
			s.Logger.Debug("http: connection evicted at the cap", "remote", victim.RemoteAddr(), "max conns", s.lim.MaxConns)
		}
		victim.Conn.Close()
	}
	return tc
}

// conn is an admitted connection. busy counts the handlers running on it
// (a connection in a handler is never evicted); since is when it last left
// one (or was accepted).
type conn struct {
	net.Conn
	s     *Server
	busy  atomic.Int32
	since atomic.Int64
	once  sync.Once
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

type connKey struct{}

// wrap marks the connection busy while h runs and holds its body and
// response to the minimum rate.
func (s *Server) wrap(h http.Handler) http.Handler {
	if h == nil {
		h = http.DefaultServeMux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(*conn); ok {
			c.busy.Add(1)
			defer func() {
				c.since.Store(time.Now().UnixNano())
				c.busy.Add(-1)
			}()
		}
		start := time.Now()
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody {
			rr := &rateReader{body: r.Body, rc: rc, start: start, lim: &s.lim}
			rr.extend()
			r.Body = rr
		}
		h.ServeHTTP(&rateWriter{ResponseWriter: w, rc: rc, start: start, lim: &s.lim}, r)
	})
}

// deadline is when n bytes must have moved: Grace after start plus n at
// MinRate, and never later than start + whole.
func deadline(start time.Time, lim *Limits, n int64, whole time.Duration) time.Time {
	end := start.Add(whole)
	if lim.MinRate < 0 {
		return end
	}
	d := start.Add(lim.Grace + time.Duration(float64(n)/float64(lim.MinRate)*float64(time.Second)))
	if d.After(end) {
		return end
	}
	return d
}

// rateReader is a request body held to the minimum rate: before each Read
// the connection's read deadline moves to when the bytes read so far were
// due, so a client that falls behind gets a timeout.
type rateReader struct {
	body  io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	lim   *Limits
	n     int64
	eof   bool
}

func (r *rateReader) extend() {
	_ = r.rc.SetReadDeadline(deadline(r.start, r.lim, r.n, r.lim.ReadTimeout))
}

func (r *rateReader) Read(p []byte) (int, error) {
	if r.eof {
		// The body is in, and net/http reads the connection in the
		// background (without a deadline) to notice a client going away:
		// a deadline set now would pass there and cancel the request's
		// context while the handler still works.
		return 0, io.EOF
	}
	r.extend()
	n, err := r.body.Read(p)
	r.n += int64(n)
	r.eof = err == io.EOF
	return n, err
}

func (r *rateReader) Close() error { return r.body.Close() }

// rateWriter is a response held to the minimum rate: each Write must be
// taken within Grace plus its size at MinRate (and the whole response
// within WriteTimeout). Unlike a body read, the bytes written so far earn
// no credit: the socket buffers take megabytes the client never read.
type rateWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	start time.Time
	lim   *Limits
}

func (w *rateWriter) Write(p []byte) (int, error) {
	end := w.start.Add(w.lim.WriteTimeout)
	if w.lim.MinRate >= 0 {
		if d := deadline(time.Now(), w.lim, int64(len(p)), w.lim.WriteTimeout); d.Before(end) {
			end = d
		}
	}
	_ = w.rc.SetWriteDeadline(end)
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController and WebSocket upgrades reach the
// connection's own writer (Flush, Hijack).
func (w *rateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
