package rmc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gamewire/gamewire/nex/types"
)

// Peer is what a handler knows about the connection a call came from. The transport
// creates one per connection and keeps it for the connection's life, so handlers
// may use its address as a key.
type Peer struct {
	// Addr is the remote address as the server sees it.
	Addr netip.AddrPort
	// PID is the authenticated principal: on a secure server the source PID of the
	// client's Kerberos ticket; 0 on the authentication server.
	PID types.PID
	// Settings are the connection's encoding settings (PID size, structure headers).
	Settings types.Settings
	// Scheme is the station url scheme of the transport ("prudp", "prudps", "udp").
	Scheme string
	// StreamType and Port are the PRUDP virtual port the client connected to.
	StreamType, Port uint8
	// Conn is the transport's connection, for handlers that need more (may be nil).
	Conn any
}

// Call is one request as a handler sees it.
type Call struct {
	Request
	// Peer is the caller; never nil when dispatched through Dispatch.
	Peer *Peer
	// ClassVersions are the structure versions a verbose request declared
	// (DispatchVerbose); nil for the packed variations.
	ClassVersions []ClassVersion

	// after runs once the response is handed to the transport (AfterResponse).
	after func()
}

// AfterResponse asks that f run once the call's response has been handed to
// the transport: a server-to-client call that must reach the client after the
// answer (a completion notification naming an id the answer carries).
// Transports that dispatch with DispatchThen (nex.Server's PRUDP servers,
// Serve) run f after sending the response, on the goroutine that sent it;
// with Dispatch, f runs when Dispatch returns, before its caller sends. Calls
// made more than once run in order.
func (c *Call) AfterResponse(f func()) {
	if prev := c.after; prev != nil {
		c.after = func() { prev(); f() }
		return
	}
	c.after = f
}

// Reader returns a types.Reader over the call's parameters with the peer's settings.
func (c *Call) Reader() types.Reader { return types.NewReader(c.Params, c.Peer.Settings) }

