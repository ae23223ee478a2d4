// Command mmsearchbench measures how the cost of a matchmaking search grows with
// the open sessions a store holds: the same operations against stores seeded
// with 100, 10,000 and 100,000 open sessions, each figure a ratio against the
// one with 100, measured in the same run.
//
//	go run ./cmd/mmsearchbench                                  # SQLite and PostgreSQL
//	go run ./cmd/mmsearchbench -stores sqlite -sizes 100,10000
//
// The seeded sessions are decoys an attacker (or a busy server) leaves open in
// the searched game mode and system type: four in five carry another value in
// attribute 0 (1,000 different ones), one in ten a user password and one in ten
// a system password with the searched attributes. After them come 10 sessions
// the searches are after (attribute 0 = 1), so a search that reads the
// candidates in gathering order reads every decoy first. The operations, each
// timed alone (one client, no concurrency), up to -ops times or -budget per
// figure, in rounds over the sizes (so the machine's load falls on each
// alike):
//
//   - auto: AutoMatchmake_Postpone's search (no criteria) joining one of the
//     10, then its EndParticipation (the store's Leave);
//   - criteria: AutoMatchmakeWithSearchCriteria_Postpone's, with criteria
//     naming the game mode, system type and attributes 0 and 1 and no
//     password exclusion (as revision-0 criteria are), then the leave;
//   - miss: an auto-matchmake nothing fits (attribute 1 another value): the
//     search, the creation of the client's own session and its leave (which
//     ends it);
//   - browse: BrowseMatchmakeSession's search with the criteria above and
//     both password exclusions, the first 10 (the 10 sought sessions).
//
// PostgreSQL runs in a throwaway cluster (internal/pgtest; Debian's postgresql
// package), analyzed after seeding (as autovacuum analyzes a table after a
// bulk change: without statistics its planner would read the sessions of the
// game mode in order rather than search the criteria's index), SQLite in a
// temporary directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/types"
)

var (
	stores = flag.String("stores", "sqlite,pg", "stores to measure: sqlite, pg")
	sizes  = flag.String("sizes", "100,10000,100000", "open sessions to seed, the first being the reference")
	ops    = flag.Int("ops", 300, "timed operations per figure (at most)")
	budget = flag.Duration("budget", 3*time.Second, "time per figure (at least 5 operations)")
)

// seeder is what the bench needs of a store beyond matchmaking.Store.
type seeder interface {
	matchmaking.Store
	Seed(ctx context.Context, ss []matchmaking.MatchmakeSession, node string) error
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	var ns []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			log.Fatalf("-sizes: %q is not a count", f)
		}
		ns = append(ns, n)
	}
	var pg *pgtest.Server
	defer func() {
		if pg != nil {
			pg.Close()
		}
	}()
	fmt.Printf("%-7s %8s  %-9s %10s %10s %6s %9s %9s\n", "store", "sessions", "operation", "mean", "p50", "ops", "mean/ref", "p50/ref")
	for _, kind := range strings.Split(*stores, ",") {
		// Every size's store is seeded first, then each operation is timed
		// in rounds over all of them, so a swing in the machine's load
		// falls on every size alike.
		var targets []seeder
		for _, n := range ns {
			var m seeder
			var closeStore func()
			analyze := func() error { return nil }
			var err error
			switch kind {
			case "sqlite":
				m, closeStore, err = openSQLite()
			case "pg":
				if pg == nil {
					if pg, err = pgtest.Launch(pgtest.Options{}); err != nil {
						log.Fatal(err)
					}
				}
				m, analyze, closeStore, err = openPG(pg)
			default:
				log.Fatalf("-stores: unknown store %q", kind)
			}
			if err != nil {
				log.Fatal(err)
			}
			defer closeStore()
			start := time.Now()
			if err := seed(m, n); err != nil {
				log.Fatalf("%s: seed %d: %v", kind, n, err)
			}
			if err := analyze(); err != nil {
				log.Fatalf("%s: analyze: %v", kind, err)
			}
			log.Printf("%s: seeded %d open sessions in %v", kind, n, time.Since(start).Round(time.Millisecond))
			targets = append(targets, m)
		}
		for _, op := range operations {
			res, err := measure(targets, op.run)
			if err != nil {
				log.Fatalf("%s %s: %v", kind, op.name, err)
			}
			for i, r := range res {
				fmt.Printf("%-7s %8d  %-9s %10v %10v %6d %8.2fx %8.2fx\n", kind, ns[i], op.name, r.mean.Round(time.Microsecond),
					r.p50.Round(time.Microsecond), r.n, float64(r.mean)/float64(res[0].mean), float64(r.p50)/float64(res[0].p50))
			}
		}
	}
}

func openSQLite() (seeder, func(), error) {
	dir, err := os.MkdirTemp("", "mmsearchbench-")
	if err != nil {
		return nil, nil, err
	}
	s, _, err := accounts.Open(context.Background(), filepath.Join(dir, "data"))
	if err != nil {
		return nil, nil, err
	}
	m, err := s.Matchmaking()
	if err != nil {
		return nil, nil, err
	}
	return m, func() { m.Close(); s.Close(); os.RemoveAll(dir) }, nil
}

