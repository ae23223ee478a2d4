package ranking_test

import (
	"context"
	"testing"

	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// FuzzServeRMC feeds arbitrary parameters to every Ranking method: each call
// must get an answer (a result code or data), never a panic.
func FuzzServeRMC(f *testing.F) {
	w := types.NewWriter(nil, types.Settings{StructureHeader: true})
	(&rk.RankingScoreData{Category: 1, Score: 5, Groups: []byte{1, 2}, Param: 9}).Append(&w)
	w.U64(0)
	f.Add(uint8(ranking.MethodUploadScore), true, w.B)
	w = types.NewWriter(nil, types.Settings{})
	w.U8(0)
	w.U32(1)
	(&rk.RankingOrderParam{GroupIndex: ranking.NoGroup, Count: 10}).Append(&w)
	w.U64(0)
	w.PID(1000)
	f.Add(uint8(ranking.MethodGetRanking), false, w.B)
	f.Add(uint8(ranking.MethodGetCachedTopXRankings), false, []byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0})
	fx := newFixture(f, f.TempDir(), nil)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, method uint8, header bool, params []byte) {
		msg, err := (&rmc.Request{Protocol: ranking.ProtocolID, CallID: 1, Method: uint32(method % 16), Params: params}).Append(nil)
		if err != nil {
			return
		}
		out, err := rmc.Dispatch(ctx, fx.srv, &rmc.Peer{PID: 1000, Settings: types.Settings{StructureHeader: header}}, msg, nil, nil)
		if err != nil || len(out) == 0 {
			t.Fatalf("no answer: %v", err)
		}
		if _, _, err := rmc.ParseResponse(out); err != nil {
			t.Fatalf("bad answer: %v", err)
		}
	})
}
