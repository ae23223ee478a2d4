package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp"
)

// lineWriter hands each write to a channel.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) { w <- string(b); return len(b), nil }

// TestDialProgress: while a handshake is unanswered the client prints
// progress lines (the dial here returns only once two were printed), and
// none after it ended.
func TestDialProgress(t *testing.T) {
	lines := make(lineWriter, 10)
	refused := errors.New("no answer")
	dial := withProgress(lines, time.Millisecond, 30*time.Second, func(ctx context.Context, addr string, _ *prudp.Config) (*prudp.Conn, error) {
		for range 2 {
			if l := <-lines; !strings.Contains(l, "waiting for "+addr) || !strings.Contains(l, "--timeout 30s") {
				t.Errorf("progress line %q", l)
			}
		}
		return nil, refused
	})
	if _, err := dial(context.Background(), "127.0.0.1:1", nil); !errors.Is(err, refused) {
		t.Fatalf("dial: %v", err)
	}
	// A tick may have raced the end of the dial; after withProgress returned
	// nothing writes (a write to the closed channel would panic).
	for len(lines) > 0 {
		<-lines
	}
	close(lines) // a write after return would panic
	if got := progressEvery(30 * time.Second); got != 3*time.Second {
		t.Errorf("progressEvery(30s) = %v", got)
	}
}

// TestLoginNoServerExplains: login to a port where nothing listens prints
// progress while it waits and, when it gives up, says what it tried and why a
// server may stay silent.
func TestLoginNoServerExplains(t *testing.T) {
	addr := freeUDPAddr(t)
	out, err := runCLI(t, "login", addr, "--user", "guest", "--password", "x", "--timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), "no answer to the PRUDP handshake from "+addr) {
		t.Fatalf("login to nothing: %v\n%s", err, out)
	}
}
