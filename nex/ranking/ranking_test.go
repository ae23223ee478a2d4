package ranking_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

type fixture struct {
	srv   *ranking.Server
	store *accounts.Store
	dir   string
	clock time.Time
}

func newFixture(t testing.TB, dir string, cats []ranking.Category) *fixture {
	t.Helper()
	st, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{store: st, dir: dir, clock: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	f.srv = &ranking.Server{Store: st.Ranking(), Categories: cats, Now: func() time.Time {
		f.clock = f.clock.Add(time.Second)
		return f.clock
	}}
	return f
}

// client is pid's client on a NEX 3.6 connection (structure headers,
// RankingRankData revision 1) or, without headers, a NEX 3.4 one.
func (f *fixture) client(pid types.PID, header bool) *ranking.Client {
	st := types.Settings{Version: 30400}
	if header {
		st = types.Settings{StructureHeader: true, Version: 30600}
	}
	return &ranking.Client{C: &rmc.InMemory{Handler: f.srv, Peer: &rmc.Peer{PID: pid, Settings: st}}}
}

// wireOrder is p as the generated RankingOrderParam, for raw calls.
func wireOrder(p ranking.OrderParam) *rk.RankingOrderParam {
	return &rk.RankingOrderParam{OrderCalc: p.OrderCalc, GroupIndex: p.GroupIndex, GroupNum: p.GroupNum, TimeScope: p.TimeScope, Offset: p.Offset, Count: p.Length}
}

// resultRows reads a RankingResult with the generated codec.
func resultRows(t *testing.T, r *types.Reader) []row {
	t.Helper()
	var res rk.RankingResult
	res.Read(r, "result")
	out := make([]row, len(res.Data))
	for i, d := range res.Data {
		out[i] = row{d.PID, d.Rank, d.Score}
	}
	return out
}

func wantResult(t *testing.T, err error, want types.Result) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}

type row struct {
	pid   types.PID
	order uint32
	score uint32
}

func rows(res ranking.Result) []row {
	out := make([]row, len(res.Data))
	for i, d := range res.Data {
		out[i] = row{d.PID, d.Order, d.Score}
	}
	return out
}

func equalRows(t *testing.T, what string, got []row, want ...row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

var top10 = ranking.OrderParam{GroupIndex: ranking.NoGroup, TimeScope: 2, Length: 10}

func TestRankingOrderTiesAndUpdates(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), nil)
	up := func(pid types.PID, cat, score uint32, orderBy, mode uint8) {
		t.Helper()
		if err := f.client(pid, true).UploadScore(ctx, ranking.ScoreData{Category: cat, Score: score, OrderBy: orderBy, UpdateMode: mode, Groups: []byte{1, 2}, Param: uint64(pid)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Category 1: higher first. 1002 reaches 500 before 1003 does.
	up(1001, 1, 300, ranking.OrderDescending, ranking.UpdateNormal)
	up(1002, 1, 500, ranking.OrderDescending, ranking.UpdateNormal)
	up(1003, 1, 500, ranking.OrderDescending, ranking.UpdateNormal)
	up(1004, 1, 900, ranking.OrderDescending, ranking.UpdateNormal)
	me := f.client(1001, true)
	res, err := me.GetRanking(ctx, ranking.ModeGlobal, 1, top10, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "standard", rows(res), row{1004, 1, 900}, row{1002, 2, 500}, row{1003, 2, 500}, row{1001, 4, 300})
	if res.TotalCount != 4 {
		t.Fatalf("total %d", res.TotalCount)
	}
	if d := res.Data[0]; d.Param != 1004 || !bytes.Equal(d.Groups, []byte{1, 2}) || d.UpdateTime == 0 || d.Category != 1 {
		t.Fatalf("entry %+v", d)
	}
	ord := top10
	ord.OrderCalc = ranking.OrderCalcOrdinal
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 1, ord, 0, 0)
	equalRows(t, "ordinal", rows(res), row{1004, 1, 900}, row{1002, 2, 500}, row{1003, 3, 500}, row{1001, 4, 300})

	// Offset into a tie: standard rank still counts the better scores.
	off := top10
	off.Offset = 2
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 1, off, 0, 0)
	equalRows(t, "offset 2", rows(res), row{1003, 2, 500}, row{1001, 4, 300})

	// Normal update keeps the better score; DeleteOld replaces.
	up(1004, 1, 100, ranking.OrderDescending, ranking.UpdateNormal)
	up(1001, 1, 950, ranking.OrderDescending, ranking.UpdateNormal)
	up(1002, 1, 10, ranking.OrderDescending, ranking.UpdateDeleteOld)
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 1, top10, 0, 0)
	equalRows(t, "after updates", rows(res), row{1001, 1, 950}, row{1004, 2, 900}, row{1003, 3, 500}, row{1002, 4, 10})

	// Category 2: lower first (times).
	up(1001, 2, 61000, ranking.OrderAscending, ranking.UpdateNormal)
	up(1002, 2, 59000, ranking.OrderAscending, ranking.UpdateNormal)
	up(1002, 2, 65000, ranking.OrderAscending, ranking.UpdateNormal) // worse: kept 59000
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 2, top10, 0, 0)
	equalRows(t, "ascending", rows(res), row{1002, 1, 59000}, row{1001, 2, 61000})
	// A category's order is fixed by its first upload.
	up(1003, 2, 70000, ranking.OrderDescending, ranking.UpdateNormal)
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 2, top10, 0, 0)
	equalRows(t, "order kept", rows(res), row{1002, 1, 59000}, row{1001, 2, 61000}, row{1003, 3, 70000})
}

