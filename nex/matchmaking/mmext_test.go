package matchmaking_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// fixedStations is a station directory with one registered url per PID.
type fixedStations map[types.PID]string

func (f fixedStations) StationURLs(pid types.PID) []types.StationURL {
	s, ok := f[pid]
	if !ok {
		return nil
	}
	u, err := types.ParseStationURLString(s)
	if err != nil {
		panic(err)
	}
	return []types.StationURL{u}
}

func urlStrings(us []types.StationURL) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}

// TestUpdateSessionURL: the host's url (UpdateSessionURL) comes first in
// GetSessionURLs and GetSessionURL, before the registered station; a
// participant that does not host is refused, a bad url refused; when the host
// moves (UpdateSessionHost) the old host's url goes.
func TestUpdateSessionURL(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true, PIDSize: 8})
	h.srv.Stations = fixedStations{1: "prudps:/address=10.0.0.1;port=1;PID=1", 2: "prudps:/address=10.0.0.2;port=2;PID=2"}
	gid, _ := h.createSession(t, 1, room())
	h.mustCall(t, 2, matchmaking.ProtocolMatchmakeExtension, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("") })
	mm := matchmaking.ProtocolMatchMaking
	sessionURLs := func(pid types.PID) []string {
		r := h.mustCall(t, pid, mm, matchmaking.MethodGetSessionURLs, func(w *types.Writer) { w.U32(gid) })
		us := types.ReadList(&r, "lstURLs", (*types.Reader).StationURL)
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		return urlStrings(us)
	}
	if got := sessionURLs(2); len(got) != 1 || got[0] != "prudps:/address=10.0.0.1;port=1;PID=1" {
		t.Fatalf("before: %q", got)
	}
	const public = "prudps:/address=203.0.113.7;port=40000;natm=1;natf=1;type=3;PID=1"
	update := func(pid types.PID, url string) error {
		_, err := h.call(t, pid, mm, matchmaking.MethodUpdateSessionURL, func(w *types.Writer) { w.U32(gid); w.String(url) })
		return err
	}
	if err := update(2, public); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Fatalf("non-host: %v", err)
	}
	if err := update(1, "no scheme"); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("bad url: %v", err)
	}
	if err := update(1, public); err != nil {
		t.Fatal(err)
	}
	if got := sessionURLs(2); len(got) != 2 || got[0] != public || got[1] != "prudps:/address=10.0.0.1;port=1;PID=1" {
		t.Fatalf("after: %q", got)
	}
	r := h.mustCall(t, 3, mm, matchmaking.MethodGetSessionURL, func(w *types.Writer) { w.U32(gid) })
	if ok, u := r.Bool("retval"), r.String("strURL"); !ok || u != public || r.Done() != nil {
		t.Fatalf("GetSessionURL: %v %q %v", ok, u, r.Done())
	}
	h.mustCall(t, 2, mm, matchmaking.MethodUpdateSessionHost, func(w *types.Writer) { w.U32(gid); w.Bool(false) })
	if got := sessionURLs(1); len(got) != 1 || got[0] != "prudps:/address=10.0.0.2;port=2;PID=2" {
		t.Fatalf("new host: %q", got)
	}
}

// friendMap is a friends source: each PID's friends.
type friendMap map[types.PID][]types.PID

func (f friendMap) FriendsOf(_ context.Context, pid types.PID) ([]types.PID, error) {
	return f[pid], nil
}

func (f friendMap) AreFriends(_ context.Context, a, b types.PID) (bool, error) {
	for _, p := range f[a] {
		if p == b {
			return true, nil
		}
	}
	return false, nil
}

