package prudp

import (
	"context"
	"encoding/binary"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
)

var (
	lossyServerAddr = netip.MustParseAddrPort("127.0.0.1:60000")
	lossyClientAddr = netip.MustParseAddrPort("127.0.0.1:50000")
)

// lossyPair starts a server on an in-memory network and dials it. Must run
// inside a synctest bubble; everything is torn down by the returned func.
func lossyPair(t *testing.T, link lossy.Config, srv *Server, cfg *Config) (*lossy.Network, *Conn, func()) {
	t.Helper()
	n := lossy.New(link)
	spc, err := n.Listen(lossyServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	cpc, err := n.Listen(lossyClientAddr)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(spc) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := DialPacketConn(ctx, cpc, lossyServerAddr, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	return n, c, func() {
		c.Abort()
		srv.Close()
		<-served
	}
}

// TestLossyLinkExactlyOnceInOrder pushes messages both ways through 20% loss,
// 5% duplication, reordering and delay; every message must arrive exactly
// once and in order.
func TestLossyLinkExactlyOnceInOrder(t *testing.T) {
	// The full 100,000 runs in plain `go test`; under -race (CI) or -short
	// a smaller count keeps the package well under a minute on 2 cores.
	count := 100000
	if testing.Short() || raceEnabled {
		count = 15000
	}
	for _, d := range []Dialect{NEXV1, NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			start := time.Now()
			var st lossy.Stats
			var cs Stats
			var simulated time.Duration
			synctest.Test(t, func(t *testing.T) {
				simStart := time.Now() // the bubble's clock: link delays and timers
				link := lossy.Config{Seed: 1, Loss: 0.2, Duplicate: 0.05, Reorder: 0.1,
					Delay: 20 * time.Millisecond, Jitter: 10 * time.Millisecond, QueueLen: 1 << 16}
				cfg := Config{Dialect: d, AccessKey: "6f599f81", MaxSubstreamID: 1, InitialRTO: 200 * time.Millisecond, MaxRetransmits: 30}
				srv := &Server{Config: cfg, Shards: 1}
				n, c, stop := lossyPair(t, link, srv, &cfg)
				defer stop()
				ctx := context.Background()
				recvDone := make(chan error, 1)
				go func() {
					for i := range count {
						m, err := c.Recv(ctx)
						if err != nil {
							recvDone <- err
							return
						}
						if got := binary.LittleEndian.Uint32(m.Data); got != uint32(i) || len(m.Data) != 16 {
							t.Errorf("message %d: got index %d (%d bytes)", i, got, len(m.Data))
							recvDone <- nil
							return
						}
					}
					recvDone <- nil
				}()
				msg := make([]byte, 16)
				for i := range count {
					binary.LittleEndian.PutUint32(msg, uint32(i))
					if err := c.Send(ctx, 0, msg); err != nil {
						t.Fatalf("send %d: %v", i, err)
					}
				}
				if err := <-recvDone; err != nil {
					t.Fatal(err)
				}
				simulated = time.Since(simStart)
				st = n.Stats()
				cs = c.Stats()
				ss := srv.Stats()
				if ss.ConnDrops["signature"] != 0 || ss.Drops["signature"] != 0 {
					t.Errorf("signature drops on a clean link: %v %v", ss.Drops, ss.ConnDrops)
				}
			})
			t.Logf("%d messages each way in %v (wall clock), %v of simulated link time; link %+v; client retransmits %d, duplicates %d, reordered %d, srtt %v",
				count, time.Since(start).Round(time.Millisecond), simulated.Round(time.Millisecond), st, cs.Retransmits, cs.Duplicates, cs.Reordered, cs.SRTT)
			if st.Lost == 0 || st.Duplicated == 0 || st.Reordered == 0 {
				t.Errorf("the link did not lose, duplicate and reorder: %+v", st)
			}
		})
	}
}
