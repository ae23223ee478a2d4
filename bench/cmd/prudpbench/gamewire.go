package main

import (
	"context"
	"errors"
	"net"

	"github.com/gamewire/gamewire/interop/rmcframe"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
)

// clientConfig is the configuration of every PRUDP benchmark client.
func clientConfig() *prudp.Config {
	d, err := prudp.ParseDialect(*serveDial)
	if err != nil {
		panic(err)
	}
	return &prudp.Config{Dialect: d, AccessKey: *accessKey}
}

// The gamewire servers measure only paths any application's handler can take
// (the engine knows none of these handlers):
//
//   - gamewire: an ordinary HandlerFunc that sends each message back, called
//     on the connection's handler goroutine;
//   - gamewire-inline: an application's prudp.InlineHandler echo, answered on
//     the connection's shard goroutine;
//   - gamewire-rmc: an RMC echo (what nex-go's echo endpoint does): an rmc.Mux
//     whose handler returns the parameters, declared non-blocking and
//     dispatched inline as nex.Server dispatches such calls.

// serveGamewire runs gamewire's PRUDP server with a HandlerFunc echo.
func serveGamewire(ctx context.Context) (string, error) {
	return serveGamewireWith(prudp.HandlerFunc(func(c *prudp.Conn, m prudp.Message) {
		if m.Reliable {
			_ = c.Send(context.Background(), m.Substream, m.Data)
		} else {
			_ = c.SendUnreliable(context.Background(), m.Data)
		}
	}))
}

// serveGamewireInline runs gamewire's PRUDP server with an InlineHandler echo.
func serveGamewireInline(ctx context.Context) (string, error) { return serveGamewireWith(inlineEcho{}) }

// serveGamewireRMC runs gamewire's PRUDP server with an RMC echo dispatched inline.
func serveGamewireRMC(ctx context.Context) (string, error) {
	mux := rmc.NewMux()
	mux.HandleProtocol(benchProtocol, rmc.NonBlocking(rmc.HandlerFunc(func(_ context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		return append(out, c.Params...), nil
	})))
	return serveGamewireWith(&rmcEcho{mux: mux})
}

func serveGamewireWith(h prudp.Handler) (string, error) {
	d, err := prudp.ParseDialect(*serveDial)
	if err != nil {
		return "", err
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	srv := &prudp.Server{Config: prudp.Config{Dialect: d, AccessKey: *accessKey}, Handler: h}
	go srv.Serve(pc)
	return pc.LocalAddr().String(), nil
}

// inlineEcho is an application's InlineHandler that echoes.
type inlineEcho struct{}

func (inlineEcho) ServeInline(_ *prudp.Conn, m prudp.Message, dst []byte) ([]byte, bool) {
	return append(dst, m.Data...), true
}

func (inlineEcho) ServePRUDP(c *prudp.Conn, m prudp.Message) {
	_ = c.Send(context.Background(), m.Substream, m.Data)
}

// rmcEcho serves an rmc.Mux: non-blocking calls inline, the rest on the
// handler goroutine.
type rmcEcho struct {
	mux  *rmc.Mux
	peer rmc.Peer
}

func (h *rmcEcho) ServeInline(_ *prudp.Conn, m prudp.Message, dst []byte) ([]byte, bool) {
	req, _, err := rmc.ParseRequest(m.Data)
	if err != nil || !h.mux.NonBlocking(req.Protocol, req.Method) {
		return dst, false
	}
	out, err := rmc.Dispatch(context.Background(), h.mux, &h.peer, m.Data, dst, nil)
	return out, err == nil
}

func (h *rmcEcho) ServePRUDP(c *prudp.Conn, m prudp.Message) {
	out, err := rmc.Dispatch(context.Background(), h.mux, &h.peer, m.Data, nil, nil)
	if err == nil && len(out) > 0 {
		_ = c.Send(context.Background(), m.Substream, out)
	}
}

// prudpClient is gamewire's client; with rmc set it checks the RMC response nex-go gives
// instead of a byte-for-byte echo.
type prudpClient struct {
	c   *prudp.Conn
	rmc bool
}

func dialGamewire(ctx context.Context, addr string) (requester, error) {
	c, err := prudp.Dial(ctx, addr, clientConfig())
	if err != nil {
		return nil, err
	}
	return &prudpClient{c: c}, nil
}

// dialRMC dials a server that answers RMC echoes (nex-go's echo endpoint,
// gamewire-rmc).
func dialRMC(ctx context.Context, addr string) (requester, error) {
	c, err := prudp.Dial(ctx, addr, clientConfig())
	if err != nil {
		return nil, err
	}
	return &prudpClient{c: c, rmc: true}, nil
}

func (p *prudpClient) roundTrip(ctx context.Context, msg []byte) error {
	if err := p.c.Send(ctx, 0, msg); err != nil {
		return err
	}
	m, err := p.c.Recv(ctx)
	if err != nil {
		return err
	}
	if p.rmc {
		return rmcframe.CheckEcho(msg, m.Data)
	}
	if string(m.Data) != string(msg) {
		return errors.New("echo differs from the request")
	}
	return nil
}

func (p *prudpClient) retransmits() uint64 { return p.c.Stats().Retransmits }

func (p *prudpClient) close() { p.c.Abort() }

// benchProtocol is the RMC protocol id of the benchmark messages.
const benchProtocol = 0x66

// benchMessage frames every benchmark message as an RMC request, which nex-go and
// gamewire-rmc need and gamewire's echo servers return unchanged.
func benchMessage(size int) []byte { return rmcframe.Request(benchProtocol, 1, 1, size, 0) }
