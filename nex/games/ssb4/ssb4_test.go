package ssb4_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/games/internal/gametest"
	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sb "github.com/gamewire/gamewire/nex/protocols/datastoressb4"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

type fixture struct {
	mux *rmc.Mux
	srv *ssb4.Server
	now time.Time
}

// newFixture serves DataStore and DataStore_SSB4 on one Mux over a fresh
// SQLite store and a directory of bodies behind an HTTP server.
func newFixture(t testing.TB, cfg ssb4.Config) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{mux: rmc.NewMux(), now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return f.now }
	dsrv := &datastore.Server{Store: st.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(dir, "bodies")}, Now: clock}
	ts := httptest.NewServer(dsrv.HTTPHandler())
	dsrv.BaseURL = ts.URL
	t.Cleanup(func() { ts.Close(); st.Close() })
	f.srv = &ssb4.Server{DataStore: dsrv, Store: st.SSB4(), Config: cfg, Now: clock}
	f.mux.HandleProtocol(ds.DataStoreProtocolID, dsrv)
	if err := ssb4.Register(f.mux, f.srv); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) client(pid types.PID) sb.DataStoreSSB4Client {
	return sb.NewDataStoreSSB4Client(&rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true, Version: 30600}}})
}

func player(pid uint32, fighter uint8) sb.DataStoreReplayPlayer {
	return sb.DataStoreReplayPlayer{Fighter: fighter, Health: 120, WinningRate: 5000, Color: 1, Color2: 2, PrincipalID: pid, Country: 49, Region: 2, Number: 1}
}

func match(size uint32, mode uint8, players ...sb.DataStoreReplayPlayer) sb.DataStorePreparePostReplayParam {
	return sb.DataStorePreparePostReplayParam{Size: size, Mode: mode, Style: 1, Rule: 2, Stage: 12, ReplayType: 1, Score: 3,
		Players: players, Winners: []uint32{players[0].PrincipalID}, KeyVersion: 1, ExtraData: []string{}}
}

// upload posts body to a DataStore upload place.
func upload(t *testing.T, info ds.DataStoreReqPostInfo, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, kv := range info.Form {
		mw.WriteField(kv.Key, kv.Value)
	}
	fw, _ := mw.CreateFormFile("file", "replay")
	fw.Write(body)
	mw.Close()
	resp, err := http.Post(info.URL, mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("upload: %s", resp.Status)
	}
}

// postReplay posts a replay through PreparePostReplay, HTTP and
// CompletePostReplay, and returns its id.
func postReplay(t *testing.T, c sb.DataStoreSSB4Client, p sb.DataStorePreparePostReplayParam) uint64 {
	t.Helper()
	ctx := context.Background()
	post, info, err := c.PreparePostReplay(ctx, p)
	if err != nil {
		t.Fatalf("PreparePostReplay: %v", err)
	}
	if post.Size != p.Size || post.DataType != ssb4.DefaultReplayDataType || post.Period != ssb4.DefaultReplayPeriod || info.DataID == 0 || info.URL == "" {
		t.Fatalf("PreparePostReplay: %+v %+v", post, info)
	}
	upload(t, info, bytes.Repeat([]byte{byte(info.DataID)}, int(p.Size)))
	if err := c.CompletePostReplay(ctx, sb.DataStoreCompletePostReplayParam{ReplayID: info.DataID,
		CompleteParam: ds.DataStoreCompletePostParam{DataID: info.DataID, Success: true}, PrepareParam: p}); err != nil {
		t.Fatalf("CompletePostReplay: %v", err)
	}
	return info.DataID
}

