package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// notificationData: a player's data is kept per type (a second update of a
// type replaces the first), read for the players and types asked only; a
// string too long and more types than MaxNotificationTypes are refused.
func notificationData(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	set := func(ev notifications.Event) {
		t.Helper()
		if err := m.SetNotification(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	set(notifications.Event{Source: 1, Type: 101, Param1: 7, Param2: 1 << 40, StrParam: "old"})
	set(notifications.Event{Source: 1, Type: 101, Param1: 8, Param2: 9, StrParam: "playing"})
	set(notifications.Event{Source: 1, Type: 102, StrParam: "other type"})
	set(notifications.Event{Source: 2, Type: 101, Param1: 3})
	set(notifications.Event{Source: 3, Type: 101, Param1: 4})
	got, err := m.Notifications(ctx, []types.PID{1, 2, 9}, []uint32{101})
	if err != nil {
		t.Fatal(err)
	}
	want := []notifications.Event{{Source: 1, Type: 101, Param1: 8, Param2: 9, StrParam: "playing"}, {Source: 2, Type: 101, Param1: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("notifications %+v, want %+v", got, want)
	}
	if got, err := m.Notifications(ctx, []types.PID{1}, []uint32{101, 102}); err != nil || len(got) != 2 || got[1].StrParam != "other type" {
		t.Fatalf("two types: %+v %v", got, err)
	}
	if got, err := m.Notifications(ctx, nil, []uint32{101}); err != nil || len(got) != 0 {
		t.Fatalf("no friends: %+v %v", got, err)
	}
	if err := m.SetNotification(ctx, notifications.Event{Source: 1, Type: 1, StrParam: strings.Repeat("x", matchmaking.MaxNotificationText+1)}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("long string: %v", err)
	}
	for typ := uint32(0); typ < matchmaking.MaxNotificationTypes; typ++ {
		if err := m.SetNotification(ctx, notifications.Event{Source: 5, Type: typ}); err != nil {
			t.Fatalf("type %d: %v", typ, err)
		}
	}
	if err := m.SetNotification(ctx, notifications.Event{Source: 5, Type: 999}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("type past the limit: %v", err)
	}
	if err := m.SetNotification(ctx, notifications.Event{Source: 5, Type: 3, Param1: 1}); err != nil {
		t.Fatalf("replacing a kept type at the limit: %v", err)
	}
}

// blockLists: the list is kept (added, removed, cleared, bounded); an
// auto-matchmake passes over the one session with a player the joiner blocked
// or that blocked it, and joins the same session once unblocked; a join is
// refused unless it ignores the block list.
func blockLists(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	list := func(pid types.PID) []types.PID {
		t.Helper()
		l, err := m.BlockList(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if err := m.Block(ctx, 1, []types.PID{30, 20, 20}); err != nil {
		t.Fatal(err)
	}
	if l := list(1); !reflect.DeepEqual(l, []types.PID{20, 30}) {
		t.Fatalf("list %v", l)
	}
	if err := m.Unblock(ctx, 1, []types.PID{30, 99}); err != nil {
		t.Fatal(err)
	}
	if l := list(1); !reflect.DeepEqual(l, []types.PID{20}) {
		t.Fatalf("after unblock %v", l)
	}
	if err := m.Block(ctx, 1, []types.PID{1}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("self: %v", err)
	}
	many := make([]types.PID, matchmaking.MaxBlockList)
	for i := range many {
		many[i] = types.PID(1000 + i)
	}
	if err := m.Block(ctx, 1, many); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("past the limit: %v", err)
	}
	if l := list(1); !reflect.DeepEqual(l, []types.PID{20}) {
		t.Fatalf("a refused block changed the list: %v", l)
	}
	if err := m.Unblock(ctx, 1, nil); err != nil || len(list(1)) != 0 {
		t.Fatalf("clear: %v %v", err, list(1))
	}

	// Player 10 hosts the only session; 11 blocks 10, 10 blocks 12: neither
	// joins it by auto-matchmaking, and each creates its own.
	host, err := m.Create(ctx, Session(4), Participant(10))
	if err != nil {
		t.Fatal(err)
	}
	gid := host.Session.ID
	if err := m.Block(ctx, 11, []types.PID{10}); err != nil {
		t.Fatal(err)
	}
	if err := m.Block(ctx, 10, []types.PID{12}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []types.PID{11, 12} {
		c, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(pid))
		if err != nil || !created || c.Session.ID == gid {
			t.Fatalf("PID %d: created %v in %d (host's %d): %v", pid, created, c.Session.ID, gid, err)
		}
		if _, err := m.Leave(ctx, c.Session.ID, pid); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Join(ctx, gid, Participant(pid), matchmaking.Passwords{}); !errors.Is(err, matchmaking.ResultPermissionDenied) {
			t.Fatalf("PID %d joins past the block: %v", pid, err)
		}
	}
	if _, err := m.Join(ctx, gid, Participant(12), matchmaking.Passwords{IgnoreBlockList: true}); err != nil {
		t.Fatalf("join ignoring the block list: %v", err)
	}
	if err := m.Unblock(ctx, 11, []types.PID{10}); err != nil {
		t.Fatal(err)
	}
	c, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(11))
	if err != nil || created || c.Session.ID != gid {
		t.Fatalf("unblocked: created %v in %d, want %d: %v", created, c.Session.ID, gid, err)
	}
	// 13 blocks nobody and nobody blocks 13: it joins the host's session,
	// where 12 (whom the host blocks) also is.
	if c, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(13)); err != nil || created || c.Session.ID != gid {
		t.Fatalf("PID 13: created %v in %d, want %d: %v", created, c.Session.ID, gid, err)
	}
}
