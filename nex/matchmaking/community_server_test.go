package matchmaking_test

import (
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

func club(max uint16, password string) matchmaking.PersistentGathering {
	return matchmaking.PersistentGathering{
		Gathering:     matchmaking.Gathering{ID: 4242, Owner: 9, MinParticipants: 1, MaxParticipants: max, Description: "club"},
		CommunityType: 1, Password: password, Attributes: []uint32{3, 0, 0, 0, 0, 0},
		MatchmakeSessionCount: 77, ParticipationCount: 77,
	}
}

func writeRange(w *types.Writer, rr types.ResultRange) {
	b, _ := rr.Append(w.B, w.S)
	w.B = b
}

func readCommunities(t *testing.T, r types.Reader) []matchmaking.PersistentGathering {
	t.Helper()
	list := types.ReadList(&r, "lstCommunity", matchmaking.ReadPersistentGathering)
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	return list
}

// TestCommunityMethods calls Matchmake Extension 17-22, 32 and 54 as clients
// do, in each settings family, with the pages' result codes for bad input.
func TestCommunityMethods(t *testing.T) {
	for _, st := range []types.Settings{{}, {StructureHeader: true}, {StructureHeader: true, PIDSize: 8}} {
		t.Run(notifications.DefaultVersion(st).String(), func(t *testing.T) { testCommunityMethods(t, st) })
	}
}

func testCommunityMethods(t *testing.T, st types.Settings) {
	h := newHarness(t, st)
	h.srv.OfficialOwners = []types.PID{1}
	ext := matchmaking.ProtocolMatchmakeExtension
	create := func(pid types.PID, g matchmaking.PersistentGathering) uint32 {
		t.Helper()
		r := h.mustCall(t, pid, ext, matchmaking.MethodCreateCommunity, func(w *types.Writer) { g.Append(w); w.String("hello") })
		gid := r.U32("gid")
		if err := r.Done(); err != nil || gid == 0 {
			t.Fatalf("CreateCommunity: %d %v", gid, err)
		}
		return gid
	}
	official := create(1, club(3, "secret"))
	mine := create(2, club(8, ""))
	join := func(pid types.PID, gid uint32, pw string) error {
		_, err := h.call(t, pid, ext, matchmaking.MethodJoinCommunity, func(w *types.Writer) { w.U32(gid); w.String("hi"); w.String(pw) })
		return err
	}
	for _, tc := range []struct {
		pid  types.PID
		gid  uint32
		pw   string
		want error
	}{
		{3, 999999, "", matchmaking.ResultSessionVoid},
		{3, official, "nope", matchmaking.ResultInvalidGatheringPassword},
		{3, official, "secret", nil},
		{3, official, "secret", matchmaking.ResultAlreadyParticipatedGathering},
		{4, official, "secret", nil},
		{2, official, "secret", matchmaking.ResultSessionFull},
		{3, mine, "", nil},
	} {
		if err := join(tc.pid, tc.gid, tc.pw); tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Fatalf("PID %d JoinCommunity(%d, %q): %v, want %v", tc.pid, tc.gid, tc.pw, err, tc.want)
		}
	}
	// FindCommunityByGatheringId: server-owned fields are the server's; the
	// password only reaches the owner.
	byID := func(pid types.PID) []matchmaking.PersistentGathering {
		return readCommunities(t, h.mustCall(t, pid, ext, matchmaking.MethodFindCommunityByGatheringID, func(w *types.Writer) {
			types.WriteList(w, []uint32{official, mine, 999999}, (*types.Writer).U32)
		}))
	}
	gs := byID(1)
	if len(gs) != 2 || gs[0].ID != official || gs[0].Owner != 1 || gs[0].ParticipationCount != 3 || gs[0].Password != "secret" ||
		gs[0].MatchmakeSessionCount != 0 || gs[1].ID != mine || gs[1].ParticipationCount != 2 {
		t.Fatalf("FindCommunityByGatheringId as the owner: %+v", gs)
	}
	if gs := byID(3); gs[0].Password != "" {
		t.Fatalf("a member sees the password %q", gs[0].Password)
	}
	// FindOfficialCommunity: only PID 1's; available only: it is full.
	official2 := func(available bool) []matchmaking.PersistentGathering {
		return readCommunities(t, h.mustCall(t, 3, ext, matchmaking.MethodFindOfficialCommunity, func(w *types.Writer) {
			w.Bool(available)
			writeRange(w, types.ResultRange{Size: 10})
		}))
	}
	if gs := official2(false); len(gs) != 1 || gs[0].ID != official {
		t.Fatalf("FindOfficialCommunity: %+v", gs)
	}
	if gs := official2(true); len(gs) != 0 {
		t.Fatalf("FindOfficialCommunity available only (the official one is full): %+v", gs)
	}
	// FindCommunityByParticipant and FindCommunityByOwner.
	byPID := func(method uint32, pid types.PID, rr types.ResultRange) []uint32 {
		gs := readCommunities(t, h.mustCall(t, 4, ext, method, func(w *types.Writer) { w.PID(pid); writeRange(w, rr) }))
		var ids []uint32
		for _, g := range gs {
			ids = append(ids, g.ID)
		}
		return ids
	}
	if ids := byPID(matchmaking.MethodFindCommunityByParticipant, 3, types.ResultRange{Size: 10}); len(ids) != 2 || ids[0] != official || ids[1] != mine {
		t.Fatalf("FindCommunityByParticipant(3): %v", ids)
	}
	if ids := byPID(matchmaking.MethodFindCommunityByParticipant, 3, types.ResultRange{Offset: 1, Size: 10}); len(ids) != 1 || ids[0] != mine {
		t.Fatalf("FindCommunityByParticipant(3) from 1: %v", ids)
	}
	if ids := byPID(matchmaking.MethodFindCommunityByOwner, 2, types.ResultRange{Size: 10}); len(ids) != 1 || ids[0] != mine {
		t.Fatalf("FindCommunityByOwner(2): %v", ids)
	}
	// A session held in community "mine" counts in GetSimpleCommunity.
	s := room()
	s.MatchmakeSystemType = matchmaking.CommunitySystemType
	s.Attributes = []uint32{0, mine, 0, 0, 0, 0}
	h.mustCall(t, 3, ext, matchmaking.MethodCreateMatchmakeSession, func(w *types.Writer) {
		w.AnyDataHolder(h.holder(s))
		w.String("")
		if h.v >= types.Version3_4 {
			w.U16(1)
		}
	})
	r := h.mustCall(t, 3, ext, matchmaking.MethodGetSimpleCommunity, func(w *types.Writer) {
		types.WriteList(w, []uint32{official, mine}, (*types.Writer).U32)
	})
	sc := types.ReadList(&r, "lstSimpleCommunityList", matchmaking.ReadSimpleCommunity)
	if err := r.Done(); err != nil || len(sc) != 2 || sc[0] != (matchmaking.SimpleCommunity{GID: official}) ||
		sc[1] != (matchmaking.SimpleCommunity{GID: mine, MatchmakeSessionCount: 1}) {
		t.Fatalf("GetSimpleCommunity: %+v %v", sc, err)
	}
	// UpdateCommunity: the owner only.
	upd := club(8, "")
	upd.ID, upd.Description = mine, "renamed"
	if _, err := h.call(t, 3, ext, matchmaking.MethodUpdateCommunity, func(w *types.Writer) { upd.Append(w) }); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Fatalf("UpdateCommunity by a member: %v", err)
	}
	h.mustCall(t, 2, ext, matchmaking.MethodUpdateCommunity, func(w *types.Writer) { upd.Append(w) })
	if gs := byID(2); gs[1].Description != "renamed" || gs[1].Owner != 2 {
		t.Fatalf("after UpdateCommunity: %+v", gs[1])
	}
	upd.ID = 999999
	if _, err := h.call(t, 2, ext, matchmaking.MethodUpdateCommunity, func(w *types.Writer) { upd.Append(w) }); !errors.Is(err, matchmaking.ResultSessionVoid) {
		t.Fatalf("UpdateCommunity of an unknown id: %v", err)
	}
	// gidForParticipationCheck: members of the community only.
	for _, tc := range []struct {
		pid  types.PID
		gid  uint32
		want error
	}{{2, official, matchmaking.ResultNotParticipatedGathering}, {4, 999999, matchmaking.ResultSessionVoid}, {4, official, nil}} {
		_, err := h.call(t, tc.pid, ext, matchmaking.MethodCreateMatchmakeSessionWithParam, func(w *types.Writer) {
			p := matchmaking.CreateParam{Session: room(), GIDForParticipationCheck: tc.gid, ParticipationCount: 1}
			p.Append(w)
		})
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Fatalf("PID %d creates with participation check %d: %v, want %v", tc.pid, tc.gid, err, tc.want)
		}
	}
	_, err := h.call(t, 1, ext, matchmaking.MethodAutoMatchmakeWithParamPostpone, func(w *types.Writer) {
		p := matchmaking.AutoMatchmakeParam{Session: room(), GIDForParticipationCheck: official, AdditionalParticipants: []types.PID{2}, ParticipationCount: 1}
		p.Append(w)
	})
	if !errors.Is(err, matchmaking.ResultNotParticipatedGathering) {
		t.Fatalf("auto-matchmake with a non-member additional participant: %v", err)
	}
	// Bad input: truncated, trailing bytes, invalid values.
	if _, err := h.call(t, 1, ext, matchmaking.MethodCreateCommunity, func(w *types.Writer) { w.U32(1) }); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("truncated CreateCommunity: %v", err)
	}
	if _, err := h.call(t, 1, ext, matchmaking.MethodJoinCommunity, func(w *types.Writer) { w.U32(mine); w.String(""); w.String(""); w.U8(0) }); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("JoinCommunity with trailing bytes: %v", err)
	}
	if _, err := h.call(t, 1, ext, matchmaking.MethodCreateCommunity, func(w *types.Writer) { g := club(0, ""); g.Append(w); w.String("") }); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("community of at most 0: %v", err)
	}
	if _, err := h.call(t, 1, ext, matchmaking.MethodGetSimpleCommunity, func(w *types.Writer) {
		types.WriteList(w, make([]uint32, matchmaking.MaxBrowseResults+1), (*types.Writer).U32)
	}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("GetSimpleCommunity of too many ids: %v", err)
	}
}

// sessionsOnly hides the store's CommunityStore.
type sessionsOnly struct{ matchmaking.Store }

// TestCommunityNotImplemented: a Store without communities answers
// Core::NotImplemented.
func TestCommunityNotImplemented(t *testing.T) {
	h := newHarness(t, types.Settings{})
	h.srv.Store = sessionsOnly{h.srv.Store}
	for _, m := range []uint32{17, 18, 19, 20, 21, 22, 32, 54} {
		if _, err := h.call(t, 1, matchmaking.ProtocolMatchmakeExtension, m, func(w *types.Writer) {}); !errors.Is(err, types.CoreNotImplemented) {
			t.Fatalf("method %d: %v, want Core::NotImplemented", m, err)
		}
	}
}
