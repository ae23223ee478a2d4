// Command clusterbench measures a game run as several processes (docs/deploy.md),
// in one run so the figures compare: logins per second and auto-matchmakes per
// second with one authentication node and 1 secure node, and with 3 secure nodes,
// on PostgreSQL, and the all-in-one SQLite server for reference. Every setup is
// real processes on loopback (internal/cluster: the gamewire binary built once, a
// throwaway PostgreSQL server with pg_stat_statements), driven by this process's
// clients.
//
//	go run ./cmd/clusterbench                         # 64 clients, 3 s per figure
//	go run ./cmd/clusterbench -clients 128 -duration 5s
//
// For each figure it reports the rate, the latencies, the CPU time the gamewire
// processes and the PostgreSQL server spent per operation (from /proc), and the
// statements (pg_stat_statements, BEGIN and COMMIT included) and transactions
// (pg_stat_database) per operation, less what the idle cluster runs in the same
// time (heartbeats, mail polls). On a small machine the nodes, PostgreSQL and
// the clients share the cores: the rates are what that machine does, and the
// per-operation costs are what carries over to a bigger one.
//
// A login is the whole flow of nex.Login (authentication connection, Login,
// secure connection with the ticket, Register) and the graceful close of the
// secure connection. An auto-matchmake is AutoMatchmake_Postpone into sessions of
// -size and EndParticipation, so the tables do not grow; players of different
// nodes meet in one session, so notifications go through the nodes' mailbox.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/bench/internal/harness"
	"github.com/gamewire/gamewire/internal/cluster"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/pgstore"
)

var (
	clients  = flag.Int("clients", 64, "concurrent clients")
	size     = flag.Int("size", 4, "maximum participants of a session")
	duration = flag.Duration("duration", 3*time.Second, "measuring time per figure")
	top      = flag.Int("statements", 0, "also list the N most frequent statements of each PostgreSQL figure, per operation")
	setups   = flag.String("setups", "sqlite-all,pg-1,pg-3", "setups to measure, in order: sqlite-all, pg-all, pg-1, pg-3 (pg-N: auth + N secure nodes)")
)

const (
	firstPID = 20480 // a multiple of 1024: cheap keys (cluster.AddPlayers)
	password = "clusterbench"
)

type setup struct {
	name   string
	sqlite bool
	secure int
}

func parseSetup(s string) (setup, error) {
	switch s {
	case "sqlite-all":
		return setup{name: "SQLite, all-in-one", sqlite: true}, nil
	case "pg-all":
		return setup{name: "PostgreSQL, all-in-one"}, nil
	}
	var n int
	if _, err := fmt.Sscanf(s, "pg-%d", &n); err == nil && n > 0 {
		return setup{name: fmt.Sprintf("PostgreSQL, auth + %d secure", n), secure: n}, nil
	}
	return setup{}, fmt.Errorf("unknown setup %q (want sqlite-all, pg-all or pg-N)", s)
}

