package datastore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/s3test"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// fixture is a DataStore server on a SQLite store in dir, with its bodies
// in a directory (s3 nil) or in a bucket of a real S3 server.
type fixture struct {
	srv    *datastore.Server
	store  *accounts.Store
	dir    string
	blobs  string // the body directory, without S3
	s3     *s3test.Server
	bucket string
	mu     sync.Mutex
	clock  time.Time
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	f.clock = f.clock.Add(d)
	f.mu.Unlock()
}

func newFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	return openFixture(t, &fixture{dir: dir, blobs: filepath.Join(dir, "datastore"), clock: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)})
}

// newS3Fixture keeps the bodies in a new bucket of a new S3 server.
func newS3Fixture(t testing.TB, dir string) *fixture {
	t.Helper()
	s := s3test.Start(t)
	return openFixture(t, &fixture{dir: dir, s3: s, bucket: s.NewBucket(t), clock: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)})
}

// openFixture opens f's store and starts its server.
func openFixture(t testing.TB, f *fixture) *fixture {
	t.Helper()
	st, _, err := accounts.Open(context.Background(), f.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.store = st
	f.srv = &datastore.Server{Store: st.DataStore(), Blobs: f.newBlobs(t), Now: func() time.Time {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.clock
	}}
	ts := httptest.NewServer(f.srv.HTTPHandler())
	f.srv.BaseURL = ts.URL
	t.Cleanup(func() { ts.Close(); st.Close() })
	return f
}

// newBlobs opens f's bodies, as a CLI would: through OpenBlobs.
func (f *fixture) newBlobs(t testing.TB) datastore.Blobs {
	t.Helper()
	if f.s3 == nil {
		return datastore.DirBlobs{Dir: f.blobs}
	}
	c, err := datastore.ParseS3Config(f.s3.Spec(f.bucket), f.s3.Env())
	if err != nil {
		t.Fatal(err)
	}
	b, err := datastore.NewS3Blobs(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

// reopen is f after a restart: a new server on the same store and bodies.
func (f *fixture) reopen(t testing.TB) *fixture {
	t.Helper()
	f.store.Close()
	return openFixture(t, &fixture{dir: f.dir, blobs: f.blobs, s3: f.s3, bucket: f.bucket, clock: f.clock})
}

// bothBlobs runs a test with the bodies in a directory and in an S3 bucket.
func bothBlobs(t *testing.T, test func(t *testing.T, newFixture func(testing.TB, string) *fixture)) {
	t.Run("dir", func(t *testing.T) { test(t, newFixture) })
	t.Run("s3", func(t *testing.T) { test(t, newS3Fixture) })
}

func (f *fixture) client(pid types.PID) *datastore.Client {
	return &datastore.Client{C: &rmc.InMemory{Handler: f.srv, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true}}}}
}

func post(name string, perm uint8, tags ...string) datastore.PreparePostParam {
	return datastore.PreparePostParam{Name: name, DataType: 7, MetaBinary: []byte("meta:" + name),
		Permission: datastore.Permission{Permission: perm}, DelPermission: datastore.Permission{Permission: datastore.PermissionOwner},
		Period: 90, Tags: tags, PersistenceSlotID: datastore.NoPersistenceSlot,
		RatingInitParams: []datastore.RatingInitParam{{Slot: 0, InitialValue: 10, RangeMin: 1, RangeMax: 5}}}
}

func wantResult(t *testing.T, err error, want types.Result) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}

var noSlot = datastore.PersistenceTarget{SlotID: datastore.NoPersistenceSlot}

