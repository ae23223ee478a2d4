// Command nexbench measures gamewire's NEX server on loopback: whole logins per second
// (Login, ticket, secure CONNECT, Register, against both servers) with concurrent clients,
// and RMC calls per second on established secure connections, beside the same closed loop
// of RMC calls against nex-go v2.3.1's secure endpoint (which echoes them). The servers run
// as child processes of this binary so their CPU time is read from /proc.
//
// With -sizes it also measures RMC calls of a handler that echoes its parameters
// (registered on nex.Server's Mux, declared non-blocking, so answered inline) at each
// client count and message size, against nex-go's echo endpoint and a plain UDP echo
// of datagrams of the same size (the ceiling), and prints the ratios.
//
//	go run ./cmd/nexbench                       # 16 clients, 3 s per measurement
//	go run ./cmd/nexbench -clients 16 -duration 5s
//	go run ./cmd/nexbench -ping=false -clients 16,256 -sizes 64,1024
//	go run ./cmd/nexbench -idle 2000            # RSS per idle logged-in secure connection
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/bench/internal/harness"
	"github.com/gamewire/gamewire/interop/nexgo"
	"github.com/gamewire/gamewire/interop/rmcframe"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

var (
	serveKind = flag.String("serve", "", "internal: run as the server child of this kind (gamewire or nexgo)")
	clientsF  = flag.String("clients", "16", "concurrent clients (a comma-separated list for the echo table; logins and PingDaemon use the first)")
	sizesF    = flag.String("sizes", "", "RMC message sizes in bytes (header included) for the echo table; empty: no echo table")
	ping      = flag.Bool("ping", true, "measure logins and Health PingDaemon calls")
	idle      = flag.Int("idle", 0, "logged-in secure connections to hold idle while the server's RSS is read (0: none)")
	heapProf  = flag.String("heap-profile", "", "with -idle: the server child writes a heap profile of the logged-in connections here")
	duration  = flag.Duration("duration", 3*time.Second, "measuring time per figure")
	clients   = new(int)
)

const accessKey = "3d37fbdb"

func main() {
	flag.Parse()
	log.SetFlags(0)
	// nex-go's logger made ./log here when the process started (server
	// children included): leave nothing in the directory it was run from.
	if err := harness.RemoveNexgoLogFiles(); err != nil {
		log.Printf("nex-go's log files: %v", err)
	}
	switch *serveKind {
	case "":
	case "gamewire":
		freeOnSignal()
		addr, err := serveGamewire()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("listening", addr)
		select {}
	case "udpecho":
		addr, err := serveUDPEcho()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("listening", addr)
		select {}
	case "nexgo":
		s, err := nexgo.Start(nexgo.Config{Version: 1, AccessKey: accessKey, Secure: true,
			ServerPassword: serverPassword, FixedRTO: 200 * time.Millisecond})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("listening 127.0.0.1:%d\n", s.Port)
		select {}
	default:
		log.Fatalf("nexbench: unknown server kind %q", *serveKind)
	}

	counts, err := ints(*clientsF)
	if err != nil || len(counts) == 0 {
		log.Fatalf("nexbench: -clients: %v", err)
	}
	sizes, err := ints(*sizesF)
	if err != nil {
		log.Fatalf("nexbench: -sizes: %v", err)
	}
	*clients = counts[0]
	fmt.Printf("# nexbench %s, %s clients, %s per figure, NEX V1, load average %s\n\n", time.Now().UTC().Format(time.RFC3339), *clientsF, *duration, loadAverage())
	if *ping {
		pingRows()
	}
	if len(sizes) > 0 {
		echoTable(counts, sizes)
	}
	if *idle > 0 {
		idleConnections(*idle)
	}
}

// pingRows measures whole logins and Health PingDaemon calls against gamewire, and
// nex-go's echo endpoint with empty parameters.
func pingRows() {
	fmt.Println("| measurement | rate | p50 | p99 | server CPU per operation | client retransmissions |")
	fmt.Println("|---|---|---|---|---|---|")
	key := kerberos.DeriveKey(auth.GuestPassword, uint64(auth.PIDGuest))
	row("gamewire: full logins (client key pre-derived)", "logins/s", func(c *harness.Child) (op, error) {
		return func(ctx context.Context) error {
			s, err := nex.Login(ctx, c.Addr, nex.LoginConfig{User: "guest", Key: key[:], Config: prudp.Config{AccessKey: accessKey}})
			if err != nil {
				return err
			}
			s.RMC.Close()
			s.Conn.Abort()
			return nil
		}, nil
	}, "gamewire")
	gw := row("gamewire: RMC calls on secure connections (Health PingDaemon)", "calls/s", func(c *harness.Child) (op, error) {
		s, err := nex.Login(context.Background(), c.Addr, nex.LoginConfig{User: "guest", Key: key[:], Config: prudp.Config{AccessKey: accessKey}})
		if err != nil {
			return nil, err
		}
		rowConns = append(rowConns, s.Conn)
		return func(ctx context.Context) error {
			_, err := s.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil)
			return err
		}, nil
	}, "gamewire")
	ng := row("nex-go v2.3.1: RMC calls on secure connections (echo endpoint)", "calls/s", func(c *harness.Child) (op, error) {
		conn, err := dialNexgoSecure(c.Addr)
		if err != nil {
			return nil, err
		}
		rowConns = append(rowConns, conn)
		var call atomic.Uint32
		return func(ctx context.Context) error {
			req := rmcframe.Request(uint8(rmc.ProtocolHealth), call.Add(1), uint32(health.MethodPingDaemon), rmcframe.HeaderSize, 0)
			if err := conn.Send(ctx, 0, req); err != nil {
				return err
			}
			m, err := conn.Recv(ctx)
			if err != nil {
				return err
			}
			return rmcframe.CheckEcho(req, m.Data)
		}, nil
	}, "nexgo")
	if gw.rate > 0 && ng.rate > 0 {
		fmt.Printf("\nRMC calls: gamewire / nex-go = %.2fx calls/s, %.2fx server CPU per call\n", gw.rate/ng.rate, float64(gw.cpu)/float64(ng.cpu))
	}
}

