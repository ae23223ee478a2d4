package main

import (
	"context"
	"fmt"
	"github.com/gamewire/gamewire/bench/internal/harness"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gamewire/gamewire/prudp"
)

// bulkGamewire sends mb megabytes over one gamewire connection as 64 KiB reliable messages
// and returns the rate at which the server received them; plain turns RC4 off on both ends.
func bulkGamewire(mb int, plain bool) (float64, error) {
	cfg := clientConfig()
	cfg.NoEncryption = plain && cfg.Dialect != prudp.Hyperscape
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, err
	}
	// Serve gives pc 4 MiB kernel buffers, as prudp.Dial does the client's and as
	// bulkKCP gives kcp-go's sockets (socketBuffer).
	total := int64(mb) << 20
	var got atomic.Int64
	done := make(chan struct{})
	var once sync.Once
	srv := &prudp.Server{Config: *cfg, Handler: prudp.HandlerFunc(func(c *prudp.Conn, m prudp.Message) {
		if got.Add(int64(len(m.Data))) >= total {
			once.Do(func() { close(done) })
		}
	})}
	go srv.Serve(pc)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr, stop, err := via(pc.LocalAddr().String())
	if err != nil {
		return 0, err
	}
	defer stop()
	c, err := prudp.Dial(ctx, addr, cfg)
	if err != nil {
		return 0, err
	}
	defer c.Abort()
	chunk := make([]byte, 64<<10)
	start := time.Now()
	for sent := int64(0); sent < total; sent += int64(len(chunk)) {
		if err := c.Send(ctx, 0, chunk); err != nil {
			return 0, err
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		return 0, fmt.Errorf("received %d of %d bytes in 2 minutes", got.Load(), total)
	}
	return float64(total) / (1 << 20) / time.Since(start).Seconds(), nil
}

// runIdle opens n idle connections to a gamewire server child and prints the server's
// memory per connection.
func runIdle(n int) {
	// Every client is a socket: raise the descriptor limit, the hard one too when
	// allowed (root; the hard limit here is often exactly 20,000), else up to it.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(n)+1024 {
		want := uint64(n) + 1024
		raised := syscall.Rlimit{Cur: want, Max: max(lim.Max, want)}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) != nil {
			lim.Cur = lim.Max
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		}
	}
	c, err := harness.StartChild("gamewire", "-dialect", *serveDial, "-access-key", *accessKey)
	if err != nil {
		fmt.Println("idle connections: error:", err)
		return
	}
	defer c.Stop()
	time.Sleep(200 * time.Millisecond)
	before := c.RSS()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conns := make([]*prudp.Conn, n)
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				conn, err := prudp.Dial(ctx, c.Addr, clientConfig())
				if err != nil {
					if failed.Add(1) == 1 {
						firstErr.Store(err)
					}
					continue
				}
				conns[i] = conn
			}
		}()
	}
	wg.Wait()
	time.Sleep(time.Second)
	after := c.RSS()
	ok := n - int(failed.Load())
	fmt.Println("| idle connections | server RSS before | after | per connection |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| %d (of %d dialled) | %.1f MiB | %.1f MiB | %.0f bytes |\n", ok, n,
		float64(before)/(1<<20), float64(after)/(1<<20), float64(after-before)/float64(max(ok, 1)))
	if err, ok := firstErr.Load().(error); ok {
		fmt.Printf("\n%d dials failed, the first with: %v\n", failed.Load(), err)
	}
	for _, conn := range conns {
		if conn != nil {
			conn.Abort()
		}
	}
}
