package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// CommunityBackend is a store offering both the sessions and the communities.
type CommunityBackend interface {
	matchmaking.Store
	matchmaking.CommunityStore
}

// Communities runs the community store suite against fresh stores made by
// open: creation and ids shared with sessions, the join rules and their
// result codes, the queries, the session count, updates, and concurrent joins
// never over-filling a community.
func Communities(t *testing.T, open func(t *testing.T) CommunityBackend) {
	cases := []struct {
		name string
		f    func(t *testing.T, m CommunityBackend)
	}{
		{"create and ids", communityCreate},
		{"join rules", communityJoinRules},
		{"find and session count", communityFind},
		{"update", communityUpdate},
		{"concurrent joins never over-fill", communityConcurrentJoins},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.f(t, open(t)) })
	}
}

func community(max uint16) matchmaking.PersistentGathering {
	return matchmaking.PersistentGathering{
		Gathering:     matchmaking.Gathering{MinParticipants: 1, MaxParticipants: max, Description: "club"},
		CommunityType: 1, Attributes: []uint32{7, 0, 0, 0, 0, 0}, ApplicationBuffer: []byte("app"),
	}
}

var now = types.MakeDateTime(2026, 11, 24, 12, 0, 0)

func communityCreate(t *testing.T, m CommunityBackend) {
	ctx := context.Background()
	s, err := m.Create(ctx, Session(4), Participant(1))
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.CreateCommunity(ctx, community(8), Participant(2), false)
	if err != nil {
		t.Fatal(err)
	}
	if g.ID == 0 || g.ID == s.Session.ID || g.Owner != 2 || g.Host != 2 || g.ParticipationCount != 1 {
		t.Fatalf("created %+v (session id %d)", g, s.Session.ID)
	}
	s2, err := m.Create(ctx, Session(4), Participant(3))
	if err != nil {
		t.Fatal(err)
	}
	if s2.Session.ID == g.ID || s2.Session.ID == s.Session.ID {
		t.Fatalf("session id %d reuses an id (community %d, session %d)", s2.Session.ID, g.ID, s.Session.ID)
	}
	got, err := m.FindCommunities(ctx, matchmaking.CommunityQuery{GIDs: []uint32{g.ID, s.Session.ID, 999999}})
	if err != nil || len(got) != 1 || got[0].ID != g.ID || got[0].Description != "club" || string(got[0].ApplicationBuffer) != "app" ||
		got[0].CommunityType != 1 || got[0].ParticipationCount != 1 {
		t.Fatalf("FindCommunities by id = %+v, %v", got, err)
	}
	bad := community(0)
	if _, err := m.CreateCommunity(ctx, bad, Participant(2), false); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("community of 0: %v, want Core::InvalidArgument", err)
	}
	bad = community(4)
	bad.Attributes = make([]uint32, matchmaking.MaxAttributes+1)
	if _, err := m.CreateCommunity(ctx, bad, Participant(2), false); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("too many attributes: %v, want Core::InvalidArgument", err)
	}
}

func communityJoinRules(t *testing.T, m CommunityBackend) {
	ctx := context.Background()
	g := community(3)
	g.Password = "secret"
	c, err := m.CreateCommunity(ctx, g, Participant(1), false)
	if err != nil {
		t.Fatal(err)
	}
	check := func(pid types.PID, gid uint32, pw string, at types.DateTime, want error) {
		t.Helper()
		_, err := m.JoinCommunity(ctx, gid, Participant(pid), pw, at)
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Fatalf("PID %d joins %d with %q: %v, want %v", pid, gid, pw, err, want)
		}
	}
	check(2, 999999, "", now, matchmaking.ResultSessionVoid)
	check(2, c.ID, "wrong", now, matchmaking.ResultInvalidGatheringPassword)
	check(2, c.ID, "", now, matchmaking.ResultInvalidGatheringPassword)
	check(2, c.ID, "secret", now, nil)
	check(2, c.ID, "secret", now, matchmaking.ResultAlreadyParticipatedGathering)
	check(1, c.ID, "secret", now, matchmaking.ResultAlreadyParticipatedGathering)
	check(3, c.ID, "secret", now, nil)
	check(4, c.ID, "secret", now, matchmaking.ResultSessionFull)
	dated := community(8)
	dated.ParticipationStartDate = types.MakeDateTime(2026, 1, 1, 0, 0, 0)
	dated.ParticipationEndDate = types.MakeDateTime(2026, 6, 30, 0, 0, 0)
	d, err := m.CreateCommunity(ctx, dated, Participant(1), false)
	if err != nil {
		t.Fatal(err)
	}
	check(2, d.ID, "", types.MakeDateTime(2025, 12, 31, 0, 0, 0), matchmaking.ResultSessionClosed)
	check(2, d.ID, "", now, matchmaking.ResultSessionClosed)
	check(2, d.ID, "", types.MakeDateTime(2026, 3, 1, 0, 0, 0), nil)
	got, err := m.FindCommunities(ctx, matchmaking.CommunityQuery{GIDs: []uint32{c.ID}})
	if err != nil || len(got) != 1 || got[0].ParticipationCount != 3 {
		t.Fatalf("members after joins: %+v, %v; want 3", got, err)
	}
}

