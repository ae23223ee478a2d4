// Command prudpbench compares, in one run and on loopback, gamewire's PRUDP server with
// nex-go v2.3.1's and with a plain UDP echo server under the same closed-loop load, and
// gamewire's bulk transfer with kcp-go's. Each server runs as a child process of this
// binary so its CPU time and memory are read from /proc apart from the load generator's.
//
//	go run ./cmd/prudpbench                     # the full table (a few minutes)
//	go run ./cmd/prudpbench -duration 1s -clients 16 -sizes 64
//
// Results are printed as a markdown table with ratios against the peers measured in the
// same run; docs/performance.md records a run with the command that produced it.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/gamewire/gamewire/bench/internal/harness"
	"log"
	"os"
	"strconv"
	"strings"
	"time"
)

var (
	serveKind = flag.String("serve", "", "internal: run as the server child of this kind")
	serveDial = flag.String("dialect", "nex-v1", "PRUDP dialect for the PRUDP servers")
	accessKey = flag.String("access-key", "ridfebb9", "PRUDP access key")
	duration  = flag.Duration("duration", 3*time.Second, "measuring time per cell")
	clientsF  = flag.String("clients", "1,16,256", "closed-loop client counts")
	sizesF    = flag.String("sizes", "64,1024", "message sizes in bytes")
	serversF  = flag.String("servers", "gamewire,gamewire-inline,gamewire-rmc,nexgo,udpecho", "servers to measure (gamewire: HandlerFunc echo; gamewire-inline: InlineHandler echo; gamewire-rmc: RMC echo dispatched inline)")
	bulkMB    = flag.Int("bulk-mb", 64, "megabytes for the bulk transfer comparison (0 skips it)")
	bulkLoss  = flag.Float64("bulk-loss", 0, "fraction of datagrams dropped each way in the bulk transfers, through a loopback relay (0: direct)")
	idleConns = flag.Int("idle", 20000, "idle connections for the memory measurement (0 skips it)")
)

// requester sends one message and waits for its echo.
type requester interface {
	roundTrip(ctx context.Context, msg []byte) error
	// retransmits is how many datagrams the client resent (0 for the UDP echo's
	// client, which resends nothing): losses in a loopback run mean a full buffer.
	retransmits() uint64
	close()
}

// server kinds: how to serve as a child, and how to dial one as a client.
type kind struct {
	serve func(ctx context.Context) (addr string, err error)
	dial  func(ctx context.Context, addr string) (requester, error)
}

