package nex

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// BenchmarkLoginPrederived is BenchmarkLogin with the client's key derived once,
// so it measures the servers and the protocol rather than the client's MD5 rounds.
func BenchmarkLoginPrederived(b *testing.B) {
	key := kerberos.DeriveKey(auth.GuestPassword, 100)
	benchLogin(b, LoginConfig{User: "guest", Key: key[:]})
}

// BenchmarkLogin measures whole logins on loopback (Login, ticket, secure CONNECT,
// Register) with 16 concurrent clients, against one server. Each login costs the
// client a password key derivation (~65,000 MD5 rounds), as real clients pay.
func BenchmarkLogin(b *testing.B) {
	benchLogin(b, LoginConfig{User: "guest", Password: auth.GuestPassword})
}

func benchLogin(b *testing.B, lc LoginConfig) {
	b.ReportAllocs()
	cfg := prudp.Config{}
	lc.Config = cfg
	srv := &Server{Config: cfg, Accounts: testAccounts()}
	addr := startServer(b, srv)
	b.SetParallelism(8) // 16 goroutines on 2 CPUs
	var failed atomic.Int64
	cpu := testutil.ProcessCPU()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			sess, err := Login(ctx, addr, lc)
			if err != nil {
				failed.Add(1)
				continue
			}
			sess.RMC.Close()
			sess.Conn.Abort()
		}
	})
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "logins/s")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d logins failed", n)
	}
}

// reportCPU adds the process CPU time (client and server, both in this process)
// per operation since start: steadier than wall time on a shared machine.
func reportCPU(b *testing.B, start time.Duration) {
	if cpu := testutil.ProcessCPU() - start; cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	}
}

// BenchmarkDeriveKey is the client's share of a login.
func BenchmarkDeriveKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		kerberos.DeriveKey(auth.GuestPassword, 100)
	}
}

// BenchmarkSecureCall measures RMC calls (Health PingDaemon) per second on
// established secure connections, 16 clients in closed loop.
func BenchmarkSecureCall(b *testing.B) {
	b.ReportAllocs()
	cfg := prudp.Config{}
	addr := startServer(b, &Server{Config: cfg, Accounts: testAccounts()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const clients = 16
	sessions := make(chan *Session, clients)
	for range clients {
		s, err := Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
		if err != nil {
			b.Fatal(err)
		}
		sessions <- s
		defer func() { s.RMC.Close(); s.Conn.Abort() }()
	}
	b.SetParallelism(8)
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	b.RunParallel(func(pb *testing.PB) {
		s := <-sessions
		for pb.Next() {
			if _, err := s.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkEchoBaseline is the same closed loop as BenchmarkSecureCall over a bare
// PRUDP echo server (no RMC, no ticket), for the ratio in docs/performance.md.
func BenchmarkEchoBaseline(b *testing.B) {
	b.ReportAllocs()
	pc, spare, err := loopbackPair()
	if err != nil {
		b.Fatal(err)
	}
	spare.Close()
	srv := &prudp.Server{Handler: prudp.EchoHandler}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	defer func() { srv.Close(); <-done }()
	ctx := context.Background()
	const clients = 16
	conns := make(chan *prudp.Conn, clients)
	for range clients {
		c, err := prudp.Dial(ctx, pc.LocalAddr().String(), &prudp.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Abort()
		conns <- c
	}
	// A Health PingDaemon request is 17 bytes; echo the same size.
	msg, _ := (&rmc.Request{Protocol: rmc.ProtocolHealth, CallID: 1, Method: health.MethodPingDaemon}).Append(nil)
	b.SetParallelism(8)
	b.ResetTimer()
	cpu := testutil.ProcessCPU()
	b.RunParallel(func(pb *testing.PB) {
		c := <-conns
		for pb.Next() {
			if err := c.Send(ctx, 0, msg); err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Recv(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
