package storetest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// BenchmarkAutoMatchmake: 64 goroutines each auto-matchmaking into sessions of
// 8 and leaving again, spread over the stores open makes (one, or several on
// one database: secure nodes sharing it); reports matchmakes/s (an
// auto-matchmake and its leave).
func BenchmarkAutoMatchmake(b *testing.B, open func(b *testing.B) []matchmaking.Store) {
	stores := open(b)
	ctx := context.Background()
	b.SetParallelism(32) // 64 goroutines on 2 CPUs
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer() // opening the store is not part of it
	b.RunParallel(func(pb *testing.PB) {
		n := next.Add(1)
		pid, m := types.PID(10000+n), stores[int(n)%len(stores)]
		for pb.Next() {
			c, _, err := m.AutoMatchmake(ctx, nil, Session(8), Participant(pid))
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := m.Leave(ctx, c.Session.ID, pid); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "matchmakes/s")
}
