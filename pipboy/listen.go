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

	"github.com/gamewire/gamewire/internal/acceptretry"
)

// loopbackAddr returns addr, or 127.0.0.1:port when addr is empty: every listener of
// this package serves loopback only unless told otherwise.
func loopbackAddr(addr string, port int) string {
	if addr == "" {
		return "127.0.0.1:" + strconv.Itoa(port)
	}
	return addr
}

// acceptLoop accepts connections on ln and runs serve for each in a goroutine counted
// by wg, until Accept fails for good. The check of *closed and wg.Add happen under mu,
// so an owner that sets *closed under mu and then waits on wg never misses a goroutine;
// a connection accepted after that is closed unserved. acceptLoop returns
// ErrServerClosed once *closed is set (or done is closed). Accept errors that pass
// (out of file descriptors: EMFILE, ENFILE; ENOBUFS; an aborted connection; a
// timeout) are logged, counted in *errs and waited out with net/http's backoff (5 ms
// doubling to 1 s); any other Accept error is returned.
func acceptLoop(ln net.Listener, mu *sync.Mutex, closed *bool, wg *sync.WaitGroup, done <-chan struct{},
	log *slog.Logger, errs *atomic.Uint64, serve func(net.Conn)) error {
	var backoff acceptretry.Backoff
	for {
		c, err := ln.Accept()
		mu.Lock()
		isClosed := *closed
		if err == nil && !isClosed {
			wg.Add(1)
		}
		mu.Unlock()
		if err != nil {
			if isClosed || errors.Is(err, net.ErrClosed) {
				return ErrServerClosed
			}
			if !acceptretry.Temporary(err) {
				loggerOr(log).Error("pipboy: accept failed; the listener stops", "addr", ln.Addr(), "err", err)
				return fmt.Errorf("pipboy: accept on %v: %w", ln.Addr(), err)
			}
			errs.Add(1)
			pause := backoff.Next()
			loggerOr(log).Warn("pipboy: accept failed; retrying", "addr", ln.Addr(), "err", err, "retry in", pause)
			if !backoff.WaitFor(pause, done) {
				return ErrServerClosed
			}
			continue
		}
		backoff.Reset()
		if isClosed {
			c.Close()
			return ErrServerClosed
		}
		go func() {
			defer wg.Done()
			serve(c)
		}()
	}
}

// closeWithin runs closeFn (which waits for its goroutines) and returns its error,
// or ctx's error if ctx ends first; closeFn then goes on in the background.
func closeWithin(ctx context.Context, closeFn func() error) error {
	done := make(chan error, 1)
	go func() { done <- closeFn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