// TestFriendNotificationData: PID 1's data reaches its friend 2 as a
// notification and in 2's GetFriendNotificationData and
// GetlstFriendNotificationData; 3, no friend of 1, gets neither; without a
// friends source the lists are empty.
func TestFriendNotificationData(t *testing.T) {
	for _, st := range []types.Settings{{StructureHeader: true}, {StructureHeader: true, PIDSize: 8}} {
		h := newHarness(t, st)
		h.srv.Friends = friendMap{1: {2, 4}, 2: {1}, 4: {1}}
		ext := matchmaking.ProtocolMatchmakeExtension
		update := func(pid types.PID, typ uint32, s string) {
			h.mustCall(t, pid, ext, matchmaking.MethodUpdateNotificationData, func(w *types.Writer) {
				w.U32(typ)
				w.PID(pid + 100)
				w.PID(7)
				w.String(s)
			})
		}
		update(1, 101, "first")
		update(1, 101, "in a room")
		update(1, 102, "other")
		update(3, 101, "stranger")
		evs := h.conns[2].events(t, st, h.v)
		if len(evs) != 3 || evs[1].Source != 1 || evs[1].Type != 101 || evs[1].Param1 != 101 || evs[1].Param2 != 7 || evs[1].StrParam != "in a room" {
			t.Fatalf("friend's events %+v", evs)
		}
		if evs := h.conns[3].events(t, st, h.v); len(evs) != 0 {
			t.Fatalf("stranger's own update notified it: %+v", evs)
		}
		read := func(pid types.PID, method uint32, typs ...uint32) []notifications.Event {
			r := h.mustCall(t, pid, ext, method, func(w *types.Writer) {
				if method == matchmaking.MethodGetFriendNotificationData {
					w.S32(int32(typs[0]))
				} else {
					types.WriteList(w, typs, (*types.Writer).U32)
				}
			})
			evs := types.ReadList(&r, "dataList", func(r *types.Reader, _ string) notifications.Event { return notifications.ReadEvent(r) })
			if err := r.Done(); err != nil {
				t.Fatal(err)
			}
			return evs
		}
		if got := read(2, matchmaking.MethodGetFriendNotificationData, 101); len(got) != 1 || got[0].Source != 1 || got[0].StrParam != "in a room" {
			t.Fatalf("friend reads %+v", got)
		}
		if got := read(4, matchmaking.MethodGetlstFriendNotificationData, 101, 102); len(got) != 2 || got[1].Type != 102 {
			t.Fatalf("friend reads a list %+v", got)
		}
		if got := read(3, matchmaking.MethodGetlstFriendNotificationData, 101, 102); len(got) != 0 {
			t.Fatalf("stranger reads %+v", got)
		}
		h.srv.Friends = nil
		if got := read(2, matchmaking.MethodGetFriendNotificationData, 101); len(got) != 0 {
			t.Fatalf("without friends %+v", got)
		}
		many := make([]uint32, matchmaking.MaxNotificationTypesAsked+1)
		if _, err := h.call(t, 2, ext, matchmaking.MethodGetlstFriendNotificationData, func(w *types.Writer) { types.WriteList(w, many, (*types.Writer).U32) }); !errors.Is(err, types.CoreInvalidArgument) {
			t.Fatalf("too many types: %v", err)
		}
	}
}

// TestBlockListMethods: AddToBlackList, RemoveFromBlackList, ClearMyBlackList
// and GetMyBlackList keep the caller's list; a blocked player's
// auto-matchmake passes over the blocker's session and its join is refused
// unless JoinMatchmakeSessionEx ignores the block list.
func TestBlockListMethods(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true, PIDSize: 8})
	ext := matchmaking.ProtocolMatchmakeExtension
	list := func(pid types.PID) []types.PID {
		r := h.mustCall(t, pid, ext, matchmaking.MethodGetMyBlockList, func(*types.Writer) {})
		l := types.ReadList(&r, "lstPrincipalId", (*types.Reader).PID)
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		return l
	}
	edit := func(pid types.PID, m uint32, pids ...types.PID) {
		h.mustCall(t, pid, ext, m, func(w *types.Writer) {
			if m != matchmaking.MethodClearMyBlockList {
				types.WriteList(w, pids, (*types.Writer).PID)
			}
		})
	}
	edit(1, matchmaking.MethodAddToBlockList, 3, 2, 4)
	edit(1, matchmaking.MethodRemoveFromBlockList, 4)
	if l := list(1); len(l) != 2 || l[0] != 2 || l[1] != 3 {
		t.Fatalf("list %v", l)
	}
	gid, _ := h.createSession(t, 1, room())
	// 2 auto-matchmakes: not into 1's session.
	r := h.mustCall(t, 2, ext, matchmaking.MethodAutoMatchmakePostpone, func(w *types.Writer) {
		w.AnyDataHolder(h.holder(room()))
		w.String("")
	})
	h2 := r.AnyDataHolder("joinedGathering")
	ms, _, err := matchmaking.ParseHolder(h2, h.st)
	if err != nil || ms.ID == gid {
		t.Fatalf("auto-matchmake joined %d (blocker's %d): %v", ms.ID, gid, err)
	}
	joinEx := func(pid types.PID, ignore bool) error {
		_, err := h.call(t, pid, ext, matchmaking.MethodJoinMatchmakeSessionEx, func(w *types.Writer) {
			w.U32(gid)
			w.String("")
			w.Bool(ignore)
			w.U16(1)
		})
		return err
	}
	if err := joinEx(3, false); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Fatalf("blocked join: %v", err)
	}
	if err := joinEx(3, true); err != nil {
		t.Fatalf("join ignoring the block list: %v", err)
	}
	edit(1, matchmaking.MethodClearMyBlockList)
	if l := list(1); len(l) != 0 {
		t.Fatalf("cleared list %v", l)
	}
}
