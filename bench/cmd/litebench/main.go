// Command litebench measures gamewire's PRUDP Lite over WebSocket (ws://) and TLS
// WebSocket (wss://) on loopback under closed-loop request/response load, next to
// gamewire's NEX V1 over UDP measured in the same run: requests per second, p50 and p99
// round trips, and the server's CPU time per request and memory. Each server runs as a
// child process of this binary so its CPU time is read from /proc apart from the load
// generator's (both share the machine's cores).
//
//	go run ./cmd/litebench                                  # 1 and 16 clients, 64 and 1024 bytes
//	go run ./cmd/litebench -duration 2s -clients 16 -sizes 64
//
// The wss server uses a self-signed certificate made in memory; the clients skip its
// verification (the benchmark measures the transport, not the PKI).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"github.com/gamewire/gamewire/bench/internal/harness"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
)

var (
	serveKind  = flag.String("serve", "", "internal: run as the server child of this transport")
	accessKey  = flag.String("access-key", "6f599f81", "PRUDP access key")
	duration   = flag.Duration("duration", 3*time.Second, "measuring time per cell")
	clientsF   = flag.String("clients", "1,16", "closed-loop client counts")
	sizesF     = flag.String("sizes", "64,1024", "message sizes in bytes")
	transports = flag.String("transports", "udp,ws,wss", "transports to measure: udp (NEX V1), ws, wss, tcp, tls (Lite)")
	idle       = flag.Int("idle", 0, "also measure the server's memory per idle connection with this many clients per transport")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *serveKind != "" {
		addr, err := serve(*serveKind)
		if err != nil {
			log.Fatalf("litebench: serve %s: %v", *serveKind, err)
		}
		fmt.Println("listening", addr)
		select {} // until killed by the parent
	}
	if *idle > 0 {
		defer measureIdle(strings.Split(*transports, ","), *idle)
	}
	clients, sizes := ints(*clientsF), ints(*sizesF)
	ts := strings.Split(*transports, ",")
	fmt.Printf("# litebench %s, %s per cell\n\n", time.Now().UTC().Format(time.RFC3339), *duration)
	fmt.Println("| transport | clients | size | requests/s | p50 | p99 | max | client resends | server CPU/request | server RSS | req/s vs UDP |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range clients {
		for _, size := range sizes {
			var udp float64
			for _, tr := range ts {
				r, err := measure(tr, n, size)
				if err != nil {
					fmt.Printf("| %s | %d | %d | error: %v | | | | | | | |\n", tr, n, size, err)
					continue
				}
				if tr == "udp" {
					udp = r.rate
				}
				vs := "n/a"
				if udp > 0 {
					vs = fmt.Sprintf("%.2fx", r.rate/udp)
				}
				fmt.Printf("| %s | %d | %d | %.0f | %s | %s | %s | %d | %s | %.1f MiB | %s |\n", name(tr), n, size, r.rate,
					r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.max.Round(time.Microsecond), r.resends,
					r.cpuPerReq.Round(100*time.Nanosecond),
					float64(r.rss)/(1<<20), vs)
			}
		}
	}
}

func name(tr string) string {
	if tr == "udp" {
		return "nex-v1 / UDP"
	}
	return "nex-lite / " + tr
}

// serve runs the echo server of one transport: authentication port 1 with the echo handler.
func serve(tr string) (string, error) {
	if tr == "udp" {
		pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return "", err
		}
		srv := &prudp.Server{Config: prudp.Config{Dialect: prudp.NEXV1, AccessKey: *accessKey}, Handler: prudp.EchoHandler}
		go srv.Serve(pc)
		return pc.LocalAddr().String(), nil
	}
	cfg := &lite.Config{}
	if tr == "wss" || tr == "tls" {
		srvTLS, _, err := lite.SelfSigned("127.0.0.1")
		if err != nil {
			return "", err
		}
		cfg.TLS = srvTLS
	}
	l, err := lite.Listen("127.0.0.1:0", cfg)
	if err != nil {
		return "", err
	}
	srv := &prudp.Server{Config: prudp.Config{Dialect: prudp.NEXLite, AccessKey: *accessKey, Port: 1}, Handler: prudp.EchoHandler}
	go srv.Serve(l.Port(1))
	return l.Addr().String(), nil
}

