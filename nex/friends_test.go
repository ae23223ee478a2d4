package nex

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/protocols/account"
	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	nn "github.com/gamewire/gamewire/nex/protocols/nintendonotification"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// console is a friends-server client: a 3DS (Friends_V1) or Wii U
// (Friends_V2) login with its NintendoNotification events.
type console struct {
	sess   *Session
	v1     fp.FriendsV1Client
	v2     fp.FriendsV2Client
	events chan nn.NintendoNotificationEvent
}

type notifSink struct {
	ch chan nn.NintendoNotificationEvent
}

func (n notifSink) ProcessNintendoNotificationEvent(_ context.Context, _ *rmc.Call, ev nn.NintendoNotificationEvent) error {
	n.ch <- ev
	return rmc.ErrNoResponse
}

func (n notifSink) ProcessNintendoNotificationEventAlt(ctx context.Context, c *rmc.Call, ev nn.NintendoNotificationEvent) error {
	return n.ProcessNintendoNotificationEvent(ctx, c, ev)
}

func friendsLogin(t *testing.T, ctx context.Context, addr string, cfg prudp.Config, pid int) *console {
	t.Helper()
	c := &console{events: make(chan nn.NintendoNotificationEvent, 64)}
	mux := rmc.NewMux()
	nn.RegisterNintendoNotification(mux, notifSink{c.events})
	sess, err := Login(ctx, addr, LoginConfig{User: fmt.Sprint(pid), Password: "pw", Config: cfg, Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSession(t, sess) })
	c.sess, c.v1, c.v2 = sess, fp.FriendsV1Client{C: sess.RMC}, fp.FriendsV2Client{C: sess.RMC}
	return c
}

// friendsStore opens a fresh SQLite store, closed when t ends, and returns
// it with the friends server's PRUDP configuration.
func friendsStore(t *testing.T, ctx context.Context) (*accounts.Store, prudp.Config) {
	t.Helper()
	store, _, err := accounts.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, prudp.Config{Dialect: prudp.NEXV0Friends, AccessKey: "ridfebb9"}
}

// next waits for the next event of a type, skipping others.
func (c *console) next(t *testing.T, typ uint32) nn.NintendoNotificationEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-c.events:
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("PID %d: no notification %d", c.sess.PID, typ)
		}
	}
}

