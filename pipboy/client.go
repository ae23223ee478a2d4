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

// ClientConfig configures Dial. The zero value (or nil) uses the defaults.
type ClientConfig struct {
	// HeartbeatInterval is how often the app sends a heartbeat; default 1 s.
	HeartbeatInterval time.Duration
	// IdleTimeout closes the connection when the game sends nothing for this long;
	// default 20 s (the game sends heartbeats, so silence means it is gone).
	IdleTimeout time.Duration
	// MaxMessageSize bounds the content of messages from the game; default 16 MiB.
	MaxMessageSize int
	// Logger receives connection events; default none.
	Logger *slog.Logger
}

// Client is a Pip-Boy app: it connects to a game, keeps the live database, sends
// commands and heartbeats, and keeps the latest local map frame.
type Client struct {
	mc    *msgConn
	log   *slog.Logger
	hello Hello

	mu       sync.RWMutex
	state    *GameState
	mapSeq   uint64
	waiters  map[int]chan CommandResponse
	subs     map[chan struct{}]struct{}
	nextID   atomic.Int64
	done     chan struct{}
	err      error
	cancelHB context.CancelFunc
}

// Dial connects to a game at addr (host or host:port; port 27000 by default) and reads
// its greeting. A game that already serves an app answers Busy: Dial returns ErrBusy.
// The database fills in the background; WaitReady waits for the dump.
func Dial(ctx context.Context, addr string, cfg *ClientConfig) (*Client, error) {
	if cfg == nil {
		cfg = &ClientConfig{}
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, strconv.Itoa(StreamPort))
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	mc := newMsgConn(c, cfg.MaxMessageSize, cfg.IdleTimeout, cfg.HeartbeatInterval)
	// A game that accepts but never greets is given up on after the idle timeout,
	// ctx's deadline or ctx's cancellation, whichever comes first.
	deadline := time.Now().Add(mc.idle)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	m, err := mc.r.ReadMessage()
	stop()
	if err != nil {
		c.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("pipboy: waiting for the greeting from %s: %w (%w)", addr, ctxErr, err)
		}
		return nil, fmt.Errorf("pipboy: reading greeting from %s: %w", addr, err)
	}
	cl := &Client{
		mc:      mc,
		log:     loggerOr(cfg.Logger).With("game", addr),
		state:   NewGameState(),
		waiters: make(map[int]chan CommandResponse),
		subs:    make(map[chan struct{}]struct{}),
		done:    make(chan struct{}),
	}
	switch m.Type {
	case TypeBusy:
		c.Close()
		return nil, fmt.Errorf("pipboy: %s: %w", addr, ErrBusy)
	case TypeNewConnection:
		if err := cl.state.Handle(m); err != nil {
			c.Close()
			return nil, err
		}
		cl.hello = cl.state.Hello
	default:
		c.Close()
		return nil, fmt.Errorf("pipboy: %s greeted with %s, want %s or %s", addr, m.Type, TypeNewConnection, TypeBusy)
	}
	hbCtx, cancel := context.WithCancel(context.Background())
	cl.cancelHB = cancel
	mc.goWorker(func() { mc.heartbeats(hbCtx, cl.log) })
	go cl.loop()
	return cl, nil
}

// Hello returns the game's greeting (language and version).
func (c *Client) Hello() Hello { return c.hello }

func (c *Client) loop() {
	var err error
	defer func() {
		c.mu.Lock()
		c.err = err
		for id, w := range c.waiters {
			close(w)
			delete(c.waiters, id)
		}
		c.mu.Unlock()
		c.cancelHB()
		c.mc.close()
		c.mc.wait()
		close(c.done)
		c.notify()
	}()
	for {
		var m Message
		m, err = c.mc.read()
		if err != nil {
			select {
			case <-c.mc.closed:
				err = net.ErrClosed
				c.log.Debug("pipboy: connection to game closed")
			default:
				c.log.Info("pipboy: connection to game ended", "err", err)
			}
			return
		}
		if m.Type == TypeHeartbeat {
			if err = c.mc.answerHeartbeat(); err != nil {
				return
			}
			continue
		}
		c.mu.Lock()
		err = c.state.Handle(m)
		if m.Type == TypeLocalMapUpdate && err == nil {
			c.mapSeq++
		}
		if m.Type == TypeCommandResponse && err == nil {
			r := c.state.Responses[len(c.state.Responses)-1]
			c.state.Responses = c.state.Responses[:0]
			if w, ok := c.waiters[r.ID]; ok {
				w <- r
				delete(c.waiters, r.ID)
			}
		}
		c.mu.Unlock()
		if err != nil {
			// A refused update would leave the mirror out of step with the game.
			c.log.Warn("pipboy: bad message from game", "type", m.Type, "err", err)
			return
		}
		c.notify()
	}
}