// bodies lists the bodies f keeps: the files under the body directory
// (temporary files too), or every key in the bucket (staged uploads too).
func (f *fixture) bodies(t *testing.T) []string {
	t.Helper()
	var out []string
	if f.s3 != nil {
		list, err := f.srv.Blobs.(datastore.Presigner).List(context.Background(), "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range list {
			out = append(out, b.Key)
		}
		slices.Sort(out)
		return out
	}
	dir := f.blobs
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func TestPostGetUpdateDelete(t *testing.T) { bothBlobs(t, testPostGetUpdateDelete) }

func testPostGetUpdateDelete(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, other := f.client(1001), f.client(1002)
	id, err := owner.Put(ctx, post("level", datastore.PermissionEveryone, "a", "b"), []byte("hello body"))
	if err != nil {
		t.Fatal(err)
	}
	mi, body, err := other.Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "hello body" || mi.OwnerID != 1001 || mi.Name != "level" || mi.Size != 10 || mi.DataType != 7 ||
		string(mi.MetaBinary) != "meta:level" || !slices.Equal(mi.Tags, []string{"a", "b"}) || len(mi.Ratings) != 1 ||
		mi.Ratings[0].TotalValue != 10 || mi.ExpireTime.Time().Sub(mi.CreatedTime.Time()) != 90*24*time.Hour {
		t.Fatalf("meta %+v body %q", mi, body)
	}
	if mi.ReferredCnt != 0 {
		t.Fatalf("referred count before a get: %d", mi.ReferredCnt)
	}
	mi, _ = owner.GetMeta(ctx, datastore.GetMetaParam{DataID: id, PersistenceTarget: noSlot})
	if mi.ReferredCnt != 1 || len(mi.Tags) != 0 || len(mi.MetaBinary) != 0 || len(mi.Ratings) != 0 {
		t.Fatalf("meta without options after one get: %+v", mi)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{"1/1"}) {
		t.Fatalf("bodies %v", got)
	}

	// Update: version 2 replaces version 1's body.
	info, err := owner.PrepareUpdateObject(ctx, id, 3, 0)
	if err != nil || info.Version != 2 {
		t.Fatalf("prepare update %+v %v", info, err)
	}
	if err := owner.Upload(ctx, info.URL, info.FormFields, []byte("v2!")); err != nil {
		t.Fatal(err)
	}
	if err := owner.CompleteUpdateObject(ctx, id, 2, true); err != nil {
		t.Fatal(err)
	}
	mi, body, err = other.Get(ctx, id, 0)
	if err != nil || string(body) != "v2!" || mi.Size != 3 {
		t.Fatalf("after update: %+v %q %v", mi, body, err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{"1/2"}) {
		t.Fatalf("bodies after update %v", got)
	}
	// Someone else may not update or delete it.
	_, err = other.PrepareUpdateObject(ctx, id, 3, 0)
	wantResult(t, err, types.DataStorePermissionDenied)
	wantResult(t, other.DeleteObject(ctx, id, 0), types.DataStorePermissionDenied)
	wantResult(t, other.DeleteObject(ctx, id, 12345), types.DataStoreInvalidPassword)
	// With the update password they may.
	_, update, err := owner.GetPasswordInfo(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.GetPasswordInfo(ctx, id); !errors.Is(err, types.DataStorePermissionDenied) {
		t.Fatalf("someone else's passwords: %v", err)
	}
	if err := other.DeleteObject(ctx, id, update); err != nil {
		t.Fatal(err)
	}
	_, _, err = owner.Get(ctx, id, 0)
	wantResult(t, err, types.DataStoreNotFound)
	if got := f.bodies(t); len(got) != 0 {
		t.Fatalf("bodies after delete %v", got)
	}
}

func TestPermissions(t *testing.T) { bothBlobs(t, testPermissions) }

func testPermissions(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, friend, stranger := f.client(1001), f.client(1002), f.client(1003)
	private, err := owner.Put(ctx, post("private", datastore.PermissionOwner), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	p := post("for 1002", datastore.PermissionRecipients)
	p.Permission.RecipientIDs = []types.PID{1002}
	shared, err := owner.Put(ctx, p, []byte("y"))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := owner.Put(ctx, post("friends", datastore.PermissionFriends), []byte("z"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *datastore.Client
		id   uint64
		pw   uint64
		want types.Result
	}{
		{"owner reads private", owner, private, 0, 0},
		{"stranger reads private", stranger, private, 0, types.DataStorePermissionDenied},
		{"wrong access password", stranger, private, 99, types.DataStoreInvalidPassword},
		{"recipient reads shared", friend, shared, 0, 0},
		{"stranger reads shared", stranger, shared, 0, types.DataStorePermissionDenied},
		{"no friend lists: friends-only is the owner's", friend, fr, 0, types.DataStorePermissionDenied},
		{"no such object", owner, 999, 0, types.DataStoreNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.c.Get(ctx, tc.id, tc.pw)
			if tc.want == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantResult(t, err, tc.want)
		})
	}
	// The access password opens a private object.
	access, _, _ := owner.GetPasswordInfo(ctx, private)
	if _, body, err := stranger.Get(ctx, private, access); err != nil || string(body) != "x" {
		t.Fatalf("with the access password: %q %v", body, err)
	}
	// A search shows each user what they may read, and nothing pending.
	if _, err := owner.PreparePostObject(ctx, post("pending", datastore.PermissionEveryone)); err != nil {
		t.Fatal(err)
	}
	search := datastore.SearchParam{DataType: datastore.AnyDataType, ResultSize: 10, TotalCountEnabled: true}
	for c, want := range map[*datastore.Client][]string{owner: {"private", "for 1002", "friends"}, friend: {"for 1002"}, stranger: nil} {
		res, err := c.SearchObject(ctx, search)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, mi := range res.Result {
			names = append(names, mi.Name)
		}
		if !slices.Equal(names, want) || res.TotalCount != uint32(len(want)) || res.TotalCountType != 0 {
			t.Fatalf("search: %v (total %d type %d), want %v", names, res.TotalCount, res.TotalCountType, want)
		}
	}
}

func TestUploadRefusals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	c := f.client(1001)
	p := post("x", datastore.PermissionEveryone)
	p.Size = 4
	info, err := c.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	// Completing before the body came is refused.
	wantResult(t, c.CompletePostObject(ctx, info.DataID, true), types.DataStoreOperationNotAllowed)
	for _, tc := range []struct {
		name   string
		body   []byte
		fields []datastore.KeyValue
		want   string
	}{
		{"over the declared size", []byte("12345"), info.FormFields, "413"},
		{"short of the declared size", []byte("123"), info.FormFields, "400"},
		{"another object's key", []byte("1234"), []datastore.KeyValue{{"key", "7/1"}}, "403"},
	} {
		if err := c.Upload(ctx, info.URL, tc.fields, tc.body); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.want)
		}
		if got := f.bodies(t); len(got) != 0 {
			t.Fatalf("%s: half-stored %v", tc.name, got)
		}
	}
	// Not multipart at all.
	resp, err := http.Post(info.URL, "application/octet-stream", strings.NewReader("1234"))
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("raw body: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	// The right body works once.
	if err := c.Upload(ctx, info.URL, info.FormFields, []byte("1234")); err != nil {
		t.Fatal(err)
	}
	if err := c.Upload(ctx, info.URL, info.FormFields, []byte("abcd")); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("second use: %v", err)
	}
	if err := c.CompletePostObject(ctx, info.DataID, true); err != nil {
		t.Fatal(err)
	}
	if _, body, err := c.Get(ctx, info.DataID, 0); err != nil || string(body) != "1234" {
		t.Fatalf("stored %q %v", body, err)
	}
	// An upload URL expires.
	info2, err := c.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	f.advance(datastore.DefaultURLTTL)
	if err := c.Upload(ctx, info2.URL, info2.FormFields, []byte("1234")); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("expired upload: %v", err)
	}
	// So does a download URL.
	g, err := c.PrepareGetObject(ctx, datastore.PrepareGetParam{DataID: info.DataID, PersistenceTarget: noSlot})
	if err != nil || g.DataID != info.DataID || g.Size != 4 {
		t.Fatalf("prepare get %+v %v", g, err)
	}
	f.advance(datastore.DefaultURLTTL)
	if _, err := c.Download(ctx, g.URL, 10); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("expired download: %v", err)
	}
	if _, err := c.Download(ctx, strings.Replace(g.URL, "signature=", "signature=00", 1), 10); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("forged download: %v", err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{"1/1"}) {
		t.Fatalf("bodies %v", got)
	}
	// Giving up deletes the pending object.
	if err := c.CompletePostObject(ctx, info2.DataID, false); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetMeta(ctx, datastore.GetMetaParam{DataID: info2.DataID, PersistenceTarget: noSlot})
	wantResult(t, err, types.DataStoreNotFound)
}

