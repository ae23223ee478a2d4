package nex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// TestFriendsInvitationsCancelAndPersistent: a 3DS's invitation reaches its
// 3DS friend (event 9) and not its Wii U friend; a withdrawn request reaches
// its recipient (event 26); what an offline Wii U player missed (requests, a
// withdrawn one) is among its persistent notifications at its next login
// until it deletes them.
func TestFriendsInvitationsCancelAndPersistent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, cfg := friendsStore(t, ctx)
	addr := startServer(t, &Server{Config: cfg, Accounts: playerAccounts(), Friends: &friends.Server{Store: store.Friends()}})

	a := friendsLogin(t, ctx, addr, cfg, 2040) // 3DS
	b := friendsLogin(t, ctx, addr, cfg, 2041) // 3DS
	c := friendsLogin(t, ctx, addr, cfg, 2042) // Wii U
	d := friendsLogin(t, ctx, addr, cfg, 2043) // Wii U
	for _, ds := range []*console{a, b} {
		if err := ds.v1.UpdatePresence(ctx, fp.NintendoPresence{GameKey: fp.GameKey{TitleID: 0x0004000000030800}}, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []*console{c, d} {
		if _, _, _, _, _, _, _, _, _, err := w.v2.UpdateAndGetAllInformation(ctx, fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: w.sess.PID}},
			fp.NintendoPresenceV2{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	// a and b, a and c are friends.
	if _, err := a.v1.AddFriendByPrincipalId(ctx, 0, 2041); err != nil {
		t.Fatal(err)
	}
	if _, err := b.v1.AddFriendByPrincipalId(ctx, 0, 2040); err != nil {
		t.Fatal(err)
	}
	if _, err := a.v1.AddFriendByPrincipalId(ctx, 0, 2042); err != nil {
		t.Fatal(err)
	}
	c.next(t, friends.EventWiiURequest)
	if _, _, err := c.v2.AddFriend(ctx, 2040); err != nil {
		t.Fatal(err)
	}

	// The invitation: b (3DS) is told, c (Wii U) is not; a stranger or
	// oneself cannot be invited.
	if err := a.v1.SendInvitation(ctx, []uint32{2041, 2042, 2041}); err != nil {
		t.Fatal(err)
	}
	if ev := b.next(t, friends.Event3DSInvitation); ev.PID != 2040 {
		t.Fatalf("invitation: %+v", ev)
	}
	if err := a.v1.SendInvitation(ctx, []uint32{2041, 2043}); !errors.Is(err, types.FPDNotFriend) {
		t.Fatalf("inviting a stranger: %v", err)
	}
	if err := a.v1.SendInvitation(ctx, []uint32{2040}); !errors.Is(err, types.FPDInvalidPrincipalID) {
		t.Fatalf("inviting oneself: %v", err)
	}
	// c's next event is a's presence, not an invitation (events to one
	// connection arrive in order).
	if err := a.v1.UpdatePresence(ctx, fp.NintendoPresence{GameKey: fp.GameKey{TitleID: 0x0004000000055D00}}, false); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-c.events:
		if ev.Type != friends.EventWiiUPresence || ev.PID != 2040 {
			t.Fatalf("the Wii U's event after an invitation: %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no presence event")
	}

	// A withdrawn request reaches its online recipient.
	req, _, err := c.v2.AddFriendRequest(ctx, 2043, 0, "join me", 0, "", fp.GameKey{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d.next(t, friends.EventWiiURequest)
	if err := c.v2.CancelFriendRequest(ctx, req.Message.FriendRequestID); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t, friends.EventWiiUUnfriended); ev.PID != 2042 {
		t.Fatalf("cancel notification: %+v", ev)
	}
	if err := c.v2.CancelFriendRequest(ctx, req.Message.FriendRequestID); !errors.Is(err, types.FPDInvalidMessageID) {
		t.Fatalf("cancelling twice: %v", err)
	}
	if _, _, _, _, _, _, _, ns, _, err := d.v2.UpdateAndGetAllInformation(ctx, fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: 2043}},
		fp.NintendoPresenceV2{}, 0); err != nil || len(ns) != 0 {
		t.Fatalf("an online player's persistent notifications: %+v %v", ns, err)
	}

	// e is offline: two requests, one withdrawn, are kept for it.
	if _, _, err := c.v2.AddFriendRequest(ctx, 2044, 0, "hello e", 0, "", fp.GameKey{}, 0); err != nil {
		t.Fatal(err)
	}
	req, _, err = d.v2.AddFriendRequest(ctx, 2044, 0, "from d", 0, "", fp.GameKey{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.v2.CancelFriendRequest(ctx, req.Message.FriendRequestID); err != nil {
		t.Fatal(err)
	}
	e := friendsLogin(t, ctx, addr, cfg, 2044)
	login := func() ([]fp.FriendRequest, []fp.PersistentNotification) {
		t.Helper()
		_, _, _, _, recv, _, _, ns, _, err := e.v2.UpdateAndGetAllInformation(ctx, fp.NNAInfo{PrincipalInfo: fp.PrincipalBasicInfo{PID: 2044}},
			fp.NintendoPresenceV2{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return recv, ns
	}
	recv, ns := login()
	if len(recv) != 1 || recv[0].PrincipalInfo.PID != 2042 {
		t.Fatalf("received requests: %+v", recv)
	}
	if len(ns) != 3 || ns[0].Unk2 != friends.EventWiiURequest || ns[0].Unk3 != 2042 || ns[0].String != "hello e" ||
		ns[1].Unk2 != friends.EventWiiURequest || ns[1].Unk3 != 2043 || ns[2].Unk2 != friends.EventWiiUUnfriended || ns[2].Unk3 != 2043 ||
		ns[0].Unk1 == ns[1].Unk1 || ns[0].Unk4 == 0 {
		t.Fatalf("persistent notifications: %+v", ns)
	}
	if err := e.v2.DeletePersistentNotification(ctx, ns[1:]); err != nil {
		t.Fatal(err)
	}
	if _, left := login(); len(left) != 1 || left[0] != ns[0] {
		t.Fatalf("after deleting two: %+v", left)
	}
	if err := e.v2.DeletePersistentNotification(ctx, ns[1:2]); !errors.Is(err, types.FPDNotificationNotFound) {
		t.Fatalf("deleting a deleted notification: %v", err)
	}
	// Another player cannot delete e's.
	if err := d.v2.DeletePersistentNotification(ctx, ns[:1]); !errors.Is(err, types.FPDNotificationNotFound) {
		t.Fatalf("deleting another player's notification: %v", err)
	}
}