func TestRankingModes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), []ranking.Category{{ID: 7, Descending: true}})
	for i := 0; i < 20; i++ {
		pid := types.PID(2000 + i)
		g := byte(i % 2)
		if err := f.client(pid, false).UploadScore(ctx, ranking.ScoreData{Category: 7, Score: uint32(100 * (i + 1)), Groups: []byte{g, 9}}, 5); err != nil {
			t.Fatal(err)
		}
	}
	// PID 2009 has 1000: rank 11 of 20.
	me := f.client(2009, false)
	around := top10
	around.Length = 5
	res, err := me.GetRanking(ctx, ranking.ModeGlobalAroundSelf, 7, around, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "around self", rows(res), row{2011, 9, 1200}, row{2010, 10, 1100}, row{2009, 11, 1000}, row{2008, 12, 900}, row{2007, 13, 800})
	res, _ = me.GetRanking(ctx, ranking.ModeSelf, 7, top10, 5, 0)
	equalRows(t, "self", rows(res), row{2009, 11, 1000})
	// Someone else's entry by PID.
	res, _ = me.GetRanking(ctx, ranking.ModeSelf, 7, top10, 5, 2019)
	equalRows(t, "self of 2019", rows(res), row{2019, 1, 2000})
	// By range: ranks 16-20.
	rng := top10
	rng.Offset = 15
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 7, rng, 0, 0)
	equalRows(t, "range", rows(res), row{2004, 16, 500}, row{2003, 17, 400}, row{2002, 18, 300}, row{2001, 19, 200}, row{2000, 20, 100})
	// Group filter: group 0 == 1 (odd i), ranked among themselves.
	grp := top10
	grp.GroupIndex, grp.GroupNum, grp.Length = 0, 1, 3
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 7, grp, 0, 0)
	equalRows(t, "group", rows(res), row{2019, 1, 2000}, row{2017, 2, 1800}, row{2015, 3, 1600})
	if res.TotalCount != 10 {
		t.Fatalf("group total %d", res.TotalCount)
	}
	// Approximate order of a score not uploaded.
	if o, err := me.GetApproxOrder(ctx, 7, top10, 1050, 0, 0); err != nil || o != 11 {
		t.Fatalf("approx order %d %v", o, err)
	}
	st, err := me.GetStats(ctx, 7, top10, ranking.StatCount|ranking.StatTotal|ranking.StatLowest|ranking.StatHighest|ranking.StatAverage)
	if err != nil || st != (ranking.Stats{20, 21000, 100, 2000, 1050}) {
		t.Fatalf("stats %v %v", st, err)
	}
	st, _ = me.GetStats(ctx, 7, top10, ranking.StatHighest)
	if st != (ranking.Stats{0, 0, 0, 2000, 0}) {
		t.Fatalf("stats highest only %v", st)
	}
	// Mode 2 needs friends: refused with a code, not an empty success.
	_, err = me.GetRanking(ctx, ranking.ModeFriendsAroundSelf, 7, top10, 5, 0)
	wantResult(t, err, types.RankingNotImplemented)
	// Own entry missing.
	_, err = f.client(3000, false).GetRanking(ctx, ranking.ModeGlobalAroundSelf, 7, top10, 5, 0)
	wantResult(t, err, types.RankingNotFound)
	// Beyond the top 1000 nothing is downloadable.
	far := top10
	far.Offset = 1000
	res, err = me.GetRanking(ctx, ranking.ModeGlobal, 7, far, 0, 0)
	if err != nil || len(res.Data) != 0 || res.TotalCount != 20 {
		t.Fatalf("offset 1000: %+v %v", res, err)
	}
}