func openPG(srv *pgtest.Server) (seeder, func() error, func(), error) {
	dsn, err := srv.CreateDatabase()
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		return nil, nil, nil, err
	}
	analyze := func() error {
		_, err := s.Pool().Exec(context.Background(), `ANALYZE mm_gatherings, mm_participants`)
		return err
	}
	return s.Matchmaking(), analyze, func() { s.Close() }, nil
}

// session is the searched kind of session: game mode 3, system type 1, 2 to 8
// players, attributes 1 and 2.
func session() matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{
		Gathering:         matchmaking.Gathering{MinParticipants: 2, MaxParticipants: 8, Flags: matchmaking.FlagMigrateOwner},
		GameMode:          3,
		Attributes:        []uint32{1, 2, 0, 0, 0, 0},
		OpenParticipation: true, MatchmakeSystemType: 1,
		ApplicationBuffer: []byte("application data of a game session"),
	}
}

const (
	decoyOwner   = 1_000_000 // the decoys' owners: decoyOwner + i
	clientPID    = 100       // the searching clients: clientPID + k % 64
	seededTarget = 10
)

// seed stores n decoys, then the sessions the searches are after.
func seed(m seeder, n int) error {
	ss := make([]matchmaking.MatchmakeSession, 0, n+seededTarget)
	for i := range n {
		s := session()
		s.Owner = types.PID(decoyOwner + i)
		switch i % 10 {
		case 0:
			s.UserPassword, s.UserPasswordEnabled = "secret", true
		case 1:
			s.SystemPasswordEnabled = true
		default:
			s.Attributes[0] = uint32(100 + i%1000)
		}
		ss = append(ss, s)
	}
	for i := range seededTarget {
		s := session()
		s.Owner = types.PID(decoyOwner + n + i)
		ss = append(ss, s)
	}
	return m.Seed(context.Background(), ss, "bench")
}

var criteria = []matchmaking.SearchCriteria{{GameMode: "3", MatchmakeSystemType: "1", Attributes: []string{"1", "2"},
	VacantOnly: true, ExcludeLocked: true}}

var operations = []struct {
	name string
	run  func(ctx context.Context, m matchmaking.Store, pid types.PID) error
}{
	{"auto", func(ctx context.Context, m matchmaking.Store, pid types.PID) error {
		return autoAndLeave(ctx, m, nil, session(), pid, false)
	}},
	{"criteria", func(ctx context.Context, m matchmaking.Store, pid types.PID) error {
		return autoAndLeave(ctx, m, criteria, session(), pid, false)
	}},
	{"miss", func(ctx context.Context, m matchmaking.Store, pid types.PID) error {
		s := session()
		s.Attributes[1] = 3
		return autoAndLeave(ctx, m, nil, s, pid, true)
	}},
	{"browse", func(ctx context.Context, m matchmaking.Store, pid types.PID) error {
		c := criteria[0]
		c.ExcludeUserPasswordSet, c.ExcludeSystemPasswordSet = true, true
		got, err := m.Browse(ctx, c, 0, 10)
		if err == nil && len(got) != seededTarget {
			err = fmt.Errorf("browse found %d sessions, want %d", len(got), seededTarget)
		}
		return err
	}},
}

// autoAndLeave auto-matchmakes pid and leaves again; wantCreated says whether
// the search must miss.
func autoAndLeave(ctx context.Context, m matchmaking.Store, crit []matchmaking.SearchCriteria, s matchmaking.MatchmakeSession, pid types.PID, wantCreated bool) error {
	c, created, err := m.AutoMatchmake(ctx, crit, s, matchmaking.Participant{PID: pid, Node: "bench", Conn: uint64(pid)})
	if err != nil {
		return err
	}
	if created != wantCreated {
		return fmt.Errorf("auto-matchmake created=%v (session %d), want %v", created, c.Session.ID, wantCreated)
	}
	_, err = m.Leave(ctx, c.Session.ID, pid)
	return err
}

// result is one store's figure for one operation.
type result struct {
	mean, p50 time.Duration
	n         int
}

// measure runs op against each of ms (after 5 untimed runs each), in 10
// rounds over all of them, up to -ops times or for -budget per store (at
// least once per round), and returns the mean and median time of one.
func measure(ms []seeder, op func(ctx context.Context, m matchmaking.Store, pid types.PID) error) ([]result, error) {
	ctx := context.Background()
	for _, m := range ms {
		for k := range 5 {
			if err := op(ctx, m, types.PID(clientPID+k)); err != nil {
				return nil, err
			}
		}
	}
	const rounds = 10
	times := make([][]time.Duration, len(ms))
	totals := make([]time.Duration, len(ms))
	for round := range rounds {
		for i, m := range ms {
			for k := 0; k < *ops/rounds && (k == 0 || totals[i] < *budget*time.Duration(round+1)/rounds); k++ {
				start := time.Now()
				if err := op(ctx, m, types.PID(clientPID+len(times[i])%64)); err != nil {
					return nil, err
				}
				d := time.Since(start)
				times[i] = append(times[i], d)
				totals[i] += d
			}
		}
	}
	out := make([]result, len(ms))
	for i, ts := range times {
		slices.Sort(ts)
		out[i] = result{mean: totals[i] / time.Duration(len(ts)), p50: ts[len(ts)/2], n: len(ts)}
	}
	return out, nil
}
