// Command nexprof profiles the server side of nexbench's RMC measurement: gamewire's NEX
// servers in one process (-role server: a CPU profile, and the allocations per RMC call
// counted from runtime.MemStats over the same window), 16 closed-loop clients of Health
// PingDaemon on secure connections in another (-role client), so that the profile and the
// allocation count hold the server alone.
//
//	go build -o /tmp/nexprof ./cmd/nexprof
//	/tmp/nexprof -role server -d 8s & /tmp/nexprof -role client -d 8s; wait
//	go tool pprof -top /tmp/nexprof /tmp/nexsrv.prof
//
// With -size N the clients call nexbench's RMC echo (a handler on the server's Mux that
// returns its parameters) with N-byte requests instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

const accessKey = "3d37fbdb"

var (
	role    = flag.String("role", "server", "server or client")
	addr    = flag.String("addr", "127.0.0.1:47100", "the authentication server's address (the server binds it, the secure server the next free port)")
	dur     = flag.Duration("d", 8*time.Second, "profiling window (the server waits 3 s for the clients' logins first)")
	cpuProf = flag.String("cpuprofile", "/tmp/nexsrv.prof", "server: CPU profile file")
	memProf = flag.String("memprofile", "", "server: allocation profile file (every allocation sampled: slows the server)")
	clients = flag.Int("clients", 16, "client: concurrent clients")
	size    = flag.Int("size", 0, "client: call nexbench's RMC echo (protocol 0x66, registered non-blocking on the server's Mux) with requests of this many bytes, header included, instead of Health PingDaemon")
)

// echoProtocol and echoMethod are nexbench's RMC echo call.
const (
	echoProtocol = 0x66
	echoMethod   = 1
	rmcHeader    = 13 // u32 size, u8 protocol, u32 call id, u32 method id
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *role == "server" {
		if err := server(); err != nil {
			log.Fatal(err)
		}
		return
	}
	client()
}

func server() error {
	if *memProf != "" {
		runtime.MemProfileRate = 1
	}
	accounts := new(auth.Memory)
	for _, sp := range auth.SpecialAccounts {
		pw := "bench-" + sp.Name
		if sp.PID == auth.PIDGuest {
			pw = auth.GuestPassword
		}
		accounts.Add(sp.PID, sp.Name, pw)
	}
	ua, err := net.ResolveUDPAddr("udp", *addr)
	if err != nil {
		return err
	}
	a, err := net.ListenUDP("udp", ua)
	if err != nil {
		return err
	}
	b, err := net.ListenUDP("udp", &net.UDPAddr{IP: ua.IP})
	if err != nil {
		return err
	}
	mux := rmc.NewMux()
	mux.HandleProtocol(echoProtocol, rmc.NonBlocking(rmc.HandlerFunc(func(_ context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		return append(out, c.Params...), nil
	})))
	srv := &nex.Server{Config: prudp.Config{AccessKey: accessKey}, Accounts: accounts, Mux: mux}
	go srv.Serve(a, b)
	time.Sleep(3 * time.Second) // the clients log in
	f, err := os.Create(*cpuProf)
	if err != nil {
		return err
	}
	defer f.Close()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	st0 := srv.SecureServer().Stats()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	time.Sleep(*dur)
	pprof.StopCPUProfile()
	runtime.ReadMemStats(&m1)
	st1 := srv.SecureServer().Stats()
	if *memProf != "" {
		mf, err := os.Create(*memProf)
		if err != nil {
			return err
		}
		defer mf.Close()
		if err := pprof.Lookup("allocs").WriteTo(mf, 0); err != nil {
			return err
		}
	}
	calls := st1.MessagesIn - st0.MessagesIn
	fmt.Printf("%d RMC calls in %v: %d allocations (%.3f per call, %.1f bytes per call), %d inline overruns\n",
		calls, *dur, m1.Mallocs-m0.Mallocs, float64(m1.Mallocs-m0.Mallocs)/float64(max(calls, 1)),
		float64(m1.TotalAlloc-m0.TotalAlloc)/float64(max(calls, 1)), st1.InlineOverruns)
	srv.Close()
	return nil
}

func client() {
	key := kerberos.DeriveKey(auth.GuestPassword, uint64(auth.PIDGuest))
	var wg sync.WaitGroup
	var n atomic.Int64
	deadline := time.Now().Add(*dur + 3*time.Second)
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			s, err := nex.Login(ctx, *addr, nex.LoginConfig{User: "guest", Key: key[:], Config: prudp.Config{AccessKey: accessKey}})
			if err != nil {
				log.Print(err)
				return
			}
			defer s.Conn.Abort()
			protocol, method, params := uint16(rmc.ProtocolHealth), uint32(health.MethodPingDaemon), []byte(nil)
			if *size > 0 {
				protocol, method, params = echoProtocol, echoMethod, make([]byte, max(*size-rmcHeader, 0))
			}
			for time.Now().Before(deadline) {
				if _, err := s.RMC.Call(ctx, protocol, method, params); err != nil {
					return // the server has stopped
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Println("client: calls", n.Load())
}
