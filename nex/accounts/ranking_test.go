package accounts

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// TestRanking100kUsesIndexes fills a category with 100,000 scores and checks
// that the queries behind a top-100 read and an around-self read are index
// searches (EXPLAIN QUERY PLAN says SEARCH ... USING ... INDEX, never SCAN of
// the table), and that they answer correctly.
func TestRanking100kUsesIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 100,000 scores")
	}
	ctx := context.Background()
	s, _, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs := s.Ranking()
	cat := ranking.Category{ID: 1, Descending: true}
	if err := rs.AddCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	n := 100_000
	if raceEnabled {
		n = 20_000
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	entries := make([]ranking.Entry, n)
	for i := range entries {
		score := uint32(i * 7 % (n / 2)) // two players per score: ties everywhere
		entries[i] = ranking.Entry{PID: types.PID(10_000 + i), Score: score, Groups: []byte{byte(i % 4)}, Updated: base.Add(time.Duration(i))}
	}
	if err := rs.Import(ctx, cat, entries); err != nil {
		t.Fatal(err)
	}

	// The query plans.
	all := ranking.Query{Category: cat, GroupIndex: ranking.NoGroup}
	grp := ranking.Query{Category: cat, GroupIndex: 0, GroupNum: 2}
	for _, q := range []ranking.Query{all, grp} {
		where, args := sqlstore.Filter(q)
		for name, query := range map[string]string{
			"top-100": sqlstore.EntriesFrom + ` WHERE ` + where +
				` AND (s.sort_key, s.updated, s.pid, s.unique_id) >= (1, 2, 3, 4)` + sqlstore.RankOrder + ` LIMIT 100`,
			"find": sqlstore.EntriesFrom + ` WHERE ` + where +
				` AND s.pid = 50000 AND s.unique_id = 0` + sqlstore.RankOrder + ` LIMIT 1`,
			"unique": sqlstore.EntriesFrom + ` WHERE ` + where +
				` AND s.unique_id = 0` + sqlstore.RankOrder + ` LIMIT 1`,
		} {
			plan := explain(t, s, query, args...)
			if strings.Contains(plan, "SCAN s") || strings.Contains(plan, "TEMP B-TREE") || !strings.Contains(plan, "INDEX") {
				t.Errorf("%s (group %d): plan does not search an index:\n%s", name, q.GroupIndex, plan)
			} else {
				t.Logf("%s (group %d):\n%s", name, q.GroupIndex, plan)
			}
		}
	}

	// Ranks and counts come from the rank index (no SQL count): they must
	// agree with what SQL counts.
	for _, q := range []ranking.Query{all, grp} {
		for _, pid := range []types.PID{10_000, 10_000 + 12_345, types.PID(10_000 + n - 2)} {
			e, pos, err := rs.Find(ctx, q, pid, 0)
			if q.GroupIndex == 0 && int(pid-10_000)%4 != 2 {
				if !errors.Is(err, ranking.ErrNotFound) {
					t.Fatalf("PID %d outside group 2: %v", pid, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			where, args := sqlstore.Filter(q)
			var want, better int64
			s.db.QueryRow(`SELECT count(*) FROM ranking_scores s WHERE `+where+` AND (s.sort_key, s.updated, s.pid, s.unique_id) < (?, ?, ?, ?)`,
				append(args, sqlstore.SortKey(cat, e.Score), e.Updated.UnixNano(), int64(e.PID), 0)...).Scan(&want)
			s.db.QueryRow(`SELECT count(*) FROM ranking_scores s WHERE `+where+` AND s.sort_key < ?`, append(args, sqlstore.SortKey(cat, e.Score))...).Scan(&better)
			gotBetter, _ := rs.CountBetter(ctx, q, e.Score)
			if int64(pos) != want || int64(gotBetter) != better {
				t.Fatalf("PID %d group %d: position %d better %d, SQL says %d and %d", pid, q.GroupIndex, pos, gotBetter, want, better)
			}
		}
	}

	// The answers: top 100 in order, around self in place.
	srv := &ranking.Server{Store: rs}
	res, err := srv.GetRanking(ctx, ranking.ModeGlobal, 1, ranking.OrderParam{GroupIndex: ranking.NoGroup, Length: 100}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 100 || res.TotalCount != uint32(n) || res.Data[0].Score != uint32(n/2-1) || res.Data[0].Order != 1 || res.Data[1].Order != 1 || res.Data[2].Order != 3 {
		t.Fatalf("top 100: total %d, first %+v %+v %+v", res.TotalCount, res.Data[0], res.Data[1], res.Data[2])
	}
	me := types.PID(10_000 + 12_345)
	myScore := uint32(12_345 * 7 % (n / 2)) // 36415 with 100,000 rows
	res, err = srv.GetRanking(ctx, ranking.ModeGlobalAroundSelf, 1, ranking.OrderParam{GroupIndex: ranking.NoGroup, OrderCalc: ranking.OrderCalcOrdinal, Length: 11}, 0, me)
	if err != nil {
		t.Fatal(err)
	}
	mid := res.Data[5]
	better, _ := rs.CountBetter(ctx, all, myScore)
	if mid.PID != me || mid.Score != myScore || mid.Order < better+1 || mid.Order > better+2 || res.Data[4].Order != mid.Order-1 {
		t.Fatalf("around self: %+v (better %d)", res.Data, better)
	}
}

func explain(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// TestRankIndexSeesOtherProcesses opens one data directory twice (two
// processes, as two secure nodes on one database): scores one writes reach the
// other's ranks and counts, though the other had read the category before.
func TestRankIndexSeesOtherProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cat := ranking.Category{ID: 3, Descending: true}
	ra, rb := a.Ranking(), b.Ranking()
	q := ranking.Query{Category: cat, GroupIndex: ranking.NoGroup}
	now := time.Now()
	up := func(r *RankingStore, pid types.PID, score uint32) {
		t.Helper()
		if _, err := r.UploadScore(ctx, cat, pid, 0, ranking.ScoreData{Category: 3, Score: score, UpdateMode: ranking.UpdateDeleteOld}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := ra.AddCategory(ctx, cat); err != nil {
		t.Fatal(err)
	}
	up(ra, 1, 10)
	if n, _ := rb.Count(ctx, q); n != 1 {
		t.Fatalf("b counts %d", n)
	}
	up(ra, 2, 20) // b's index is now one version behind
	up(rb, 3, 30) // b writes: its index must not just apply this on top
	if n, _ := rb.Count(ctx, q); n != 3 {
		t.Fatalf("b counts %d after a's upload, want 3", n)
	}
	if _, pos, err := rb.Find(ctx, q, 1, 0); err != nil || pos != 2 {
		t.Fatalf("b ranks PID 1 at %d (%v), want position 2", pos, err)
	}
	if ok, err := ra.DeleteScore(ctx, 3, 0, 3); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if n, _ := rb.Count(ctx, q); n != 2 {
		t.Fatalf("b counts %d after a's delete, want 2", n)
	}
	if n, _ := ra.Count(ctx, q); n != 2 {
		t.Fatalf("a counts %d after its delete, want 2", n)
	}
	if better, _ := ra.CountBetter(ctx, q, 15); better != 1 {
		t.Fatalf("a: %d better than 15", better)
	}
}