// raw calls a method with hand-written parameters.
func raw(f *fixture, pid types.PID, method uint32, params func(w *types.Writer)) ([]byte, error) {
	d := &rmc.InMemory{Handler: f.srv, Peer: &rmc.Peer{PID: pid}}
	w := types.NewWriter(nil, d.Peer.Settings)
	params(&w)
	return d.Call(context.Background(), ranking.ProtocolID, method, w.B)
}

func TestRankingListsCachedAndAttributes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), nil)
	for i, pid := range []types.PID{1001, 1002, 1003} {
		if err := f.client(pid, false).UploadScore(ctx, ranking.ScoreData{Category: 3, Score: uint32(10 * (i + 1))}, uint64(pid)*10); err != nil {
			t.Fatal(err)
		}
	}
	settings := types.Settings{}
	read := func(data []byte) []row {
		r := types.NewReader(data, settings)
		res := resultRows(t, &r)
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		return res
	}
	data, err := raw(f, 1001, ranking.MethodGetRankingByPIDList, func(w *types.Writer) {
		types.WriteList(w, []types.PID{1001, 1003, 4444}, (*types.Writer).PID)
		w.U8(0)
		w.U32(3)
		wireOrder(top10).Append(w)
		w.U64(10010)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Only 1001's entry is under unique id 10010; 1003's is under 10030.
	equalRows(t, "by PID list", read(data), row{1001, 3, 10})
	data, err = raw(f, 1001, ranking.MethodGetRankingByUniqueIDList, func(w *types.Writer) {
		types.WriteList(w, []uint64{10010, 10030, 1}, (*types.Writer).U64)
		w.U8(0)
		w.U32(3)
		wireOrder(top10).Append(w)
		w.U64(0)
	})
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "by unique id list", read(data), row{1003, 1, 30}, row{1001, 3, 10})

	data, err = raw(f, 1001, ranking.MethodGetCachedTopXRankings, func(w *types.Writer) {
		types.WriteList(w, []uint32{3, 3}, (*types.Writer).U32)
		types.WriteList(w, []ranking.OrderParam{top10, {GroupIndex: ranking.NoGroup, Length: 1}}, func(w *types.Writer, p ranking.OrderParam) { wireOrder(p).Append(w) })
	})
	if err != nil {
		t.Fatal(err)
	}
	r := types.NewReader(data, settings)
	cached := types.ReadList(&r, "pResults", func(r *types.Reader, f string) (c rk.RankingCachedResult) { c.Read(r, f); return })
	if err := r.Done(); err != nil || len(cached) != 2 || len(cached[0].Data) != 3 || len(cached[1].Data) != 1 ||
		cached[1].MaxLength != 1 || cached[0].ExpiredTime.Time().Sub(cached[0].CreatedTime.Time()) != 5*time.Minute {
		t.Fatalf("cached: %+v %v", cached, err)
	}

	// ChangeAttributes: groups and param of one score, then param of all.
	if _, err := raw(f, 1001, ranking.MethodChangeAttributes, func(w *types.Writer) {
		w.U32(3)
		(&rk.RankingChangeAttributesParam{Flags: ranking.ChangeGroups | ranking.ChangeParam, Groups: []byte{4}, Param: 77}).Append(w)
		w.U64(10010)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := raw(f, 1001, ranking.MethodChangeAllAttributes, func(w *types.Writer) {
		(&rk.RankingChangeAttributesParam{Flags: ranking.ChangeParam, Param: 78}).Append(w)
		w.U64(10010)
	}); err != nil {
		t.Fatal(err)
	}
	res, _ := f.client(1001, false).GetRanking(ctx, ranking.ModeSelf, 3, top10, 10010, 0)
	if d := res.Data[0]; d.Param != 78 || !bytes.Equal(d.Groups, []byte{4}) {
		t.Fatalf("after ChangeAttributes: %+v", d)
	}
	_, err = raw(f, 1002, ranking.MethodChangeAllAttributes, func(w *types.Writer) {
		(&rk.RankingChangeAttributesParam{Flags: ranking.ChangeParam}).Append(w)
		w.U64(99)
	})
	wantResult(t, err, types.RankingNotFound)

	// DeleteScore, then DeleteAllScores.
	if err := f.client(1002, false).DeleteScore(ctx, 3, 10020); err != nil {
		t.Fatal(err)
	}
	wantResult(t, f.client(1002, false).DeleteScore(ctx, 3, 10020), types.RankingNotFound)
	if _, err := raw(f, 1003, ranking.MethodDeleteAllScores, func(w *types.Writer) { w.U64(10030) }); err != nil {
		t.Fatal(err)
	}
	res, _ = f.client(1001, false).GetRanking(ctx, ranking.ModeGlobal, 3, top10, 0, 0)
	equalRows(t, "after deletes", rows(res), row{1001, 1, 10})
}

func TestRankingCommonData(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), nil)
	me := f.client(1001, true)
	if _, err := me.GetCommonData(ctx, 1); !errors.Is(err, types.RankingNotFound) {
		t.Fatalf("missing common data: %v", err)
	}
	if err := me.UploadCommonData(ctx, []byte("mii"), 1); err != nil {
		t.Fatal(err)
	}
	if d, err := me.GetCommonData(ctx, 1); err != nil || string(d) != "mii" {
		t.Fatalf("common data %q %v", d, err)
	}
	// Common data rides along with the entries.
	if err := me.UploadScore(ctx, ranking.ScoreData{Category: 1, Score: 5}, 1); err != nil {
		t.Fatal(err)
	}
	res, _ := me.GetRanking(ctx, ranking.ModeGlobal, 1, top10, 0, 0)
	if string(res.Data[0].CommonData) != "mii" {
		t.Fatalf("entry common data %q", res.Data[0].CommonData)
	}
	wantResult(t, me.UploadCommonData(ctx, make([]byte, ranking.DefaultMaxCommonData+1), 1), types.RankingInvalidDataSize)
	if _, err := raw(f, 1001, ranking.MethodDeleteCommonData, func(w *types.Writer) { w.U64(1) }); err != nil {
		t.Fatal(err)
	}
	_, err := raw(f, 1001, ranking.MethodDeleteCommonData, func(w *types.Writer) { w.U64(1) })
	wantResult(t, err, types.RankingNotFound)
}

