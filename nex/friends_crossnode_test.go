package nex

import (
	"context"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	"github.com/gamewire/gamewire/prudp"
)

// TestFriendsAcrossNodes: two secure nodes share one store; a Wii U player
// on node 1 and a 3DS player on node 2 become friends and hear each other's
// request, friendship, presence, an invitation and going offline through the
// store's mailbox.
func TestFriendsAcrossNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, mm := sharedStore(t, ctx, 3200, 3201)
	cfg := fastFail(prudp.Config{Dialect: prudp.NEXV0Friends, AccessKey: "ridfebb9"})
	const beat = 100 * time.Millisecond
	for range 2 {
		startRole(t, &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat,
			Matchmaking: mm, NodeCapacity: 1, Friends: &friends.Server{Store: store.Friends()}})
	}
	addr := startRole(t, &Server{Role: RoleAuth, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ns, _ := store.Nodes(ctx); len(ns) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the secure nodes did not register")
		}
	}
	wiiu := friendsLogin(t, ctx, addr, cfg, 3200)
	time.Sleep(3 * beat) // node 1's heartbeat reports its connection: the 3DS goes to node 2
	ds := friendsLogin(t, ctx, addr, cfg, 3201)
	if wiiu.sess.SecureURL.String() == ds.sess.SecureURL.String() {
		t.Fatalf("both players on %s", wiiu.sess.SecureURL)
	}
	if _, _, _, _, _, _, _, _, _, err := wiiu.v2.UpdateAndGetAllInformation(ctx, fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: 3200}},
		fp.NintendoPresenceV2{}, 0); err != nil {
		t.Fatal(err)
	}
	if err := ds.v1.UpdatePresence(ctx, fp.NintendoPresence{GameKey: fp.GameKey{TitleID: 0x0004000000030800}}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.v1.AddFriendByPrincipalId(ctx, 0, 3200); err != nil {
		t.Fatal(err)
	}
	req, ok := wiiu.next(t, friends.EventWiiURequest).Data.Object.(*fp.FriendRequest)
	if !ok {
		t.Fatal("the request event carries no FriendRequest")
	}
	if _, err := wiiu.v2.AcceptFriendRequest(ctx, req.Message.FriendRequestID); err != nil {
		t.Fatal(err)
	}
	if ev := ds.next(t, friends.Event3DSFriended); ev.PID != 3200 {
		t.Fatalf("friended: %+v", ev)
	}
	if err := wiiu.v2.UpdatePresence(ctx, fp.NintendoPresenceV2{GameKey: fp.GameKey{TitleID: 0x000500001010EC00}}); err != nil {
		t.Fatal(err)
	}
	if p, ok := ds.next(t, friends.Event3DSPresence).Data.Object.(*fp.NintendoPresence); !ok || p.GameKey.TitleID != 0x000500001010EC00 {
		t.Fatalf("presence across nodes: %+v", p)
	}
	if err := ds.v1.UpdatePresence(ctx, fp.NintendoPresence{GameKey: fp.GameKey{TitleID: 0x0004000000055D00}}, false); err != nil {
		t.Fatal(err)
	}
	if p, ok := wiiu.next(t, friends.EventWiiUPresence).Data.Object.(*fp.NintendoPresenceV2); !ok || p.GameKey.TitleID != 0x0004000000055D00 {
		t.Fatalf("presence across nodes: %+v", p)
	}
	// An invitation (Friends_V1's SendInvitation, here from the Wii U
	// player's connection) reaches the 3DS on the other node.
	if err := wiiu.v1.SendInvitation(ctx, []uint32{3201}); err != nil {
		t.Fatal(err)
	}
	if ev := ds.next(t, friends.Event3DSInvitation); ev.PID != 3200 {
		t.Fatalf("invitation across nodes: %+v", ev)
	}
	closeSession(t, ds.sess)
	if ev := wiiu.next(t, friends.EventOffline); ev.PID != 3201 {
		t.Fatalf("offline across nodes: %+v", ev)
	}
}