// raw calls a method with hand-written parameters.
func raw(f *fixture, pid types.PID, method uint32, params func(w *types.Writer)) ([]byte, error) {
	d := &rmc.InMemory{Handler: f.srv, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true}}}
	w := types.NewWriter(nil, d.Peer.Settings)
	params(&w)
	return d.Call(context.Background(), datastore.ProtocolID, method, w.B)
}

func TestChangeMetaRateSearchPeriod(t *testing.T) { bothBlobs(t, testChangeMetaRateSearchPeriod) }

func testChangeMetaRateSearchPeriod(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, other := f.client(1001), f.client(1002)
	a, _ := owner.Put(ctx, post("a", datastore.PermissionEveryone, "red"), []byte("1"))
	b, _ := owner.Put(ctx, post("b", datastore.PermissionEveryone, "red", "big"), []byte("2"))
	p := post("c", datastore.PermissionEveryone, "blue")
	p.DataType = 8
	c, _ := other.Put(ctx, p, []byte("3"))

	names := func(sp datastore.SearchParam) []string {
		t.Helper()
		res, err := other.SearchObject(ctx, sp)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, mi := range res.Result {
			out = append(out, mi.Name)
		}
		return out
	}
	any := datastore.SearchParam{DataType: datastore.AnyDataType, ResultSize: 10}
	s := any
	s.Tags = []string{"red"}
	if got := names(s); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("tag red: %v", got)
	}
	s.Tags = []string{"red", "big"}
	if got := names(s); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("tags red+big: %v", got)
	}
	s = any
	s.OwnerIDs = []types.PID{1002}
	if got := names(s); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("owner 1002: %v", got)
	}
	s = any
	s.DataType, s.ResultOrder = 7, 1
	if got := names(s); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("data type 7, descending: %v", got)
	}
	s = any
	s.ResultOffset, s.ResultSize, s.TotalCountEnabled = 1, 1, true
	res, _ := other.SearchObject(ctx, s)
	if len(res.Result) != 1 || res.Result[0].Name != "b" || res.TotalCount != 3 || res.TotalCountType != 1 {
		t.Fatalf("page 2: %+v", res)
	}

	// ChangeMeta: name and tags, checked against compareParam.
	change := datastore.ChangeMetaParam{DataID: a, ModifiesFlag: datastore.ModifyName | datastore.ModifyTags, Name: "a2", Tags: []string{"green"},
		Compare: datastore.CompareParam{ComparisonFlag: datastore.ModifyName, Name: "wrong"}, PersistenceTarget: noSlot}
	wantResult(t, owner.ChangeMeta(ctx, change), types.DataStoreValueNotEqual)
	change.Compare.Name = "a"
	wantResult(t, other.ChangeMeta(ctx, change), types.DataStorePermissionDenied)
	if err := owner.ChangeMeta(ctx, change); err != nil {
		t.Fatal(err)
	}
	s = any
	s.Tags = []string{"green"}
	if got := names(s); !slices.Equal(got, []string{"a2"}) {
		t.Fatalf("after ChangeMeta: %v", got)
	}
	s.Tags = []string{"red"}
	if got := names(s); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("old tag after ChangeMeta: %v", got)
	}

	// Ratings: within the slot's range, into its total.
	r, err := other.RateObject(ctx, b, 0, 4, 0)
	if err != nil || r.TotalValue != 14 || r.Count != 1 || r.InitialValue != 10 {
		t.Fatalf("rate: %+v %v", r, err)
	}
	_, err = other.RateObject(ctx, b, 0, 9, 0)
	wantResult(t, err, types.DataStoreInvalidArgument)
	_, err = other.RateObject(ctx, b, 3, 1, 0)
	wantResult(t, err, types.DataStoreNotFound)

	// Periods: 90 days, then DataStore::Expired; a refresh (0x40) extends.
	f.advance(89 * 24 * time.Hour)
	if err := owner.ChangeMeta(ctx, datastore.ChangeMetaParam{DataID: c, ModifiesFlag: datastore.ModifyUpdatedTime, PersistenceTarget: noSlot}); !errors.Is(err, types.DataStorePermissionDenied) {
		t.Fatalf("refresh of someone else's: %v", err)
	}
	if err := other.ChangeMeta(ctx, datastore.ChangeMetaParam{DataID: c, ModifiesFlag: datastore.ModifyUpdatedTime, PersistenceTarget: noSlot}); err != nil {
		t.Fatal(err)
	}
	f.advance(2 * 24 * time.Hour)
	_, _, err = other.Get(ctx, a, 0)
	wantResult(t, err, types.DataStoreExpired)
	if _, body, err := owner.Get(ctx, c, 0); err != nil || string(body) != "3" {
		t.Fatalf("refreshed object: %q %v", body, err)
	}
	if got := names(any); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("search after expiry: %v", got)
	}
}

