package smm_test

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
	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sm "github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

type fixture struct {
	mux *rmc.Mux
	srv *smm.Server
}

// newFixture serves DataStore and DataStore_SMM on one Mux over a fresh
// SQLite store and a directory of bodies behind an HTTP server.
func newFixture(t *testing.T, cfg smm.Config) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	dsrv := &datastore.Server{Store: st.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(dir, "bodies")},
		Now: func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }}
	ts := httptest.NewServer(dsrv.HTTPHandler())
	dsrv.BaseURL = ts.URL
	t.Cleanup(func() { ts.Close(); st.Close() })
	f := &fixture{mux: rmc.NewMux(), srv: &smm.Server{DataStore: dsrv, Store: st.SMM(), Config: cfg}}
	f.mux.HandleProtocol(ds.DataStoreProtocolID, dsrv)
	if err := smm.Register(f.mux, f.srv); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) client(pid types.PID) sm.DataStoreSMMClient {
	return sm.NewDataStoreSMMClient(&rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true}}})
}

func course(name string, dataType uint16) ds.DataStorePreparePostParam {
	return ds.DataStorePreparePostParam{Name: name, DataType: dataType, MetaBinary: []byte(name),
		Permission: ds.DataStorePermission{Permission: datastore.PermissionEveryone}, DeletePermission: ds.DataStorePermission{Permission: datastore.PermissionOwner},
		PersistenceInitParam: ds.DataStorePersistenceInitParam{PersistenceID: datastore.NoPersistenceSlot}}
}

func search(dataType uint16, size uint32) ds.DataStoreSearchParam {
	p := ds.NewDataStoreSearchParam()
	p.DataType, p.ResultRange = dataType, common.ResultRange{Size: size}
	p.CreatedAfter, p.CreatedBefore, p.UpdatedAfter, p.UpdatedBefore = 0, 0, 0, 0
	p.ResultOption = datastore.ResultMetaBinary
	return p
}

