package pgstore

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/storetest"
	"github.com/gamewire/gamewire/nex/types"
)

// TestMatchmakingStep3MigratesSessions opens a database whose matchmaking
// schema is at step 2 with a session in it: step 3 adds the search columns
// (NULL for that session), the session is found by id, auto-matchmaking
// leaves it alone until its next change (its passwords are unknown to the
// columns until then), and joins it after.
func TestMatchmakingStep3MigratesSessions(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	dsn := srv.NewDatabase(t)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := func(pid types.PID) matchmaking.Participant {
		return matchmaking.Participant{PID: pid, Node: "n", Conn: uint64(pid)}
	}
	old, err := s.Matchmaking().Create(ctx, storetest.Session(4), p(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `DROP INDEX mm_gatherings_match;
		ALTER TABLE mm_gatherings DROP COLUMN min_p, DROP COLUMN a0, DROP COLUMN a1, DROP COLUMN a2, DROP COLUMN a3,
			DROP COLUMN a4, DROP COLUMN a5, DROP COLUMN pw_flags;
		UPDATE schema_migrations SET version = 2 WHERE component = 'matchmaking'`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openAt(t, dsn)
	if v, err := s.SchemaVersions(ctx); err != nil || v["matchmaking"] != 3 {
		t.Fatalf("schema versions after reopening: %v, %v; want matchmaking at 3", v, err)
	}
	m := s.Matchmaking()
	if got, _, err := m.Get(ctx, old.Session.ID); err != nil || got.ID != old.Session.ID {
		t.Fatalf("the session from before: %+v, %v", got.Gathering, err)
	}
	c, created, err := m.AutoMatchmake(ctx, nil, storetest.Session(4), p(2))
	if err != nil || !created {
		t.Fatalf("auto-matchmake beside the unindexed session: %d created=%v %v", c.Session.ID, created, err)
	}
	if _, err := m.Leave(ctx, c.Session.ID, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Update(ctx, old.Session.ID, func(*matchmaking.MatchmakeSession, []matchmaking.Participant) error { return nil }); err != nil {
		t.Fatal(err)
	}
	c, created, err = m.AutoMatchmake(ctx, nil, storetest.Session(4), p(2))
	if err != nil || created || c.Session.ID != old.Session.ID {
		t.Fatalf("auto-matchmake after the session changed: %d created=%v %v; want %d", c.Session.ID, created, err, old.Session.ID)
	}
}