func TestRankingBadInput(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), []ranking.Category{{ID: 1, Descending: true}})
	me := f.client(1001, false)
	for _, tc := range []struct {
		name string
		err  error
		want types.Result
	}{
		{"undeclared category", me.UploadScore(ctx, ranking.ScoreData{Category: 2, Score: 1}, 0), types.RankingNotFound},
		{"orderBy 2", me.UploadScore(ctx, ranking.ScoreData{Category: 1, OrderBy: 2}, 0), types.RankingInvalidArgument},
		{"updateMode 9", me.UploadScore(ctx, ranking.ScoreData{Category: 1, UpdateMode: 9}, 0), types.RankingInvalidArgument},
		{"too many groups", me.UploadScore(ctx, ranking.ScoreData{Category: 1, Groups: make([]byte, 9)}, 0), types.RankingInvalidArgument},
		{"read undeclared", func() error { _, err := me.GetRanking(ctx, 0, 2, top10, 0, 0); return err }(), types.RankingNotFound},
		{"mode 3", func() error { _, err := me.GetRanking(ctx, 3, 1, top10, 0, 0); return err }(), types.RankingInvalidArgument},
		{"group index 5", func() error {
			p := top10
			p.GroupIndex = 5
			_, err := me.GetRanking(ctx, 0, 1, p, 0, 0)
			return err
		}(), types.RankingInvalidArgument},
		{"stat flags", func() error { _, err := me.GetStats(ctx, 1, top10, 0x40); return err }(), types.RankingInvalidArgument},
		{"truncated", func() error {
			_, err := raw(f, 1001, ranking.MethodUploadScore, func(w *types.Writer) { w.U32(1) })
			return err
		}(), types.RankingInvalidArgument},
		{"trailing bytes", func() error {
			_, err := raw(f, 1001, ranking.MethodGetCommonData, func(w *types.Writer) { w.U64(1); w.U8(0) })
			return err
		}(), types.RankingInvalidArgument},
		{"not authenticated", func() error {
			_, err := raw(f, 0, ranking.MethodGetCommonData, func(w *types.Writer) { w.U64(1) })
			return err
		}(), types.RendezVousNotAuthenticated},
		{"method 99", func() error { _, err := raw(f, 1001, 99, func(w *types.Writer) {}); return err }(), types.CoreNotImplemented},
	} {
		t.Run(tc.name, func(t *testing.T) { wantResult(t, tc.err, tc.want) })
	}
}

func TestRankingSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture(t, dir, nil)
	if err := f.client(1001, false).UploadScore(ctx, ranking.ScoreData{Category: 4, Score: 42, OrderBy: ranking.OrderAscending}, 0); err != nil {
		t.Fatal(err)
	}
	f.store.Close()
	g := newFixture(t, dir, nil)
	res, err := g.client(1002, false).GetRanking(ctx, ranking.ModeGlobal, 4, top10, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "after restart", rows(res), row{1001, 1, 42})
	if c, err := g.store.Ranking().Category(ctx, 4); err != nil || c.Descending {
		t.Fatalf("category after restart %+v %v", c, err)
	}
}

