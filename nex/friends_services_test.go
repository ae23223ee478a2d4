package nex

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestFriendsKnownToGameServices: a game server sharing the friends server's
// store. Player 2030 and 2031 are friends (made through the friends server,
// 2031 accepting 2030's request); 2032 is a stranger. Ranking's friends mode
// gives 2030 only the two friends' scores, a DataStore object with the
// friends permission is readable by the friend and refused to the stranger,
// and a friend-only matchmake session is found and joined by the friend and
// neither found nor joined by the stranger.
func TestFriendsKnownToGameServices(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "data")
	store, _, err := accounts.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fstore := store.Friends()

	// The friends server (its own dialect), on the store.
	fcfg := prudp.Config{Dialect: prudp.NEXV0Friends, AccessKey: "ridfebb9"}
	faddr := startServer(t, &Server{Config: fcfg, Accounts: playerAccounts(), Friends: &friends.Server{Store: fstore}})
	a := friendsLogin(t, ctx, faddr, fcfg, 2030)
	b := friendsLogin(t, ctx, faddr, fcfg, 2031)
	req, _, err := a.v2.AddFriend(ctx, 2031)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.v2.AcceptFriendRequest(ctx, req.Message.FriendRequestID); err != nil {
		t.Fatal(err)
	}

	// The game server, sharing the store.
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	ds := &datastore.Server{Store: store.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(dir, "datastore")}, Friends: fstore}
	hs := httptest.NewServer(ds.HTTPHandler())
	defer hs.Close()
	ds.BaseURL = hs.URL
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	addr := startServer(t, &Server{Config: cfg, Accounts: playerAccounts(), Matchmaking: mm, FriendLists: fstore,
		Ranking: &ranking.Server{Store: store.Ranking(), Friends: fstore}, DataStore: ds})
	owner := login(t, ctx, addr, cfg, 2030)
	friend := login(t, ctx, addr, cfg, 2031)
	stranger := login(t, ctx, addr, cfg, 2032)

	t.Run("ranking friends filter", func(t *testing.T) {
		for i, p := range []*player{owner, friend, stranger} {
			rc := &ranking.Client{C: p.sess.RMC}
			if err := rc.UploadScore(ctx, ranking.ScoreData{Category: 5, Score: uint32(100 + 10*i)}, 0); err != nil {
				t.Fatal(err)
			}
		}
		rc := &ranking.Client{C: owner.sess.RMC}
		op := ranking.OrderParam{GroupIndex: ranking.NoGroup, Length: 10}
		res, err := rc.GetRanking(ctx, ranking.ModeFriendsAroundSelf, 5, op, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalCount != 2 || len(res.Data) != 2 || res.Data[0].PID != 2031 || res.Data[0].Order != 1 || res.Data[1].PID != 2030 || res.Data[1].Order != 2 {
			t.Fatalf("friends ranking: %+v", res)
		}
		global, err := rc.GetRanking(ctx, ranking.ModeGlobal, 5, op, 0, 0)
		if err != nil || global.TotalCount != 3 {
			t.Fatalf("global ranking: %+v %v", global, err)
		}
	})

	t.Run("datastore friends permission", func(t *testing.T) {
		dc := &datastore.Client{C: owner.sess.RMC}
		id, err := dc.Put(ctx, datastore.PreparePostParam{Name: "for friends", DataType: 1, PersistenceSlotID: datastore.NoPersistenceSlot,
			Flag:       0x08, // notify on post: the owner's friends are told
			Permission: datastore.Permission{Permission: datastore.PermissionFriends}}, []byte("friends only"))
		if err != nil {
			t.Fatal(err)
		}
		if _, body, err := (&datastore.Client{C: friend.sess.RMC}).Get(ctx, id, 0); err != nil || string(body) != "friends only" {
			t.Fatalf("the friend's read: %q %v", body, err)
		}
		if _, _, err := (&datastore.Client{C: stranger.sess.RMC}).Get(ctx, id, 0); !errors.Is(err, types.DataStorePermissionDenied) {
			t.Fatalf("the stranger's read: %v", err)
		}
		if ns, _, err := (&datastore.Client{C: friend.sess.RMC}).GetNewArrivedNotifications(ctx, 0, 10, false); err != nil || len(ns) != 1 || ns[0].DataID != id {
			t.Fatalf("the friend's new-arrival notifications: %+v %v", ns, err)
		}
		if ns, _, err := (&datastore.Client{C: stranger.sess.RMC}).GetNewArrivedNotifications(ctx, 0, 10, false); err != nil || len(ns) != 0 {
			t.Fatalf("the stranger's new-arrival notifications: %+v %v", ns, err)
		}
		// A search by owner finds it for the friend, not for the stranger.
		search := datastore.SearchParam{OwnerIDs: []types.PID{2030}, DataType: 1, ResultSize: 10}
		if res, err := (&datastore.Client{C: friend.sess.RMC}).SearchObject(ctx, search); err != nil || len(res.Result) != 1 || res.Result[0].DataID != id {
			t.Fatalf("the friend's search: %+v %v", res, err)
		}
		if res, err := (&datastore.Client{C: stranger.sess.RMC}).SearchObject(ctx, search); err != nil || len(res.Result) != 0 {
			t.Fatalf("the stranger's search: %+v %v", res, err)
		}
	})

	t.Run("friend-only matchmake session", func(t *testing.T) {
		ms := session4()
		ms.MatchmakeSystemType = matchmaking.SystemFriends
		gid, _, err := owner.mm.CreateMatchmakeSession(ctx, ms, "friends only", 1)
		if err != nil {
			t.Fatal(err)
		}
		crit := matchmaking.SearchCriteria{Attributes: []string{"", "", "", "", "", ""}, GameMode: "1", MatchmakeSystemType: "2"}
		rr := types.ResultRange{Size: 10}
		found, err := friend.mm.Browse(ctx, crit, rr)
		if err != nil || len(found) != 1 || found[0].ID != gid {
			t.Fatalf("the friend's browse: %+v %v", found, err)
		}
		if found, err := stranger.mm.Browse(ctx, crit, rr); err != nil || len(found) != 0 {
			t.Fatalf("the stranger's browse: %+v %v", found, err)
		}
		if _, err := stranger.mm.JoinMatchmakeSession(ctx, gid, "let me in"); !errors.Is(err, types.RendezVousNotFriend) {
			t.Fatalf("the stranger's join: %v", err)
		}
		if got, err := stranger.mm.AutoMatchmake(ctx, ms, "auto"); err != nil || got.ID == gid {
			t.Fatalf("the stranger's auto-matchmake: %+v %v (must not join the friends session)", got, err)
		}
		got, err := friend.mm.AutoMatchmake(ctx, ms, "auto")
		if err != nil || got.ID != gid {
			t.Fatalf("the friend's auto-matchmake: %+v %v, want gathering %d", got, err, gid)
		}
	})
}
