package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// Matchmaking runs the matchmaking store suite against fresh stores made by
// open: the matching rules, the result codes, owner migration, disconnects and
// restarts, and concurrent clients (exactly 8 full sessions from 64 clients
// auto-matchmaking at once, never an over-filled session). shared, when not
// nil, opens two stores on one database (two secure servers sharing it): the
// concurrency case then spreads its clients over both, so only the database's
// transactions keep them apart.
func Matchmaking(t *testing.T, open func(t *testing.T) matchmaking.Store, shared func(t *testing.T) (matchmaking.Store, matchmaking.Store)) {
	cases := []struct {
		name string
		f    func(t *testing.T, m matchmaking.Store)
	}{
		{"join never over-fills", func(t *testing.T, m matchmaking.Store) { joinNeverOverfills(t, m) }},
		{"auto-matchmake prefers an existing session", autoMatchmakePrefersExisting},
		{"join rules", joinRules},
		{"leave, owner migration, disconnect, reset", leaveMigratesOwnerAndDisconnect},
		{"find and browse", findAndBrowse},
		{"passworded sessions are entered only with their password", privateSessions},
		{"notification data per player and type", notificationData},
		{"block lists keep blocked players apart", blockLists},
		{"NAT reports per player and connection", natRecords},
		{"NAT-aware auto-matchmaking order", natOrdering},
		{"NAT-aware auto-matchmaking weighs a bounded window", natWindowBound},
		{"64 concurrent auto-matchmakes", func(t *testing.T, m matchmaking.Store) { autoMatchmakeConcurrent(t, m) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.f(t, open(t)) })
	}
	if shared != nil {
		t.Run("64 concurrent auto-matchmakes over two stores", func(t *testing.T) {
			a, b := shared(t)
			autoMatchmakeConcurrent(t, a, b)
		})
		t.Run("64 concurrent NAT-aware auto-matchmakes over two stores", func(t *testing.T) {
			a, b := shared(t)
			natConcurrent(t, a, b)
		})
		t.Run("NAT reports across two stores", func(t *testing.T) {
			a, b := shared(t)
			natAcrossNodes(t, a, b)
		})
	}
}

