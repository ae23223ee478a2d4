package accounts

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

func openMatchmaking(t testing.TB) *MatchmakeStore {
	t.Helper()
	return openMatchmakingIn(t, filepath.Join(t.TempDir(), "data"))
}

// openMatchmakingIn opens a store on the database in dir; two of them on one
// directory stand for two secure servers sharing a database.
func openMatchmakingIn(t testing.TB, dir string) *MatchmakeStore {
	s, _, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m
}

func template(max uint16) matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{
		Gathering:         matchmaking.Gathering{MinParticipants: 2, MaxParticipants: max, Flags: matchmaking.FlagMigrateOwner},
		GameMode:          3,
		Attributes:        []uint32{1, 2, 0, 0, 0, 0},
		OpenParticipation: true, MatchmakeSystemType: 1,
		ApplicationBuffer: []byte("app"),
	}
}

func participant(pid types.PID) matchmaking.Participant {
	return matchmaking.Participant{PID: pid, Node: "n1", Conn: uint64(pid)}
}

// BenchmarkStoreAutoMatchmake: 256 goroutines each auto-matchmaking into
// sessions of 8 and leaving again, against the SQLite store alone; reports the
// SQL statements per operation (an auto-matchmake and a leave).
func BenchmarkStoreAutoMatchmake(b *testing.B) {
	m := openMatchmaking(b)
	ctx := context.Background()
	b.SetParallelism(128) // 256 goroutines on 2 CPUs
	var next atomic.Int64
	q0 := m.Queries()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		pid := types.PID(10000 + next.Add(1))
		for pb.Next() {
			c, _, err := m.AutoMatchmake(ctx, nil, template(8), participant(pid))
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
	b.ReportMetric(float64(m.Queries()-q0)/float64(b.N), "queries/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "matchmakes/s")
}