// TestCourseRecordsAndRankings: a course posted through the inherited
// DataStore methods gets stars (RateCustomRanking, read back with its place
// by GetCustomRankingByDataId and ordering RecommendedCourseSearchObject),
// clears (UploadCourseRecord: first clear kept, best time replaced only by a
// better one; GetCourseRecord, GetMetasWithCourseRecord), and the raters'
// counter reaches its threshold.
func TestCourseRecordsAndRankings(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, smm.Config{RateThreshold: 3})
	maker, p2, p3 := f.client(1001), f.client(1002), f.client(1003)
	a, err := maker.PostMetaBinary(ctx, course("a", 7))
	if err != nil {
		t.Fatal(err)
	}
	b, err := maker.PostMetaBinary(ctx, course("b", 7))
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.RateCustomRanking(ctx, []sm.DataStoreRateCustomRankingParam{{DataID: b, Score: 1}, {DataID: a, Score: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := p3.RateCustomRanking(ctx, []sm.DataStoreRateCustomRankingParam{{DataID: b, Score: 1}}); err != nil {
		t.Fatal(err)
	}
	rr, results, err := p2.GetCustomRankingByDataId(ctx, sm.DataStoreGetCustomRankingByDataIdParam{DataIDList: []uint64{a, b, 999}, ResultOption: datastore.ResultMetaBinary})
	if err != nil || len(rr) != 3 || rr[0].Score != 1 || rr[0].Order != 2 || rr[1].Score != 2 || rr[1].Order != 1 ||
		string(rr[1].MetaInfo.MetaBinary) != "b" || rr[0].MetaInfo.DataID != a ||
		!slices.Equal(results, []types.Result{types.ResultSuccess, types.ResultSuccess, types.DataStoreNotFound}) {
		t.Fatalf("GetCustomRankingByDataId: %+v %v %v", rr, results, err)
	}
	if err := p2.RateCustomRanking(ctx, []sm.DataStoreRateCustomRankingParam{{DataID: 999, Score: 1}}); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("rating a missing course: %v", err)
	}
	rec, err := p2.RecommendedCourseSearchObject(ctx, search(7, 10), nil)
	if err != nil || len(rec) != 2 || rec[0].MetaInfo.DataID != b || rec[1].MetaInfo.DataID != a || rec[0].Score != 2 {
		t.Fatalf("RecommendedCourseSearchObject: %+v %v", rec, err)
	}
	if rec, err := p2.RecommendedCourseSearchObject(ctx, search(8, 10), nil); err != nil || len(rec) != 0 {
		t.Fatalf("RecommendedCourseSearchObject of another data type: %+v %v", rec, err)
	}
	below, err := p2.CheckRateCustomRankingCounter(ctx, 0)
	if err != nil || !below {
		t.Fatalf("CheckRateCustomRankingCounter after 2 of 3: %v %v", below, err)
	}
	if err := p2.RateCustomRanking(ctx, []sm.DataStoreRateCustomRankingParam{{DataID: a, Score: 1}}); err != nil {
		t.Fatal(err)
	}
	if below, err := p2.CheckRateCustomRankingCounter(ctx, 0); err != nil || below {
		t.Fatalf("CheckRateCustomRankingCounter after 3 of 3: %v %v", below, err)
	}
	if err := p2.ResetRateCustomRankingCounter(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if below, err := p2.CheckRateCustomRankingCounter(ctx, 0); err != nil || !below {
		t.Fatalf("CheckRateCustomRankingCounter after reset: %v %v", below, err)
	}

	if _, err := p2.GetCourseRecord(ctx, sm.DataStoreGetCourseRecordParam{DataID: a}); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("GetCourseRecord before a clear: %v", err)
	}
	for _, c := range []struct {
		who   sm.DataStoreSMMClient
		score int32
	}{{p2, 5000}, {p3, 6000}, {p3, 4000}} {
		if err := c.who.UploadCourseRecord(ctx, sm.DataStoreUploadCourseRecordParam{DataID: a, Score: c.score}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := maker.GetCourseRecord(ctx, sm.DataStoreGetCourseRecordParam{DataID: a})
	if err != nil || r.FirstPID != 1002 || r.BestPID != 1003 || r.BestScore != 4000 || r.DataID != a {
		t.Fatalf("GetCourseRecord: %+v %v", r, err)
	}
	metas, recs, results, err := maker.GetMetasWithCourseRecord(ctx, []sm.DataStoreGetCourseRecordParam{{DataID: a}, {DataID: b}},
		ds.DataStoreGetMetaParam{ResultOption: datastore.ResultMetaBinary, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: datastore.NoPersistenceSlot}})
	if err != nil || metas[0].Name != "a" || recs[0].BestScore != 4000 || recs[1].DataID != 0 ||
		!slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreNotFound}) {
		t.Fatalf("GetMetasWithCourseRecord: %+v %+v %v %v", metas, recs, results, err)
	}
	if err := p2.UploadCourseRecord(ctx, sm.DataStoreUploadCourseRecordParam{DataID: 999, Score: 1}); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("UploadCourseRecord of a missing course: %v", err)
	}
}

