package pgstore

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/storetest"
)

// TestCommunityMigratesExistingDatabase opens a database as a gamewire from
// before communities left it (no matchmaking_community component, a session
// already in it): Open adds the component, the session stays, and the first
// community takes an id after it.
func TestCommunityMigratesExistingDatabase(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	dsn := srv.NewDatabase(t)
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `DROP TABLE mm_communities, mm_community_members; DROP INDEX mm_gatherings_system_type;
		DELETE FROM schema_migrations WHERE component = 'matchmaking_community'`); err != nil {
		t.Fatal(err)
	}
	old, err := s.Matchmaking().Create(ctx, storetest.Session(4), matchmaking.Participant{PID: 1, Node: "n", Conn: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openAt(t, dsn)
	v, err := s.SchemaVersions(ctx)
	if err != nil || v["matchmaking_community"] != 1 {
		t.Fatalf("schema versions after reopening: %v, %v; want matchmaking_community at 1", v, err)
	}
	m := s.Matchmaking()
	if got, _, err := m.Get(ctx, old.Session.ID); err != nil || got.ID != old.Session.ID {
		t.Fatalf("the session from before: %+v, %v", got, err)
	}
	g, err := m.CreateCommunity(ctx, matchmaking.PersistentGathering{
		Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 4}, Attributes: []uint32{0, 0, 0, 0, 0, 0},
	}, matchmaking.Participant{PID: 2}, false)
	if err != nil || g.ID <= old.Session.ID {
		t.Fatalf("first community: %+v, %v; want an id after session %d", g, err, old.Session.ID)
	}
}

// openAt opens the store on dsn, closed when the test ends.
func openAt(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
