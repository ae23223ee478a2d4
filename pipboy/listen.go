package pipboy

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
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
// by wg, until Accept fails. The check of *closed and wg.Add happen under mu, so an
// owner that sets *closed under mu and then waits on wg never misses a goroutine; a
// connection accepted after that is closed unserved. acceptLoop returns
// ErrServerClosed once *closed is set, skips Accept timeouts, and returns any other
// Accept error.
func acceptLoop(ln net.Listener, mu *sync.Mutex, closed *bool, wg *sync.WaitGroup, serve func(net.Conn)) error {
	for {
		c, err := ln.Accept()
		mu.Lock()
		isClosed := *closed
		if err == nil && !isClosed {
			wg.Add(1)
		}
		mu.Unlock()
		if err != nil {
			if isClosed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
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