// joinNeverOverfills: 40 clients joining one session of 8 at once, spread
// over the handles ms (one node or several on one database): 7 get in (the
// owner holds the eighth place), the rest get SessionFull.
func joinNeverOverfills(t *testing.T, ms ...matchmaking.Store) {
	ctx := context.Background()
	c, err := ms[0].Create(ctx, Session(8), Participant(1))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, full := 0, 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ms[i%len(ms)].Join(ctx, c.Session.ID, Participant(types.PID(100+i)), matchmaking.Passwords{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, matchmaking.ResultSessionFull):
				full++
			default:
				t.Errorf("Join: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 7 || full != 33 {
		t.Fatalf("%d joined, %d refused as full; want 7 and 33", ok, full)
	}
	s, ps, _ := ms[0].Get(ctx, c.Session.ID)
	if s.ParticipationCount != 8 || len(ps) != 8 {
		t.Fatalf("count %d, %d participants", s.ParticipationCount, len(ps))
	}
}

// autoMatchmakePrefersExisting: a client never gets a session of its own while
// a fitting open one exists, and never one that does not fit.
func autoMatchmakePrefersExisting(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	first, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(1))
	if err != nil || !created {
		t.Fatalf("first: %v created=%v", err, created)
	}
	other := Session(4)
	other.GameMode = 9
	c, created, err := m.AutoMatchmake(ctx, nil, other, Participant(2))
	if err != nil || !created || c.Session.ID == first.Session.ID {
		t.Fatalf("other game mode joined %d (created=%v, %v)", c.Session.ID, created, err)
	}
	c, created, err = m.AutoMatchmake(ctx, nil, Session(4), Participant(3))
	if err != nil || created || c.Session.ID != first.Session.ID {
		t.Fatalf("same game mode: session %d created=%v %v; want %d", c.Session.ID, created, err, first.Session.ID)
	}
	// With search criteria: attribute 0 in 0..5, game mode 3.
	crit := []matchmaking.SearchCriteria{{Attributes: []string{"0,5"}, GameMode: "3", VacantOnly: true, ExcludeLocked: true}}
	c, created, err = m.AutoMatchmake(ctx, crit, Session(4), Participant(4))
	if err != nil || created || c.Session.ID != first.Session.ID || c.Session.ParticipationCount != 3 {
		t.Fatalf("criteria: %+v created=%v %v", c.Session.Gathering, created, err)
	}
	crit[0].Attributes = []string{"7|8"}
	c, created, err = m.AutoMatchmake(ctx, crit, Session(4), Participant(5))
	if err != nil || !created {
		t.Fatalf("non-matching criteria joined %d: %v", c.Session.ID, err)
	}
	crit[0].GameMode = "5,1"
	if _, _, err := m.AutoMatchmake(ctx, crit, Session(4), Participant(6)); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("reversed range: %v", err)
	}
}
func joinRules(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	s := Session(2)
	s.UserPassword = "pw"
	c, err := m.Create(ctx, s, Participant(1))
	if err != nil {
		t.Fatal(err)
	}
	gid := c.Session.ID
	tests := []struct {
		name string
		gid  uint32
		pid  types.PID
		pw   string
		want error
	}{
		{"unknown session", gid + 100, 2, "pw", matchmaking.ResultSessionVoid},
		{"wrong password", gid, 2, "nope", matchmaking.ResultUserPasswordUnmatch},
		{"already in", gid, 1, "pw", matchmaking.ResultAlreadyParticipatedGathering},
		{"joins", gid, 2, "pw", nil},
		{"full", gid, 3, "pw", matchmaking.ResultSessionFull},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Join(ctx, tc.gid, Participant(tc.pid), matchmaking.Passwords{User: tc.pw})
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Fatalf("Join: %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := m.Update(ctx, gid, func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
		s.OpenParticipation = false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Leave(ctx, gid, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Join(ctx, gid, Participant(3), matchmaking.Passwords{User: "pw"}); !errors.Is(err, matchmaking.ResultSessionClosed) {
		t.Fatalf("closed: %v", err)
	}
	if _, err := m.Leave(ctx, gid, 3); !errors.Is(err, matchmaking.ResultNotParticipatedGathering) {
		t.Fatalf("leave without joining: %v", err)
	}
	big := Session(4)
	big.ApplicationBuffer = make([]byte, matchmaking.MaxApplicationBuffer+1)
	if _, err := m.Create(ctx, big, Participant(9)); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("oversized buffer: %v", err)
	}
}
func leaveMigratesOwnerAndDisconnect(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	c, _ := m.Create(ctx, Session(4), Participant(1))
	gid := c.Session.ID
	for _, pid := range []types.PID{2, 3} {
		if _, err := m.Join(ctx, gid, Participant(pid), matchmaking.Passwords{}); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := m.Leave(ctx, gid, 1)
	if err != nil || ch.PrevOwner != 1 || ch.Session.Owner != 2 || ch.Deleted || ch.Session.ParticipationCount != 2 {
		t.Fatalf("owner left: %+v %v", ch, err)
	}
	cs, err := m.Disconnect(ctx, "n1", 3)
	if err != nil || len(cs) != 1 || cs[0].Left.PID != 3 || cs[0].Session.ParticipationCount != 1 {
		t.Fatalf("disconnect: %+v %v", cs, err)
	}
	// Without FlagMigrateOwner the session goes with its owner.
	s := Session(4)
	s.Flags = 0
	c, _ = m.Create(ctx, s, Participant(5))
	m.Join(ctx, c.Session.ID, Participant(6), matchmaking.Passwords{})
	ch, err = m.Leave(ctx, c.Session.ID, 5)
	if err != nil || !ch.Deleted || len(ch.Participants) != 1 || ch.Participants[0].PID != 6 {
		t.Fatalf("owner left without migration: %+v %v", ch, err)
	}
	if _, _, err := m.Get(ctx, c.Session.ID); !errors.Is(err, matchmaking.ResultSessionVoid) {
		t.Fatalf("deleted session: %v", err)
	}
	// A restart of node n1 clears what its connections left behind.
	if cs, err := m.ResetNode(ctx, "n1"); err != nil || len(cs) != 1 || !cs[0].Deleted || cs[0].Left.PID != 2 {
		t.Fatalf("ResetNode: %+v %v", cs, err)
	}
	if _, _, err := m.Get(ctx, gid); !errors.Is(err, matchmaking.ResultSessionVoid) {
		t.Fatalf("session after reset: %v", err)
	}
}
func findAndBrowse(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	a, _ := m.Create(ctx, Session(4), Participant(1))
	b, _ := m.Create(ctx, Session(4), Participant(2))
	m.Join(ctx, b.Session.ID, Participant(3), matchmaking.Passwords{})
	got, err := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3"}, 0, 10)
	if err != nil || len(got) != 2 || got[0].ID != b.Session.ID {
		t.Fatalf("Browse: %v %v", got, err)
	}
	got, err = m.Find(ctx, matchmaking.Query{Participant: 3})
	if err != nil || len(got) != 1 || got[0].ID != b.Session.ID {
		t.Fatalf("Find by participant: %v %v", got, err)
	}
	got, err = m.Find(ctx, matchmaking.Query{Owner: 1})
	if err != nil || len(got) != 1 || got[0].ID != a.Session.ID {
		t.Fatalf("Find by owner: %v %v", got, err)
	}
	got, err = m.Find(ctx, matchmaking.Query{GIDs: []uint32{a.Session.ID, b.Session.ID, 999}})
	if err != nil || len(got) != 2 {
		t.Fatalf("Find by ids: %v %v", got, err)
	}
}

// autoMatchmakeConcurrent: 64 clients auto-matchmaking at once into sessions
// of at most 8 end in exactly 8 full sessions, each participant in one. The
// clients are split over the stores given.
func autoMatchmakeConcurrent(t *testing.T, stores ...matchmaking.Store) {
	autoMatchmakeConcurrentBy(t, func(m matchmaking.Store, s matchmaking.MatchmakeSession, p matchmaking.Participant) (matchmaking.Change, bool, error) {
		return m.AutoMatchmake(context.Background(), nil, s, p)
	}, stores...)
}

// autoMatchmakeConcurrentBy is autoMatchmakeConcurrent with the clients'
// auto-matchmakes made by auto.
func autoMatchmakeConcurrentBy(t *testing.T, auto func(m matchmaking.Store, s matchmaking.MatchmakeSession, p matchmaking.Participant) (matchmaking.Change, bool, error), stores ...matchmaking.Store) {
	m := stores[0]
	ctx := context.Background()
	const clients, size = 64, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	created := make(chan uint32, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, isNew, err := auto(stores[i%len(stores)], Session(size), Participant(types.PID(1000+i)))
			if err != nil {
				errs <- err
				return
			}
			if c.Session.ParticipationCount > size {
				errs <- errors.New("over-filled session returned")
			}
			if isNew {
				created <- c.Session.ID
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(created)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(created); n != clients/size {
		t.Fatalf("%d sessions created, want %d", n, clients/size)
	}
	seen := map[types.PID]bool{}
	for gid := range created {
		s, ps, err := m.Get(ctx, gid)
		if err != nil {
			t.Fatal(err)
		}
		if s.ParticipationCount != size || len(ps) != size {
			t.Errorf("session %d: count %d, %d participants; want %d", gid, s.ParticipationCount, len(ps), size)
		}
		for _, p := range ps {
			if seen[p.PID] {
				t.Errorf("PID %d in two sessions", p.PID)
			}
			seen[p.PID] = true
		}
	}
}