// TestReplays: the server asks for replays (CheckPostReplay: required below
// the hourly count or when rare), they go up as DataStore objects
// (PreparePostReplay, HTTP, CompletePostReplay), come back by id
// (GetReplayMeta, PrepareGetReplay and its body), by search (SearchReplay)
// and as a queue each viewer walks (GetNextReplay: not one's own, not one
// not yet uploaded, starting over at the end).
func TestReplays(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ssb4.Config{ReplaysPerHour: 2})
	a, b, viewer := f.client(1001), f.client(1002), f.client(1003)

	if _, err := viewer.GetNextReplay(ctx); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("GetNextReplay with no replay: %v", err)
	}
	m1 := match(100, 1, player(1001, 3), player(1002, 4))
	req, rare, err := a.CheckPostReplay(ctx, m1)
	if err != nil || !req || !rare {
		t.Fatalf("CheckPostReplay of the first match: required %v rare %v %v", req, rare, err)
	}
	r1 := postReplay(t, a, m1)
	// Same fighters: not rare, still required (1 of 2 this hour).
	if req, rare, err := b.CheckPostReplay(ctx, m1); err != nil || !req || rare {
		t.Fatalf("CheckPostReplay of a second match: required %v rare %v %v", req, rare, err)
	}
	r2 := postReplay(t, b, match(50, 1, player(1002, 4), player(1004, 3)))
	if req, rare, err := a.CheckPostReplay(ctx, m1); err != nil || req || rare {
		t.Fatalf("CheckPostReplay with the hour full: required %v rare %v %v", req, rare, err)
	}
	if req, rare, err := a.CheckPostReplay(ctx, match(10, 1, player(1001, 9), player(1002, 4))); err != nil || !req || !rare {
		t.Fatalf("CheckPostReplay of a new fighter with the hour full: required %v rare %v %v", req, rare, err)
	}
	if req, _, err := a.CheckPostReplay(ctx, match(10, 2, player(1001, 3))); err != nil || !req {
		t.Fatalf("CheckPostReplay in another mode: required %v %v", req, err)
	}
	f.now = f.now.Add(2 * time.Hour)
	if req, rare, err := a.CheckPostReplay(ctx, m1); err != nil || !req || !rare {
		t.Fatalf("CheckPostReplay an hour later: required %v rare %v %v", req, rare, err)
	}
	// A replay prepared and never uploaded is not handed out.
	if _, _, err := a.PreparePostReplay(ctx, match(10, 1, player(1001, 3), player(1004, 5))); err != nil {
		t.Fatal(err)
	}
	r3 := postReplay(t, a, match(30, 2, player(1001, 5), player(1004, 6)))

	meta, err := viewer.GetReplayMeta(ctx, sb.DataStoreGetReplayMetaParam{ReplayID: r1})
	if err != nil || meta.ReplayID != r1 || meta.Size != 100 || meta.Mode != 1 || meta.Stage != 12 || len(meta.Players) != 2 ||
		meta.Players[1] != player(1002, 4) || !slices.Equal(meta.Winners, []uint32{1001}) {
		t.Fatalf("GetReplayMeta: %+v %v", meta, err)
	}
	if _, err := viewer.GetReplayMeta(ctx, sb.DataStoreGetReplayMetaParam{ReplayID: 999}); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("GetReplayMeta of no replay: %v", err)
	}
	get, err := viewer.PrepareGetReplay(ctx, sb.DataStorePrepareGetReplayParam{ReplayID: r2, ExtraData: []string{}})
	if err != nil || get.Size != 50 || get.DataID != r2 {
		t.Fatalf("PrepareGetReplay: %+v %v", get, err)
	}
	resp, err := http.Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, bytes.Repeat([]byte{byte(r2)}, 50)) {
		t.Fatalf("replay body: %d bytes (%s)", len(body), resp.Status)
	}

	found, err := viewer.SearchReplay(ctx, sb.DataStoreSearchReplayParam{Mode: 1, Style: 1, Fighter: 3, ResultRange: common.ResultRange{Size: 10}})
	if err != nil || len(found) != 2 || found[0].ReplayID != r2 || found[1].ReplayID != r1 {
		t.Fatalf("SearchReplay(mode 1, fighter 3): %+v %v", found, err)
	}
	if found, err := viewer.SearchReplay(ctx, sb.DataStoreSearchReplayParam{Mode: 1, Style: 1, Fighter: 6, ResultRange: common.ResultRange{Size: 10}}); err != nil || len(found) != 0 {
		t.Fatalf("SearchReplay(fighter 6): %+v %v", found, err)
	}

	// The queue: r1, r2, r3 in order, then again from r1.
	for i, want := range []uint64{r1, r2, r3, r1} {
		m, err := viewer.GetNextReplay(ctx)
		if err != nil || m.ReplayID != want {
			t.Fatalf("GetNextReplay %d: %d %v, want %d", i, m.ReplayID, err, want)
		}
	}
	// 1002 played in r1 and r2: only r3 is for it.
	for i := range 2 {
		if m, err := b.GetNextReplay(ctx); err != nil || m.ReplayID != r3 {
			t.Fatalf("GetNextReplay of a player %d: %d %v, want %d", i, m.ReplayID, err, r3)
		}
	}
	// 1001 posted r1 and r3: r2 is for it.
	if m, err := a.GetNextReplay(ctx); err != nil || m.ReplayID != r2 {
		t.Fatalf("GetNextReplay of a poster: %d %v, want %d", m.ReplayID, err, r2)
	}

	// Bad input.
	if err := a.CompletePostReplay(ctx, sb.DataStoreCompletePostReplayParam{ReplayID: r1, CompleteParam: ds.DataStoreCompletePostParam{DataID: r2, Success: true}}); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("CompletePostReplay of mismatched ids: %v", err)
	}
	nine := match(10, 1, player(1, 1), player(2, 2), player(3, 3), player(4, 4), player(5, 5), player(6, 6), player(7, 7), player(8, 8), player(9, 9))
	if _, _, err := a.PreparePostReplay(ctx, nine); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("PreparePostReplay of 9 players: %v", err)
	}
	if _, _, err := a.CheckPostReplay(ctx, nine); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("CheckPostReplay of 9 players: %v", err)
	}
	if _, _, err := a.PreparePostReplay(ctx, match(datastore.DefaultMaxObjectSize+1, 1, player(1001, 1))); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("PreparePostReplay of an oversized replay: %v", err)
	}
}

