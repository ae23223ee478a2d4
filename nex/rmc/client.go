package rmc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gamewire/gamewire/nex/types"
)

// Transport carries whole RMC messages. A PRUDP connection (one reliable substream),
// a Lite connection or an in-memory pipe can be one. Recv blocks until a message
// arrives, ctx ends, or the transport fails.
type Transport interface {
	Send(ctx context.Context, msg []byte) error
	Recv(ctx context.Context) ([]byte, error)
}

// ErrClosed is returned by calls on a closed Client or after its transport failed.
var ErrClosed = errors.New("rmc: client closed")

// CallError is a call answered with an error response.
type CallError struct {
	Protocol uint16
	Method   uint32
	Result   types.Result
}

func (e *CallError) Error() string {
	return fmt.Sprintf("rmc: protocol %d method %d failed: %s", e.Protocol, e.Method, e.Result)
}

// Unwrap lets errors.Is(err, types.CoreAccessDenied) and friends match.
func (e *CallError) Unwrap() error { return e.Result }

// Client calls methods on the other side of a transport and matches responses to
// calls by call id; several calls may be in flight at once. Requests the other side
// sends (notifications) go to Handler when one is given and are answered through
// the same transport.
type Client struct {
	t        Transport
	handler  Handler
	peer     *Peer
	log      *slog.Logger
	settings types.Settings

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan Response
	err     error // set once the read loop ends
	done    chan struct{}
	cancel  context.CancelFunc
}

// ClientConfig configures NewClient. The zero value works.
type ClientConfig struct {
	// Settings are the encoding settings of the connection (PID size, structure
	// headers); returned by Client.Settings for callers that encode parameters.
	Settings types.Settings
	// Handler answers requests from the server; nil answers Core::NotImplemented.
	Handler Handler
	// Peer describes the server to Handler; nil means an empty Peer.
	Peer *Peer
	// Logger receives read-loop failures; nil logs nothing.
	Logger *slog.Logger
}

// NewClient starts a client on t. It owns t's receiving side until Close.
func NewClient(t Transport, cfg ClientConfig) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		t: t, handler: cfg.Handler, peer: cfg.Peer, log: cfg.Logger, settings: cfg.Settings,
		nextID: 1, pending: make(map[uint32]chan Response), done: make(chan struct{}), cancel: cancel,
	}
	if c.handler == nil {
		c.handler = new(Mux)
	}
	if c.peer == nil {
		c.peer = &Peer{Settings: cfg.Settings}
	}
	go c.readLoop(ctx)
	return c
}

// Settings returns the client's encoding settings.
func (c *Client) Settings() types.Settings { return c.settings }

// Call sends a request and waits for its response. It returns the response data
// (aliasing nothing the client keeps), a *CallError for an error response, or the
// transport's or ctx's error.
func (c *Client) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	ch := make(chan Response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	id := c.nextID
	c.nextID++
	if c.nextID == 0 {
		c.nextID = 1
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()

	req := Request{Protocol: protocol, CallID: id, Method: method, Params: params}
	msg, err := req.Append(nil)
	if err != nil {
		return nil, err
	}
	if err := c.t.Send(ctx, msg); err != nil {
		return nil, fmt.Errorf("rmc: send protocol %d method %d: %w", protocol, method, err)
	}
	select {
	case resp := <-ch:
		if resp.IsError() {
			return nil, &CallError{Protocol: protocol, Method: method, Result: resp.Result}
		}
		if resp.Protocol != protocol || resp.Method != method {
			return nil, fmt.Errorf("rmc: call %d to protocol %d method %d answered by protocol %d method %d",
				id, protocol, method, resp.Protocol, resp.Method)
		}
		return resp.Data, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
}

// Close stops the read loop. It does not close the transport.
func (c *Client) Close() error {
	c.cancel()
	<-c.done
	return nil
}

func (c *Client) readLoop(ctx context.Context) {
	defer close(c.done)
	for {
		msg, err := c.t.Recv(ctx)
		if err != nil {
			c.fail(fmt.Errorf("%w: %w", ErrClosed, err))
			return
		}
		if IsRequest(msg) {
			out, err := Dispatch(ctx, c.handler, c.peer, msg, nil, c.log)
			if err != nil {
				c.logf(ctx, "rmc: dropping bad request from server", err)
				continue
			}
			if len(out) > 0 {
				if err := c.t.Send(ctx, out); err != nil {
					c.fail(fmt.Errorf("%w: %w", ErrClosed, err))
					return
				}
			}
			continue
		}
		resp, _, err := ParseResponse(msg)
		if err != nil {
			c.logf(ctx, "rmc: dropping bad response", err)
			continue
		}
		// The response data aliases msg; the transport hands over a fresh message
		// per Recv, so it stays valid for the caller.
		c.mu.Lock()
		ch, ok := c.pending[resp.CallID]
		c.mu.Unlock()
		if !ok {
			c.logf(ctx, "rmc: response to unknown call", fmt.Errorf("call id %d", resp.CallID))
			continue
		}
		select {
		case ch <- resp:
		default:
			c.logf(ctx, "rmc: duplicate response", fmt.Errorf("call id %d", resp.CallID))
		}
	}
}

func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *Client) logf(ctx context.Context, msg string, err error) {
	if c.log != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("error", err.Error()))
	}
}

// Caller makes RMC calls and knows the connection's encoding settings: *Client is
// one. Generated client stubs (nex/protocols/...) and service clients call through it.
type Caller interface {
	Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error)
	Settings() types.Settings
}

var _ Caller = (*Client)(nil)
