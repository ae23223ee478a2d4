package nex

import (
	"context"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// Reported NAT properties of the end-to-end test's players.
var (
	natSymmetric = nattraversal.Properties{Mapping: nattraversal.MappingEndpointDependent, Filtering: nattraversal.FilteringPortDependent, RTT: 40}
	natOpen      = nattraversal.Properties{Mapping: nattraversal.MappingEndpointIndependent, Filtering: nattraversal.FilteringPortIndependent, RTT: 20}
	natCone      = nattraversal.Properties{Mapping: nattraversal.MappingEndpointIndependent, Filtering: nattraversal.FilteringPortDependent, RTT: 30}
	natSymLoose  = nattraversal.Properties{Mapping: nattraversal.MappingEndpointDependent, Filtering: nattraversal.FilteringPortIndependent, RTT: 50}
)

// TestNATAwareAutoMatchmake: over PRUDP, two owners create a session each
// (the first behind a symmetric NAT, the second's NAT as the case says) and
// report their NAT through NAT Traversal; a third player behind a symmetric
// NAT with port-independent filtering auto-matchmakes. It can reach only an
// owner with endpoint-independent mapping and port-independent filtering:
// prefer puts it in that session although the other comes first in the
// usual order; off puts it in the first as before; strict, with both owners
// unreachable, gives it a session of its own, and prefer then puts it in the
// first. The gathering-id variant (AutoMatchmakeWithGatheringId_Postpone)
// takes the reachable session of the list first too.
func TestNATAwareAutoMatchmake(t *testing.T) {
	cases := []struct {
		name   string
		policy matchmaking.NATPolicy
		second nattraversal.Properties
		want   int // 0: the first session, 1: the second, -1: a new one
	}{
		{"prefer", matchmaking.NATPrefer, natOpen, 1},
		{"off", matchmaking.NATOff, natOpen, 0},
		{"strict, reachable", matchmaking.NATStrict, natOpen, 1},
		{"strict, none reachable", matchmaking.NATStrict, natCone, -1},
		{"prefer, none reachable", matchmaking.NATPrefer, natCone, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cfg := fastFail(prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"})
			srv := multiplayerServer(t, cfg)
			srv.NATMatchmaking = matchmaking.NATOrder{Policy: tc.policy}
			addr := startServer(t, srv)
			mm := srv.Matchmaking.(matchmaking.NATStore)
			owners := []*player{login(t, ctx, addr, cfg, 2000), login(t, ctx, addr, cfg, 2001)}
			joiner := login(t, ctx, addr, cfg, 2002)
			report := func(p *player, props nattraversal.Properties) {
				t.Helper()
				if err := (&nattraversal.Client{RMC: p.sess.RMC}).ReportNATProperties(ctx, props); err != nil {
					t.Fatal(err)
				}
			}
			var gids []uint32
			for i, props := range []nattraversal.Properties{natSymmetric, tc.second} {
				gid, _, err := owners[i].mm.CreateMatchmakeSession(ctx, session4(), "", 1)
				if err != nil {
					t.Fatal(err)
				}
				gids = append(gids, gid)
				report(owners[i], props)
			}
			report(joiner, natSymLoose)
			if rec, ok, err := mm.NAT(ctx, joiner.sess.PID); err != nil || !ok || rec.Properties != natSymLoose {
				t.Fatalf("joiner's report in the store: %+v %v %v", rec, ok, err)
			}
			ms, err := joiner.mm.AutoMatchmake(ctx, session4(), "")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want >= 0 && ms.ID != gids[tc.want]:
				t.Fatalf("joined session %d, want %d (sessions %v)", ms.ID, gids[tc.want], gids)
			case tc.want < 0 && (ms.ID == gids[0] || ms.ID == gids[1] || ms.Owner != joiner.sess.PID):
				t.Fatalf("joined session %d owned by %d, want a new one (sessions %v)", ms.ID, ms.Owner, gids)
			}
			preferred, refused := srv.MatchmakingServer().NATStats()
			if steered := tc.policy != matchmaking.NATOff && tc.want == 1; steered != (preferred == 1) || (tc.want < 0) != (refused == 1) {
				t.Fatalf("NAT stats: preferred %d, refused %d", preferred, refused)
			}
			if tc.want < 0 {
				return
			}
			if err := joiner.mm.EndParticipation(ctx, ms.ID, ""); err != nil {
				t.Fatal(err)
			}
			joined, err := autoMatchmakeWithGIDs(ctx, joiner, gids)
			if err != nil {
				t.Fatal(err)
			}
			if joined.ID != gids[tc.want] {
				t.Fatalf("AutoMatchmakeWithGatheringId_Postpone joined %d, want %d", joined.ID, gids[tc.want])
			}
		})
	}
}

// autoMatchmakeWithGIDs calls AutoMatchmakeWithGatheringId_Postpone with
// gids, in that order, and session4 to create when none takes the caller.
func autoMatchmakeWithGIDs(ctx context.Context, p *player, gids []uint32) (matchmaking.MatchmakeSession, error) {
	settings := p.sess.RMC.Settings()
	if p.mm.Version != 0 {
		settings.Version = p.mm.Version
	}
	ms := session4()
	h, err := ms.Holder(settings)
	if err != nil {
		return matchmaking.MatchmakeSession{}, err
	}
	w := types.NewWriter(nil, settings)
	types.WriteList(&w, gids, (*types.Writer).U32)
	w.AnyDataHolder(h)
	w.String("")
	params, err := w.Bytes()
	if err != nil {
		return matchmaking.MatchmakeSession{}, err
	}
	data, err := p.sess.RMC.Call(ctx, matchmaking.ProtocolMatchmakeExtension, matchmaking.MethodAutoMatchmakeWithGatheringIDPostpone, params)
	if err != nil {
		return matchmaking.MatchmakeSession{}, err
	}
	r := types.NewReader(data, settings)
	joined := r.AnyDataHolder("joinedGathering")
	if err := r.Done(); err != nil {
		return matchmaking.MatchmakeSession{}, err
	}
	ms, _, err = matchmaking.ParseHolder(joined, settings)
	return ms, err
}