// TestProfilesReportsAndFightingPower: profiles replace and read back in
// order, the world play report sums each player's latest report, and
// fighting power scores make the charts.
func TestProfilesReportsAndFightingPower(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ssb4.Config{ChartPoints: 3, FightingPowerModes: 2})
	a, b := f.client(1001), f.client(1002)

	for _, p := range []struct {
		c       sb.DataStoreSSB4Client
		profile string
	}{{a, "old"}, {b, "b"}, {a, "a"}} {
		if err := p.c.PostProfile(ctx, sb.DataStorePostProfileParam{Profile: []byte(p.profile)}); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := b.GetProfiles(ctx, []types.PID{1002, 1003, 1001})
	if err != nil || len(ps) != 2 || ps[0].PID != 1002 || string(ps[0].Profile) != "b" || ps[1].PID != 1001 || string(ps[1].Profile) != "a" {
		t.Fatalf("GetProfiles: %+v %v", ps, err)
	}
	if err := a.PostProfile(ctx, sb.DataStorePostProfileParam{Profile: make([]byte, ssb4.MaxProfileSize+1)}); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("PostProfile oversized: %v", err)
	}
	if _, err := a.GetProfiles(ctx, make([]types.PID, ssb4.MaxBatch+1)); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("GetProfiles of too many: %v", err)
	}

	if r, err := a.GetWorldPlayReport(ctx); err != nil || len(r) != 0 {
		t.Fatalf("GetWorldPlayReport of none: %v %v", r, err)
	}
	for _, r := range []struct {
		c      sb.DataStoreSSB4Client
		report []int32
	}{{a, []int32{5, 5, 5, 5}}, {a, []int32{1, 2}}, {b, []int32{10, 20, 30}}} {
		if err := r.c.SendPlayReport(ctx, r.report); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := a.GetWorldPlayReport(ctx); err != nil || !slices.Equal(r, []int64{11, 22, 30}) {
		t.Fatalf("GetWorldPlayReport: %v %v", r, err)
	}
	if err := a.SendPlayReport(ctx, make([]int32, ssb4.MaxPlayReport+1)); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("SendPlayReport oversized: %v", err)
	}

	// Before any score: the configured two modes, empty.
	all, err := a.GetFightingPowerChartAll(ctx)
	if err != nil || len(all) != 2 || all[0].UserNum != 0 || len(all[0].Chart) != 0 {
		t.Fatalf("GetFightingPowerChartAll of none: %+v %v", all, err)
	}
	for i, score := range []uint32{900, 100, 500, 700} {
		c := f.client(types.PID(2001 + i))
		if err := c.PostFightingPowerScore(ctx, []sb.DataStorePostFightingPowerScoreParam{{Mode: 0, Score: score}, {Mode: 3, Score: score / 100}}); err != nil {
			t.Fatal(err)
		}
	}
	n, chart, err := a.GetFightingPowerChart(ctx, 0)
	want := []sb.DataStoreFightingPowerScore{{Score: 900, Rank: 1}, {Score: 700, Rank: 2}, {Score: 100, Rank: 4}}
	if err != nil || n != 4 || !slices.Equal(chart, want) {
		t.Fatalf("GetFightingPowerChart(0): %d %+v %v, want 4 %+v", n, chart, err, want)
	}
	all, err = a.GetFightingPowerChartAll(ctx)
	if err != nil || len(all) != 4 || all[0].UserNum != 4 || !slices.Equal(all[0].Chart, want) || all[1].UserNum != 0 || all[2].UserNum != 0 ||
		all[3].UserNum != 4 || all[3].Chart[0] != (sb.DataStoreFightingPowerScore{Score: 9, Rank: 1}) {
		t.Fatalf("GetFightingPowerChartAll: %+v %v", all, err)
	}
	if err := a.PostFightingPowerScore(ctx, make([]sb.DataStorePostFightingPowerScoreParam, ssb4.MaxBatch+1)); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("PostFightingPowerScore of too many: %v", err)
	}
}