// figure is one measured operation in one setup.
type figure struct {
	ops              int
	rate             float64
	p50, p99         time.Duration
	nodeCPU, pgCPU   time.Duration // per operation
	stmts, begins    float64       // per operation, background less
	haveStmts        bool
	errors           int
	firstErr         error
	nodeCPUs         []time.Duration // per process, per operation
	backgroundPerSec float64
	top              []string // the most frequent statements, per operation
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	var list []setup
	for _, s := range strings.Split(*setups, ",") {
		st, err := parseSetup(strings.TrimSpace(s))
		if err != nil {
			log.Fatal(err)
		}
		list = append(list, st)
	}
	bin, err := os.MkdirTemp("", "clusterbench-bin-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(bin)
	fmt.Fprintln(os.Stderr, "building gamewire...")
	gamewire, err := cluster.Build(context.Background(), bin)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("# clusterbench %s, %d clients, sessions of %d, %s per figure, NEX V1 on loopback, %d CPUs shared by everything\n\n",
		time.Now().UTC().Format(time.RFC3339), *clients, *size, *duration, runtime.NumCPU())
	fmt.Println("| setup | operation | rate | p50 | p99 | gamewire CPU/op (per process) | PostgreSQL CPU/op | statements/op | of which BEGIN |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	results := map[string][2]figure{}
	for _, st := range list {
		login, mm, err := measureSetup(gamewire, st)
		if err != nil {
			log.Fatalf("%s: %v", st.name, err)
		}
		results[st.name] = [2]figure{login, mm}
		row(st.name, "login (+ close)", "logins/s", login)
		row(st.name, fmt.Sprintf("auto-matchmake (+ leave), sessions of %d", *size), "matchmakes/s", mm)
	}
	for _, st := range list {
		for i, f := range results[st.name] {
			if len(f.top) > 0 {
				fmt.Printf("\n%s, %s: statements per operation\n\n", st.name, []string{"login", "auto-matchmake"}[i])
				for _, l := range f.top {
					fmt.Println("    " + l)
				}
			}
		}
	}
	fmt.Println()
	ratio := func(a, b string) {
		x, okx := results[a]
		y, oky := results[b]
		if !okx || !oky || y[0].rate == 0 || y[1].rate == 0 {
			return
		}
		fmt.Printf("- %s / %s: logins %.2fx, matchmakes %.2fx\n", a, b, x[0].rate/y[0].rate, x[1].rate/y[1].rate)
	}
	ratio("PostgreSQL, auth + 3 secure", "PostgreSQL, auth + 1 secure")
	ratio("PostgreSQL, auth + 1 secure", "SQLite, all-in-one")
	ratio("PostgreSQL, all-in-one", "SQLite, all-in-one")
	for _, st := range list {
		r := results[st.name]
		if r[0].haveStmts {
			fmt.Printf("- %s: idle background %.0f statements/s (heartbeats, mail polls), subtracted above\n",
				st.name, r[0].backgroundPerSec)
		}
		for i, f := range r {
			if f.errors > 0 {
				fmt.Printf("- %s: %d of the %s operations failed (first: %v)\n", st.name, f.errors, []string{"login", "matchmake"}[i], f.firstErr)
			}
		}
	}
}

func row(setup, op, unit string, f figure) {
	st, xa := "n/a", "n/a"
	if f.haveStmts {
		st, xa = fmt.Sprintf("%.1f", f.stmts), fmt.Sprintf("%.1f", f.begins)
	}
	pg := "n/a"
	if f.haveStmts {
		pg = f.pgCPU.Round(time.Microsecond).String()
	}
	per := make([]string, len(f.nodeCPUs))
	for i, c := range f.nodeCPUs {
		per[i] = c.Round(time.Microsecond).String()
	}
	fmt.Printf("| %s | %s | %.0f %s | %s | %s | %s (%s) | %s | %s | %s |\n", setup, op, f.rate, unit,
		f.p50.Round(10*time.Microsecond), f.p99.Round(10*time.Microsecond),
		f.nodeCPU.Round(time.Microsecond), strings.Join(per, " + "), pg, st, xa)
}

// measureSetup starts the setup's cluster and measures logins, then
// auto-matchmakes.
func measureSetup(bin string, st setup) (login, mm figure, err error) {
	ctx := context.Background()
	fmt.Fprintf(os.Stderr, "%s: starting...\n", st.name)
	c, err := cluster.Start(ctx, cluster.Options{Binary: bin, Secure: st.secure, SQLite: st.sqlite,
		PostgresSettings: []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"}})
	if err != nil {
		return login, mm, err
	}
	defer c.Close()
	var stats *pgStats
	if pg, ok := c.Store.(*pgstore.Store); ok {
		stats = &pgStats{pg: pg}
		if _, err := pg.Pool().Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
			return login, mm, fmt.Errorf("pg_stat_statements: %w", err)
		}
	}
	players, err := cluster.AddPlayers(ctx, c.Store, firstPID, *clients, password)
	if err != nil {
		return login, mm, err
	}
	procs := append([]*cluster.Node{c.Auth}, c.Secure...)
	// Logins: each client logs in and out in a loop.
	fmt.Fprintf(os.Stderr, "%s: logins...\n", st.name)
	login = run(c, procs, stats, players, func(p *cluster.Player) error {
		s, err := p.Login(ctx, c.AuthAddr(), cluster.ClientConfig())
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return s.Close(cctx)
	})
	// Matchmaking: every client logged in once, then joins and leaves.
	if err := cluster.Each(players, 16, func(_ int, p *cluster.Player) error {
		_, err := p.Login(ctx, c.AuthAddr(), cluster.ClientConfig())
		return err
	}); err != nil {
		return login, mm, err
	}
	defer cluster.Each(players, 16, func(_ int, p *cluster.Player) error {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		p.Close(cctx)
		return nil
	})
	tmpl := matchmaking.MatchmakeSession{
		Gathering:  matchmaking.Gathering{MinParticipants: 1, MaxParticipants: uint16(*size), Flags: matchmaking.FlagMigrateOwner},
		Attributes: []uint32{0, 0, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1,
	}
	fmt.Fprintf(os.Stderr, "%s: auto-matchmakes...\n", st.name)
	mm = run(c, procs, stats, players, func(p *cluster.Player) error {
		m := p.Matchmaking()
		s, err := m.AutoMatchmake(ctx, tmpl, "")
		if err != nil {
			return err
		}
		return m.EndParticipation(ctx, s.ID, "")
	})
	return login, mm, nil
}

// pgStats reads the database's statement counters (pg_stat_statements, which
// counts a statement when it ends; pg_stat_database's transaction counters are
// flushed by busy backends only about once a second, too late for a few
// seconds' figure). BEGIN counts the explicit transactions; the other
// statements outside them each ran in a transaction of their own.
type pgStats struct{ pg *pgstore.Store }

// top lists the n most frequent statements since the last reset, as calls
// per operation, and resets the counters.
func (s *pgStats) top(n, ops int) []string {
	ctx := context.Background()
	rows, err := s.pg.Pool().Query(ctx, `SELECT calls, regexp_replace(query, '\s+', ' ', 'g') FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC LIMIT $1`, n)
	if err != nil {
		log.Fatalf("pg_stat_statements: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var calls int64
		var q string
		if err := rows.Scan(&calls, &q); err != nil {
			log.Fatalf("pg_stat_statements: %v", err)
		}
		if len(q) > 110 {
			q = q[:110] + "..."
		}
		out = append(out, fmt.Sprintf("%.2f  %s", float64(calls)/float64(ops), q))
	}
	return out
}

// reset clears pg_stat_statements, so top lists one figure's statements.
func (s *pgStats) reset() {
	if _, err := s.pg.Pool().Exec(context.Background(), `SELECT pg_stat_statements_reset()`); err != nil {
		log.Fatalf("pg_stat_statements_reset: %v", err)
	}
}

func (s *pgStats) read() (stmts, begins int64) {
	if err := s.pg.Pool().QueryRow(context.Background(), `SELECT coalesce(sum(calls), 0)::bigint,
			coalesce(sum(calls) FILTER (WHERE query ILIKE 'begin%'), 0)::bigint
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&stmts, &begins); err != nil {
		log.Fatalf("pg_stat_statements: %v", err)
	}
	return stmts, begins
}

// run drives one closed loop per player for the duration and measures the
// cluster's processes over it; with PostgreSQL it first measures what the idle
// cluster runs in a second, to subtract.
func run(c *cluster.Cluster, procs []*cluster.Node, stats *pgStats, players []*cluster.Player, op func(*cluster.Player) error) figure {
	var f figure
	var bgStmts, bgXacts float64
	if stats != nil {
		s0, x0 := stats.read()
		time.Sleep(time.Second)
		s1, x1 := stats.read()
		// A read counts the one before it.
		bgStmts, bgXacts = float64(s1-s0-1), float64(x1-x0)
		f.backgroundPerSec = bgStmts
	}
	cpu0 := make([]time.Duration, len(procs))
	for i, p := range procs {
		cpu0[i] = p.CPU()
	}
	pg0 := c.PostgresCPU()
	var s0, x0 int64
	if stats != nil {
		stats.reset()
		s0, x0 = stats.read()
	}
	var stop atomic.Bool
	var errs atomic.Int64
	var firstErr atomic.Value
	per := make([]harness.Latencies, len(players))
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range players {
		wg.Go(func() {
			for !stop.Load() {
				t := time.Now()
				if err := op(p); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				per[i] = append(per[i], time.Since(t))
			}
		})
	}
	time.Sleep(*duration)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	all := harness.Merge(per)
	f.ops = len(all)
	f.errors = int(errs.Load())
	if e, ok := firstErr.Load().(error); ok {
		f.firstErr = e
	}
	if f.ops == 0 {
		return f
	}
	n := time.Duration(f.ops)
	f.rate = float64(f.ops) / elapsed.Seconds()
	f.p50, f.p99 = all.Quantile(0.5), all.Quantile(0.99)
	for i, p := range procs {
		d := (p.CPU() - cpu0[i]) / n
		f.nodeCPUs = append(f.nodeCPUs, d)
		f.nodeCPU += d
	}
	f.pgCPU = (c.PostgresCPU() - pg0) / n
	if stats != nil {
		s1, x1 := stats.read()
		secs := elapsed.Seconds()
		f.stmts = (float64(s1-s0-1) - bgStmts*secs) / float64(f.ops)
		f.begins = (float64(x1-x0) - bgXacts*secs) / float64(f.ops)
		f.haveStmts = true
		if *top > 0 {
			f.top = stats.top(*top, f.ops)
		}
	}
	return f
}