// TestSearchesQueuesConfigAndReasons: FollowingsLatest answers the named
// owners' courses newest first, Suggested only others' courses; buffer
// queues keep their order and length; the application config is the
// operator's (or the default); deletion reasons only from the owner.
func TestSearchesQueuesConfigAndReasons(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, smm.Config{BufferQueueLength: 2, ApplicationConfig: map[uint32][]uint32{1: {2, 1770179696}},
		ApplicationConfigString: map[uint32][]string{0: {"hello"}}, PickUpCourses: []uint64{2}})
	m1, m2 := f.client(1001), f.client(1002)
	a, _ := m1.PostMetaBinary(ctx, course("a", 7))
	b, _ := m2.PostMetaBinary(ctx, course("b", 7))
	c, err := m1.PostMetaBinary(ctx, course("c", 7))
	if err != nil {
		t.Fatal(err)
	}
	p := search(7, 10)
	p.OwnerIDs = []types.PID{1001}
	got, err := m2.FollowingsLatestCourseSearchObject(ctx, p, nil)
	if err != nil || len(got) != 2 || got[0].MetaInfo.DataID != c || got[1].MetaInfo.DataID != a || got[0].Order != 1 {
		t.Fatalf("FollowingsLatestCourseSearchObject: %+v %v", got, err)
	}
	sug, err := m1.SuggestedCourseSearchObject(ctx, search(7, 10), nil)
	if err != nil || len(sug) != 1 || sug[0].MetaInfo.DataID != b {
		t.Fatalf("SuggestedCourseSearchObject: %+v %v", sug, err)
	}
	pick, err := m1.CTRPickUpCourseSearchObject(ctx, search(7, 10), nil)
	if err != nil || len(pick) != 1 || pick[0].MetaInfo.DataID != 2 {
		t.Fatalf("CTRPickUpCourseSearchObject: %+v %v", pick, err)
	}

	q := sm.BufferQueueParam{DataID: a, Slot: 3}
	res, err := m2.AddToBufferQueues(ctx, []sm.BufferQueueParam{q, q, q, {DataID: 999}}, [][]byte{[]byte("1"), []byte("2"), []byte("3"), []byte("x")})
	if err != nil || !slices.Equal(res, []types.Result{types.ResultSuccess, types.ResultSuccess, types.ResultSuccess, types.DataStoreNotFound}) {
		t.Fatalf("AddToBufferQueues: %v %v", res, err)
	}
	bq, err := m1.GetBufferQueue(ctx, q)
	if err != nil || !slices.EqualFunc(bq, [][]byte{[]byte("2"), []byte("3")}, bytes.Equal) {
		t.Fatalf("GetBufferQueue: %q %v", bq, err)
	}
	if _, err := m2.AddToBufferQueues(ctx, []sm.BufferQueueParam{q}, nil); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Fatalf("AddToBufferQueues with fewer buffers: %v", err)
	}

	if cfg, err := m1.GetApplicationConfig(ctx, 1); err != nil || !slices.Equal(cfg, []uint32{2, 1770179696}) {
		t.Fatalf("GetApplicationConfig(1): %v %v", cfg, err)
	}
	if cfg, err := m1.GetApplicationConfig(ctx, 0); err != nil || len(cfg) != 0 {
		t.Fatalf("GetApplicationConfig of a table the operator did not set: %v %v", cfg, err)
	}
	if cfg, err := m1.GetApplicationConfigString(ctx, 0); err != nil || !slices.Equal(cfg, []string{"hello"}) {
		t.Fatalf("GetApplicationConfigString: %v %v", cfg, err)
	}
	def := newFixture(t, smm.Config{}).client(1001)
	if cfg, err := def.GetApplicationConfig(ctx, 0); err != nil || len(cfg) != 40 || cfg[10] != 100 {
		t.Fatalf("default GetApplicationConfig(0): %v %v", cfg, err)
	}

	if err := m2.SetDeletionReason(ctx, []uint64{a}, 5); !errors.Is(err, types.DataStorePermissionDenied) {
		t.Fatalf("SetDeletionReason by another: %v", err)
	}
	if err := m1.SetDeletionReason(ctx, []uint64{a}, 5); err != nil {
		t.Fatal(err)
	}
	if r, err := m2.GetDeletionReason(ctx, []uint64{a, b}); err != nil || !slices.Equal(r, []uint32{5, 0}) {
		t.Fatalf("GetDeletionReason: %v %v", r, err)
	}
	// A method of the variant the server does not answer.
	if _, _, err := m1.GetCustomRanking(ctx, sm.DataStoreGetCustomRankingParam{}); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("GetCustomRanking: %v", err)
	}
}

