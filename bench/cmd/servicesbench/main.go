// Command servicesbench measures gamewire's Ranking and DataStore services on
// loopback, in one run against one server child (its CPU time read from /proc):
//
//   - server CPU per Ranking UploadScore, against a Health PingDaemon's in the same run;
//   - top-100 GetRanking reads per second with 100,000 scores stored;
//   - DataStore posts per second (PreparePostObject, the body over HTTP,
//     CompletePostObject);
//
// each with the store calls per operation (each store call is one SQL query or
// one transaction), counted by the server child.
//
//	go run ./cmd/servicesbench                  # 16 clients, 3 s per figure
//	go run ./cmd/servicesbench -clients 8 -duration 5s -scores 100000
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/bench/internal/harness"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

var (
	serveKind = flag.String("serve", "", "internal: run as the server child")
	dataDir   = flag.String("data", "", "internal: the server child's data directory")
	clients   = flag.Int("clients", 16, "concurrent clients")
	duration  = flag.Duration("duration", 3*time.Second, "measuring time per figure")
	scores    = flag.Int("scores", 100_000, "scores stored in the category the top-100 reads read")
	bodySize  = flag.Int("body", 1024, "DataStore body size in bytes")
)

const (
	accessKey = "3d37fbdb"
	// statsProtocol is a private protocol of the child that answers its store
	// call counter (Uint64).
	statsProtocol = 0x7e00
	readCategory  = 1
	writeCategory = 2
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *serveKind != "" {
		addr, err := serve(*dataDir, *scores)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("listening", addr)
		select {}
	}
	dir, err := os.MkdirTemp("", "servicesbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	t0 := time.Now()
	c, err := harness.StartChildTimeout("services", 10*time.Minute, "-data", dir, "-scores", fmt.Sprint(*scores))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()
	fmt.Printf("# servicesbench %s, %d clients, %s per figure, NEX V1 on loopback, SQLite store (%d scores loaded in %s)\n\n",
		time.Now().UTC().Format(time.RFC3339), *clients, *duration, *scores, time.Since(t0).Round(time.Millisecond))
	fmt.Println("| measurement | rate | p50 | p99 | server CPU per operation | store calls per operation |")
	fmt.Println("|---|---|---|---|---|---|")

	key := kerberos.DeriveKey(auth.GuestPassword, uint64(auth.PIDGuest))
	sessions := make([]*nex.Session, *clients)
	for i := range sessions {
		if sessions[i], err = nex.Login(context.Background(), c.Addr, nex.LoginConfig{User: "guest", Key: key[:], Config: prudp.Config{AccessKey: accessKey}}); err != nil {
			log.Fatal(err)
		}
	}
	ctx := context.Background()
	ping := row(c, sessions[0], "Health PingDaemon (baseline)", "calls/s", func(s *nex.Session, i int) op {
		return func() error {
			_, err := s.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil)
			return err
		}
	}, sessions)
	var uid atomic.Uint64
	upload := row(c, sessions[0], "Ranking UploadScore (new score every call)", "uploads/s", func(s *nex.Session, i int) op {
		rc := &ranking.Client{C: s.RMC}
		return func() error {
			return rc.UploadScore(ctx, ranking.ScoreData{Category: writeCategory, Score: rand.Uint32N(1_000_000), UpdateMode: ranking.UpdateDeleteOld}, uid.Add(1))
		}
	}, sessions)
	top := row(c, sessions[0], fmt.Sprintf("Ranking GetRanking top 100 of %d scores", *scores), "reads/s", func(s *nex.Session, i int) op {
		rc := &ranking.Client{C: s.RMC}
		return func() error {
			res, err := rc.GetRanking(ctx, ranking.ModeGlobal, readCategory, ranking.OrderParam{GroupIndex: ranking.NoGroup, Length: 100}, 0, 0)
			if err == nil && len(res.Data) != min(100, *scores) {
				err = fmt.Errorf("top 100: %d entries", len(res.Data))
			}
			return err
		}
	}, sessions)
	around := row(c, sessions[0], fmt.Sprintf("Ranking GetRanking 21 around a random player of %d", *scores), "reads/s", func(s *nex.Session, i int) op {
		rc := &ranking.Client{C: s.RMC}
		return func() error {
			pid := types.PID(10_000 + rand.IntN(*scores))
			_, err := rc.GetRanking(ctx, ranking.ModeGlobalAroundSelf, readCategory, ranking.OrderParam{GroupIndex: ranking.NoGroup, Length: 21}, 0, pid)
			return err
		}
	}, sessions)
	body := make([]byte, *bodySize)
	post := row(c, sessions[0], fmt.Sprintf("DataStore post of %d B (prepare, HTTP upload, complete)", *bodySize), "posts/s", func(s *nex.Session, i int) op {
		dc := &datastore.Client{C: s.RMC, HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
		return func() error {
			_, err := dc.Put(ctx, datastore.PreparePostParam{Name: "bench", DataType: 1, PersistenceSlotID: datastore.NoPersistenceSlot,
				Permission: datastore.Permission{Permission: datastore.PermissionEveryone}}, body)
			return err
		}
	}, sessions)
	fmt.Println()
	if ping.cpu > 0 {
		fmt.Printf("Server CPU per UploadScore / per PingDaemon: %.1fx\n", float64(upload.cpu)/float64(ping.cpu))
		fmt.Printf("Server CPU per top-100 read / per PingDaemon: %.1fx; per around-self read: %.1fx\n",
			float64(top.cpu)/float64(ping.cpu), float64(around.cpu)/float64(ping.cpu))
		fmt.Printf("Server CPU per DataStore post / per PingDaemon: %.1fx\n", float64(post.cpu)/float64(ping.cpu))
	}
}

type op func() error

type figure struct {
	rate float64
	cpu  time.Duration
}

// storeCalls reads the child's store call counter.
func storeCalls(s *nex.Session) uint64 {
	data, err := s.RMC.Call(context.Background(), statsProtocol, 1, nil)
	if err != nil || len(data) != 8 {
		log.Fatalf("store call counter: %v", err)
	}
	return binary.LittleEndian.Uint64(data)
}

// row runs one closed loop per session for *duration and prints a table row.
func row(c *harness.Child, stats *nex.Session, name, unit string, setup func(*nex.Session, int) op, sessions []*nex.Session) figure {
	loops := make([]func() error, len(sessions))
	for i, s := range sessions {
		loops[i] = setup(s, i)
	}
	// One call first, untimed: the first ranking read loads the category's
	// rank index.
	if err := loops[0](); err != nil {
		fmt.Printf("| %s | error: %v | | | | |\n", name, err)
		return figure{}
	}
	before := storeCalls(stats)
	all, elapsed, cpu, err := harness.Run(c, loops, *duration)
	after := storeCalls(stats) // the counter's own protocol touches no store
	if err != nil {
		fmt.Printf("| %s | error: %v | | | | |\n", name, err)
		return figure{}
	}
	f := figure{rate: float64(len(all)) / elapsed.Seconds(), cpu: cpu / time.Duration(len(all))}
	fmt.Printf("| %s | %.0f %s | %s | %s | %s | %.2f |\n", name, f.rate, unit, all.Quantile(0.5), all.Quantile(0.99), f.cpu,
		float64(after-before)/float64(len(all)))
	return f
}

// serve runs the NEX servers with Ranking and DataStore on a store in dir,
// after loading n scores into the read category.
func serve(dir string, n int) (string, error) {
	ctx := context.Background()
	store, _, err := accounts.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	rs := store.Ranking()
	entries := make([]ranking.Entry, n)
	now := time.Now()
	for i := range entries {
		entries[i] = ranking.Entry{PID: types.PID(10_000 + i), Score: uint32(rand.IntN(1_000_000)), Updated: now.Add(time.Duration(i))}
	}
	if err := rs.Import(ctx, ranking.Category{ID: readCategory, Descending: true}, entries); err != nil {
		return "", err
	}
	var calls atomic.Uint64
	authPC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	securePC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	ds := &datastore.Server{Store: countingDataStore{store.DataStore(), &calls}, BaseURL: "http://" + ln.Addr().String(),
		Blobs: datastore.DirBlobs{Dir: filepath.Join(dir, "datastore")}}
	go http.Serve(ln, ds.HTTPHandler())
	mux := rmc.NewMux()
	mux.HandleFunc(statsProtocol, 1, func(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		return binary.LittleEndian.AppendUint64(out, calls.Load()), nil
	})
	srv := &nex.Server{Config: prudp.Config{AccessKey: accessKey}, Accounts: store, Mux: mux,
		Ranking: &ranking.Server{Store: countingRanking{rs, &calls}}, DataStore: ds}
	go srv.Serve(authPC, securePC)
	return authPC.LocalAddr().String(), nil
}
