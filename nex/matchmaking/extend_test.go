package matchmaking_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// TestHooks: a game's policy in the generic flow. MayJoin refuses PID 3 the
// sessions of game mode 2 on every join by id (its code is what the client gets)
// and lets PID 2 in; Created sees every session created, by
// CreateMatchmakeSession and by an auto-matchmake that found nothing to join,
// and not a join.
func TestHooks(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true})
	var created []uint32
	h.srv.Hooks = matchmaking.Hooks{
		MayJoin: func(_ context.Context, pid types.PID, ms *matchmaking.MatchmakeSession) error {
			if pid == 3 && ms.GameMode == 2 {
				return fmt.Errorf("%w: PID 3 may not play mode 2", types.RendezVousNotFriend)
			}
			return nil
		},
		Created: func(_ context.Context, c *rmc.Call, ms matchmaking.MatchmakeSession) {
			if c.Peer.PID != ms.Owner {
				t.Errorf("Created: call of PID %d, session owned by %d", c.Peer.PID, ms.Owner)
			}
			created = append(created, ms.ID)
		},
	}
	ext := matchmaking.ProtocolMatchmakeExtension
	gid, _ := h.createSession(t, 1, room())
	join := func(pid types.PID) error {
		_, err := h.call(t, pid, ext, matchmaking.MethodJoinMatchmakeSession, func(w *types.Writer) { w.U32(gid); w.String("") })
		return err
	}
	if err := join(3); !errors.Is(err, types.RendezVousNotFriend) {
		t.Fatalf("MayJoin refusing PID 3: %v", err)
	}
	if err := join(2); err != nil {
		t.Fatalf("MayJoin letting PID 2 in: %v", err)
	}
	other := room()
	other.GameMode = 7
	r := h.mustCall(t, 4, ext, matchmaking.MethodAutoMatchmakePostpone, func(w *types.Writer) {
		w.AnyDataHolder(h.holder(other))
		w.String("")
	})
	ms, _, err := matchmaking.ParseHolder(r.AnyDataHolder("joinedGathering"), h.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 2 || created[0] != gid || created[1] != ms.ID || ms.ID == gid {
		t.Errorf("Created saw %v, want [%d %d]", created, gid, ms.ID)
	}
}

// TestExtensionSeams: a variant's own method builds on the exported join,
// leave, checks and notifications and gets the service's behaviour: the
// notifications, the participation check's and the owner check's codes.
func TestExtensionSeams(t *testing.T) {
	h := newHarness(t, types.Settings{StructureHeader: true})
	ctx := context.Background()
	call := func(pid types.PID) *rmc.Call { return &rmc.Call{Peer: h.peers[pid]} }
	gid, _ := h.createSession(t, 1, room())
	h.conns[1].events(t, h.st, h.v)

	if _, err := h.srv.Join(ctx, call(2), gid, 1, "hi", matchmaking.Passwords{}); err != nil {
		t.Fatal(err)
	}
	if evs := h.conns[1].events(t, h.st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeNewParticipant || evs[0].Source != 2 {
		t.Errorf("Join's notifications to the owner: %+v", evs)
	}
	if err := h.srv.CheckParticipation(ctx, 1, gid, []types.PID{2}); err != nil {
		t.Errorf("CheckParticipation of two participants: %v", err)
	}
	if err := h.srv.CheckParticipation(ctx, 1, gid, []types.PID{4}); !errors.Is(err, matchmaking.ResultNotParticipatedGathering) {
		t.Errorf("CheckParticipation of an outsider: %v", err)
	}
	if err := h.srv.CheckJoin(ctx, 3, gid); err != nil {
		t.Errorf("CheckJoin without friends or hooks: %v", err)
	}
	if _, err := h.srv.UpdateOwned(ctx, call(2), gid, func(ms *matchmaking.MatchmakeSession) error { ms.GameMode = 9; return nil }); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Errorf("UpdateOwned by a participant: %v", err)
	}
	ms, err := h.srv.UpdateOwned(ctx, call(1), gid, func(ms *matchmaking.MatchmakeSession) error { ms.GameMode = 9; return nil })
	if err != nil || ms.GameMode != 9 {
		t.Errorf("UpdateOwned by the owner: %+v, %v", ms, err)
	}
	h.conns[1].events(t, h.st, h.v)
	h.conns[2].events(t, h.st, h.v)

	if err := h.srv.Leave(ctx, call(2), gid, "bye"); err != nil {
		t.Fatal(err)
	}
	if evs := h.conns[1].events(t, h.st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeParticipationEnded || evs[0].StrParam != "bye" {
		t.Errorf("Leave's notifications to the owner: %+v", evs)
	}
	// A change the variant commits itself, announced with Notify.
	ch, err := h.srv.Store.Join(ctx, gid, matchmaking.Participant{PID: 3, Slots: 1, Message: "via the store"}, matchmaking.Passwords{})
	if err != nil {
		t.Fatal(err)
	}
	h.srv.Notify(ctx, ch, 3, "via the store")
	if evs := h.conns[1].events(t, h.st, h.v); len(evs) != 1 || evs[0].Type != notifications.TypeNewParticipant || evs[0].StrParam != "via the store" {
		t.Errorf("Notify's notifications to the owner: %+v", evs)
	}
}