// TestAttachFile: PrepareAttachFile posts a file referring to a course, the
// body goes up over HTTP, CompleteAttachFile answers its URL, which serves
// the body, and GetObjectInfos answers the same place.
func TestAttachFile(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, smm.Config{})
	m := f.client(1001)
	a, err := m.PostMetaBinary(ctx, course("a", 7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.PrepareAttachFile(ctx, sm.DataStoreAttachFileParam{PostParam: course("t", 7), ReferDataID: 999}); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("PrepareAttachFile to a missing course: %v", err)
	}
	post := course("thumb", 7)
	post.Size = 5
	info, err := m.PrepareAttachFile(ctx, sm.DataStoreAttachFileParam{PostParam: post, ReferDataID: a, ContentType: "image/jpeg"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, kv := range info.Form {
		mw.WriteField(kv.Key, kv.Value)
	}
	fw, _ := mw.CreateFormFile("file", "thumb")
	fw.Write([]byte("thumb"))
	mw.Close()
	resp, err := http.Post(info.URL, mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("upload: %s", resp.Status)
	}
	url, err := m.CompleteAttachFile(ctx, ds.DataStoreCompletePostParam{DataID: info.DataID, Success: true})
	if err != nil || url == "" {
		t.Fatalf("CompleteAttachFile: %q %v", url, err)
	}
	resp, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "thumb" {
		t.Fatalf("attached file body %q (%s)", body, resp.Status)
	}
	mi, err := m.GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: info.DataID, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: datastore.NoPersistenceSlot}})
	if err != nil || uint64(mi.ReferDataID) != a {
		t.Fatalf("attached file's meta: %+v %v", mi, err)
	}
	infos, err := m.GetObjectInfos(ctx, []uint64{info.DataID})
	if err != nil || len(infos) != 1 || infos[0].DataID != info.DataID || infos[0].GetInfo.Size != 5 || infos[0].GetInfo.URL == "" {
		t.Fatalf("GetObjectInfos: %+v %v", infos, err)
	}
	if _, err := m.GetObjectInfos(ctx, []uint64{a}); !errors.Is(err, types.DataStoreOperationNotAllowed) {
		t.Fatalf("GetObjectInfos of a meta-only course: %v", err)
	}
}

// TestDeclaredMethods: every method DataStore_SMM declares (45-87) reaches
// the variant, the Methods answered and the others Core::NotImplemented, 46
// (GetMetaByOwnerId, which replaces DataStore's SearchObjectLight) among
// them; the Server alone answers the inherited methods (1-44) as the
// DataStore service does on the Mux.
func TestDeclaredMethods(t *testing.T) {
	f := newFixture(t, smm.Config{})
	alone := &rmc.InMemory{Handler: f.srv, Peer: &rmc.Peer{PID: 1002, Settings: types.Settings{StructureHeader: true}}}
	gametest.CheckDeclared(t, func(c rmc.Caller) any { return sm.NewDataStoreSMMClient(c) }, f.client(1001).C, alone, 45, 87, smm.Methods, sm.DataStoreSMMMethodName)
}

// friendPair makes a and b friends, and no one else.
type friendPair [2]types.PID

func (f friendPair) AreFriends(ctx context.Context, a, b types.PID) (bool, error) {
	return a != b && (a == f[0] || a == f[1]) && (b == f[0] || b == f[1]), nil
}

func (f friendPair) FriendsOf(ctx context.Context, pid types.PID) ([]types.PID, error) {
	switch pid {
	case f[0]:
		return []types.PID{f[1]}, nil
	case f[1]:
		return []types.PID{f[0]}, nil
	}
	return nil, nil
}

