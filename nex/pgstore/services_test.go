package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/storetest"
	"github.com/gamewire/gamewire/nex/types"
)

// openMatchmaking opens n stores (n pools) on one fresh database: n secure
// nodes sharing it.
func openMatchmaking(t *testing.T, srv *pgtest.Server, n int) []matchmaking.Store {
	dsn := srv.NewDatabase(t)
	out := make([]matchmaking.Store, n)
	for i := range out {
		s, err := Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s.Matchmaking()
	}
	return out
}

// TestServiceSuites runs the matchmaking, communities, ranking and DataStore
// suites every backend runs (nex/storetest) on PostgreSQL.
func TestServiceSuites(t *testing.T) {
	srv := pgtest.Start(t)
	t.Run("matchmaking", func(t *testing.T) {
		storetest.Matchmaking(t, func(t *testing.T) matchmaking.Store { return openMatchmaking(t, srv, 1)[0] },
			func(t *testing.T) (matchmaking.Store, matchmaking.Store) {
				ms := openMatchmaking(t, srv, 2)
				return ms[0], ms[1]
			})
	})
	t.Run("matchmaking nodes", func(t *testing.T) {
		storetest.MatchmakingNodes(t, func(t *testing.T, n int) []matchmaking.Store { return openMatchmaking(t, srv, n) })
	})
	t.Run("communities", func(t *testing.T) {
		storetest.Communities(t, func(t *testing.T) storetest.CommunityBackend { return openFresh(t, srv).Matchmaking() })
	})
	t.Run("ranking", func(t *testing.T) {
		storetest.Ranking(t, func(t *testing.T) ranking.Store { return openFresh(t, srv).Ranking() })
	})
	t.Run("datastore", func(t *testing.T) {
		storetest.DataStore(t, func(t *testing.T) datastore.Store { return openFresh(t, srv).DataStore() })
	})
	t.Run("smm", func(t *testing.T) {
		storetest.SMM(t, func(t *testing.T) smm.Store { return openFresh(t, srv).SMM() })
	})
	t.Run("ssb4", func(t *testing.T) {
		storetest.SSB4(t, func(t *testing.T) ssb4.Store { return openFresh(t, srv).SSB4() })
	})
	t.Run("datastore quota, two nodes", func(t *testing.T) {
		storetest.DataStoreQuotaConcurrent(t, func(t *testing.T) (storetest.QuotaDataStore, storetest.QuotaDataStore) {
			dsn := srv.NewDatabase(t)
			var ds [2]storetest.QuotaDataStore
			for i := range ds {
				s, err := Open(context.Background(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				ds[i] = s.DataStore()
			}
			return ds[0], ds[1]
		})
	})
	t.Run("quotas", func(t *testing.T) {
		storetest.Quotas(t, func(t *testing.T) storetest.QuotaBackend {
			s := openFresh(t, srv)
			return storetest.QuotaBackend{Matchmaking: s.Matchmaking(), DataStore: s.DataStore(), Ranking: s.Ranking()}
		})
	})
	t.Run("friends", func(t *testing.T) {
		storetest.Friends(t, func(t *testing.T) friends.Store { return openFresh(t, srv).Friends() })
	})
}

// explain returns PostgreSQL's plan for query.
func explain(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `EXPLAIN `+rebind(query), args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", query, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wantIndexPlan fails t when plan reads a table from end to end (Seq Scan) or
// uses no index.
func wantIndexPlan(t *testing.T, name, plan string) {
	t.Helper()
	if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "Index") {
		t.Errorf("%s: plan does not search an index:\n%s", name, plan)
	} else {
		t.Logf("%s:\n%s", name, plan)
	}
}

// wantMatchPlan fails t unless plan searches the partial index
// mm_gatherings_match (the matchmaking searches by criteria's columns).
func wantMatchPlan(t *testing.T, name, plan string) {
	t.Helper()
	if !strings.Contains(plan, "mm_gatherings_match") {
		t.Errorf("%s: plan does not search mm_gatherings_match:\n%s", name, plan)
	}
	wantIndexPlan(t, name, plan)
}

// TestQueryPlans fills every table with enough rows that PostgreSQL's planner
// would rather scan than search a missing index, then checks that each query
// path of the three stores is an index search (EXPLAIN shows no Seq Scan).
func TestQueryPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("fills tables with 100,000 rows")
	}
	srv := pgtest.Start(t)
	s := openFresh(t, srv)
	ctx := context.Background()
	fill := []string{
		`INSERT INTO ranking_scores (category, pid, unique_id, score, sort_key, g0, g1, groups, param, updated)
			SELECT 1 + i % 4, 10000 + i, 0, (i * 7) % 50000, 4294967295 - (i * 7) % 50000, i % 4, NULL, '\x00', 0, i
			FROM generate_series(0, 99999) i`,
		`INSERT INTO ranking_common (pid, unique_id, data, updated) SELECT 10000 + i, 0, '\x01', i FROM generate_series(0, 99999, 3) i`,
		`INSERT INTO mm_gatherings (owner, game_mode, system_type, max_p, count, open, blob, created,
				min_p, a0, a1, a2, a3, a4, a5, pw_flags)
			SELECT 10000 + i, i % 50, 1, 8, 1 + i % 8, i % 3 <> 0, '', i, 2, i % 100, 2, 0, 0, 0, 0, (i % 10 = 0)::int
			FROM generate_series(0, 99999) i`,
		`INSERT INTO mm_participants (gid, pid, slots, message, node, conn, joined)
			SELECT 1 + i, 10000 + i, 1, '', 'n' || (i % 10), i, 1 FROM generate_series(0, 99999) i`,
		`INSERT INTO mm_communities (gid, owner, official, max_p, count, start_date, end_date, blob, created)
			SELECT 1000000 + i, 10000 + i, i % 100 = 0, 8, 1, 0, 0, '', i FROM generate_series(0, 99999) i`,
		`INSERT INTO mm_community_members (gid, pid, message, joined)
			SELECT 1000000 + i, 10000 + i, '', i FROM generate_series(0, 99999) i`,
		`INSERT INTO datastore_objects (owner, size, name, data_type, meta_binary, permission, recipients, del_permission,
			del_recipients, flag, period, refer_data_id, tags, status, referred_cnt, created, updated, referred, expire,
			access_password, update_password, version, pending, persistence_slot, ratings)
			SELECT 10000 + i / 10, 1, 'o', i % 100, '', i % 4, '[]', 3, '[]', 0, 0, i % 1000, '[]', 0, 0, i, i, i, 0, 0, 0, 1,
				false, CASE WHEN i % 10 = 0 THEN 1 ELSE 65535 END, '[]'
			FROM generate_series(0, 99999) i`,
		`INSERT INTO datastore_tags (data_id, tag) SELECT 1 + i, 't' || (i % 500) FROM generate_series(0, 99999) i`,
		// Friendships: the friends-permission part of a DataStore search
		// looks them up by (owner, viewer).
		`INSERT INTO friends_links (pid, friend, since) SELECT 10000 + i / 50, 20000 + i, i FROM generate_series(0, 99999) i`,
		`INSERT INTO datastore_recipients (data_id, pid) SELECT 1 + i, 20000 + i % 5000 FROM generate_series(0, 99999, 4) i`,
		`INSERT INTO datastore_uploads (token, data_id, version, size, expires, used)
			SELECT 'tok' || i, 1 + i, 1, 1, 0, i % 2 = 0 FROM generate_series(0, 99999) i`,
		`INSERT INTO mm_blocks (pid, blocked) SELECT 10000 + i / 20, 20000 + i FROM generate_series(0, 99999) i`,
		`INSERT INTO mm_notifications (pid, type, param1, param2, text) SELECT 10000 + i / 4, i % 4, 0, 0, '' FROM generate_series(0, 99999) i`,
		`ANALYZE`,
	}
	// The fill is one transaction without the pool's statement timeout: on a
	// loaded machine inserting 100,000 rows into the indexed tables can take
	// longer than a live statement may.
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	for _, q := range fill {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatalf("fill: %v\n%s", err, q)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	cat := ranking.Category{ID: 1, Descending: true}
	for _, q := range []ranking.Query{{Category: cat, GroupIndex: ranking.NoGroup}, {Category: cat, GroupIndex: 0, GroupNum: 1}} {
		query, args := listQuery(q)
		wantIndexPlan(t, "ranking top-100", explain(t, s, query, append(args, 100, 0)...))
		query, args = sqlstore.FindQuery(q, "s.pid = ? AND s.unique_id = ?")
		wantIndexPlan(t, "ranking find", explain(t, s, query, append(args, 50000, 0)...))
		query, args = sqlstore.FindQuery(q, "s.unique_id = ?")
		wantIndexPlan(t, "ranking find unique", explain(t, s, query, append(args, 0)...))
		query, args = positionQuery(q)
		wantIndexPlan(t, "ranking position", explain(t, s, query, append(args, 1, 2, 3, 4)...))
		query, args = betterQuery(q)
		wantIndexPlan(t, "ranking count better", explain(t, s, query, append(args, 5)...))
	}
	wantIndexPlan(t, "ranking delete all", explain(t, s, `DELETE FROM ranking_scores WHERE pid = $1 AND unique_id = $2`, 1, 0))

	// Matchmaking: the auto-matchmake search (narrowed and not), browse, find,
	// disconnect and reset.
	cs := []matchmaking.Criteria{matchmaking.AutoCriteria(func() *matchmaking.MatchmakeSession { s := storetest.Session(8); return &s }())}
	search, _, _, _ := sqlstore.AutoWhere(pgDialect, cs, 1, 5)
	wantMatchPlan(t, "auto-matchmake search", explainCandidates(t, s, search))
	crit, _ := matchmaking.Compile(matchmaking.SearchCriteria{GameMode: "3", MatchmakeSystemType: "1", Attributes: []string{"1", "2"},
		VacantOnly: true, ExcludeLocked: true})
	search, _, _, _ = sqlstore.AutoWhere(pgDialect, []matchmaking.Criteria{crit}, 1, 5)
	wantMatchPlan(t, "criteria search", explainCandidates(t, s, search))
	ranged, _ := matchmaking.Compile(matchmaking.SearchCriteria{GameMode: "3", MatchmakeSystemType: "1", Attributes: []string{"0,5"},
		VacantOnly: true, ExcludeLocked: true})
	search, _, _, _ = sqlstore.AutoWhere(pgDialect, []matchmaking.Criteria{ranged}, 1, 5)
	wantMatchPlan(t, "criteria search with a range", explainCandidates(t, s, search))
	wantMatchPlan(t, "browse by criteria", explainCandidates(t, s, sqlstore.BrowseWhere(pgDialect, crit)))
	c, _ := matchmaking.Compile(matchmaking.SearchCriteria{GameMode: "3"})
	wantIndexPlan(t, "browse by game mode", explainCandidates(t, s, sqlstore.BrowseWhere(pgDialect, c)))
	c, _ = matchmaking.Compile(matchmaking.SearchCriteria{})
	wantIndexPlan(t, "browse everything", explainCandidates(t, s, sqlstore.BrowseWhere(pgDialect, c)))
	for name, q := range map[string]matchmaking.Query{
		"find by ids":         {GIDs: []uint32{1, 2, 3}},
		"find by owner":       {Owner: 10005},
		"find by participant": {Participant: 10005},
	} {
		query, args, err := sqlstore.GatheringsQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		wantIndexPlan(t, name, explain(t, s, query, args...))
	}
	// The block-list subqueries of the search (above) and the per-player
	// reads: by blocker, by blocked, by player and type.
	if plan := explainCandidates(t, s, search); !strings.Contains(plan, "mm_blocks_pkey") || !strings.Contains(plan, "mm_blocks_blocked") {
		t.Errorf("auto-matchmake search: block-list subqueries do not search mm_blocks' indexes:\n%s", plan)
	}
	wantIndexPlan(t, "block list", explain(t, s, `SELECT blocked FROM mm_blocks WHERE pid = $1 ORDER BY blocked`, 10005))
	wantIndexPlan(t, "friends' notification data", explain(t, s,
		`SELECT pid, type, param1, param2, text FROM mm_notifications WHERE pid IN ($1, $2) AND type IN ($3) ORDER BY pid, type`, 10005, 10006, 1))
	wantIndexPlan(t, "disconnect", explain(t, s, `SELECT gid, pid FROM mm_participants WHERE node = $1 AND conn = $2 ORDER BY gid`, "n1", 11))
	wantIndexPlan(t, "participants", explain(t, s, `SELECT pid, slots, message, node, conn FROM mm_participants WHERE gid = $1 ORDER BY joined, pid`, 5))

	// Communities: by ids, owner, member and official (available or not), and
	// the sessions counted for them.
	for name, q := range map[string]matchmaking.CommunityQuery{
		"communities by ids":            {GIDs: []uint32{1000001, 1000002}},
		"communities by owner":          {Owner: 10005},
		"communities by member":         {Participant: 10005},
		"official communities":          {Official: true},
		"official communities open now": {Official: true, Available: true, Now: types.MakeDateTime(2026, 11, 24, 12, 0, 0)},
	} {
		query, args, err := sqlstore.CommunityQuery(pgDialect, q)
		if err != nil {
			t.Fatal(err)
		}
		wantIndexPlan(t, name, explain(t, s, query, args...))
	}
	wantIndexPlan(t, "community sessions", explain(t, s, `SELECT blob FROM mm_gatherings WHERE system_type = $1`, int64(matchmaking.CommunitySystemType)))

	// DataStore: searches by owner, type, tag, recipient, time; slots and uploads.
	now := time.Unix(0, 50)
	for name, q := range map[string]datastore.SearchQuery{
		"search by owner":   {Viewer: 1, Owners: []types.PID{10005}, Limit: 100, Now: now},
		"search by type":    {Viewer: 1, DataTypes: []uint16{5}, Limit: 100, Now: now},
		"search by tag":     {Viewer: 1, Tags: []string{"t7"}, Limit: 100, Now: now},
		"search by created": {Viewer: 1, Order: datastore.OrderCreated, Descending: true, Limit: 100, Now: now},
		"search by updated": {Viewer: 1, Order: datastore.OrderUpdated, UpdatedAfter: time.Unix(0, 99000), Limit: 100, Now: now},
		"search newest":     {Viewer: 1, Descending: true, Limit: 100, Now: now},
	} {
		query, args := sqlstore.SearchQuery(q)
		wantIndexPlan(t, name, explain(t, s, query, args...))
	}
	wantIndexPlan(t, "object in slot", explain(t, s, `SELECT `+sqlstore.ObjectColumns+` FROM datastore_objects o WHERE o.owner = $1 AND o.persistence_slot = $2`, 10005, 1))
	wantIndexPlan(t, "finished upload", explain(t, s, `SELECT `+sqlstore.UploadColumns+` FROM datastore_uploads
		WHERE data_id = $1 AND version = $2 AND used ORDER BY seq DESC LIMIT 1`, 5, 1))
}

// explainCandidates explains the first page of a candidate search.
func explainCandidates(t *testing.T, s *Store, search sqlstore.Search) string {
	return explain(t, s, sqlstore.CandidatesQuery(pgDialect, search), append(search.Args, 2147483647, 2147483647, 0)...)
}

// BenchmarkAutoMatchmake is storetest.BenchmarkAutoMatchmake on PostgreSQL:
// one pool, and three pools on one database (three secure nodes).
func BenchmarkAutoMatchmake(b *testing.B) {
	srv := pgtest.Start(b)
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			storetest.BenchmarkAutoMatchmake(b, func(b *testing.B) []matchmaking.Store {
				dsn := srv.NewDatabase(b)
				out := make([]matchmaking.Store, nodes)
				for i := range out {
					s, err := Open(context.Background(), dsn)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { s.Close() })
					out[i] = s.Matchmaking()
				}
				return out
			})
		})
	}
}

// TestStatementTimeout: every pooled connection runs with the default
// statement timeout, and one given in the URL replaces it.
func TestStatementTimeout(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	dsn := srv.NewDatabase(t)
	for _, tc := range []struct{ dsn, want string }{{dsn, "10s"}, {dsn + " statement_timeout=1500", "1500ms"}} {
		s, err := Open(ctx, tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = s.pool.QueryRow(ctx, `SHOW statement_timeout`).Scan(&got)
		s.Close()
		if err != nil || got != tc.want {
			t.Fatalf("%s: statement_timeout %q, %v; want %q", tc.dsn, got, err, tc.want)
		}
	}
	// A statement past the timeout fails.
	s, err := Open(ctx, dsn+" statement_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.pool.Exec(ctx, `SELECT pg_sleep(2)`); err == nil || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("pg_sleep(2) with a 100 ms timeout: %v", err)
	}
}