var kinds = map[string]kind{
	"udpecho":         {serve: serveUDPEcho, dial: dialUDPEcho},
	"gamewire":        {serve: serveGamewire, dial: dialGamewire},
	"gamewire-inline": {serve: serveGamewireInline, dial: dialGamewire},
	"gamewire-rmc":    {serve: serveGamewireRMC, dial: dialRMC},
	"nexgo":           {serve: serveNexgo, dial: dialRMC},
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	// nex-go's logger made ./log here when the process started (server
	// children included): leave nothing in the directory it was run from.
	if err := harness.RemoveNexgoLogFiles(); err != nil {
		log.Printf("nex-go's log files: %v", err)
	}
	if *serveKind != "" {
		k, ok := kinds[*serveKind]
		if !ok {
			log.Fatalf("prudpbench: unknown server kind %q", *serveKind)
		}
		addr, err := k.serve(context.Background())
		if err != nil {
			log.Fatalf("prudpbench: serve %s: %v", *serveKind, err)
		}
		fmt.Println("listening", addr)
		select {} // until killed by the parent
	}
	clients := ints(*clientsF)
	sizes := ints(*sizesF)
	servers := strings.Split(*serversF, ",")
	fmt.Printf("# prudpbench %s, %s per cell, dialect %s\n\n", time.Now().UTC().Format(time.RFC3339), *duration, *serveDial)
	fmt.Println("| server | clients | size | requests/s | p50 | p99 | server CPU/request | server RSS | client retransmissions |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	results := map[string]result{}
	for _, n := range clients {
		for _, size := range sizes {
			for _, s := range servers {
				r, err := measure(s, n, size)
				if err != nil {
					fmt.Printf("| %s | %d | %d | error: %v | | | | | |\n", s, n, size, err)
					continue
				}
				results[fmt.Sprintf("%s/%d/%d", s, n, size)] = r
				fmt.Printf("| %s | %d | %d | %.0f | %s | %s | %s | %.1f MiB | %d |\n", s, n, size, r.rate, r.p50, r.p99, r.cpuPerReq, float64(r.rss)/(1<<20), r.resent)
			}
		}
	}
	fmt.Println()
	fmt.Println("| gamewire server | clients | size | / nex-go (req/s) | / UDP echo (req/s) | / nex-go (CPU per request) | / UDP echo (CPU per request) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, s := range servers {
		if !strings.HasPrefix(s, "gamewire") {
			continue
		}
		for _, n := range clients {
			for _, size := range sizes {
				g, okG := results[fmt.Sprintf("%s/%d/%d", s, n, size)]
				x, okX := results[fmt.Sprintf("nexgo/%d/%d", n, size)]
				u, okU := results[fmt.Sprintf("udpecho/%d/%d", n, size)]
				fmt.Printf("| %s | %d | %d | %s | %s | %s | %s |\n", s, n, size,
					ratio(okG && okX, g.rate, x.rate), ratio(okG && okU, g.rate, u.rate),
					ratio(okG && okX, float64(g.cpuPerReq), float64(x.cpuPerReq)),
					ratio(okG && okU, float64(g.cpuPerReq), float64(u.cpuPerReq)))
			}
		}
	}
	if *bulkMB > 0 {
		fmt.Println()
		runBulk(*bulkMB)
	}
	if *idleConns > 0 {
		fmt.Println()
		runIdle(*idleConns)
	}
}

func ratio(ok bool, a, b float64) string {
	if !ok || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

type result struct {
	rate      float64
	p50, p99  time.Duration
	cpuPerReq time.Duration
	rss       int64
	resent    uint64 // client retransmissions during the measurement
}

// measure runs n closed-loop clients of size-byte messages against a fresh server child.
func measure(server string, n, size int) (result, error) {
	k, ok := kinds[server]
	if !ok {
		return result{}, fmt.Errorf("unknown server %q", server)
	}
	c, err := harness.StartChild(server, "-dialect", *serveDial, "-access-key", *accessKey)
	if err != nil {
		return result{}, err
	}
	defer c.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), *duration+30*time.Second)
	defer cancel()
	reqs := make([]requester, n)
	for i := range reqs {
		r, err := k.dial(ctx, c.Addr)
		if err != nil {
			for _, r := range reqs[:i] {
				r.close()
			}
			return result{}, fmt.Errorf("dial client %d: %w", i, err)
		}
		reqs[i] = r
	}
	defer func() {
		for _, r := range reqs {
			r.close()
		}
	}()
	msg := benchMessage(size)
	// Warm up, then measure.
	for _, r := range reqs {
		if err := r.roundTrip(ctx, msg); err != nil {
			return result{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	var resentBefore uint64
	for _, r := range reqs {
		resentBefore += r.retransmits()
	}
	ops := make([]func() error, len(reqs))
	for i, r := range reqs {
		ops[i] = func() error { return r.roundTrip(ctx, msg) }
	}
	all, elapsed, cpu, err := harness.Run(c, ops, *duration)
	if err != nil {
		return result{}, err
	}
	var resent uint64
	for _, r := range reqs {
		resent += r.retransmits()
	}
	return result{
		resent:    resent - resentBefore,
		rate:      float64(len(all)) / elapsed.Seconds(),
		p50:       all.Quantile(0.50),
		p99:       all.Quantile(0.99),
		cpuPerReq: cpu / time.Duration(len(all)),
		rss:       c.RSS(),
	}, nil
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "prudpbench: bad number %q\n", f)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}
