package accounts

import (
	"context"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// TestMatchmakingSearchUsesIndexes seeds open sessions that differ from the
// sought ones in attribute 0 or by a password, and checks that each
// matchmaking search is a search of the partial index mm_gatherings_match on
// the criteria's columns (EXPLAIN QUERY PLAN: SEARCH ... USING INDEX
// mm_gatherings_match with the constrained columns, never a SCAN of the
// table), the auto-matchmake without criteria also in the index's order (no
// TEMP B-TREE), and that the searches answer correctly.
func TestMatchmakingSearchUsesIndexes(t *testing.T) {
	ctx := context.Background()
	s, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mm, err := s.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	var ss []matchmaking.MatchmakeSession
	for i := range 2000 {
		d := mmSession()
		d.Owner = types.PID(10_000 + i)
		switch i % 10 {
		case 0:
			d.UserPassword = "pw"
		case 1:
			d.SystemPasswordEnabled = true
		default:
			d.Attributes[0] = uint32(100 + i%50)
		}
		ss = append(ss, d)
	}
	want := mmSession()
	want.Owner = 9
	if err := mm.Seed(ctx, append(ss, want), "n1"); err != nil {
		t.Fatal(err)
	}

	compile := func(sc matchmaking.SearchCriteria) matchmaking.Criteria {
		c, err := matchmaking.Compile(sc)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	auto := matchmaking.AutoCriteria(&want)
	crit := matchmaking.SearchCriteria{GameMode: "3", MatchmakeSystemType: "1", Attributes: []string{"1", "2"}, VacantOnly: true, ExcludeLocked: true}
	ranged := crit
	ranged.Attributes = []string{"0,5", "1|2|3"}
	browse := crit
	browse.ExcludeUserPasswordSet, browse.ExcludeSystemPasswordSet = true, true
	plans := map[string]struct {
		cs      []matchmaking.Criteria
		browse  bool
		ordered bool
		uses    string
	}{
		"auto-matchmake":            {cs: []matchmaking.Criteria{auto}, ordered: true, uses: "pw_flags=? AND a0=? AND a1=? AND a2=? AND a3=? AND a4=? AND a5=? AND min_p=? AND max_p=?"},
		"criteria":                  {cs: []matchmaking.Criteria{compile(crit)}, uses: "pw_flags=? AND a0=? AND a1=?"},
		"criteria with ranges":      {cs: []matchmaking.Criteria{compile(ranged)}, uses: "pw_flags=? AND a0>? AND a0<?"},
		"two criteria of one mode":  {cs: []matchmaking.Criteria{compile(crit), compile(ranged)}, uses: "game_mode=? AND system_type=?"},
		"browse without passwords":  {cs: []matchmaking.Criteria{compile(browse)}, browse: true, uses: "pw_flags=? AND a0=? AND a1=?"},
		"browse with the passwords": {cs: []matchmaking.Criteria{compile(crit)}, browse: true, uses: "pw_flags=? AND a0=? AND a1=?"},
	}
	for name, p := range plans {
		var search sqlstore.Search
		if p.browse {
			search = sqlstore.BrowseWhere(sqliteDialect, p.cs[0])
		} else {
			search, _, _, _ = sqlstore.AutoWhere(sqliteDialect, p.cs, 1, 5)
		}
		plan := explain(t, s, sqlstore.CandidatesQuery(sqliteDialect, search), search.Args...)
		if strings.Contains(plan, "SCAN mm_") || !strings.Contains(plan, "USING INDEX mm_gatherings_match") ||
			!strings.Contains(plan, p.uses) || p.ordered && strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s: plan does not search mm_gatherings_match by %s%s:\n%s", name, p.uses,
				map[bool]string{true: " in its order", false: ""}[p.ordered], plan)
		} else {
			t.Logf("%s:\n%s", name, plan)
		}
	}

	// The searches find the one sought session among the decoys.
	c, created, err := mm.AutoMatchmake(ctx, nil, mmSession(), matchmaking.Participant{PID: 1, Node: "n1", Conn: 1})
	if err != nil || created || c.Session.Owner != 9 {
		t.Fatalf("auto-matchmake: owner %d created=%v %v; want the session of 9", c.Session.Owner, created, err)
	}
	if _, err := mm.Leave(ctx, c.Session.ID, 1); err != nil {
		t.Fatal(err)
	}
	c, created, err = mm.AutoMatchmake(ctx, []matchmaking.SearchCriteria{crit}, mmSession(), matchmaking.Participant{PID: 1, Node: "n1", Conn: 1})
	if err != nil || created || c.Session.Owner != 9 {
		t.Fatalf("criteria: owner %d created=%v %v; want the session of 9", c.Session.Owner, created, err)
	}
	got, err := mm.Browse(ctx, browse, 0, 10)
	if err != nil || len(got) != 1 || got[0].Owner != 9 {
		t.Fatalf("browse without passworded sessions: %d sessions %v", len(got), err)
	}
	got, err = mm.Browse(ctx, crit, 0, 100)
	locked := 0
	for _, g := range got {
		if g.UserPassword != "" {
			locked++
		}
	}
	if err != nil || len(got) != 100 || locked == 0 {
		t.Fatalf("browse with passworded sessions: %d sessions (%d with a user password) %v; want 100, some passworded", len(got), locked, err)
	}
}

