package rmc

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// scriptTransport hands Serve one request, records what is sent, then fails.
type scriptTransport struct {
	mu    sync.Mutex
	msgs  [][]byte
	trail *[]string
}

func (t *scriptTransport) Recv(ctx context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.msgs) == 0 {
		return nil, errors.New("done")
	}
	m := t.msgs[0]
	t.msgs = t.msgs[1:]
	return m, nil
}

func (t *scriptTransport) Send(ctx context.Context, msg []byte) error {
	*t.trail = append(*t.trail, "send")
	return nil
}

// TestAfterResponse checks that what a handler asks for with AfterResponse
// runs after the response is sent through Serve (DispatchThen), in the order
// asked, and when Dispatch returns with Dispatch.
func TestAfterResponse(t *testing.T) {
	var trail []string
	h := HandlerFunc(func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		trail = append(trail, "handler")
		c.AfterResponse(func() { trail = append(trail, "after 1") })
		c.AfterResponse(func() { trail = append(trail, "after 2") })
		return append(out, 1), nil
	})
	req, err := (&Request{Protocol: 119, CallID: 7, Method: 6}).Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &scriptTransport{msgs: [][]byte{req}, trail: &trail}
	if err := Serve(context.Background(), tr, h, &Peer{}, nil); err == nil || err.Error() != "done" {
		t.Fatalf("Serve: %v", err)
	}
	if want := []string{"handler", "send", "after 1", "after 2"}; !slices.Equal(trail, want) {
		t.Fatalf("Serve: %v, want %v", trail, want)
	}
	trail = nil
	out, err := Dispatch(context.Background(), h, &Peer{}, req, nil, nil)
	if err != nil || len(out) == 0 {
		t.Fatalf("Dispatch: %x %v", out, err)
	}
	if want := []string{"handler", "after 1", "after 2"}; !slices.Equal(trail, want) {
		t.Fatalf("Dispatch: %v, want %v", trail, want)
	}
	// A failed call still runs them; a call that asks nothing returns nil.
	trail = nil
	fail := HandlerFunc(func(ctx context.Context, c *Call, out []byte) ([]byte, error) {
		c.AfterResponse(func() { trail = append(trail, "after") })
		return out, errors.New("boom")
	})
	if _, after, err := DispatchThen(context.Background(), fail, &Peer{}, req, nil, nil); err != nil || after == nil {
		t.Fatalf("DispatchThen of a failed call: after %v, %v", after != nil, err)
	}
	if _, after, err := DispatchThen(context.Background(), HandlerFunc(func(ctx context.Context, c *Call, out []byte) ([]byte, error) { return out, nil }),
		&Peer{}, req, nil, nil); err != nil || after != nil {
		t.Fatalf("DispatchThen without AfterResponse: after %v, %v", after != nil, err)
	}
}