// TestApplicationConfig: the default list for every application, the
// operator's per application and default lists.
func TestApplicationConfig(t *testing.T) {
	ctx := context.Background()
	cfg, err := newFixture(t, ssb4.Config{}).client(1001).GetApplicationConfig(ctx, 7)
	if err != nil || !slices.Equal(cfg, ssb4.DefaultApplicationConfig) || len(cfg) != 54 {
		t.Fatalf("GetApplicationConfig default: %v %v", cfg, err)
	}
	c := newFixture(t, ssb4.Config{ApplicationConfig: map[uint32][]string{1: {"a", "b"}}, DefaultApplicationConfig: []string{"x"}}).client(1001)
	if cfg, err := c.GetApplicationConfig(ctx, 1); err != nil || !slices.Equal(cfg, []string{"a", "b"}) {
		t.Fatalf("GetApplicationConfig(1): %v %v", cfg, err)
	}
	if cfg, err := c.GetApplicationConfig(ctx, 2); err != nil || !slices.Equal(cfg, []string{"x"}) {
		t.Fatalf("GetApplicationConfig(2): %v %v", cfg, err)
	}
}

// TestRefusals: an unauthenticated caller, a method the package does not
// answer, parameters that do not decode, a Config that cannot work.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ssb4.Config{})
	anon := sb.NewDataStoreSSB4Client(&rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{Settings: types.Settings{StructureHeader: true}}})
	if _, err := anon.GetWorldPlayReport(ctx); !errors.Is(err, types.RendezVousNotAuthenticated) {
		t.Fatalf("unauthenticated: %v", err)
	}
	c := f.client(1001)
	if _, err := c.GetSharedDataMeta(ctx, nil); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("GetSharedDataMeta: %v", err)
	}
	in := &rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{PID: 1001, Settings: types.Settings{StructureHeader: true}}}
	if _, err := in.Call(ctx, ds.DataStoreProtocolID, sb.DataStoreSSB4MethodPostProfile, []byte{1, 2}); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("truncated PostProfile: %v", err)
	}
	bad := &ssb4.Server{DataStore: f.srv.DataStore, Store: f.srv.Store, Config: ssb4.Config{ReplayPeriod: 400}}
	if err := ssb4.Register(rmc.NewMux(), bad); err == nil {
		t.Fatal("Register took a replay period of 400 days")
	}
}

