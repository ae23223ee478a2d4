package rmc

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// Serve answers requests arriving on t with h until t fails or ctx ends, and
// returns that error. Messages that are not valid requests are logged and dropped
// (there is no call id to answer them with). It is the server-side loop for any
// message transport; the PRUDP engine can call Dispatch directly instead.
func Serve(ctx context.Context, t Transport, h Handler, peer *Peer, log *slog.Logger) error {
	var out []byte
	for {
		msg, err := t.Recv(ctx)
		if err != nil {
			return err
		}
		var after func()
		out, after, err = DispatchThen(ctx, h, peer, msg, out[:0], log)
		if err != nil {
			if log != nil {
				log.LogAttrs(ctx, slog.LevelWarn, "rmc: dropping bad request", slog.String("error", err.Error()))
			}
			continue
		}
		if len(out) > 0 {
			if err := t.Send(ctx, out); err != nil {
				return err
			}
		}
		if after != nil {
			after()
		}
	}
}

// ErrPipeClosed is returned by a Pipe end after Close.
var ErrPipeClosed = errors.New("rmc: pipe closed")

// Pipe returns the two ends of an in-memory message transport: what one end sends
// the other receives, in order, each message copied. It is for tests and for
// running a client and a server in one process.
func Pipe() (*PipeEnd, *PipeEnd) {
	ab := make(chan []byte, 64)
	ba := make(chan []byte, 64)
	done := make(chan struct{})
	once := new(sync.Once)
	return &PipeEnd{in: ba, out: ab, done: done, once: once}, &PipeEnd{in: ab, out: ba, done: done, once: once}
}

// PipeEnd is one end of a Pipe.
type PipeEnd struct {
	in, out chan []byte
	done    chan struct{}
	once    *sync.Once
}

// Send copies msg to the other end.
func (p *PipeEnd) Send(ctx context.Context, msg []byte) error {
	m := append([]byte(nil), msg...)
	select {
	case p.out <- m:
		return nil
	case <-p.done:
		return ErrPipeClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Recv returns the next message from the other end.
func (p *PipeEnd) Recv(ctx context.Context) ([]byte, error) {
	select {
	case m := <-p.in:
		return m, nil
	case <-p.done:
		return nil, ErrPipeClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close closes both ends.
func (p *PipeEnd) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}