// rowConns are the PRUDP connections of the row being measured, whose retransmissions
// the row reports; setup functions append theirs.
var rowConns []*prudp.Conn

// op is one operation of a client's closed loop.
type op func(ctx context.Context) error

type figure struct {
	rate float64
	cpu  time.Duration
	p99  time.Duration
}

// row runs *clients closed loops of the operations setup returns against a fresh server
// child of the given kind and prints one table row.
func row(name, unit string, setup func(*harness.Child) (op, error), kind string) figure {
	c, err := harness.StartChild(kind)
	if err != nil {
		fmt.Printf("| %s | error: %v | | | |\n", name, err)
		return figure{}
	}
	defer c.Stop()
	rowConns = rowConns[:0]
	ops := make([]op, *clients)
	for i := range ops {
		if ops[i], err = setup(c); err != nil {
			fmt.Printf("| %s | error: setup: %v | | | |\n", name, err)
			return figure{}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration+time.Minute)
	defer cancel()
	loops := make([]func() error, len(ops))
	for i, o := range ops {
		loops[i] = func() error { return o(ctx) }
	}
	all, elapsed, cpu, err := harness.Run(c, loops, *duration)
	if err != nil {
		fmt.Printf("| %s | error: %v | | | |\n", name, err)
		return figure{}
	}
	f := figure{rate: float64(len(all)) / elapsed.Seconds(), cpu: cpu / time.Duration(len(all)), p99: all.Quantile(0.99)}
	var resent uint64
	for _, c := range rowConns {
		resent += c.Stats().Retransmits
	}
	fmt.Printf("| %s | %.0f %s | %s | %s | %s | %d |\n", name, f.rate, unit, all.Quantile(0.5), all.Quantile(0.99), f.cpu, resent)
	return f
}

// serveGamewire runs gamewire's NEX servers with the special accounts in memory.
func serveGamewire() (string, error) {
	accounts := new(auth.Memory)
	for _, sp := range auth.SpecialAccounts {
		pw := "bench-" + sp.Name
		if sp.PID == auth.PIDGuest {
			pw = auth.GuestPassword
		}
		accounts.Add(sp.PID, sp.Name, pw)
	}
	authPC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	securePC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	mux := rmc.NewMux()
	mux.HandleProtocol(echoProtocol, rmc.NonBlocking(rmc.HandlerFunc(func(_ context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		return append(out, c.Params...), nil
	})))
	srv := &nex.Server{Config: prudp.Config{AccessKey: accessKey}, Accounts: accounts, Mux: mux}
	go srv.Serve(authPC, securePC)
	return authPC.LocalAddr().String(), nil
}

const (
	serverPassword = "securepassword"
	userPID        = 1800000000
)

// dialNexgoSecure opens a secure connection to nex-go's secure endpoint with a ticket
// issued by gamewire's kerberos package for nex-go's server account, as in interop/.
func dialNexgoSecure(addr string) (*prudp.Conn, error) {
	// nex-go's default KerberosTicketVersion 0 reads old-format internal tickets.
	settings := kerberos.Settings{PIDSize: 4, SessionKeySize: 32, Internal: kerberos.InternalOld}
	userKey := kerberos.DeriveKey("bench", userPID)
	serverKey := kerberos.DeriveKey(serverPassword, 2)
	sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{SourcePID: userPID, TargetPID: 2,
		SourceKey: userKey[:], TargetKey: serverKey[:], Issued: time.Now()}, settings, nil)
	if err != nil {
		return nil, err
	}
	ticket, err := kerberos.OpenTicket(sealed, userKey[:], settings)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := prudp.Dial(ctx, addr, &prudp.Config{AccessKey: accessKey, Ticket: &ticket, PID: userPID, Kerberos: settings})
	if err != nil {
		return nil, errors.Join(errors.New("secure dial to nex-go"), err)
	}
	return c, nil
}
