package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// OpenMatchmaking opens n handles on one fresh, empty database: n secure nodes
// sharing it, each with its own connections.
type OpenMatchmaking func(t *testing.T, n int) []matchmaking.Store

// Session is the session template of the matchmaking suite: game mode 3,
// system type 1, up to max participants, owner migration on.
func Session(max uint16) matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{
		Gathering:         matchmaking.Gathering{MinParticipants: 2, MaxParticipants: max, Flags: matchmaking.FlagMigrateOwner},
		GameMode:          3,
		Attributes:        []uint32{1, 2, 0, 0, 0, 0},
		OpenParticipation: true, MatchmakeSystemType: 1,
		ApplicationBuffer: []byte("app"),
	}
}

// Participant is pid joining on node "n1", on a connection numbered like it.
func Participant(pid types.PID) matchmaking.Participant {
	return matchmaking.Participant{PID: pid, Node: "n1", Conn: uint64(pid)}
}

// MatchmakingNodes runs the matchmaking cases beyond Matchmaking's: clients
// spread over several handles on one database (three secure nodes, three
// connection pools), searches in several game modes at once, the order
// sessions are picked in, what auto-matchmaking skips, updates and system
// passwords, a node's reset beside another node's sessions, and searches
// longer than one page. open makes fresh databases.
func MatchmakingNodes(t *testing.T, open OpenMatchmaking) {
	ctx := context.Background()
	one := func(t *testing.T) matchmaking.Store { return open(t, 1)[0] }

	// 64 clients into sessions of 8 over three handles (three nodes, three
	// connection pools): exactly 8 full sessions; only the database's
	// transactions keep them apart.
	t.Run("64 concurrent auto-matchmakes over 3 nodes", func(t *testing.T) { autoMatchmakeConcurrent(t, open(t, 3)...) })

	t.Run("auto-matchmake in two game modes at once", func(t *testing.T) {
		ms := open(t, 2)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := Session(4)
				s.GameMode = uint32(10 + i%2)
				c, _, err := ms[i%2].AutoMatchmake(ctx, nil, s, Participant(types.PID(100+i)))
				if err == nil && c.Session.GameMode != s.GameMode {
					err = fmt.Errorf("PID %d asked for game mode %d, got %d", 100+i, s.GameMode, c.Session.GameMode)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, gm := range []string{"10", "11"} {
			got, err := ms[0].Browse(ctx, matchmaking.SearchCriteria{GameMode: gm}, 0, 100)
			if err != nil || len(got) != 8 {
				t.Fatalf("game mode %s: %d sessions, %v; want 8", gm, len(got), err)
			}
			for _, s := range got {
				if s.ParticipationCount != 4 {
					t.Fatalf("game mode %s: session %d has %d of 4", gm, s.ID, s.ParticipationCount)
				}
			}
		}
	})

	t.Run("concurrent joins never over-fill", func(t *testing.T) {
		joinNeverOverfills(t, open(t, 2)...)
	})

	t.Run("auto-matchmake picks the fullest, then the oldest", func(t *testing.T) {
		m := one(t)
		a, _ := m.Create(ctx, Session(8), Participant(1))
		b, _ := m.Create(ctx, Session(8), Participant(2))
		if _, err := m.Join(ctx, b.Session.ID, Participant(3), matchmaking.Passwords{}); err != nil {
			t.Fatal(err)
		}
		c, created, err := m.AutoMatchmake(ctx, nil, Session(8), Participant(4))
		if err != nil || created || c.Session.ID != b.Session.ID {
			t.Fatalf("joined %d (created=%v, %v), want the fuller %d", c.Session.ID, created, err, b.Session.ID)
		}
		d, _ := m.Create(ctx, Session(8), Participant(5))
		if _, err := m.Join(ctx, d.Session.ID, Participant(6), matchmaking.Passwords{}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Join(ctx, a.Session.ID, Participant(7), matchmaking.Passwords{}); err != nil {
			t.Fatal(err)
		}
		// a and d have 2 each, b has 3; a is older than d.
		got, err := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3"}, 0, 10)
		if err != nil || len(got) != 3 || got[0].ID != b.Session.ID || got[1].ID != a.Session.ID || got[2].ID != d.Session.ID {
			t.Fatalf("Browse order: %v %v", ids(got), err)
		}
		if got, _ := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3"}, 1, 1); len(got) != 1 || got[0].ID != a.Session.ID {
			t.Fatalf("Browse offset 1 size 1: %v", ids(got))
		}
		// A client already in b is not matched into it again.
		c, created, err = m.AutoMatchmake(ctx, nil, Session(8), Participant(3))
		if err != nil || created || c.Session.ID != a.Session.ID {
			t.Fatalf("member of b matched into %d (created=%v, %v), want %d", c.Session.ID, created, err, a.Session.ID)
		}
	})

	t.Run("auto-matchmake skips closed, passworded and too small sessions", func(t *testing.T) {
		m := one(t)
		closed := Session(4)
		closed.OpenParticipation = false
		locked := Session(4)
		locked.UserPassword = "pw"
		for i, s := range []matchmaking.MatchmakeSession{closed, locked} {
			if _, err := m.Create(ctx, s, Participant(types.PID(1+i))); err != nil {
				t.Fatal(err)
			}
		}
		small, _ := m.Create(ctx, Session(4), Participant(3))
		p := Participant(4)
		p.Slots = 4 // a console with 4 players does not fit beside the owner
		c, created, err := m.AutoMatchmake(ctx, nil, Session(4), p)
		if err != nil || !created || c.Session.ID == small.Session.ID || c.Session.ParticipationCount != 4 {
			t.Fatalf("4 players: %+v created=%v %v", c.Session.Gathering, created, err)
		}
		p = Participant(5)
		p.Slots = 3
		c, created, err = m.AutoMatchmake(ctx, nil, Session(4), p)
		if err != nil || created || c.Session.ID != small.Session.ID || c.Session.ParticipationCount != 4 {
			t.Fatalf("3 players: %+v created=%v %v", c.Session.Gathering, created, err)
		}
		p.PID, p.Slots = 6, 5
		if _, _, err := m.AutoMatchmake(ctx, nil, Session(4), p); !errors.Is(err, matchmaking.ResultSessionFull) {
			t.Fatalf("5 players for a session of 4: %v, want SessionFull", err)
		}
	})

	t.Run("update keeps id and count, system password", func(t *testing.T) {
		m := one(t)
		c, _ := m.Create(ctx, Session(4), Participant(1))
		gid := c.Session.ID
		ch, err := m.Update(ctx, gid, func(s *matchmaking.MatchmakeSession, ps []matchmaking.Participant) error {
			if len(ps) != 1 || ps[0].PID != 1 {
				return fmt.Errorf("participants %+v", ps)
			}
			s.ID, s.ParticipationCount, s.Description = 77, 3, "renamed"
			s.Attributes[0] = 42
			s.SystemPasswordEnabled = true
			s.Owner = 5
			return nil
		})
		if err != nil || ch.Session.ID != gid || ch.Session.ParticipationCount != 1 || ch.Session.Description != "renamed" ||
			ch.Session.Attributes[0] != 42 || ch.PrevOwner != 1 || ch.Seq != c.Seq+1 {
			t.Fatalf("Update: %+v %v", ch, err)
		}
		refused := errors.New("refused")
		if _, err := m.Update(ctx, gid, func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
			s.Description = "not stored"
			return refused
		}); !errors.Is(err, refused) {
			t.Fatalf("Update refused by f: %v", err)
		}
		if _, err := m.Update(ctx, gid, func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
			s.MaxParticipants = 0
			return nil
		}); !errors.Is(err, types.CoreInvalidArgument) {
			t.Fatalf("Update to an invalid session: %v", err)
		}
		s, _, err := m.Get(ctx, gid)
		if err != nil || s.Description != "renamed" || s.MaxParticipants != 4 {
			t.Fatalf("after refused updates: %+v %v", s, err)
		}
		sp, ok := m.(interface {
			SystemPassword(ctx context.Context, gid uint32) (string, error)
		})
		if !ok {
			t.Fatal("store has no SystemPassword method (GenerateMatchmakeSessionSystemPassword needs it)")
		}
		pw, err := sp.SystemPassword(ctx, gid)
		if err != nil || pw == "" {
			t.Fatalf("system password %q %v", pw, err)
		}
		if _, err := m.Join(ctx, gid, Participant(2), matchmaking.Passwords{System: "wrong"}); !errors.Is(err, matchmaking.ResultSystemPasswordUnmatch) {
			t.Fatalf("wrong system password: %v", err)
		}
		if _, err := m.Join(ctx, gid, Participant(2), matchmaking.Passwords{System: pw}); err != nil {
			t.Fatalf("right system password: %v", err)
		}
		// A session with a system password is not auto-matchmade into.
		if c, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(3)); err != nil || !created {
			t.Fatalf("auto-matchmake beside a system-passworded session: %+v created=%v %v", c.Session.Gathering, created, err)
		}
		ch, err = m.Delete(ctx, gid, func(s *matchmaking.MatchmakeSession, ps []matchmaking.Participant) error {
			if len(ps) != 2 {
				return fmt.Errorf("%d participants", len(ps))
			}
			return nil
		})
		if err != nil || !ch.Deleted || len(ch.Participants) != 2 {
			t.Fatalf("Delete: %+v %v", ch, err)
		}
		if _, err := m.Delete(ctx, gid, nil); !errors.Is(err, matchmaking.ResultSessionVoid) {
			t.Fatalf("Delete again: %v", err)
		}
	})

	t.Run("reset beside another node", func(t *testing.T) {
		m := one(t)
		c, _ := m.Create(ctx, Session(4), Participant(1))
		gid := c.Session.ID
		for _, pid := range []types.PID{2, 3} {
			if _, err := m.Join(ctx, gid, Participant(pid), matchmaking.Passwords{}); err != nil {
				t.Fatal(err)
			}
		}
		ch, err := m.Leave(ctx, gid, 1)
		if err != nil || ch.PrevOwner != 1 || ch.Session.Owner != 2 || ch.Session.Host != 2 || ch.Deleted ||
			ch.Session.ParticipationCount != 2 || ch.Left == nil || ch.Left.PID != 1 {
			t.Fatalf("owner left: %+v %v", ch, err)
		}
		cs, err := m.Disconnect(ctx, "n1", 3)
		if err != nil || len(cs) != 1 || cs[0].Left.PID != 3 || cs[0].Session.ParticipationCount != 1 {
			t.Fatalf("disconnect: %+v %v", cs, err)
		}
		if cs, err := m.Disconnect(ctx, "n1", 12345); err != nil || len(cs) != 0 {
			t.Fatalf("disconnect of a connection in no gathering: %+v %v", cs, err)
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
		// A session on another node survives n1's reset; n1's players leave it.
		o := Participant(8)
		o.Node = "n2"
		other, _ := m.Create(ctx, Session(4), o)
		m.Join(ctx, other.Session.ID, Participant(9), matchmaking.Passwords{})
		cs, err = m.ResetNode(ctx, "n1")
		if err != nil || len(cs) != 2 {
			t.Fatalf("ResetNode: %+v %v, want 2 changes", cs, err)
		}
		for _, c := range cs {
			switch {
			case c.Session.ID == gid && c.Deleted && c.Left.PID == 2:
			case c.Session.ID == other.Session.ID && !c.Deleted && c.Left.PID == 9 && len(c.Participants) == 1:
			default:
				t.Fatalf("ResetNode change %+v", c)
			}
		}
		if _, _, err := m.Get(ctx, gid); !errors.Is(err, matchmaking.ResultSessionVoid) {
			t.Fatalf("session after reset: %v", err)
		}
		if s, ps, err := m.Get(ctx, other.Session.ID); err != nil || len(ps) != 1 || ps[0].PID != 8 || s.Owner != 8 || s.ParticipationCount != 1 {
			t.Fatalf("n2's session after n1's reset: %+v %+v %v", s.Gathering, ps, err)
		}
		if cs, err := m.ResetNode(ctx, "n1"); err != nil || len(cs) != 0 {
			t.Fatalf("second ResetNode: %+v %v", cs, err)
		}
		if got, err := m.Find(ctx, matchmaking.Query{Participant: 2}); err != nil || len(got) != 0 {
			t.Fatalf("PID 2 still in %v, %v", ids(got), err)
		}
	})

	t.Run("find and browse pages", func(t *testing.T) {
		m := one(t)
		a, _ := m.Create(ctx, Session(4), Participant(1))
		b, _ := m.Create(ctx, Session(4), Participant(2))
		m.Join(ctx, b.Session.ID, Participant(3), matchmaking.Passwords{})
		closed := Session(2)
		closed.OpenParticipation = false
		cl, _ := m.Create(ctx, closed, Participant(4))
		m.Join(ctx, cl.Session.ID, Participant(1), matchmaking.Passwords{}) // refused: closed
		got, err := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3"}, 0, 10)
		if err != nil || len(got) != 3 || got[0].ID != b.Session.ID {
			t.Fatalf("Browse: %v %v", ids(got), err)
		}
		got, err = m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3", ExcludeLocked: true}, 0, 10)
		if err != nil || len(got) != 2 {
			t.Fatalf("Browse without closed: %v %v", ids(got), err)
		}
		got, err = m.Browse(ctx, matchmaking.SearchCriteria{}, 0xFFFFFFFF, 0)
		if err != nil || len(got) != 3 {
			t.Fatalf("Browse everything: %v %v", ids(got), err)
		}
		if _, err := m.Browse(ctx, matchmaking.SearchCriteria{}, 20000, 10); !errors.Is(err, types.CoreInvalidArgument) {
			t.Fatalf("Browse far offset: %v", err)
		}
		got, err = m.Find(ctx, matchmaking.Query{Participant: 3})
		if err != nil || len(got) != 1 || got[0].ID != b.Session.ID {
			t.Fatalf("Find by participant: %v %v", ids(got), err)
		}
		got, err = m.Find(ctx, matchmaking.Query{Owner: 1})
		if err != nil || len(got) != 1 || got[0].ID != a.Session.ID {
			t.Fatalf("Find by owner: %v %v", ids(got), err)
		}
		got, err = m.Find(ctx, matchmaking.Query{GIDs: []uint32{b.Session.ID, a.Session.ID, 999}})
		if err != nil || len(got) != 2 || got[0].ID != a.Session.ID {
			t.Fatalf("Find by ids: %v %v", ids(got), err)
		}
		got, err = m.Find(ctx, matchmaking.Query{GIDs: []uint32{a.Session.ID, b.Session.ID}, Offset: 1, Size: 1})
		if err != nil || len(got) != 1 || got[0].ID != b.Session.ID {
			t.Fatalf("Find page 2: %v %v", ids(got), err)
		}
		if _, err := m.Find(ctx, matchmaking.Query{}); !errors.Is(err, types.CoreInvalidArgument) {
			t.Fatalf("empty query: %v", err)
		}
	})

	t.Run("many sessions page through the search", func(t *testing.T) {
		m := one(t)
		// More sessions than a search reads at once, all closed but the last.
		const n = 150
		var last uint32
		for i := range n {
			s := Session(4)
			s.OpenParticipation = i == n-1
			c, err := m.Create(ctx, s, Participant(types.PID(1+i)))
			if err != nil {
				t.Fatal(err)
			}
			last = c.Session.ID
		}
		c, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(9999))
		if err != nil || created || c.Session.ID != last {
			t.Fatalf("joined %d (created=%v, %v), want the only open session %d", c.Session.ID, created, err, last)
		}
		got, err := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3"}, 100, 100)
		if err != nil || len(got) != n-100 {
			t.Fatalf("Browse from 100: %d sessions, %v; want %d", len(got), err, n-100)
		}
	})
}

func ids(ss []matchmaking.MatchmakeSession) []uint32 {
	out := make([]uint32, len(ss))
	for i := range ss {
		out[i] = ss[i].ID
	}
	return out
}
