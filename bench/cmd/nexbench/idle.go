package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gamewire/gamewire/bench/internal/harness"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// idleConnections measures the NEX server's memory per idle connection, twice against
// fresh server children: n bare PRUDP connections to the authentication server (no
// login: the engine's state alone), then n logged-in secure connections (Login and the
// Kerberos ticket on the authentication server, the secure CONNECT with the ticket,
// Secure Connection Register; the authentication connection closed), both held idle
// while the server child's RSS is read from /proc.
func idleConnections(n int) {
	raiseFileLimit(n)
	key := kerberos.DeriveKey(auth.GuestPassword, uint64(auth.PIDGuest))
	fmt.Printf("\n| idle connections (%d dialled) | established | server RSS before | after | bytes per connection | after the server's GC and FreeOSMemory: RSS | bytes per connection |\n", n)
	fmt.Println("|---|---|---|---|---|---|---|")
	idleRow("bare PRUDP (authentication server, no login)", n, "", func(ctx context.Context, addr string) (func(), error) {
		c, err := prudp.Dial(ctx, addr, &prudp.Config{AccessKey: accessKey})
		if err != nil {
			return nil, err
		}
		return c.Abort, nil
	})
	idleRow("logged-in secure connection (ticket, CONNECT, Register)", n, *heapProf, func(ctx context.Context, addr string) (func(), error) {
		s, err := nex.Login(ctx, addr, nex.LoginConfig{User: "guest", Key: key[:], Config: prudp.Config{AccessKey: accessKey}})
		if err != nil {
			return nil, err
		}
		return s.Conn.Abort, nil
	})
}

// idleRow dials n connections with dial (16 at a time) against a fresh gamewire child,
// waits for the server to settle, and prints its RSS growth per connection; with
// heapProfile set the child writes a heap profile there once the connections are up.
func idleRow(name string, n int, heapProfile string, dial func(ctx context.Context, addr string) (func(), error)) {
	c, err := harness.StartChild("gamewire", "-heap-profile", heapProfile)
	if err != nil {
		fmt.Printf("| %s | error: %v | | | |\n", name, err)
		return
	}
	defer c.Stop()
	time.Sleep(500 * time.Millisecond)
	before := c.RSS()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	closers := make([]func(), n)
	var next, ok atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				dctx, dcancel := context.WithTimeout(ctx, 20*time.Second)
				cl, err := dial(dctx, c.Addr)
				dcancel()
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				closers[i] = cl
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	// Let the server's handshake garbage go and its idle state settle.
	runtime.GC()
	time.Sleep(3 * time.Second)
	after := c.RSS()
	// Then with the server's garbage collected and its free pages returned to the
	// OS (freeOnSignal): the live state, without the login handshakes' garbage.
	freed := int64(0)
	if c.Signal(syscall.SIGUSR1) == nil {
		time.Sleep(2 * time.Second)
		freed = c.RSS()
	}
	for _, cl := range closers {
		if cl != nil {
			cl()
		}
	}
	established := ok.Load()
	per, perFreed := "-", "-"
	if established > 0 {
		per = fmt.Sprintf("%.0f", float64(after-before)/float64(established))
		if freed > 0 {
			perFreed = fmt.Sprintf("%.0f", float64(freed-before)/float64(established))
		}
	}
	note := ""
	if e, isErr := firstErr.Load().(error); isErr {
		note = fmt.Sprintf(" (first failure: %v)", e)
	}
	fmt.Printf("| %s | %d%s | %.1f MiB | %.1f MiB | %s | %.1f MiB | %s |\n", name, established, note,
		float64(before)/(1<<20), float64(after)/(1<<20), per, float64(freed)/(1<<20), perFreed)
}

// freeOnSignal makes the server child collect its garbage and return free memory
// to the OS on SIGUSR1, so the idle measurement can read the live state's RSS.
func freeOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for range ch {
			runtime.GC()
			debug.FreeOSMemory()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Fprintf(os.Stderr, "server child: %d goroutines, heap in use %.1f MiB, stacks %.1f MiB\n",
				runtime.NumGoroutine(), float64(m.HeapInuse)/(1<<20), float64(m.StackInuse)/(1<<20))
			if *heapProf != "" {
				if f, err := os.Create(*heapProf); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}()
}

// raiseFileLimit raises the descriptor limit for n client sockets (two per login while
// it runs), the hard limit too when allowed.
func raiseFileLimit(n int) {
	var lim syscall.Rlimit
	want := uint64(2*n) + 1024
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < want {
		raised := syscall.Rlimit{Cur: want, Max: max(lim.Max, want)}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) != nil {
			lim.Cur = lim.Max
			_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		}
	}
}
