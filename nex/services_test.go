package nex

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/prudp"
)

// TestRankingAndDataStoreOverPRUDP serves Ranking and DataStore on the
// secure server and uses them after a real login: a score uploaded and read
// back, an object posted over HTTP and fetched.
func TestRankingAndDataStoreOverPRUDP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	store, _, err := accounts.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ds := &datastore.Server{Store: store.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(dir, "datastore")}}
	hs := httptest.NewServer(ds.HTTPHandler())
	defer hs.Close()
	ds.BaseURL = hs.URL
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	srv := &Server{Config: cfg, Ranking: &ranking.Server{Store: store.Ranking()}, DataStore: ds}
	addr := startServer(t, srv)
	sess, err := Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession(t, sess)

	rc := &ranking.Client{C: sess.RMC}
	if err := rc.UploadScore(ctx, ranking.ScoreData{Category: 3, Score: 1234, Groups: []byte{1}}, 0); err != nil {
		t.Fatal(err)
	}
	res, err := rc.GetRanking(ctx, ranking.ModeSelf, 3, ranking.OrderParam{GroupIndex: ranking.NoGroup, Length: 10}, 0, 0)
	if err != nil || len(res.Data) != 1 || res.Data[0].Score != 1234 || res.Data[0].PID != sess.PID || res.Data[0].Order != 1 {
		t.Fatalf("GetRanking: %+v %v", res, err)
	}

	dc := &datastore.Client{C: sess.RMC}
	p := datastore.PreparePostParam{Name: "x", DataType: 1, PersistenceSlotID: datastore.NoPersistenceSlot}
	id, err := dc.Put(ctx, p, []byte("body over http"))
	if err != nil {
		t.Fatal(err)
	}
	mi, body, err := dc.Get(ctx, id, 0)
	if err != nil || string(body) != "body over http" || mi.OwnerID != sess.PID {
		t.Fatalf("Get: %+v %q %v", mi, body, err)
	}
}
