package rmc

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

func TestInMemory(t *testing.T) {
	m := NewMux()
	m.Handle(200, 1, HandlerFunc(func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		return append(out, c.Params...), nil
	}))
	m.Handle(200, 2, HandlerFunc(func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		return out, types.CoreAccessDenied
	}))
	c := &InMemory{Handler: m, Peer: &Peer{PID: 7}}
	got, err := c.Call(context.Background(), 200, 1, []byte("echo"))
	if err != nil || !bytes.Equal(got, []byte("echo")) {
		t.Fatalf("echo: %q %v", got, err)
	}
	_, err = c.Call(context.Background(), 200, 2, nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Result != types.CoreAccessDenied {
		t.Fatalf("error result: %v, want a CallError with Core::AccessDenied", err)
	}
}
