package ssb4_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sb "github.com/gamewire/gamewire/nex/protocols/datastoressb4"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// FuzzServeSSB4 feeds arbitrary parameters to every DataStore_SSB4 method the
// package answers, through the Mux it shares with the DataStore service:
// each call gets an answer (a result code or data), never a panic. The seeds
// are the requests the generated client encodes for the calls the tests
// make (no capture of the game's traffic is public).
func FuzzServeSSB4(f *testing.F) {
	fx := newFixture(f, ssb4.Config{})
	ctx := context.Background()
	rec := &recorder{}
	c := sb.NewDataStoreSSB4Client(rec)
	m := match(100, 1, player(1001, 3), player(1002, 4))
	c.PostProfile(ctx, sb.DataStorePostProfileParam{Profile: []byte("mii")})
	c.GetProfiles(ctx, []types.PID{1001, 1002})
	c.SendPlayReport(ctx, []int32{1, -2, 3})
	c.GetWorldPlayReport(ctx)
	c.GetReplayMeta(ctx, sb.DataStoreGetReplayMetaParam{ReplayID: 1, MetaType: 1})
	c.PrepareGetReplay(ctx, sb.DataStorePrepareGetReplayParam{ReplayID: 1, ExtraData: []string{"x"}})
	c.PreparePostReplay(ctx, m)
	c.CompletePostReplay(ctx, sb.DataStoreCompletePostReplayParam{ReplayID: 1, CompleteParam: ds.DataStoreCompletePostParam{DataID: 1, Success: true}, PrepareParam: m})
	c.CheckPostReplay(ctx, m)
	c.GetNextReplay(ctx)
	c.GetApplicationConfig(ctx, 0)
	c.SearchReplay(ctx, sb.DataStoreSearchReplayParam{Mode: 1, Style: 1, Fighter: 3, ResultRange: common.ResultRange{Size: 10}})
	c.PostFightingPowerScore(ctx, []sb.DataStorePostFightingPowerScoreParam{{Mode: 0, Score: 900, IsWorldHighScore: true}})
	c.GetFightingPowerChart(ctx, 0)
	c.GetFightingPowerChartAll(ctx)
	shared := sb.DataStorePreparePostSharedDataParam{DataType: 1, Region: 2, Fighter: []byte{5}, Size: 5, Comment: "c", MetaBinary: []byte("m"), ExtraData: []string{}}
	c.PreparePostSharedData(ctx, shared)
	c.CompletePostSharedData(ctx, sb.DataStoreCompletePostSharedDataParam{DataID: 2, CompleteParam: ds.DataStoreCompletePostParam{DataID: 2, Success: true}, PrepareParam: shared})
	c.SearchSharedData(ctx, sb.DataStoreSearchSharedDataParam{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: 5, ResultRange: common.ResultRange{Size: 10}})
	c.ReportSharedData(ctx, 2)
	for _, s := range rec.seen {
		f.Add(uint8(slices.Index(ssb4.Methods, s.method)), s.params)
	}
	f.Fuzz(func(t *testing.T, method uint8, params []byte) {
		id := ssb4.Methods[int(method)%len(ssb4.Methods)]
		msg, err := (&rmc.Request{Protocol: ds.DataStoreProtocolID, CallID: 1, Method: id, Params: params}).Append(nil)
		if err != nil {
			return
		}
		out, err := rmc.Dispatch(ctx, fx.mux, &rmc.Peer{PID: 1001, Settings: types.Settings{StructureHeader: true, Version: 30600}}, msg, nil, nil)
		if err != nil || len(out) == 0 {
			t.Fatalf("no answer: %v", err)
		}
		if _, _, err := rmc.ParseResponse(out); err != nil {
			t.Fatalf("bad answer: %v", err)
		}
	})
}

type recorded struct {
	method uint32
	params []byte
}

// recorder keeps the calls a client makes and fails them.
type recorder struct{ seen []recorded }

func (r *recorder) Settings() types.Settings {
	return types.Settings{StructureHeader: true, Version: 30600}
}

func (r *recorder) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	r.seen = append(r.seen, recorded{method, append([]byte(nil), params...)})
	return nil, types.CoreNotImplemented
}
