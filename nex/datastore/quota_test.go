package datastore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/types"
)

// TestQuotaAndSweep: one player cannot grow the store past its quota
// (objects, pending posts, bytes; DataStore::OverCapacity, over RMC), and
// the posts it prepared and abandoned, one with its body uploaded, are
// gone with their rows, bodies and staged uploads once their upload window
// and the grace have passed on the server's (injected) clock; then the
// player has room again.
func TestQuotaAndSweep(t *testing.T) { bothBlobs(t, testQuotaAndSweep) }

func testQuotaAndSweep(t *testing.T, newFixture func(testing.TB, string) *fixture) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	const bytesQuota = 24 << 10
	f.srv.Store.(interface{ SetQuota(quota.Quota) }).SetQuota(quota.Quota{Objects: 6, Pending: 3, Bytes: bytesQuota})
	me, other := f.client(1001), f.client(1002)

	// Three posts prepared and abandoned; the first with its body uploaded.
	var abandoned []uint64
	for i := range 3 {
		p := post("abandoned", datastore.PermissionEveryone)
		p.Size = 100
		info, err := me.PreparePostObject(ctx, p)
		if err != nil {
			t.Fatalf("prepare %d: %v", i, err)
		}
		abandoned = append(abandoned, info.DataID)
		if i == 0 {
			if err := me.Upload(ctx, info.URL, info.FormFields, make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := post("fourth", datastore.PermissionEveryone)
	p.Size = 100
	_, err := me.PreparePostObject(ctx, p)
	wantResult(t, err, types.DataStoreOverCapacity)

	// Meta binaries of 16 KiB until the bytes run out: the first fits, the
	// second would pass 24 KiB; a hundred more tries change nothing.
	big := post("meta", datastore.PermissionEveryone)
	big.MetaBinary = make([]byte, 16<<10)
	if _, err := me.PostMetaBinary(ctx, big); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		_, err := me.PostMetaBinary(ctx, big)
		wantResult(t, err, types.DataStoreOverCapacity)
	}
	small := post("small", datastore.PermissionEveryone)
	for range 2 {
		if _, err := me.PostMetaBinary(ctx, small); err != nil {
			t.Fatal(err)
		}
	}
	_, err = me.PostMetaBinary(ctx, small)
	wantResult(t, err, types.DataStoreOverCapacity) // the seventh object
	u, err := f.srv.Store.Usage(ctx, 1001)
	if err != nil || u.Objects != 6 || u.Pending != 3 || u.Bytes > bytesQuota {
		t.Fatalf("usage %+v %v, want 6 objects, 3 pending, at most %d bytes", u, err, bytesQuota)
	}
	if _, err := other.PostMetaBinary(ctx, big); err != nil {
		t.Fatalf("another player: %v", err)
	}

	// Within the window and the grace nothing goes.
	f.advance(datastore.DefaultURLTTL + datastore.DefaultPendingGrace - time.Second)
	if st, err := f.srv.Sweep(ctx); err != nil || st.Pending != 0 {
		t.Fatalf("sweep within the window: %+v %v", st, err)
	}
	if got := f.bodies(t); len(got) != 1 {
		t.Fatalf("the uploaded body before the sweep: %v", got)
	}
	// After it, the three posts go: rows, uploads and the body.
	f.advance(2 * time.Second)
	st, err := f.srv.Sweep(ctx)
	if err != nil || st.Pending != 3 {
		t.Fatalf("sweep: %+v %v, want 3 pending posts", st, err)
	}
	for _, id := range abandoned {
		if _, err := f.srv.Store.Object(ctx, id); !errors.Is(err, datastore.ErrNotFound) {
			t.Errorf("abandoned post %d after the sweep: %v", id, err)
		}
	}
	if got := f.bodies(t); len(got) != 0 {
		t.Fatalf("bodies after the sweep: %v", got)
	}
	if u, err := f.srv.Store.Usage(ctx, 1001); err != nil || u.Objects != 3 || u.Pending != 0 {
		t.Fatalf("usage after the sweep %+v %v", u, err)
	}
	// Room again.
	if _, err := me.Put(ctx, post("again", datastore.PermissionEveryone), []byte("body")); err != nil {
		t.Fatalf("a post after the sweep: %v", err)
	}
}

// TestSweepRemovesStaleTempFiles: a temporary upload file a killed process
// left in the body directory goes with the next sweep (serve sweeps at
// start); one written within the last minute stays.
func TestSweepRemovesStaleTempFiles(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	if err := os.MkdirAll(f.blobs, 0o700); err != nil {
		t.Fatal(err)
	}
	stale, fresh := filepath.Join(f.blobs, ".upload-123"), filepath.Join(f.blobs, ".upload-456")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("part of a body"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * datastore.StaleTemp)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	st, err := f.srv.Sweep(ctx)
	if err != nil || st.TempFiles != 1 {
		t.Fatalf("sweep %+v %v, want 1 temporary file", st, err)
	}
	if got := f.bodies(t); !slices.Equal(got, []string{".upload-456"}) {
		t.Fatalf("left %v, want only the fresh temporary file", got)
	}
}

// gateBlobs holds every Put until release is closed, saying on entered
// that one began: uploads caught in the middle.
type gateBlobs struct {
	datastore.DirBlobs
	entered chan struct{}
	release chan struct{}
}

func (g gateBlobs) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	g.entered <- struct{}{}
	<-g.release
	return g.DirBlobs.Put(ctx, key, r, size)
}