// TestRankingQuota: with Quota set, a player's scores in a category beyond
// RankingCategories and common data beyond CommonData are refused with
// Ranking::RegistrationError (and no category comes into existence for
// the refused score); uploads to categories and unique ids the player has
// already go on, and other players are not counted against it.
func TestRankingQuota(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), nil)
	f.srv.Quota = quota.Quota{RankingCategories: 3, CommonData: 2}
	me, other := f.client(1001, true), f.client(1002, true)
	for c := uint32(1); c <= 3; c++ {
		if err := me.UploadScore(ctx, ranking.ScoreData{Category: c, Score: 5}, 0); err != nil {
			t.Fatal(err)
		}
	}
	wantResult(t, me.UploadScore(ctx, ranking.ScoreData{Category: 4, Score: 5}, 0), quota.ResultRankingRegistrationError)
	if _, err := other.GetRanking(ctx, ranking.ModeGlobal, 4, top10, 0, 0); !errors.Is(err, types.RankingNotFound) {
		t.Fatalf("category 4 after the refused score: %v", err)
	}
	if err := me.UploadScore(ctx, ranking.ScoreData{Category: 2, Score: 9}, 0); err != nil {
		t.Fatalf("a category already held: %v", err)
	}
	if err := other.UploadScore(ctx, ranking.ScoreData{Category: 4, Score: 5}, 0); err != nil {
		t.Fatalf("another player: %v", err)
	}
	for uid := uint64(1); uid <= 2; uid++ {
		if err := me.UploadCommonData(ctx, []byte("mii"), uid); err != nil {
			t.Fatal(err)
		}
	}
	wantResult(t, me.UploadCommonData(ctx, []byte("mii"), 3), quota.ResultRankingRegistrationError)
	if err := me.UploadCommonData(ctx, []byte("mii2"), 2); err != nil {
		t.Fatalf("replacing common data held: %v", err)
	}
}

// TestClientCalls runs the Client's list, cached, attribute and delete calls
// (the generated client and the package's conversions) against the Server.
func TestClientCalls(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir(), nil)
	for i, pid := range []types.PID{1001, 1002} {
		if err := f.client(pid, true).UploadScore(ctx, ranking.ScoreData{Category: 5, Score: uint32(10 * (i + 1))}, 0); err != nil {
			t.Fatal(err)
		}
	}
	me := f.client(1001, true)
	res, err := me.GetRankingByPIDList(ctx, []types.PID{1001, 1002}, 0, 5, top10, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "by PID list", rows(res), row{1002, 1, 20}, row{1001, 2, 10})
	if res.Data[0].UpdateTime == 0 {
		t.Fatalf("no updateTime at NEX 3.6: %+v", res.Data[0])
	}
	if res, err = me.GetRankingByUniqueIDList(ctx, []uint64{0}, 0, 5, top10, 0); err != nil || len(res.Data) != 1 {
		t.Fatalf("by unique id list: %+v %v", res, err)
	}
	if err := me.ChangeAttributes(ctx, 5, ranking.ChangeAttributesParam{Flag: ranking.ChangeParam, Param: 31}, 0); err != nil {
		t.Fatal(err)
	}
	if err := me.ChangeAllAttributes(ctx, ranking.ChangeAttributesParam{Flag: ranking.ChangeGroups, Groups: []byte{3}}, 0); err != nil {
		t.Fatal(err)
	}
	cached, err := me.GetCachedTopXRanking(ctx, 5, top10)
	if err != nil || len(cached.Data) != 2 || cached.MaxLength != 10 || cached.Data[1].Param != 31 || !bytes.Equal(cached.Data[1].Groups, []byte{3}) {
		t.Fatalf("cached: %+v %v", cached, err)
	}
	if err := me.UploadCommonData(ctx, []byte("mii"), 0); err != nil {
		t.Fatal(err)
	}
	if err := me.DeleteCommonData(ctx, 0); err != nil {
		t.Fatal(err)
	}
	wantResult(t, me.DeleteCommonData(ctx, 0), types.RankingNotFound)
	if err := me.DeleteAllScores(ctx, 0); err != nil {
		t.Fatal(err)
	}
	res, _ = me.GetRanking(ctx, ranking.ModeGlobal, 5, top10, 0, 0)
	equalRows(t, "after DeleteAllScores", rows(res), row{1002, 1, 20})
}
