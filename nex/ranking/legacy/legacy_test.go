package legacy_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	rl "github.com/gamewire/gamewire/nex/protocols/rankinglegacy"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/ranking/legacy"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// nex2 is a Puyo Puyo!! 20th Anniversary connection: NEX 2.3.2, no structure
// headers.
var nex2 = types.Settings{Version: 20302}

// setup serves Ranking on 112 with the legacy methods ahead of it, as
// nex.Server does for a game whose variants name "Ranking (legacy)".
func setup(t testing.TB) (*rmc.Mux, *ranking.Server) {
	t.Helper()
	st, _, err := accounts.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := &ranking.Server{Store: st.Ranking()}
	mux := rmc.NewMux()
	mux.HandleProtocol(ranking.ProtocolID, srv)
	(&legacy.Server{Ranking: srv}).Register(mux)
	return mux, srv
}

func client(mux *rmc.Mux, pid types.PID) rl.RankingLegacyClient {
	return rl.RankingLegacyClient{C: &rmc.InMemory{Handler: mux, Peer: &rmc.Peer{PID: pid, Settings: nex2}}}
}

// TestLegacyUploadWithLimit: UploadScoreWithLimit (17) and
// UploadScoresWithLimit (18) store scores that GetTopScore reads back with both
// values, and the NEX 3 Ranking service on the same store ranks them; the
// other legacy uploads, deletions and common data round-trip.
func TestLegacyUploadWithLimit(t *testing.T) {
	ctx := context.Background()
	mux, _ := setup(t)
	a, b := client(mux, 1001), client(mux, 1002)
	if st, err := a.UploadScoreWithLimit(ctx, 7, 3, []uint32{900, 12}, 1, 0xABCD, 100); err != nil || st != legacy.StatusWrite {
		t.Fatalf("UploadScoreWithLimit: %d %v", st, err)
	}
	st, err := b.UploadScoresWithLimit(ctx, 8, []rl.RankingScoreWithLimit{
		{Category: 3, Scores: []uint32{1500, 4}, Limit: 100}, {Category: 4, Scores: []uint32{20, 21}, Unknown1: 9, Limit: 5}})
	if err != nil || st != legacy.StatusWrite {
		t.Fatalf("UploadScoresWithLimit: %d %v", st, err)
	}
	st, sc, err := a.GetTopScore(ctx, 7, 3)
	if err != nil || st != legacy.StatusRead || len(sc) != 2 || sc[0] != 900 || sc[1] != 12 {
		t.Fatalf("GetTopScore a: %d %v %v", st, sc, err)
	}
	if _, sc, err = b.GetTopScore(ctx, 8, 4); err != nil || sc[0] != 20 || sc[1] != 21 {
		t.Fatalf("GetTopScore b: %v %v", sc, err)
	}
	// The same entries, ranked by the NEX 3 service (higher first).
	nex3 := rk.RankingClient{C: &rmc.InMemory{Handler: mux, Peer: &rmc.Peer{PID: 1001, Settings: nex2}}}
	res, err := nex3.GetRanking(ctx, uint8(rk.RankingModeGlobal), 3, rk.NewRankingOrderParam(), 0, 0)
	if err != nil || res.Total != 2 || res.Data[0].PID != 1002 || res.Data[1].Score != 900 || res.Data[1].UniqueID != 7 {
		t.Fatalf("ranking: %+v %v", res, err)
	}

	// Two scores per entry, or Ranking::InvalidArgument.
	if _, err := a.UploadScoreWithLimit(ctx, 7, 3, []uint32{1}, 0, 0, 1); !errors.Is(err, types.RankingInvalidArgument) {
		t.Fatalf("one score: %v", err)
	}
	// UploadScore replaces the entry.
	if _, err := a.UploadScore(ctx, 7, 3, []uint32{100, 1}, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, sc, _ = a.GetTopScore(ctx, 7, 3); sc[0] != 100 || sc[1] != 1 {
		t.Fatalf("after UploadScore: %v", sc)
	}
	if _, err := a.UploadScores(ctx, 7, []rl.RankingScore{{Category: 5, Scores: []uint32{3, 3}}}); err != nil {
		t.Fatal(err)
	}

	// Common data: empty when none, then stored, then deleted.
	if st, data, err := a.GetCommonData(ctx, 7); err != nil || st != legacy.StatusRead || len(data) != 0 {
		t.Fatalf("no common data: %d %x %v", st, data, err)
	}
	if _, err := a.UploadCommonData(ctx, 7, []byte("puyo")); err != nil {
		t.Fatal(err)
	}
	if _, data, err := a.GetCommonData(ctx, 7); err != nil || !bytes.Equal(data, []byte("puyo")) {
		t.Fatalf("common data: %x %v", data, err)
	}
	if _, err := a.DeleteCommonData(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteCommonData(ctx, 7); !errors.Is(err, types.RankingNotFound) {
		t.Fatalf("second DeleteCommonData: %v", err)
	}

	// Deletions.
	if st, err := a.DeleteScore(ctx, 7, 3); err != nil || st != legacy.StatusWrite {
		t.Fatalf("DeleteScore: %d %v", st, err)
	}
	if _, _, err := a.GetTopScore(ctx, 7, 3); !errors.Is(err, types.RankingNotFound) {
		t.Fatalf("GetTopScore after DeleteScore: %v", err)
	}
	if st, err := a.DeleteAllScore(ctx, 7); err != nil || st != legacy.StatusDeleteAll {
		t.Fatalf("DeleteAllScore: %d %v", st, err)
	}
	if _, _, err := a.GetTopScore(ctx, 7, 5); !errors.Is(err, types.RankingNotFound) {
		t.Fatalf("GetTopScore after DeleteAllScore: %v", err)
	}
	// Without a login: RendezVous::NotAuthenticated.
	if _, err := client(mux, 0).UploadScoreWithLimit(ctx, 1, 3, []uint32{1, 2}, 0, 0, 1); !errors.Is(err, types.RendezVousNotAuthenticated) {
		t.Fatalf("unauthenticated: %v", err)
	}
}

// FuzzServeRMC feeds arbitrary parameters to every legacy method: each call
// gets an answer (a result code or data), never a panic.
func FuzzServeRMC(f *testing.F) {
	w := types.NewWriter(nil, nex2)
	(&rl.RankingLegacyUploadScoreWithLimitRequest{UniqueID: 1, Category: 3, Scores: []uint32{5, 6}, Limit: 10}).Append(&w)
	f.Add(uint8(rl.RankingLegacyMethodUploadScoreWithLimit), w.B)
	f.Add(uint8(rl.RankingLegacyMethodGetTopScore), []byte{1, 0, 0, 0, 3, 0, 0, 0})
	mux, _ := setup(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		msg, err := (&rmc.Request{Protocol: ranking.ProtocolID, CallID: 1, Method: legacy.Methods[int(method)%len(legacy.Methods)], Params: params}).Append(nil)
		if err != nil {
			return
		}
		out, err := rmc.Dispatch(ctx, mux, &rmc.Peer{PID: 1000, Settings: nex2}, msg, nil, nil)
		if err != nil || len(out) == 0 {
			t.Fatalf("no answer: %v", err)
		}
		if _, _, err := rmc.ParseResponse(out); err != nil {
			t.Fatalf("bad answer: %v", err)
		}
	})
}
