package storetest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends/remote"
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// DataStoreFriendsSource runs DataStore searches on a store made by open
// with the friend lists of a friends server elsewhere (remote.Source over an
// HTTP source on 127.0.0.1, --friends-source): the store keeps no
// friendship, yet the owner's friend finds the owner's friends-permission
// object in SearchObject and a stranger does not. A source that fails leaves
// the friend's search working, without the friends' objects.
func DataStoreFriendsSource(t *testing.T, open func(t *testing.T) datastore.Store) {
	ctx := context.Background()
	const owner, friend, stranger = 2101, 2102, 2103
	lists := map[string][]uint64{"2101": {friend}, "2102": {owner, 2199}}
	var failing atomic.Bool
	var asked atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		fs, ok := lists[r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(remote.HTTPAnswer{Friends: fs})
	})
	hs := httptest.NewServer(h) // on 127.0.0.1
	t.Cleanup(hs.Close)
	// TTL -1: every search asks the source (the failure below is seen).
	src, err := remote.Open(hs.URL+"/friends", remote.Options{TTL: -1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })

	store := open(t)
	now := time.Now()
	post := func(name string, perm uint8) uint64 {
		o := &datastore.Object{Owner: owner, Name: name, DataType: 7, Permission: datastore.Permission{Permission: perm},
			DelPermission: datastore.Permission{Permission: datastore.PermissionOwner}, Created: now, Updated: now, Referred: now,
			PersistenceSlot: datastore.NoPersistenceSlot, Version: 1}
		if _, err := store.CreateObject(ctx, o, false); err != nil {
			t.Fatal(err)
		}
		return o.DataID
	}
	public, forFriends := post("public", datastore.PermissionEveryone), post("friends", datastore.PermissionFriends)
	post("private", datastore.PermissionOwner)
	srv := &datastore.Server{Store: store, Friends: src, Blobs: datastore.DirBlobs{Dir: t.TempDir()}, BaseURL: "http://127.0.0.1/"}
	hd, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	search := func(t *testing.T, viewer types.PID, owners ...types.PID) ([]uint64, uint32) {
		t.Helper()
		res, err := hd.SearchObject(ctx, &rmc.Call{Peer: &rmc.Peer{PID: viewer}}, ds.DataStoreSearchParam{OwnerIDs: owners,
			DataType: datastore.AnyDataType, ResultRange: common.ResultRange{Size: 10}, TotalCountEnabled: true})
		if err != nil {
			t.Fatalf("PID %d's search: %v", viewer, err)
		}
		var ids []uint64
		for _, m := range res.Result {
			ids = append(ids, m.DataID)
		}
		return ids, res.TotalCount
	}
	for _, tc := range []struct {
		name   string
		viewer types.PID
		owners []types.PID
		want   []uint64
	}{
		{"friend", friend, nil, []uint64{public, forFriends}},
		{"friend, by owner", friend, []types.PID{owner}, []uint64{public, forFriends}},
		{"friend, by another owner", friend, []types.PID{2199}, nil},
		{"stranger", stranger, nil, []uint64{public}},
		{"stranger, by owner", stranger, []types.PID{owner}, []uint64{public}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, total := search(t, tc.viewer, tc.owners...)
			if !slices.Equal(ids, tc.want) || total != uint32(len(tc.want)) {
				t.Fatalf("found %v (total %d), want %v", ids, total, tc.want)
			}
		})
	}
	t.Run("the friend reads it by id", func(t *testing.T) {
		if _, err := hd.GetMeta(ctx, &rmc.Call{Peer: &rmc.Peer{PID: friend}}, ds.DataStoreGetMetaParam{DataID: forFriends}); err != nil {
			t.Fatalf("friend's GetMeta: %v", err)
		}
		if _, err := hd.GetMeta(ctx, &rmc.Call{Peer: &rmc.Peer{PID: stranger}}, ds.DataStoreGetMetaParam{DataID: forFriends}); err == nil {
			t.Fatal("the stranger read the friends' object")
		}
	})
	t.Run("source down", func(t *testing.T) {
		failing.Store(true)
		defer failing.Store(false)
		if ids, _ := search(t, friend); !slices.Equal(ids, []uint64{public}) {
			t.Fatalf("with the source down the friend found %v, want only %d", ids, public)
		}
	})
	if _, total := search(t, owner); total != 3 {
		t.Fatalf("the owner finds %d objects, want 3 (public, friends, private)", total)
	}
	// A search of one's own objects does not ask the source.
	before := asked.Load()
	if _, total := search(t, owner, owner); total != 3 || asked.Load() != before {
		t.Fatalf("the owner's search of its own objects: %d objects, %d requests to the source", total, asked.Load()-before)
	}
}