// TestSharedData: shared data goes up as a DataStore object
// (PreparePostSharedData, HTTP, CompletePostSharedData) and is found by its
// attributes and fighters with its owner's profile, meta binary and
// download place, not before its upload completed, and no longer once
// reported by Config.ReportThreshold players (each counted once).
func TestSharedData(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ssb4.Config{ReportThreshold: 2})
	owner, other := f.client(1001), f.client(1002)
	if err := owner.PostProfile(ctx, sb.DataStorePostProfileParam{Profile: []byte("owner's mii")}); err != nil {
		t.Fatal(err)
	}
	post := func(c sb.DataStoreSSB4Client, p sb.DataStorePreparePostSharedDataParam, complete bool) uint64 {
		t.Helper()
		pp, info, err := c.PreparePostSharedData(ctx, p)
		if err != nil || pp.DataType != ssb4.DefaultSharedDataType || pp.Period != ssb4.DefaultSharedDataPeriod || !bytes.Equal(pp.MetaBinary, p.MetaBinary) {
			t.Fatalf("PreparePostSharedData: %+v %v", pp, err)
		}
		if !complete {
			return info.DataID
		}
		upload(t, info, []byte(p.Comment))
		if err := c.CompletePostSharedData(ctx, sb.DataStoreCompletePostSharedDataParam{DataID: info.DataID,
			CompleteParam: ds.DataStoreCompletePostParam{DataID: info.DataID, Success: true}, PrepareParam: p}); err != nil {
			t.Fatalf("CompletePostSharedData: %v", err)
		}
		return info.DataID
	}
	stage := sb.DataStorePreparePostSharedDataParam{DataType: 1, Region: 2, Attribute1: 3, Attribute2: 4, Fighter: []byte{5, 6},
		Size: 5, Comment: "stage", MetaBinary: []byte("meta"), ExtraData: []string{}}
	d1 := post(owner, stage, true)
	photo := stage
	photo.Fighter, photo.Comment, photo.Region = []byte{7}, "photo", 1
	d2 := post(other, photo, true)
	post(owner, stage, false) // never uploaded

	search := func(p sb.DataStoreSearchSharedDataParam) []uint64 {
		t.Helper()
		p.ResultRange = common.ResultRange{Size: 10}
		found, err := other.SearchSharedData(ctx, p)
		if err != nil {
			t.Fatalf("SearchSharedData(%+v): %v", p, err)
		}
		var ids []uint64
		for _, d := range found {
			ids = append(ids, d.DataID)
		}
		return ids
	}
	all := sb.DataStoreSearchSharedDataParam{DataType: 1, Region: ssb4.Any, Attribute1: ssb4.Any, Attribute2: ssb4.Any, Fighter: ssb4.Any}
	if ids := search(all); !slices.Equal(ids, []uint64{d2, d1}) {
		t.Fatalf("SearchSharedData(any): %v, want %d %d", ids, d2, d1)
	}
	byFighter := all
	byFighter.Fighter = 6
	if ids := search(byFighter); !slices.Equal(ids, []uint64{d1}) {
		t.Fatalf("SearchSharedData(fighter 6): %v", ids)
	}
	byOwner := all
	byOwner.Owner = 1002
	if ids := search(byOwner); !slices.Equal(ids, []uint64{d2}) {
		t.Fatalf("SearchSharedData(owner 1002): %v", ids)
	}
	byFighter.Region = 1
	if ids := search(byFighter); len(ids) != 0 {
		t.Fatalf("SearchSharedData(fighter 6, region 1): %v", ids)
	}
	found, err := other.SearchSharedData(ctx, sb.DataStoreSearchSharedDataParam{DataType: 1, Owner: 1001, Region: 2, Attribute1: 3, Attribute2: 4,
		Fighter: 5, ResultRange: common.ResultRange{Size: 10}})
	if err != nil || len(found) != 1 {
		t.Fatalf("SearchSharedData of d1: %+v %v", found, err)
	}
	d := found[0]
	if d.OwnerID != 1001 || d.DataType != 1 || d.Comment != "stage" || string(d.MetaBinary) != "meta" || string(d.Profile) != "owner's mii" ||
		d.Info.DataID != d1 || d.Info.GetInfo.Size != 5 || d.CreatedTime == 0 {
		t.Fatalf("shared data info: %+v", d)
	}
	resp, err := http.Get(d.Info.GetInfo.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "stage" {
		t.Fatalf("shared data body %q (%s)", body, resp.Status)
	}

	for range 2 {
		if err := other.ReportSharedData(ctx, d1); err != nil {
			t.Fatal(err)
		}
	}
	if ids := search(all); !slices.Equal(ids, []uint64{d2, d1}) {
		t.Fatalf("after one player's two reports: %v", ids)
	}
	if err := f.client(1003).ReportSharedData(ctx, d1); err != nil {
		t.Fatal(err)
	}
	if ids := search(all); !slices.Equal(ids, []uint64{d2}) {
		t.Fatalf("after two players' reports: %v", ids)
	}
	if err := other.ReportSharedData(ctx, 999); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("ReportSharedData of nothing: %v", err)
	}

	tooMany := stage
	tooMany.Fighter = make([]byte, ssb4.MaxSharedDataFighters+1)
	if _, _, err := owner.PreparePostSharedData(ctx, tooMany); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("PreparePostSharedData of too many fighters: %v", err)
	}
	if err := owner.CompletePostSharedData(ctx, sb.DataStoreCompletePostSharedDataParam{DataID: d1, CompleteParam: ds.DataStoreCompletePostParam{DataID: d2}}); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("CompletePostSharedData of mismatched ids: %v", err)
	}
}

// TestDeclaredMethods: every method DataStore_SSB4 declares (45-64) reaches
// the variant, the Methods answered and 64 (GetSharedDataMeta)
// Core::NotImplemented; the Server alone answers the inherited methods
// (1-44) as the DataStore service does on the Mux.
func TestDeclaredMethods(t *testing.T) {
	f := newFixture(t, ssb4.Config{})
	alone := &rmc.InMemory{Handler: f.srv, Peer: &rmc.Peer{PID: 1002, Settings: types.Settings{StructureHeader: true, Version: 30600}}}
	gametest.CheckDeclared(t, func(c rmc.Caller) any { return sb.NewDataStoreSSB4Client(c) }, f.client(1001).C, alone, 45, 64, ssb4.Methods, sb.DataStoreSSB4MethodName)
}
