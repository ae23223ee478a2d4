package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gamewire/gamewire/prudp"
)

// dialFunc dials a PRUDP server (prudp.Dial, or lite.Dial bound to its
// settings): what nex.LoginConfig.Dial takes.
type dialFunc func(ctx context.Context, addr string, cfg *prudp.Config) (*prudp.Conn, error)

// progressEvery is how often a client waiting for a handshake says so: a
// tenth of its timeout, 1 s to 5 s.
func progressEvery(timeout time.Duration) time.Duration {
	return min(max(timeout/10, time.Second), 5*time.Second)
}

// withProgress wraps dial so that a handshake left unanswered prints a line
// on w every interval until it is answered or given up: a client waiting on
// a server that is not running (UDP reports no refusal) is never silent.
// When it gives up, the caller's error says why (explainHandshake).
func withProgress(w io.Writer, every, timeout time.Duration, dial dialFunc) dialFunc {
	if dial == nil {
		dial = prudp.Dial
	}
	return func(ctx context.Context, addr string, cfg *prudp.Config) (*prudp.Conn, error) {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			start := time.Now()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					fmt.Fprintf(w, "waiting for %s: no answer to the PRUDP handshake after %v, retrying (gives up after --timeout %v)\n",
						addr, time.Since(start).Round(time.Second), timeout)
				}
			}
		}()
		c, err := dial(ctx, addr, cfg)
		close(stop)
		<-done
		return c, err
	}
}