// TestGetMetaByOwnerId: method 46 finds the courses a player uploaded
// through the inherited DataStore methods, by owner, by data id, a page at a
// time with has_next, only those the caller may read (a private course only
// to its maker, a friends' course only to friends), filtered by data types;
// too many owners or data types, a parameter that does not decode and an
// unauthenticated caller are refused.
func TestGetMetaByOwnerId(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, smm.Config{})
	f.srv.DataStore.Friends = friendPair{1001, 1003}
	maker, stranger, friend := f.client(1001), f.client(1002), f.client(1003)
	post := func(name string, dataType uint16, perm uint8) uint64 {
		t.Helper()
		p := course(name, dataType)
		p.Permission.Permission = perm
		id, err := maker.PostMetaBinary(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := post("a", 7, datastore.PermissionEveryone)
	b := post("b", 7, datastore.PermissionEveryone)
	private := post("private", 7, datastore.PermissionOwner)
	friends := post("friends", 7, datastore.PermissionFriends)
	other := post("other type", 8, datastore.PermissionEveryone)
	if _, err := stranger.PostMetaBinary(ctx, course("stranger's", 7)); err != nil {
		t.Fatal(err)
	}
	ids := func(c sm.DataStoreSMMClient, p sm.DataStoreGetMetaByOwnerIdParam) ([]uint64, bool) {
		t.Helper()
		metas, more, err := c.GetMetaByOwnerId(ctx, p)
		if err != nil {
			t.Fatalf("GetMetaByOwnerId(%+v): %v", p, err)
		}
		var out []uint64
		for _, m := range metas {
			if m.OwnerID != 1001 {
				t.Fatalf("GetMetaByOwnerId(%+v): course %d of %d", p, m.DataID, m.OwnerID)
			}
			out = append(out, m.DataID)
		}
		return out, more
	}
	byMaker := func(size uint32, dataTypes ...uint16) sm.DataStoreGetMetaByOwnerIdParam {
		return sm.DataStoreGetMetaByOwnerIdParam{OwnerIDs: []uint32{1001}, DataTypes: dataTypes, ResultRange: common.ResultRange{Size: size}}
	}
	for _, c := range []struct {
		who  string
		c    sm.DataStoreSMMClient
		want []uint64
	}{
		{"maker", maker, []uint64{a, b, private, friends, other}},
		{"stranger", stranger, []uint64{a, b, other}},
		{"friend", friend, []uint64{a, b, friends, other}},
	} {
		if got, more := ids(c.c, byMaker(10)); !slices.Equal(got, c.want) || more {
			t.Errorf("the %s finds %v (more %v), want %v", c.who, got, more, c.want)
		}
	}
	if got, _ := ids(stranger, byMaker(10, 8)); !slices.Equal(got, []uint64{other}) {
		t.Errorf("data type 8: %v, want %v", got, []uint64{other})
	}
	if got, _ := ids(stranger, byMaker(10, 7, 8)); !slices.Equal(got, []uint64{a, b, other}) {
		t.Errorf("data types 7 and 8: %v", got)
	}
	p := byMaker(1, 7)
	p.ResultOption = datastore.ResultMetaBinary
	metas, more, err := stranger.GetMetaByOwnerId(ctx, p)
	if err != nil || len(metas) != 1 || !more || metas[0].DataID != a || string(metas[0].MetaBinary) != "a" {
		t.Fatalf("first page: %+v %v %v", metas, more, err)
	}
	p.ResultRange.Offset = 1
	if got, more := ids(stranger, p); !slices.Equal(got, []uint64{b}) || more {
		t.Errorf("second page: %v (more %v)", got, more)
	}
	if got, more := ids(stranger, sm.DataStoreGetMetaByOwnerIdParam{ResultRange: common.ResultRange{Size: 10}}); len(got) != 0 || more {
		t.Errorf("no owners: %v (more %v)", got, more)
	}

	many := make([]uint32, datastore.MaxBatch+1)
	if _, _, err := stranger.GetMetaByOwnerId(ctx, sm.DataStoreGetMetaByOwnerIdParam{OwnerIDs: many, ResultRange: common.ResultRange{Size: 10}}); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Errorf("%d owners: %v", len(many), err)
	}
	if _, _, err := stranger.GetMetaByOwnerId(ctx, byMaker(10, make([]uint16, datastore.MaxBatch+1)...)); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Errorf("%d data types: %v", datastore.MaxBatch+1, err)
	}
	in := &rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{PID: 1002, Settings: types.Settings{StructureHeader: true}}}
	if _, err := in.Call(ctx, ds.DataStoreProtocolID, sm.DataStoreSMMMethodGetMetaByOwnerId, []byte{1, 0, 0}); !errors.Is(err, types.DataStoreInvalidArgument) {
		t.Errorf("truncated parameter: %v", err)
	}
	anon := sm.NewDataStoreSMMClient(&rmc.InMemory{Handler: f.mux, Peer: &rmc.Peer{Settings: types.Settings{StructureHeader: true}}})
	if _, _, err := anon.GetMetaByOwnerId(ctx, byMaker(10)); !errors.Is(err, types.RendezVousNotAuthenticated) {
		t.Errorf("unauthenticated: %v", err)
	}
}