func (c *Client) notify() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a channel that receives a signal (coalesced, never blocking the
// client) after each message that changed the database, the map or the command
// responses, and when the connection ends; cancel stops it.
func (c *Client) Subscribe() (ch <-chan struct{}, cancel func()) {
	x := make(chan struct{}, 1)
	c.mu.Lock()
	c.subs[x] = struct{}{}
	c.mu.Unlock()
	return x, func() {
		c.mu.Lock()
		delete(c.subs, x)
		c.mu.Unlock()
	}
}

// View calls fn with the live database under a read lock. fn must not keep Values
// or call other Client methods that lock.
func (c *Client) View(fn func(db *Database)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	fn(c.state.DB)
}

// Ready reports whether the dump has arrived (the root value exists).
func (c *Client) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.state.DB.Root()
	return ok
}

// WaitReady waits until the dump has arrived, the connection ends, or ctx ends.
func (c *Client) WaitReady(ctx context.Context) error {
	return c.WaitFor(ctx, func(db *Database) bool {
		_, ok := db.Root()
		return ok
	})
}

// WaitFor waits until cond holds for the database (checked after every change).
func (c *Client) WaitFor(ctx context.Context, cond func(db *Database) bool) error {
	ch, cancel := c.Subscribe()
	defer cancel()
	for {
		ok := false
		c.View(func(db *Database) { ok = cond(db) })
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			c.View(func(db *Database) { ok = cond(db) })
			if ok {
				return nil
			}
			return c.Err()
		case <-ch:
		}
	}
}

// Map returns a copy of the latest local map frame and how many frames arrived so far.
func (c *Client) Map() (MapFrame, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := c.state.Map
	f.Pixels = append([]byte(nil), f.Pixels...)
	return f, c.mapSeq
}

// Send sends a command, numbering it with the next id (from 1), and returns the id.
func (c *Client) Send(cmd Command) (int, error) {
	cmd.ID = int(c.nextID.Add(1))
	b, err := cmd.Append(nil)
	if err != nil {
		return 0, err
	}
	return cmd.ID, c.mc.write(TypeCommandRequest, b)
}

// Do sends a command and waits for its response (message type 6). The real game
// answers only some commands (fast travel), so use Send for the others.
func (c *Client) Do(ctx context.Context, cmd Command) (CommandResponse, error) {
	cmd.ID = int(c.nextID.Add(1))
	w := make(chan CommandResponse, 1)
	c.mu.Lock()
	if c.err != nil || isClosed(c.done) {
		c.mu.Unlock()
		return CommandResponse{}, c.Err()
	}
	c.waiters[cmd.ID] = w
	c.mu.Unlock()
	b, err := cmd.Append(nil)
	if err == nil {
		err = c.mc.write(TypeCommandRequest, b)
	}
	if err != nil {
		c.mu.Lock()
		delete(c.waiters, cmd.ID)
		c.mu.Unlock()
		return CommandResponse{}, err
	}
	select {
	case r, ok := <-w:
		if !ok {
			return CommandResponse{}, fmt.Errorf("pipboy: connection ended before the response to command %d: %w", cmd.ID, c.Err())
		}
		return r, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiters, cmd.ID)
		c.mu.Unlock()
		return CommandResponse{}, ctx.Err()
	}
}

// RequestMap asks for a local map frame (command 13) and waits for the next frame.
func (c *Client) RequestMap(ctx context.Context) (MapFrame, error) {
	_, before := c.Map()
	if _, err := c.Send(ToggleLocalMap()); err != nil {
		return MapFrame{}, err
	}
	ch, cancel := c.Subscribe()
	defer cancel()
	for {
		if f, seq := c.Map(); seq > before {
			return f, nil
		}
		select {
		case <-ctx.Done():
			return MapFrame{}, ctx.Err()
		case <-c.done:
			return MapFrame{}, c.Err()
		case <-ch:
		}
	}
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (nil while it is open).
func (c *Client) Err() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.err == nil && isClosed(c.done) {
		return net.ErrClosed
	}
	return c.err
}

// Close closes the connection.
func (c *Client) Close() error {
	err := c.mc.close()
	<-c.done
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