func dial(ctx context.Context, tr, addr string) (*prudp.Conn, error) {
	if tr == "udp" {
		return prudp.Dial(ctx, addr, &prudp.Config{Dialect: prudp.NEXV1, AccessKey: *accessKey})
	}
	cfg := &lite.Config{TLS: &tls.Config{InsecureSkipVerify: true}}
	return lite.Dial(ctx, tr+"://"+addr+"/", &prudp.Config{Dialect: prudp.NEXLite, AccessKey: *accessKey, Port: 1}, cfg)
}

type result struct {
	resends   uint64 // client retransmissions
	max       time.Duration
	rate      float64
	p50, p99  time.Duration
	cpuPerReq time.Duration
	rss       int64
}

// measure runs n closed-loop clients of size-byte messages against a fresh server child.
func measure(tr string, n, size int) (result, error) {
	c, err := harness.StartChild(tr, "-access-key", *accessKey)
	if err != nil {
		return result{}, err
	}
	defer c.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), *duration+30*time.Second)
	defer cancel()
	conns := make([]*prudp.Conn, n)
	for i := range conns {
		cn, err := dial(ctx, tr, c.Addr)
		if err != nil {
			for _, x := range conns[:i] {
				x.Abort()
			}
			return result{}, fmt.Errorf("dial client %d: %w", i, err)
		}
		conns[i] = cn
	}
	defer func() {
		for _, x := range conns {
			x.Abort()
		}
	}()
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i)
	}
	roundTrip := func(cn *prudp.Conn) error {
		if err := cn.Send(ctx, 0, msg); err != nil {
			return err
		}
		m, err := cn.Recv(ctx)
		if err != nil {
			return err
		}
		if string(m.Data) != string(msg) {
			return errors.New("echo differs from the request")
		}
		return nil
	}
	for _, cn := range conns {
		if err := roundTrip(cn); err != nil {
			return result{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	ops := make([]func() error, len(conns))
	for i, cn := range conns {
		ops[i] = func() error { return roundTrip(cn) }
	}
	all, elapsed, cpu, err := harness.Run(c, ops, *duration)
	if err != nil {
		return result{}, err
	}
	q := all.Quantile
	var resends uint64
	for _, cn := range conns {
		resends += cn.Stats().Retransmits
	}
	return result{
		resends:   resends,
		max:       all[len(all)-1],
		rate:      float64(len(all)) / elapsed.Seconds(),
		p50:       q(0.50),
		p99:       q(0.99),
		cpuPerReq: cpu / time.Duration(len(all)),
		rss:       c.RSS(),
	}, nil
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "litebench: bad number %q\n", f)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

// measureIdle connects n clients to a fresh server child per transport, lets the
// connections settle, and reports the server's resident memory per connection.
func measureIdle(ts []string, n int) {
	fmt.Printf("\n| transport | idle connections | server RSS before | after | per connection |\n|---|---|---|---|---|\n")
	for _, tr := range ts {
		c, err := harness.StartChild(tr, "-access-key", *accessKey)
		if err != nil {
			fmt.Printf("| %s | error: %v | | | |\n", name(tr), err)
			continue
		}
		time.Sleep(200 * time.Millisecond)
		before := c.RSS()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var conns []*prudp.Conn
		for i := range n {
			cn, err := dial(ctx, tr, c.Addr)
			if err != nil {
				fmt.Printf("| %s | stopped at %d: %v | | | |\n", name(tr), i, err)
				break
			}
			conns = append(conns, cn)
		}
		time.Sleep(2 * time.Second)
		after := c.RSS()
		if len(conns) > 0 {
			fmt.Printf("| %s | %d | %.1f MiB | %.1f MiB | %.1f KB |\n", name(tr), len(conns), float64(before)/(1<<20),
				float64(after)/(1<<20), float64(after-before)/float64(len(conns))/1000)
		}
		for _, cn := range conns {
			cn.Abort()
		}
		cancel()
		c.Stop()
	}
}
