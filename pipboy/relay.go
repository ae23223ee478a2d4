package pipboy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Relay sits between a real app and a real game: it accepts apps, connects each to
// the game, forwards every message both ways unchanged, and records the session if a
// Recorder is set. A connection whose peer sends a bad frame (size above the limit,
// unknown type) is closed with a logged error; the relay keeps serving other apps.
type Relay struct {
	// Addr is the TCP address apps connect to; default "127.0.0.1:27000".
	Addr string
	// Game is the game's host[:port] (port 27000 by default). Required.
	Game string
	// Recorder, if set, receives every forwarded message.
	Recorder *Recorder
	// MaxMessageSize bounds message contents in both directions; default 16 MiB.
	MaxMessageSize int
	// IdleTimeout closes a session when one side is silent this long; default 20 s.
	IdleTimeout time.Duration
	// DialTimeout bounds connecting to the game; default 5 s.
	DialTimeout time.Duration
	// Logger receives session events; default none.
	Logger *slog.Logger

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	closed   bool
	stopDial context.CancelFunc // cancels dials to the game still under way at Close
	dialCtx  context.Context
	wg       sync.WaitGroup
	sessions atomic.Uint32
	active   atomic.Int32

	recordFailed atomic.Bool // the Recorder's error has been logged
	acceptErrors atomic.Uint64
}

// Listen opens the listening socket so callers can learn its port before Serve.
func (r *Relay) Listen() (net.Listener, error) {
	return net.Listen("tcp", loopbackAddr(r.Addr, StreamPort))
}

// ListenAndServe listens on Addr and relays until Close.
func (r *Relay) ListenAndServe() error {
	ln, err := r.Listen()
	if err != nil {
		return err
	}
	return r.Serve(ln)
}

// Serve relays apps accepted on ln until Close.
func (r *Relay) Serve(ln net.Listener) error {
	if r.Game == "" {
		ln.Close()
		return errors.New("pipboy: relay: no game address")
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	r.ln = ln
	if r.conns == nil {
		r.conns = make(map[net.Conn]struct{})
	}
	if r.dialCtx == nil {
		r.dialCtx, r.stopDial = context.WithCancel(context.Background())
	}
	done := r.dialCtx.Done()
	r.mu.Unlock()
	loggerOr(r.Logger).Info("pipboy: relay listening", "addr", ln.Addr(), "game", r.Game)
	return acceptLoop(ln, &r.mu, &r.closed, &r.wg, done, r.Logger, &r.acceptErrors, r.session)
}

// AcceptErrors returns how many Accept errors (out of file descriptors, ...) Serve
// has waited out.
func (r *Relay) AcceptErrors() uint64 { return r.acceptErrors.Load() }

// Busy reports whether an app is being relayed (for a discovery Responder).
func (r *Relay) Busy() bool { return r.active.Load() > 0 }

// Sessions returns how many sessions the relay has started.
func (r *Relay) Sessions() uint32 { return r.sessions.Load() }

// Close stops the relay, closing every connection, and waits for its sessions.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	if r.stopDial != nil {
		r.stopDial()
	}
	var err error
	if r.ln != nil {
		err = r.ln.Close()
	}
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return err
}

// Shutdown is Close bounded by ctx.
func (r *Relay) Shutdown(ctx context.Context) error { return closeWithin(ctx, r.Close) }

func (r *Relay) track(c net.Conn, add bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if add {
		if r.closed {
			return false
		}
		r.conns[c] = struct{}{}
	} else {
		delete(r.conns, c)
	}
	return true
}

func (r *Relay) session(app net.Conn) {
	id := r.sessions.Add(1)
	log := loggerOr(r.Logger).With("session", id, "app", app.RemoteAddr())
	if !r.track(app, true) {
		app.Close()
		return
	}
	defer func() { r.track(app, false); app.Close() }()
	game := r.Game
	if _, _, err := net.SplitHostPort(game); err != nil {
		game = net.JoinHostPort(game, strconv.Itoa(StreamPort))
	}
	dt := r.DialTimeout
	if dt <= 0 {
		dt = 5 * time.Second
	}
	r.mu.Lock()
	dialCtx := r.dialCtx
	r.mu.Unlock()
	gc, err := (&net.Dialer{Timeout: dt}).DialContext(dialCtx, "tcp", game)
	if err != nil {
		log.Warn("pipboy: relay cannot reach the game", "game", game, "err", err)
		return
	}
	if !r.track(gc, true) {
		gc.Close()
		return
	}
	defer func() { r.track(gc, false); gc.Close() }()
	r.active.Add(1)
	defer r.active.Add(-1)
	log.Info("pipboy: relay session started", "game", game)
	errs := make(chan error, 2)
	go func() { errs <- r.pump(gc, app, id, FromGame) }()
	go func() { errs <- r.pump(app, gc, id, FromApp) }()
	err = <-errs
	app.Close()
	gc.Close()
	err2 := <-errs
	log.Info("pipboy: relay session ended", "err", err, "other", err2)
}

// pump forwards framed messages from src to dst unchanged, recording each.
func (r *Relay) pump(src, dst net.Conn, session uint32, dir Direction) error {
	idle := r.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	rd := NewReader(src)
	rd.MaxSize = r.MaxMessageSize
	var out []byte
	for {
		_ = src.SetReadDeadline(time.Now().Add(idle))
		m, err := rd.ReadMessage()
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		now := time.Now()
		if out, err = m.Append(out[:0]); err != nil {
			return err
		}
		_ = dst.SetWriteDeadline(now.Add(defaultWriteTimeout))
		if _, err := dst.Write(out); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if cap(out) > 1<<20 {
			out = nil
		}
		if r.Recorder != nil {
			// A Recorder's error is sticky: say it once, not once per message.
			if err := r.Recorder.Record(now, session, dir, m); err != nil && r.recordFailed.CompareAndSwap(false, true) {
				loggerOr(r.Logger).Error("pipboy: recording stopped; relaying goes on", "err", err)
			}
		}
	}
}