// mmSession is the session the test seeks (storetest.Session(8), which this
// package's tests cannot import).
func mmSession() matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{
		Gathering: matchmaking.Gathering{MinParticipants: 2, MaxParticipants: 8, Flags: matchmaking.FlagMigrateOwner},
		GameMode:  3, Attributes: []uint32{1, 2, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1,
	}
}

// TestMatchmakingV4MigratesSessions opens a database whose matchmaking schema
// is at step 3 with a session in it: step 4 adds the search columns (NULL for
// that session), the session is found by id, auto-matchmaking leaves it alone
// until its next change (its passwords are unknown to the columns until
// then), and joins it after.
func TestMatchmakingV4MigratesSessions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	mm, err := s.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	old, err := mm.Create(ctx, mmSession(), matchmaking.Participant{PID: 1, Node: "n1", Conn: 1})
	if err != nil {
		t.Fatal(err)
	}
	mm.Close()
	down := `DROP INDEX mm_gatherings_match;
		UPDATE schema_migrations SET version = 3 WHERE component = 'matchmaking';`
	for _, c := range []string{"min_p", "a0", "a1", "a2", "a3", "a4", "a5", "pw_flags"} {
		down += `ALTER TABLE mm_gatherings DROP COLUMN ` + c + `;`
	}
	if _, err := s.db.ExecContext(ctx, down); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, _, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.SchemaVersions(ctx); err != nil || v["matchmaking"] != 4 {
		t.Fatalf("schema versions: %v %v; want matchmaking at 4", v, err)
	}
	mm, err = s.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	if got, _, err := mm.Get(ctx, old.Session.ID); err != nil || got.ID != old.Session.ID {
		t.Fatalf("the session from before: %+v %v", got.Gathering, err)
	}
	c, created, err := mm.AutoMatchmake(ctx, nil, mmSession(), matchmaking.Participant{PID: 2, Node: "n1", Conn: 2})
	if err != nil || !created {
		t.Fatalf("auto-matchmake beside the unindexed session: %d created=%v %v", c.Session.ID, created, err)
	}
	if _, err := mm.Leave(ctx, c.Session.ID, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := mm.Update(ctx, old.Session.ID, func(*matchmaking.MatchmakeSession, []matchmaking.Participant) error { return nil }); err != nil {
		t.Fatal(err)
	}
	c, created, err = mm.AutoMatchmake(ctx, nil, mmSession(), matchmaking.Participant{PID: 2, Node: "n1", Conn: 2})
	if err != nil || created || c.Session.ID != old.Session.ID {
		t.Fatalf("auto-matchmake after the session changed: %d created=%v %v; want %d", c.Session.ID, created, err, old.Session.ID)
	}
}
