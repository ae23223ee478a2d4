package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// systemPassworder is the store method GenerateMatchmakeSessionSystemPassword
// reads the password with.
type systemPassworder interface {
	SystemPassword(ctx context.Context, gid uint32) (string, error)
}

// privateSessions: a session with a user or a system password is entered only
// by a join that gives that password. Auto-matchmaking never joins one, with
// or without search criteria, whatever the criteria's exclude flags say
// (m_ExcludeUserPasswordSet and m_ExcludeSystemPasswordSet false, as NEX 3.7-3.8
// clients may send them, or absent, as revision-0 criteria are): it carries no
// password. A session created with m_SystemPasswordEnabled has a system
// password from the start.
func privateSessions(t *testing.T, m matchmaking.Store) {
	ctx := context.Background()
	sp, ok := m.(systemPassworder)
	if !ok {
		t.Fatal("store has no SystemPassword method (GenerateMatchmakeSessionSystemPassword needs it)")
	}
	user := Session(8)
	user.UserPassword = "pw"
	user.UserPasswordEnabled = true
	u, err := m.Create(ctx, user, Participant(1))
	if err != nil {
		t.Fatal(err)
	}
	system := Session(8)
	system.SystemPasswordEnabled = true
	s, err := m.Create(ctx, system, Participant(2))
	if err != nil {
		t.Fatal(err)
	}
	spw, err := sp.SystemPassword(ctx, s.Session.ID)
	if err != nil || spw == "" {
		t.Fatalf("session created with a system password has %q (%v)", spw, err)
	}
	// A session whose system password the owner turned on afterwards.
	later, err := m.Create(ctx, Session(8), Participant(3))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Update(ctx, later.Session.ID, func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
		s.SystemPasswordEnabled = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	private := map[uint32]bool{u.Session.ID: true, s.Session.ID: true, later.Session.ID: true}

	// Every auto-matchmake shape: no criteria, criteria with the exclude
	// flags off (3.7-3.8), criteria without them (revision 0), several
	// criteria, criteria that name nothing.
	for i, crit := range [][]matchmaking.SearchCriteria{
		nil,
		{{GameMode: "3", MatchmakeSystemType: "1", VacantOnly: true, ExcludeLocked: true}},
		{{GameMode: "3"}},
		{{Attributes: []string{"1", "2"}}, {GameMode: "3|4"}},
		{{}},
	} {
		pid := types.PID(100 + i)
		c, created, err := m.AutoMatchmake(ctx, crit, Session(8), Participant(pid))
		if err != nil {
			t.Fatalf("criteria %d: %v", i, err)
		}
		if !created || private[c.Session.ID] {
			t.Fatalf("criteria %d: auto-matchmake entered session %d (created=%v) of %v without its password", i, c.Session.ID, created, private)
		}
		if _, err := m.Leave(ctx, c.Session.ID, pid); err != nil {
			t.Fatal(err)
		}
	}

	// Joins by id: without, with a wrong and with the right password.
	for _, tc := range []struct {
		name string
		gid  uint32
		pw   matchmaking.Passwords
		want error
	}{
		{"user, none", u.Session.ID, matchmaking.Passwords{}, matchmaking.ResultUserPasswordUnmatch},
		{"user, wrong", u.Session.ID, matchmaking.Passwords{User: "PW"}, matchmaking.ResultUserPasswordUnmatch},
		{"user, system's field", u.Session.ID, matchmaking.Passwords{System: "pw"}, matchmaking.ResultUserPasswordUnmatch},
		{"system, none", s.Session.ID, matchmaking.Passwords{}, matchmaking.ResultSystemPasswordUnmatch},
		{"system, user's field", s.Session.ID, matchmaking.Passwords{User: spw}, matchmaking.ResultSystemPasswordUnmatch},
		{"system later, none", later.Session.ID, matchmaking.Passwords{}, matchmaking.ResultSystemPasswordUnmatch},
		{"user, right", u.Session.ID, matchmaking.Passwords{User: "pw"}, nil},
		{"system, right", s.Session.ID, matchmaking.Passwords{System: spw}, nil},
	} {
		_, err := m.Join(ctx, tc.gid, Participant(200), tc.pw)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if err == nil {
			if _, err := m.Leave(ctx, tc.gid, 200); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Browsing lists them (a client that knows the password joins by id),
	// unless the criteria exclude them.
	all, err := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3"}, 0, 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("browse: %d sessions, %v; want 3", len(all), err)
	}
	open, err := m.Browse(ctx, matchmaking.SearchCriteria{GameMode: "3", ExcludeUserPasswordSet: true, ExcludeSystemPasswordSet: true}, 0, 10)
	if err != nil || len(open) != 0 {
		t.Fatalf("browse without passworded sessions: %d sessions, %v; want 0", len(open), err)
	}
	// Clearing the system password opens the session to auto-matchmaking.
	if _, err := m.Update(ctx, later.Session.ID, func(s *matchmaking.MatchmakeSession, _ []matchmaking.Participant) error {
		s.SystemPasswordEnabled = false
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c, created, err := m.AutoMatchmake(ctx, nil, Session(8), Participant(300))
	if err != nil || created || c.Session.ID != later.Session.ID {
		t.Fatalf("after the system password was cleared: session %d created=%v %v; want %d", c.Session.ID, created, err, later.Session.ID)
	}
}