func TestPersistenceAndV1(t *testing.T) { bothBlobs(t, testPersistenceAndV1) }

func testPersistenceAndV1(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	c := f.client(1001)
	p := post("save", datastore.PermissionEveryone)
	p.PersistenceSlotID = 3
	first, err := c.Put(ctx, p, []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := raw(f, 1002, datastore.MethodGetPersistenceInfo, func(w *types.Writer) { w.PID(1001); w.U16(3) })
	if err != nil || len(data) != 5+4+2+8 || data[len(data)-8] != byte(first) {
		t.Fatalf("persistence info %x %v", data, err)
	}
	p.DeleteLastObject = true
	second, err := c.Put(ctx, p, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetMeta(ctx, datastore.GetMetaParam{DataID: first, PersistenceTarget: noSlot})
	wantResult(t, err, types.DataStoreNotFound)
	mi, err := c.GetMeta(ctx, datastore.GetMetaParam{PersistenceTarget: datastore.PersistenceTarget{OwnerID: 1001, SlotID: 3}})
	if err != nil || mi.DataID != second {
		t.Fatalf("by slot: %+v %v", mi, err)
	}

	// The V1 methods: 32-bit ids, no persistence parameter.
	data, err = raw(f, 1001, datastore.MethodPreparePostObjectV1, func(w *types.Writer) {
		m := w.BeginStructure(0)
		w.U32(2)
		w.String("v1")
		w.U16(1)
		w.QBuffer(nil)
		for i := 0; i < 2; i++ {
			n := w.BeginStructure(0)
			w.U8(0)
			w.U32(0)
			w.EndStructure(n)
		}
		w.U32(0)
		w.U16(0)
		w.U32(0)
		w.U32(0)
		w.U32(0)
		w.EndStructure(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	r := types.NewReader(data, types.Settings{StructureHeader: true})
	m := r.EnterStructure("pReqPostInfo")
	id := r.U32("dataId")
	url := r.String("url")
	r.U32("headers")
	fields := types.ReadList(&r, "formFields", func(r *types.Reader, f string) datastore.KeyValue {
		m := r.EnterStructure(f)
		kv := datastore.KeyValue{Key: r.String("key"), Value: r.String("value")}
		r.LeaveStructure(m)
		return kv
	})
	r.Buffer("rootCaCert")
	r.LeaveStructure(m)
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if err := c.Upload(ctx, url, fields, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := raw(f, 1001, datastore.MethodCompletePostObjectV1, func(w *types.Writer) {
		m := w.BeginStructure(0)
		w.U32(id)
		w.Bool(true)
		w.EndStructure(m)
	}); err != nil {
		t.Fatal(err)
	}
	if _, body, err := c.Get(ctx, uint64(id), 0); err != nil || string(body) != "v1" {
		t.Fatalf("v1 object %q %v", body, err)
	}
}

func TestBadInput(t *testing.T) { bothBlobs(t, testBadInput) }

func testBadInput(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	c := f.client(1001)
	big := post("big", 0)
	big.Size = datastore.DefaultMaxObjectSize + 1
	_, err := c.PreparePostObject(ctx, big)
	wantResult(t, err, types.DataStoreInvalidArgument)
	meta := post("meta", 0)
	meta.MetaBinary = make([]byte, datastore.MaxMetaBinary+1)
	_, err = c.PreparePostObject(ctx, meta)
	wantResult(t, err, types.DataStoreInvalidArgument)
	perm := post("perm", 9)
	_, err = c.PreparePostObject(ctx, perm)
	wantResult(t, err, types.DataStoreInvalidArgument)
	_, err = raw(f, 1001, datastore.MethodGetMeta, func(w *types.Writer) { w.U64(1) })
	wantResult(t, err, types.DataStoreInvalidArgument)
	_, err = raw(f, 1001, datastore.MethodDeleteObject, func(w *types.Writer) {
		m := w.BeginStructure(0)
		w.U64(77)
		w.U64(0)
		w.EndStructure(m)
	})
	wantResult(t, err, types.DataStoreNotFound)
	_, err = raw(f, 1001, 47, func(w *types.Writer) {}) // past the page's methods (game extensions)
	wantResult(t, err, types.CoreNotImplemented)
	_, err = raw(f, 0, datastore.MethodGetPasswordInfo, func(w *types.Writer) { w.U64(1) })
	wantResult(t, err, types.RendezVousNotAuthenticated)
	// GetMetas answers per item.
	id, _ := c.Put(ctx, post("ok", 0), []byte("k"))
	data, err := raw(f, 1002, datastore.MethodGetMetas, func(w *types.Writer) {
		types.WriteList(w, []uint64{id, 555}, (*types.Writer).U64)
		m := w.BeginStructure(0)
		w.U64(0)
		n := w.BeginStructure(0)
		w.U32(0)
		w.U16(datastore.NoPersistenceSlot)
		w.EndStructure(n)
		w.U8(0)
		w.U64(0)
		w.EndStructure(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	r := types.NewReader(data, types.Settings{StructureHeader: true})
	infos := types.ReadList(&r, "pMetaInfo", func(r *types.Reader, f string) (v ds.DataStoreMetaInfo) { v.Read(r, f); return })
	results := types.ReadList(&r, "pResults", (*types.Reader).Result)
	if r.Done() != nil || len(infos) != 2 || infos[0].Name != "ok" || results[0] != types.ResultSuccess || results[1] != types.DataStoreNotFound {
		t.Fatalf("GetMetas %+v %v %v", infos, results, r.Err())
	}
}

func TestSurvivesRestart(t *testing.T) { bothBlobs(t, testSurvivesRestart) }

func testSurvivesRestart(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture(t, dir)
	id, err := f.client(1001).Put(ctx, post("kept", 0, "t"), []byte("persisted"))
	if err != nil {
		t.Fatal(err)
	}
	g := f.reopen(t)
	mi, body, err := g.client(1002).Get(ctx, id, 0)
	if err != nil || string(body) != "persisted" || !slices.Equal(mi.Tags, []string{"t"}) {
		t.Fatalf("after restart: %+v %q %v", mi, body, err)
	}
}

// TestUploadMultipartByHand posts the form as a browser would, fields after
// the file, to check the order does not matter.
func TestUploadMultipartByHand(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	c := f.client(1001)
	p := post("hand", 0)
	p.Size = 2
	info, err := c.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "x")
	fw.Write([]byte("hi"))
	for _, kv := range info.FormFields {
		mw.WriteField(kv.Key, kv.Value)
	}
	mw.Close()
	resp, err := http.Post(info.URL, mw.FormDataContentType(), &buf)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if err := c.CompletePostObject(ctx, info.DataID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.blobs, "1", "1")); err != nil {
		t.Fatal(err)
	}
}