// TestFriendsServer3DSAndWiiU: a 3DS and a Wii U on one friends server add
// each other (the 3DS by friend code, the Wii U accepting its request), see
// each other's presence change through notifications, read comments and
// favourite games, and end with a removal and a block; the state is in the
// store after a restart.
func TestFriendsServer3DSAndWiiU(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "data")
	store, _, err := accounts.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := prudp.Config{Dialect: prudp.NEXV0Friends, AccessKey: "ridfebb9"}
	srv := &Server{Config: cfg, Accounts: playerAccounts(), Friends: &friends.Server{Store: store.Friends()}}
	addr := startServer(t, srv)

	wiiu := friendsLogin(t, ctx, addr, cfg, 2001)
	ds := friendsLogin(t, ctx, addr, cfg, 2002)
	_, _, fl, sent, recv, bl, _, _, _, err := wiiu.v2.UpdateAndGetAllInformation(ctx,
		fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: 2001, NNID: "wiiu-player", Mii: fp.MiiV2{Name: "WiiU", Data: []byte{1, 2}}}},
		fp.NintendoPresenceV2{GameKey: fp.GameKey{TitleID: 0x0005000010101000}, Message: "menu"}, types.MakeDateTime(2000, 1, 2, 0, 0, 0))
	if err != nil || len(fl)+len(sent)+len(recv)+len(bl) != 0 {
		t.Fatalf("UpdateAndGetAllInformation: %v %v %v %v %v", fl, sent, recv, bl, err)
	}
	if err := ds.v1.UpdateMii(ctx, fp.Mii{Name: "3DS", MiiData: []byte{9}}); err != nil {
		t.Fatal(err)
	}
	if err := ds.v1.UpdatePresence(ctx, fp.NintendoPresence{GameKey: fp.GameKey{TitleID: 0x0004000000030800}}, false); err != nil {
		t.Fatal(err)
	}

	// The 3DS adds the Wii U's friend code: a request the Wii U is told of.
	rel, err := ds.v1.AddFriendByPrincipalId(ctx, 0, 2001)
	if err != nil || rel.PID != 2001 || rel.IsComplete != 0 || rel.FriendCode != friends.FriendCode(2001) {
		t.Fatalf("AddFriendByPrincipalId: %+v %v", rel, err)
	}
	ev := wiiu.next(t, friends.EventWiiURequest)
	req, ok := ev.Data.Object.(*fp.FriendRequest)
	if !ok || ev.PID != 2002 || req.PrincipalInfo.Mii.Name != "3DS" {
		t.Fatalf("request notification: %+v", ev)
	}
	info, err := wiiu.v2.AcceptFriendRequest(ctx, req.Message.FriendRequestID)
	if err != nil || info.NnaInfo.PrincipalInfo.PID != 2002 || !info.Presence.IsOnline || info.Presence.GameKey.TitleID != 0x0004000000030800 {
		t.Fatalf("AcceptFriendRequest: %+v %v", info, err)
	}
	if ev := ds.next(t, friends.Event3DSFriended); ev.PID != 2001 {
		t.Fatalf("friended notification: %+v", ev)
	}
	all, err := ds.v1.GetAllFriends(ctx)
	if err != nil || len(all) != 1 || all[0].PID != 2001 || all[0].IsComplete != 1 {
		t.Fatalf("GetAllFriends: %+v %v", all, err)
	}

	// Presence, comment and favourite game reach the other.
	if err := ds.v1.UpdatePresence(ctx, fp.NintendoPresence{GameKey: fp.GameKey{TitleID: 0x0004000000055D00}, GameModeDescription: "racing"}, false); err != nil {
		t.Fatal(err)
	}
	ev = wiiu.next(t, friends.EventWiiUPresence)
	if p, ok := ev.Data.Object.(*fp.NintendoPresenceV2); !ok || !p.IsOnline || p.GameKey.TitleID != 0x0004000000055D00 || p.Message != "racing" {
		t.Fatalf("presence notification to the Wii U: %+v", ev.Data.Object)
	}
	if err := wiiu.v2.UpdatePresence(ctx, fp.NintendoPresenceV2{GameKey: fp.GameKey{TitleID: 0x000500001010EC00}, GatheringID: 77}); err != nil {
		t.Fatal(err)
	}
	ev = ds.next(t, friends.Event3DSPresence)
	if p, ok := ev.Data.Object.(*fp.NintendoPresence); !ok || p.GameKey.TitleID != 0x000500001010EC00 || p.JoinGroupID != 77 {
		t.Fatalf("presence notification to the 3DS: %+v", ev.Data.Object)
	}
	if _, err := wiiu.v2.UpdateComment(ctx, fp.Comment{Text: "hello from the Wii U"}); err != nil {
		t.Fatal(err)
	}
	if err := ds.v1.UpdateComment(ctx, "hello from the 3DS"); err != nil {
		t.Fatal(err)
	}
	if err := ds.v1.UpdateFavoriteGameKey(ctx, fp.GameKey{TitleID: 0x0004000000086300, TitleVersion: 2}); err != nil {
		t.Fatal(err)
	}
	comments, err := ds.v1.GetFriendComment(ctx, []fp.FriendKey{{Unk1: 2001}})
	if err != nil || len(comments) != 1 || comments[0].Comment != "hello from the Wii U" {
		t.Fatalf("GetFriendComment: %+v %v", comments, err)
	}
	_, _, fl, _, _, _, _, _, _, err = wiiu.v2.UpdateAndGetAllInformation(ctx, fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: 2001, NNID: "wiiu-player"}},
		fp.NintendoPresenceV2{}, 0)
	if err != nil || len(fl) != 1 || fl[0].Comment.Text != "hello from the 3DS" || fl[0].NnaInfo.PrincipalInfo.Mii.Name != "3DS" {
		t.Fatalf("Wii U friend list: %+v %v", fl, err)
	}
	pi, err := wiiu.v1.GetFriendPersistentInfo(ctx, []types.PID{2002})
	if err != nil || len(pi) != 1 || pi[0].GameKey.TitleID != 0x0004000000086300 || pi[0].Message != "hello from the 3DS" {
		t.Fatalf("GetFriendPersistentInfo: %+v %v", pi, err)
	}
	// A stranger reads nothing of them.
	stranger := friendsLogin(t, ctx, addr, cfg, 2003)
	if got, err := stranger.v1.GetFriendComment(ctx, []fp.FriendKey{{Unk1: 2001}, {Unk1: 2002}}); err != nil || len(got) != 0 {
		t.Fatalf("a stranger's GetFriendComment: %+v %v", got, err)
	}

	// Removal, then a block: the 3DS's request is refused.
	if err := wiiu.v2.RemoveFriend(ctx, 2002); err != nil {
		t.Fatal(err)
	}
	if _, err := wiiu.v2.AddBlackList(ctx, fp.BlacklistedPrincipal{PrincipalInfo: fp.PrincipalBasicInfo{PID: 2002}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.v1.AddFriendByPrincipalId(ctx, 0, 2001); !errors.Is(err, types.FPDFriendRequestBlocked) {
		t.Fatalf("a blocked player's request: %v", err)
	}
	if err := wiiu.v2.RemoveBlackList(ctx, 2002); err != nil {
		t.Fatal(err)
	}
	if err := wiiu.v2.RemoveBlackList(ctx, 2002); !errors.Is(err, types.FPDNotInMyBlacklist) {
		t.Fatalf("RemoveBlackList twice: %v", err)
	}

	// Friends again; the 3DS leaving reaches the Wii U.
	if _, err := ds.v1.AddFriendByPrincipalId(ctx, 0, 2001); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wiiu.v2.AddFriend(ctx, 2002); err != nil {
		t.Fatal(err)
	}
	closeSession(t, ds.sess)
	if ev := wiiu.next(t, friends.EventOffline); ev.PID != 2002 {
		t.Fatalf("offline notification: %+v", ev)
	}

	// What the store keeps survives a restart of the server.
	closeSession(t, wiiu.sess)
	srv.Close()
	srv2 := &Server{Config: cfg, Accounts: playerAccounts(), Friends: &friends.Server{Store: store.Friends()}}
	addr2 := startServer(t, srv2)
	again := friendsLogin(t, ctx, addr2, cfg, 2002)
	all, err = again.v1.GetAllFriends(ctx)
	if err != nil || len(all) != 1 || all[0].PID != 2001 || all[0].IsComplete != 1 {
		t.Fatalf("GetAllFriends after a restart: %+v %v", all, err)
	}
}

// TestFriendsServerLimits: limits refused with the protocol's own codes.
func TestFriendsServerLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, cfg := friendsStore(t, ctx)
	// A fixed clock: the rate window must not roll over mid-test.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fs := &friends.Server{Store: store.Friends(), Limits: friends.Limits{MaxFriends: 2}, RequestRate: 3, Now: func() time.Time { return t0 }}
	addr := startServer(t, &Server{Config: cfg, Accounts: playerAccounts(), Friends: fs})
	a := friendsLogin(t, ctx, addr, cfg, 2010)
	long := make([]byte, friends.MaxComment+1)
	for i := range long {
		long[i] = 'x'
	}
	if err := a.v1.UpdateComment(ctx, string(long)); !errors.Is(err, types.FPDSizeLimitExceeded) {
		t.Fatalf("a long comment: %v", err)
	}
	if err := a.v1.UpdatePresence(ctx, fp.NintendoPresence{ApplicationData: make([]byte, friends.MaxAppData+1)}, false); !errors.Is(err, types.FPDSizeLimitExceeded) {
		t.Fatalf("large presence data: %v", err)
	}
	for _, pid := range []types.PID{2011, 2012, 2013} {
		if _, err := a.v1.AddFriendByPrincipalId(ctx, 0, pid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.v1.AddFriendByPrincipalId(ctx, 0, 2014); !errors.Is(err, types.FPDRequestLimitExceed) {
		t.Fatalf("a fourth request within the rate window: %v", err)
	}
	for _, pid := range []int{2011, 2012, 2013} {
		b := friendsLogin(t, ctx, addr, cfg, pid)
		_, err := b.v1.AddFriendByPrincipalId(ctx, 0, 2010)
		if pid == 2013 {
			if !errors.Is(err, types.FPDMyFriendListLimitExceed) {
				t.Fatalf("a third friend beyond a list of 2: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.v1.GetFriendMii(ctx, make([]fp.FriendKey, friends.MaxListParam+1)); !errors.Is(err, types.FPDInvalidArgument) {
		t.Fatalf("an oversized list parameter: %v", err)
	}

	// AccountManagement's NintendoCreateAccount: the caller's PID and its
	// PID HMAC (HMAC-MD5 keyed with the key sent, over the PID's bytes).
	ac := account.AccountClient{C: a.sess.RMC}
	pid, sum, err := ac.NintendoCreateAccount(ctx, "2010", "console-key", 0, "", types.AnyData{Object: &fp.AccountExtraInfo{Token: "t"}})
	m := hmac.New(md5.New, []byte("console-key"))
	m.Write([]byte{0xDA, 0x07, 0, 0}) // 2010, little-endian
	if err != nil || pid != 2010 || sum != hex.EncodeToString(m.Sum(nil)) {
		t.Fatalf("NintendoCreateAccount: %d %q %v", pid, sum, err)
	}
	if _, _, err := ac.NintendoCreateAccount(ctx, "2010", "", 0, "", types.AnyData{}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("NintendoCreateAccount without a key: %v", err)
	}
}