// Handler answers RMC calls. ServeRMC appends the response data (the method's
// return values, encoded) to out and returns the extended slice. To fail the call it
// returns an error: a types.Result (or an error wrapping one, found with errors.As)
// is sent as that error code; ErrNoResponse sends nothing; any other error is sent as
// Core::Exception and logged. A handler must not keep c, out or c.Params after
// it returns.
type Handler interface {
	ServeRMC(ctx context.Context, c *Call, out []byte) ([]byte, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, c *Call, out []byte) ([]byte, error)

// ServeRMC calls f.
func (f HandlerFunc) ServeRMC(ctx context.Context, c *Call, out []byte) ([]byte, error) {
	return f(ctx, c, out)
}

// errNotImplemented answers calls no handler takes.
var errNotImplemented error = types.CoreNotImplemented

// ErrNoResponse is returned by a handler whose call gets no response at all (the
// notification protocols never answer, see "Remarks" in rmc.md).
var ErrNoResponse = errors.New("rmc: no response")

// Mux dispatches calls to handlers registered by protocol, and optionally by method.
// A handler registered for a whole protocol sees every method of it not registered
// individually. Calls nothing matches are answered with Core::NotImplemented.
// The zero Mux is empty and ready to use; it is safe for concurrent use, and
// lookups take no lock (registration copies the table).
type Mux struct {
	mu    sync.Mutex // serialises registrations
	table atomic.Pointer[muxTable]
}

type muxTable struct {
	methods  map[uint64]Handler // protocol<<32 | method
	protocol map[uint16]Handler
}

func methodKey(protocol uint16, method uint32) uint64 { return uint64(protocol)<<32 | uint64(method) }

// NewMux returns an empty Mux.
func NewMux() *Mux { return new(Mux) }

// update applies f to a copy of the table and publishes it.
func (m *Mux) update(f func(t *muxTable)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &muxTable{methods: make(map[uint64]Handler), protocol: make(map[uint16]Handler)}
	if old := m.table.Load(); old != nil {
		for k, v := range old.methods {
			t.methods[k] = v
		}
		for k, v := range old.protocol {
			t.protocol[k] = v
		}
	}
	f(t)
	m.table.Store(t)
}

// Handle registers h for one method of a protocol. It panics if that method is
// registered already, as http.ServeMux does for duplicate patterns: that is a
// programming error, not bad input.
func (m *Mux) Handle(protocol uint16, method uint32, h Handler) {
	m.update(func(t *muxTable) {
		k := methodKey(protocol, method)
		if _, dup := t.methods[k]; dup {
			panic(fmt.Sprintf("rmc: handler for protocol %d method %d registered twice", protocol, method))
		}
		t.methods[k] = h
	})
}

// HandleFunc registers f for one method of a protocol.
func (m *Mux) HandleFunc(protocol uint16, method uint32, f func(ctx context.Context, c *Call, out []byte) ([]byte, error)) {
	m.Handle(protocol, method, HandlerFunc(f))
}

// HandleProtocol registers h for every method of a protocol (methods registered with
// Handle take precedence). It panics on a duplicate.
func (m *Mux) HandleProtocol(protocol uint16, h Handler) {
	m.update(func(t *muxTable) {
		if _, dup := t.protocol[protocol]; dup {
			panic(fmt.Sprintf("rmc: handler for protocol %d registered twice", protocol))
		}
		t.protocol[protocol] = h
	})
}

// Handler returns the handler for a call, or nil.
func (m *Mux) Handler(protocol uint16, method uint32) Handler {
	t := m.table.Load()
	if t == nil {
		return nil
	}
	if len(t.methods) > 0 {
		if h, ok := t.methods[methodKey(protocol, method)]; ok {
			return h
		}
	}
	return t.protocol[protocol]
}

// ServeRMC dispatches c to its handler, or fails it with Core::NotImplemented.
func (m *Mux) ServeRMC(ctx context.Context, c *Call, out []byte) ([]byte, error) {
	h := m.Handler(c.Protocol, c.Method)
	if h == nil {
		return out, errNotImplemented
	}
	return h.ServeRMC(ctx, c, out)
}

// Dispatch handles one packed request message: it parses msg, calls h with the
// peer, and appends the encoded response (success or error) to out. It returns out
// unchanged when the handler answers ErrNoResponse. A message that is not a valid
// request cannot be answered (there is no call id to answer) and returns an error.
// Handler errors that are not Results are logged to log (when non-nil) and sent as
// Core::Exception; the response never carries their text.
//
// Dispatch allocates nothing itself: with a handler that does not allocate and an
// out with room, a call costs no allocation.
func Dispatch(ctx context.Context, h Handler, peer *Peer, msg []byte, out []byte, log *slog.Logger) ([]byte, error) {
	out, after, err := DispatchThen(ctx, h, peer, msg, out, log)
	if after != nil {
		after()
	}
	return out, err
}

// DispatchThen is Dispatch for a transport that runs, after sending the
// response, what the handler asked for with Call.AfterResponse: it returns
// that function (nil when the handler asked for nothing).
func DispatchThen(ctx context.Context, h Handler, peer *Peer, msg []byte, out []byte, log *slog.Logger) (_ []byte, after func(), _ error) {
	req, _, err := ParseRequest(msg)
	if err != nil {
		return out, nil, err
	}
	c := callPool.Get().(*Call)
	*c = Call{Request: req, Peer: peer}
	defer func() { after = c.after; *c = Call{}; callPool.Put(c) }()
	start := len(out)
	out = append(out, 0, 0, 0, 0)
	out = appendProtocol(out, req.Protocol, 0)
	out = append(out, 1)
	out = binary.LittleEndian.AppendUint32(out, req.CallID)
	out = binary.LittleEndian.AppendUint32(out, req.Method|responseMethod)
	if req.Method >= responseMethod {
		out, err = out[:start], types.CoreInvalidArgument
	} else {
		out, err = h.ServeRMC(ctx, c, out)
	}
	if err == nil {
		out, err = finishSize(out, start)
		return out, nil, err
	}
	out, err = errorResponse(ctx, out[:start], req, err, log)
	return out, nil, err
}

// callPool recycles Calls: a handler is an interface, so a Call on the stack would
// escape and cost an allocation per request.
var callPool = sync.Pool{New: func() any { return new(Call) }}

// errorResponse appends the response for a failed call. It is a function of its own
// so that the error's escape to the heap costs nothing on the success path.
//
//go:noinline
func errorResponse(ctx context.Context, out []byte, req Request, err error, log *slog.Logger) ([]byte, error) {
	if errors.Is(err, ErrNoResponse) {
		return out, nil
	}
	var res types.Result
	if !errors.As(err, &res) || !res.IsError() {
		if log != nil {
			log.LogAttrs(ctx, slog.LevelError, "rmc handler failed",
				slog.Uint64("protocol", uint64(req.Protocol)), slog.Uint64("method", uint64(req.Method)),
				slog.Uint64("call", uint64(req.CallID)), slog.String("error", err.Error()))
		}
		res = types.CoreException
	} else if log != nil && errors.Is(err, types.ErrVersion) {
		// A structure of another NEX version: the operator's cue to set the
		// game's version (serve --nex-version), so it is a warning.
		log.LogAttrs(ctx, slog.LevelWarn, "rmc call from a client of another NEX version",
			slog.Uint64("protocol", uint64(req.Protocol)), slog.Uint64("method", uint64(req.Method)),
			slog.Uint64("call", uint64(req.CallID)), slog.String("error", err.Error()))
	} else if log != nil && err != error(res) {
		// A Result wrapped with detail (a bad parameter, ...): the detail stays
		// here, the peer only gets the code.
		log.LogAttrs(ctx, slog.LevelDebug, "rmc call failed",
			slog.Uint64("protocol", uint64(req.Protocol)), slog.Uint64("method", uint64(req.Method)),
			slog.Uint64("call", uint64(req.CallID)), slog.String("error", err.Error()))
	}
	resp := Response{Protocol: req.Protocol, Result: res, CallID: req.CallID}
	return resp.Append(out)
}

// ParamErrorer is implemented by typed handlers (the ones generated Register
// functions take) that choose how a call whose parameters do not decode is
// answered: DataStore answers DataStore::InvalidArgument, for instance.
type ParamErrorer interface {
	ParamError(method uint32, err error) error
}

// ParamError is the error a call whose parameters do not decode fails with: h's
// choice when it is a ParamErrorer, else Core::InvalidArgument wrapping err (the
// peer gets the code; the detail is logged).
func ParamError(h any, method uint32, err error) error {
	if pe, ok := h.(ParamErrorer); ok {
		return pe.ParamError(method, err)
	}
	return fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
}