// TestUploadCaps: the endpoint receives at most MaxPlayerUploads uploads
// of one player's objects at once, and MaxUploads in all: one more is
// refused with 429 Too Many Requests while the others are in progress, and
// every upload in progress completes.
func TestUploadCaps(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	g := gateBlobs{DirBlobs: datastore.DirBlobs{Dir: f.blobs}, entered: make(chan struct{}, 8), release: make(chan struct{})}
	f.srv.Blobs, f.srv.MaxPlayerUploads, f.srv.MaxUploads = g, 2, 3
	prepare := func(c *datastore.Client) datastore.ReqPostInfo {
		t.Helper()
		p := post("level", datastore.PermissionEveryone)
		p.Size = 4
		info, err := c.PreparePostObject(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	a, b, c := f.client(1001), f.client(1002), f.client(1003)
	infos := []datastore.ReqPostInfo{prepare(a), prepare(a), prepare(a), prepare(b), prepare(c)}
	errs := make(chan error, 5)
	start := func(cl *datastore.Client, info datastore.ReqPostInfo) {
		go func() { errs <- cl.Upload(ctx, info.URL, info.FormFields, []byte("body")) }()
		<-g.entered
	}
	start(a, infos[0])
	start(a, infos[1])
	if err := a.Upload(ctx, infos[2].URL, infos[2].FormFields, []byte("body")); err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("a third upload of one player's: %v, want 429", err)
	}
	start(b, infos[3])
	if err := c.Upload(ctx, infos[4].URL, infos[4].FormFields, []byte("body")); err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("a fourth upload in all: %v, want 429", err)
	}
	close(g.release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("an upload in progress: %v", err)
		}
	}
	// The slots are free again: the refused ones go through now.
	for i, cl := range map[int]*datastore.Client{2: a, 4: c} {
		if err := cl.Upload(ctx, infos[i].URL, infos[i].FormFields, []byte("body")); err != nil {
			t.Fatalf("upload %d after the others: %v", i, err)
		}
	}
}

// TestSweepOrphanStaged: on object storage, a staged upload whose upload
// row is gone (a crash between the two) is deleted by the sweep once it is
// older than the grace, a staged upload of an open upload is kept, and one
// that arrived within the grace is kept.
func TestSweepOrphanStaged(t *testing.T) {
	ctx := context.Background()
	f := newS3Fixture(t, t.TempDir())
	me := f.client(1001)
	p := post("open", datastore.PermissionEveryone)
	p.Size = 4
	// The server's clock just ahead of the storage's, so that what the
	// storage took is "before" it.
	f.mu.Lock()
	f.clock = time.Now().Add(time.Minute)
	f.mu.Unlock()
	info, err := me.PreparePostObject(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := me.Upload(ctx, info.URL, info.FormFields, []byte("body")); err != nil {
		t.Fatal(err)
	}
	orphan := "uploads/999/1/0123456789abcdef0123456789abcdef"
	if err := f.srv.Blobs.Put(ctx, orphan, strings.NewReader("lost"), 4); err != nil {
		t.Fatal(err)
	}
	if st, err := f.srv.Sweep(ctx); err != nil || st.Staged != 0 {
		t.Fatalf("sweep within the grace: %+v %v", st, err)
	}
	f.advance(datastore.DefaultPendingGrace + time.Minute)
	st, err := f.srv.Sweep(ctx)
	if err != nil || st.Staged != 1 || st.Pending != 0 {
		t.Fatalf("sweep: %+v %v, want the orphan only", st, err)
	}
	got := f.bodies(t)
	if len(got) != 1 || !strings.HasPrefix(got[0], fmt.Sprintf("uploads/%d/1/", info.DataID)) {
		t.Fatalf("left %v, want the open upload's staged body", got)
	}
}
