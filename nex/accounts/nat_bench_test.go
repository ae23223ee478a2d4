package accounts

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/types"
)

// BenchmarkNATAutoMatchmake measures what NAT-aware matchmaking costs an
// auto-matchmake on SQLite: 256 open sessions of 8 whose owners reported
// every kind of NAT, and a joiner behind a symmetric NAT (port-dependent
// filtering), which reaches few of them, so prefer reads the whole window of
// matchmaking.NATWindow sessions. Each op is an auto-matchmake and the leave
// after it; "off" is the search as before NAT, the peer the others compare
// with in the same run (ns/op and queries/op).
func BenchmarkNATAutoMatchmake(b *testing.B) {
	for _, o := range []matchmaking.NATOrder{{Policy: matchmaking.NATOff}, {Policy: matchmaking.NATPrefer}, {Policy: matchmaking.NATPrefer, AllParticipants: true}} {
		b.Run(o.String(), func(b *testing.B) {
			ctx := context.Background()
			m := openMatchmaking(b)
			var ss []matchmaking.MatchmakeSession
			for i := range 256 {
				s := template(8)
				s.Owner = types.PID(1000 + i)
				ss = append(ss, s)
			}
			if err := m.Seed(ctx, ss, "n1"); err != nil {
				b.Fatal(err)
			}
			for i, s := range ss {
				r := matchmaking.NATRecord{PID: s.Owner, Node: "n1", Conn: uint64(s.Owner),
					Properties: nattraversal.Properties{Mapping: uint32(i % 3), Filtering: uint32(i / 3 % 3)}}
				if err := m.SetNAT(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			joiner := participant(50)
			if err := m.SetNAT(ctx, matchmaking.NATRecord{PID: 50, Node: "n1", Conn: 50, Properties: nattraversal.Properties{Mapping: 2, Filtering: 2}}); err != nil {
				b.Fatal(err)
			}
			q0 := m.Queries()
			b.ReportAllocs()
			for b.Loop() {
				c, _, _, err := m.AutoMatchmakeNAT(ctx, nil, template(8), joiner, o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Leave(ctx, c.Session.ID, joiner.PID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m.Queries()-q0)/float64(b.N), "queries/op")
		})
	}
}
