// Command mmbench measures gamewire's matchmaking on loopback, in one run so the
// figures can be compared: the server CPU time per auto-matchmake against the
// server CPU time per Health ping on the same kind of connections, and the
// auto-matchmake throughput with many concurrent clients. The server (the NEX
// servers with the SQLite account store and its matchmaking store, as `gamewire
// serve` runs them) is a child process of this binary, so its CPU time is read
// from /proc apart from the clients'.
//
//	go run ./cmd/mmbench                          # 256 clients, 3 s per figure
//	go run ./cmd/mmbench -clients 64 -duration 5s
//
// One auto-matchmake operation is AutoMatchmake_Postpone into sessions of
// -size followed by EndParticipation, so the database does not grow; each
// also sends the notifications of the join and the leave to the others.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gamewire/gamewire/bench/internal/harness"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

var (
	serveKind = flag.String("serve", "", "internal: run as the server child")
	dataDir   = flag.String("data", "", "internal: the server child's account store")
	clients   = flag.Int("clients", 256, "concurrent clients")
	size      = flag.Int("size", 8, "maximum participants of a session")
	duration  = flag.Duration("duration", 3*time.Second, "measuring time per figure")
)

const (
	accessKey = "3d37fbdb"
	password  = "bench"
	firstPID  = 1000
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *serveKind != "" {
		addr, err := serve()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("listening", addr)
		select {}
	}
	dir, err := os.MkdirTemp("", "mmbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Accounts first (each costs a key derivation), then one server for both
	// figures.
	fmt.Fprintf(os.Stderr, "creating %d accounts...\n", *clients)
	if err := makeAccounts(dir, *clients); err != nil {
		log.Fatal(err)
	}
	c, err := harness.StartChild("gamewire", "-data", dir)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()
	fmt.Fprintf(os.Stderr, "logging in %d clients...\n", *clients)
	sessions, err := loginAll(c.Addr, *clients)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("# mmbench %s, %d clients, sessions of %d, %s per figure, NEX V1, SQLite store\n\n",
		time.Now().UTC().Format(time.RFC3339), *clients, *size, *duration)
	fmt.Println("| measurement | rate | p50 | p99 | server CPU per operation |")
	fmt.Println("|---|---|---|---|---|")
	ping := measure(c, "Health PingDaemon", "calls/s", sessions, func(ctx context.Context, s *nex.Session, _ *matchmaking.Client) error {
		_, err := s.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil)
		return err
	})
	tmpl := matchmaking.MatchmakeSession{
		Gathering:         matchmaking.Gathering{MinParticipants: 1, MaxParticipants: uint16(*size), Flags: matchmaking.FlagMigrateOwner},
		Attributes:        []uint32{0, 0, 0, 0, 0, 0},
		OpenParticipation: true, MatchmakeSystemType: 1,
	}
	mm := measure(c, "AutoMatchmake_Postpone + EndParticipation", "matchmakes/s", sessions, func(ctx context.Context, _ *nex.Session, m *matchmaking.Client) error {
		s, err := m.AutoMatchmake(ctx, tmpl, "")
		if err != nil {
			return err
		}
		return m.EndParticipation(ctx, s.ID, "")
	})
	if ping.cpu > 0 && mm.cpu > 0 {
		fmt.Printf("\nserver CPU per auto-matchmake (with its leave) = %.1fx a Health ping's\n", float64(mm.cpu)/float64(ping.cpu))
	}
}

type figure struct {
	rate float64
	cpu  time.Duration
}

type client struct {
	s  *nex.Session
	mm *matchmaking.Client
}

func measure(c *harness.Child, name, unit string, cs []client, op func(ctx context.Context, s *nex.Session, m *matchmaking.Client) error) figure {
	ctx, cancel := context.WithTimeout(context.Background(), *duration+time.Minute)
	defer cancel()
	loops := make([]func() error, len(cs))
	for i, cl := range cs {
		loops[i] = func() error { return op(ctx, cl.s, cl.mm) }
	}
	all, elapsed, cpu, err := harness.Run(c, loops, *duration)
	if err != nil {
		fmt.Printf("| %s | error: %v | | | |\n", name, err)
		return figure{}
	}
	f := figure{rate: float64(len(all)) / elapsed.Seconds(), cpu: cpu / time.Duration(len(all))}
	fmt.Printf("| %s | %.0f %s | %s | %s | %s |\n", name, f.rate, unit, all.Quantile(0.5), all.Quantile(0.99), f.cpu)
	return f
}

func makeAccounts(dir string, n int) error {
	ctx := context.Background()
	store, _, err := accounts.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer store.Close()
	// One at a time: accounts.Store.Add's transactions are not meant to race.
	for i := range n {
		if _, err := store.Add(ctx, accounts.NewAccount{PID: types.PID(firstPID + i), Password: password}); err != nil {
			return err
		}
	}
	return nil
}

func loginAll(addr string, n int) ([]client, error) {
	out := make([]client, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pid := firstPID + i
			key := kerberos.DeriveKey(password, uint64(pid))
			mux := rmc.NewMux()
			mux.HandleProtocol(notifications.Protocol, &notifications.Handler{})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s, err := nex.Login(ctx, addr, nex.LoginConfig{User: strconv.Itoa(pid), Key: key[:],
				Config: prudp.Config{AccessKey: accessKey}, Handler: mux})
			if err != nil {
				errs <- fmt.Errorf("login %d: %w", pid, err)
				return
			}
			out[i] = client{s, &matchmaking.Client{RMC: s.RMC, Version: notifications.DefaultVersion(s.RMC.Settings())}}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return out, nil
}

// serve runs the NEX servers on the account store in -data, with its
// matchmaking store, as gamewire serve does.
func serve() (string, error) {
	store, _, err := accounts.Open(context.Background(), *dataDir)
	if err != nil {
		return "", err
	}
	mm, err := store.Matchmaking()
	if err != nil {
		return "", err
	}
	authPC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	securePC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	srv := &nex.Server{Config: prudp.Config{AccessKey: accessKey}, Accounts: store, Matchmaking: mm}
	go srv.Serve(authPC, securePC)
	return authPC.LocalAddr().String(), nil
}