func communityFind(t *testing.T, m CommunityBackend) {
	ctx := context.Background()
	a, err := m.CreateCommunity(ctx, community(2), Participant(1), true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.CreateCommunity(ctx, community(8), Participant(1), false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.CreateCommunity(ctx, community(8), Participant(2), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.JoinCommunity(ctx, b.ID, Participant(3), "", now); err != nil {
		t.Fatal(err)
	}
	ids := func(q matchmaking.CommunityQuery) []uint32 {
		t.Helper()
		gs, err := m.FindCommunities(ctx, q)
		if err != nil {
			t.Fatalf("FindCommunities(%+v): %v", q, err)
		}
		var out []uint32
		for _, g := range gs {
			out = append(out, g.ID)
		}
		return out
	}
	same := func(what string, got []uint32, want ...uint32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
	}
	same("owned by 1", ids(matchmaking.CommunityQuery{Owner: 1}), a.ID, b.ID)
	same("owned by 1, second page", ids(matchmaking.CommunityQuery{Owner: 1, Offset: 1, Size: 1}), b.ID)
	same("member 3", ids(matchmaking.CommunityQuery{Participant: 3}), b.ID)
	same("member 1", ids(matchmaking.CommunityQuery{Participant: 1}), a.ID, b.ID)
	same("official", ids(matchmaking.CommunityQuery{Official: true}), a.ID, c.ID)
	if _, err := m.JoinCommunity(ctx, a.ID, Participant(4), "", now); err != nil {
		t.Fatal(err)
	}
	same("official available", ids(matchmaking.CommunityQuery{Official: true, Available: true, Now: now}), c.ID)
	if _, err := m.FindCommunities(ctx, matchmaking.CommunityQuery{}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("empty query: %v, want Core::InvalidArgument", err)
	}
	// Sessions held in community b: system type 5, Attributes[1] = b.
	for i, gid := range []uint32{b.ID, b.ID, c.ID} {
		s := Session(4)
		s.MatchmakeSystemType = matchmaking.CommunitySystemType
		s.Attributes = []uint32{0, gid, 0, 0, 0, 0}
		if _, err := m.Create(ctx, s, Participant(types.PID(10+i))); err != nil {
			t.Fatal(err)
		}
	}
	gs, err := m.FindCommunities(ctx, matchmaking.CommunityQuery{GIDs: []uint32{a.ID, b.ID, c.ID}})
	if err != nil || len(gs) != 3 || gs[0].MatchmakeSessionCount != 0 || gs[1].MatchmakeSessionCount != 2 || gs[2].MatchmakeSessionCount != 1 {
		t.Fatalf("session counts: %+v, %v; want 0, 2, 1", gs, err)
	}
}

func communityUpdate(t *testing.T, m CommunityBackend) {
	ctx := context.Background()
	c, err := m.CreateCommunity(ctx, community(4), Participant(1), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.JoinCommunity(ctx, c.ID, Participant(2), "", now); err != nil {
		t.Fatal(err)
	}
	u, err := m.UpdateCommunity(ctx, c.ID, func(g *matchmaking.PersistentGathering) error {
		g.Description, g.Password, g.Owner, g.ParticipationCount = "renamed", "pw", 99, 50
		return nil
	})
	if err != nil || u.Description != "renamed" || u.Password != "pw" || u.Owner != 1 || u.ParticipationCount != 2 {
		t.Fatalf("update: %+v, %v (owner and count are the server's)", u, err)
	}
	if _, err := m.JoinCommunity(ctx, c.ID, Participant(3), "", now); !errors.Is(err, matchmaking.ResultInvalidGatheringPassword) {
		t.Fatalf("join after a password was set: %v", err)
	}
	if _, err := m.UpdateCommunity(ctx, c.ID, func(g *matchmaking.PersistentGathering) error { g.MaxParticipants = 1; return nil }); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("maximum below the members: %v, want Core::InvalidArgument", err)
	}
	denied := errors.New("denied")
	if _, err := m.UpdateCommunity(ctx, c.ID, func(*matchmaking.PersistentGathering) error { return denied }); !errors.Is(err, denied) {
		t.Fatalf("refused update: %v", err)
	}
	if _, err := m.UpdateCommunity(ctx, 999999, func(*matchmaking.PersistentGathering) error { return nil }); !errors.Is(err, matchmaking.ResultSessionVoid) {
		t.Fatalf("update of an unknown community: %v", err)
	}
	got, _ := m.FindCommunities(ctx, matchmaking.CommunityQuery{GIDs: []uint32{c.ID}})
	if len(got) != 1 || got[0].Description != "renamed" || got[0].MaxParticipants != 4 {
		t.Fatalf("stored after updates: %+v", got)
	}
}

// communityConcurrentJoins: 32 clients join a community of 8 at once: 7 get
// in (the owner is the eighth), the rest get SessionFull.
func communityConcurrentJoins(t *testing.T, m CommunityBackend) {
	ctx := context.Background()
	c, err := m.CreateCommunity(ctx, community(8), Participant(1), false)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, full := 0, 0
	for i := range 32 {
		wg.Go(func() {
			_, err := m.JoinCommunity(ctx, c.ID, Participant(types.PID(100+i)), "", now)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, matchmaking.ResultSessionFull):
				full++
			default:
				t.Errorf("join: %v", err)
			}
		})
	}
	wg.Wait()
	all, err := m.FindCommunities(ctx, matchmaking.CommunityQuery{GIDs: []uint32{c.ID}})
	if ok != 7 || full != 25 || err != nil || all[0].ParticipationCount != 8 {
		t.Fatalf("%d joined, %d full, members %+v %v; want 7, 25, 8", ok, full, all, err)
	}
}
