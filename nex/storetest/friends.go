package storetest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/types"
)

// Friends runs the friends store suite against fresh stores made by open.
func Friends(t *testing.T, open func(t *testing.T) friends.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	send := func(t *testing.T, s friends.Store, from, to types.PID, msg string, l friends.Limits) (friends.Request, *friends.Link, error) {
		t.Helper()
		return s.SendRequest(ctx, friends.Request{Sender: from, Recipient: to, Message: msg, Expires: t0.Add(week)}, t0, l)
	}
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	wantCode := func(t *testing.T, err error, code types.Result) {
		t.Helper()
		if !errors.Is(err, code) {
			t.Fatalf("error %v, want %s", err, code)
		}
	}
	areFriends := func(t *testing.T, s friends.Store, a, b types.PID) bool {
		t.Helper()
		ab, err := s.AreFriends(ctx, a, b)
		must(t, err)
		ba, err := s.AreFriends(ctx, b, a)
		must(t, err)
		if ab != ba {
			t.Fatalf("AreFriends(%d, %d) = %v but AreFriends(%d, %d) = %v", a, b, ab, b, a, ba)
		}
		return ab
	}

	t.Run("profile", func(t *testing.T) {
		s := open(t)
		p, err := s.Profile(ctx, 10)
		must(t, err)
		if p.Comment != "" || p.Mii.Name != "" {
			t.Fatalf("profile of a new player: %+v", p)
		}
		_, err = s.UpdateProfile(ctx, 10, func(p *friends.Profile) error {
			p.Comment, p.CommentChanged = "hello", t0
			p.Mii = friends.Mii{Name: "Mii", Data: []byte{1, 2, 3}}
			p.Favorite = friends.GameKey{TitleID: 0x0004000000030800, Version: 3}
			return nil
		})
		must(t, err)
		boom := errors.New("boom")
		if _, err := s.UpdateProfile(ctx, 10, func(p *friends.Profile) error { p.Comment = "lost"; return boom }); !errors.Is(err, boom) {
			t.Fatalf("UpdateProfile whose change fails: %v", err)
		}
		ps, err := s.Profiles(ctx, []types.PID{10, 11})
		must(t, err)
		got := ps[10]
		if got.Comment != "hello" || !got.CommentChanged.Equal(t0) || !bytes.Equal(got.Mii.Data, []byte{1, 2, 3}) || got.Favorite.Version != 3 {
			t.Fatalf("profile read back: %+v", got)
		}
		if _, ok := ps[11]; ok {
			t.Fatal("Profiles returned a profile for a player without one")
		}
	})

	t.Run("request, accept, remove", func(t *testing.T) {
		s := open(t)
		r, link, err := send(t, s, 1, 2, "hi", friends.Limits{})
		must(t, err)
		if link != nil || r.ID == 0 || r.Message != "hi" {
			t.Fatalf("SendRequest: %+v, link %v", r, link)
		}
		sent, _, err := s.Requests(ctx, 1, t0)
		must(t, err)
		_, recv, err := s.Requests(ctx, 2, t0)
		must(t, err)
		if len(sent) != 1 || len(recv) != 1 || sent[0].ID != r.ID || recv[0].Sender != 1 {
			t.Fatalf("requests: sent %+v, received %+v", sent, recv)
		}
		must(t, s.MarkReceived(ctx, 2, []uint64{r.ID}))
		if _, recv, _ = s.Requests(ctx, 2, t0); !recv[0].Received {
			t.Fatal("MarkReceived did not mark the request")
		}
		_, _, err = s.AcceptRequest(ctx, 1, r.ID, t0, friends.Limits{})
		wantCode(t, err, types.FPDMessageIsNotForMe)
		_, lk, err := s.AcceptRequest(ctx, 2, r.ID, t0.Add(time.Minute), friends.Limits{})
		must(t, err)
		if lk.PID != 1 || !areFriends(t, s, 1, 2) {
			t.Fatalf("accepted: link %+v", lk)
		}
		if sent, _, _ := s.Requests(ctx, 1, t0); len(sent) != 0 {
			t.Fatalf("the accepted request is still pending: %+v", sent)
		}
		_, _, err = send(t, s, 2, 1, "", friends.Limits{})
		wantCode(t, err, types.FPDFriendAlreadyAdded)
		pids, err := s.FriendsOf(ctx, 1)
		must(t, err)
		if len(pids) != 1 || pids[0] != 2 {
			t.Fatalf("FriendsOf(1) = %v", pids)
		}
		ok, err := s.RemoveFriend(ctx, 2, 1)
		must(t, err)
		if !ok || areFriends(t, s, 1, 2) {
			t.Fatal("RemoveFriend left the friendship")
		}
		if ok, _ = s.RemoveFriend(ctx, 2, 1); ok {
			t.Fatal("RemoveFriend of no friend reported true")
		}
	})

	t.Run("both ask: friends", func(t *testing.T) {
		s := open(t)
		first, _, err := send(t, s, 1, 2, "", friends.Limits{})
		must(t, err)
		r, link, err := send(t, s, 2, 1, "", friends.Limits{})
		must(t, err)
		if link == nil || link.PID != 1 || r.ID != first.ID || !areFriends(t, s, 1, 2) {
			t.Fatalf("second request: %+v link %v", r, link)
		}
	})

	t.Run("cancel, deny, ownership", func(t *testing.T) {
		s := open(t)
		r, _, err := send(t, s, 1, 2, "", friends.Limits{})
		must(t, err)
		_, err = s.DeleteRequest(ctx, 2, r.ID, true)
		wantCode(t, err, types.FPDMessageIsNotMine)
		_, err = s.DeleteRequest(ctx, 1, r.ID, false)
		wantCode(t, err, types.FPDMessageIsNotForMe)
		_, err = s.DeleteRequest(ctx, 1, r.ID, true)
		must(t, err)
		_, err = s.DeleteRequest(ctx, 1, r.ID, true)
		wantCode(t, err, types.FPDInvalidMessageID)
		r, _, err = send(t, s, 1, 2, "", friends.Limits{})
		must(t, err)
		_, err = s.DeleteRequest(ctx, 2, r.ID, false)
		must(t, err)
	})

	t.Run("expiry", func(t *testing.T) {
		s := open(t)
		r, _, err := send(t, s, 1, 2, "", friends.Limits{})
		must(t, err)
		late := t0.Add(week)
		if _, recv, _ := s.Requests(ctx, 2, late); len(recv) != 0 {
			t.Fatalf("an expired request is listed: %+v", recv)
		}
		_, _, err = s.AcceptRequest(ctx, 2, r.ID, late, friends.Limits{})
		wantCode(t, err, types.FPDInvalidMessageID)
		n, err := s.ExpireRequests(ctx, late)
		must(t, err)
		if n != 1 {
			t.Fatalf("ExpireRequests deleted %d, want 1", n)
		}
	})

	t.Run("limits", func(t *testing.T) {
		s := open(t)
		l := friends.Limits{MaxFriends: 2, MaxSent: 2, MaxReceived: 2, MaxBlocks: 1}
		for _, p := range []types.PID{2, 3} {
			r, _, err := send(t, s, 1, p, "", l)
			must(t, err)
			_, _, err = s.AcceptRequest(ctx, p, r.ID, t0, l)
			must(t, err)
		}
		_, _, err := send(t, s, 1, 4, "", l)
		wantCode(t, err, types.FPDMyFriendListLimitExceed)
		r, _, err := send(t, s, 5, 1, "", l)
		must(t, err)
		_, _, err = s.AcceptRequest(ctx, 1, r.ID, t0, l)
		wantCode(t, err, types.FPDMyFriendListLimitExceed)
		for _, p := range []types.PID{7, 8} {
			_, _, err := send(t, s, 6, p, "", l)
			must(t, err)
		}
		_, _, err = send(t, s, 6, 9, "", l)
		wantCode(t, err, types.FPDRequestLimitExceed)
		_, _, err = send(t, s, 6, 7, "again", l) // a replacement is no new request
		must(t, err)
		_, _, err = send(t, s, 10, 7, "", l)
		must(t, err)
		_, _, err = send(t, s, 11, 7, "", l)
		wantCode(t, err, types.FPDRequestLimitExceed)
		_, err = s.AddBlock(ctx, 20, friends.Block{PID: 21, Since: t0}, l)
		must(t, err)
		_, err = s.AddBlock(ctx, 20, friends.Block{PID: 22, Since: t0}, l)
		wantCode(t, err, types.FPDRequestLimitExceed)
	})

	t.Run("blocks", func(t *testing.T) {
		s := open(t)
		r, _, err := send(t, s, 1, 2, "", friends.Limits{})
		must(t, err)
		_, _, err = s.AcceptRequest(ctx, 2, r.ID, t0, friends.Limits{})
		must(t, err)
		_, err = s.AddBlock(ctx, 2, friends.Block{PID: 1, Game: friends.GameKey{TitleID: 7}, Since: t0}, friends.Limits{})
		must(t, err)
		if areFriends(t, s, 1, 2) {
			t.Fatal("blocking a friend kept the friendship")
		}
		_, _, err = send(t, s, 1, 2, "", friends.Limits{})
		wantCode(t, err, types.FPDFriendRequestBlocked)
		_, _, err = send(t, s, 2, 1, "", friends.Limits{})
		wantCode(t, err, types.FPDBlacklistedByMe)
		bs, err := s.Blocks(ctx, 2)
		must(t, err)
		if len(bs) != 1 || bs[0].PID != 1 || bs[0].Game.TitleID != 7 {
			t.Fatalf("Blocks: %+v", bs)
		}
		ok, err := s.RemoveBlock(ctx, 2, 1)
		must(t, err)
		if !ok {
			t.Fatal("RemoveBlock reported nothing removed")
		}
		must(t, s.SetBlocks(ctx, 3, []types.PID{4, 5}, t0, friends.Limits{}))
		must(t, s.SetBlocks(ctx, 3, []types.PID{5, 6}, t0, friends.Limits{}))
		bs, err = s.Blocks(ctx, 3)
		must(t, err)
		if len(bs) != 2 || bs[0].PID != 5 || bs[1].PID != 6 {
			t.Fatalf("Blocks after SetBlocks: %+v", bs)
		}
		if b, _ := s.Blocked(ctx, 3, 4); b {
			t.Fatal("SetBlocks kept a PID it no longer lists")
		}
	})

	t.Run("presence", func(t *testing.T) {
		s := open(t)
		must(t, s.SetPresence(ctx, 1, "a", friends.Presence{Platform: friends.Platform3DS, Message: "playing", Updated: t0}))
		must(t, s.SetPresence(ctx, 2, "b", friends.Presence{Platform: friends.PlatformWiiU, GatheringID: 9, Updated: t0}))
		ps, err := s.Presences(ctx, []types.PID{1, 2, 3})
		must(t, err)
		if len(ps) != 2 || ps[1].Node != "a" || ps[1].Message != "playing" || ps[2].GatheringID != 9 {
			t.Fatalf("Presences: %+v", ps)
		}
		if ok, _ := s.ClearPresence(ctx, 1, "b"); ok {
			t.Fatal("ClearPresence on another node's player reported true")
		}
		if ok, _ := s.ClearPresence(ctx, 1, "a"); !ok {
			t.Fatal("ClearPresence reported false")
		}
		pids, err := s.ClearNode(ctx, "b")
		must(t, err)
		if len(pids) != 1 || pids[0] != 2 {
			t.Fatalf("ClearNode: %v", pids)
		}
		if ps, _ := s.Presences(ctx, []types.PID{1, 2}); len(ps) != 0 {
			t.Fatalf("presences left: %+v", ps)
		}
	})

	t.Run("persistent notifications", func(t *testing.T) {
		s := open(t)
		var ids []uint64
		for i := range 4 {
			n, err := s.AddNotification(ctx, friends.Notification{PID: 7, Type: 27, From: types.PID(100 + i), Text: "hi", At: t0.Add(time.Duration(i) * time.Hour)}, 3)
			must(t, err)
			if n.ID == 0 || (len(ids) > 0 && n.ID <= ids[len(ids)-1]) {
				t.Fatalf("notification id %d after %v", n.ID, ids)
			}
			ids = append(ids, n.ID)
		}
		_, err := s.AddNotification(ctx, friends.Notification{PID: 8, Type: 30, From: 7, At: t0}, 3)
		must(t, err)
		ns, err := s.Notifications(ctx, 7)
		must(t, err)
		// The oldest of four went: three are kept, oldest first.
		if len(ns) != 3 || ns[0].ID != ids[1] || ns[0].From != 101 || ns[2].From != 103 || ns[0].Type != 27 || ns[0].Text != "hi" ||
			!ns[0].At.Equal(t0.Add(time.Hour)) || ns[0].PID != 7 {
			t.Fatalf("Notifications: %+v", ns)
		}
		// Another player's id is not deleted; an unknown one neither.
		other, _ := s.Notifications(ctx, 8)
		n, err := s.DeleteNotifications(ctx, 7, []uint64{ids[1], other[0].ID, 1 << 40})
		must(t, err)
		if n != 1 {
			t.Fatalf("DeleteNotifications deleted %d, want 1", n)
		}
		if other, _ := s.Notifications(ctx, 8); len(other) != 1 {
			t.Fatalf("another player's notification was deleted: %+v", other)
		}
		gone, err := s.ExpireNotifications(ctx, t0.Add(3*time.Hour))
		must(t, err)
		if gone != 2 { // PID 7's of t0+2h and PID 8's of t0
			t.Fatalf("ExpireNotifications deleted %d, want 2", gone)
		}
		if ns, _ := s.Notifications(ctx, 7); len(ns) != 1 || ns[0].ID != ids[3] {
			t.Fatalf("after expiry: %+v", ns)
		}
		if _, err := s.AddNotification(ctx, friends.Notification{PID: 7}, 0); err == nil {
			t.Fatal("AddNotification keeping 0 succeeded")
		}
	})

	t.Run("concurrent accepts keep the limit", func(t *testing.T) {
		s := open(t)
		l := friends.Limits{MaxFriends: 3}
		var ids []uint64
		for p := types.PID(2); p < 8; p++ {
			r, _, err := send(t, s, p, 1, "", l)
			must(t, err)
			ids = append(ids, r.ID)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, _ = s.AcceptRequest(ctx, 1, id, t0, l)
			}()
		}
		wg.Wait()
		links, err := s.Links(ctx, 1)
		must(t, err)
		if len(links) != 3 {
			t.Fatalf("%d friends after concurrent accepts, want the limit 3", len(links))
		}
	})
}
