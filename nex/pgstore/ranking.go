package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// The ranking component's schema, the same shape as nex/accounts' SQLite one: a
// score's sort_key is its score for ascending categories and MaxUint32 - score for
// descending ones, so one ascending index (category, sort_key, updated, pid,
// unique_id) gives every category in rank order (ties go to the earlier update),
// and the group indexes do the same within one group value. Times are Unix
// nanoseconds, as in SQLite, so both backends break ties alike.
func init() { registerSchema("ranking", rankingV1) }

const rankingV1 = `
CREATE TABLE ranking_categories (
	category   BIGINT PRIMARY KEY,
	descending BOOLEAN NOT NULL,
	created    BIGINT NOT NULL
);
CREATE TABLE ranking_scores (
	category  BIGINT NOT NULL,
	pid       BIGINT NOT NULL,
	unique_id BIGINT NOT NULL,
	score     BIGINT NOT NULL,
	sort_key  BIGINT NOT NULL,
	g0        SMALLINT,
	g1        SMALLINT,
	groups    BYTEA NOT NULL,
	param     BIGINT NOT NULL,
	updated   BIGINT NOT NULL,
	PRIMARY KEY (category, pid, unique_id)
);
CREATE INDEX ranking_scores_order ON ranking_scores (category, sort_key, updated, pid, unique_id);
CREATE INDEX ranking_scores_g0 ON ranking_scores (category, g0, sort_key, updated, pid, unique_id);
CREATE INDEX ranking_scores_g1 ON ranking_scores (category, g1, sort_key, updated, pid, unique_id);
CREATE INDEX ranking_scores_owner ON ranking_scores (pid, unique_id);
CREATE INDEX ranking_scores_unique ON ranking_scores (category, unique_id, sort_key, updated, pid);
CREATE TABLE ranking_common (
	pid       BIGINT NOT NULL,
	unique_id BIGINT NOT NULL,
	data      BYTEA NOT NULL,
	updated   BIGINT NOT NULL,
	PRIMARY KEY (pid, unique_id)
);
`

// RankingStore is the PostgreSQL implementation of ranking.Store.
type RankingStore struct{ s *Store }

var _ ranking.Store = (*RankingStore)(nil)

// Ranking returns the ranking store on s's database.
func (s *Store) Ranking() *RankingStore { return &RankingStore{s} }

func sortKey(c ranking.Category, score uint32) int64 {
	if c.Descending {
		return int64(math.MaxUint32 - score)
	}
	return int64(score)
}

func groupCol(groups []byte, i int) *int16 {
	if i < len(groups) {
		g := int16(groups[i])
		return &g
	}
	return nil
}

// Category implements ranking.Store.
func (r *RankingStore) Category(ctx context.Context, id uint32) (ranking.Category, error) {
	var desc bool
	err := r.s.pool.QueryRow(ctx, `SELECT descending FROM ranking_categories WHERE category = $1`, int64(id)).Scan(&desc)
	if errors.Is(err, pgx.ErrNoRows) {
		return ranking.Category{}, fmt.Errorf("%w: %d", ranking.ErrNoCategory, id)
	}
	if err != nil {
		return ranking.Category{}, fmt.Errorf("pgstore: ranking category %d: %w", id, err)
	}
	return ranking.Category{ID: id, Descending: desc}, nil
}

// AddCategory implements ranking.Store.
func (r *RankingStore) AddCategory(ctx context.Context, c ranking.Category) error {
	if _, err := r.s.pool.Exec(ctx, `INSERT INTO ranking_categories (category, descending, created) VALUES ($1, $2, $3)
		ON CONFLICT (category) DO NOTHING`, int64(c.ID), c.Descending, time.Now().UnixNano()); err != nil {
		return fmt.Errorf("pgstore: add ranking category %d: %w", c.ID, err)
	}
	return nil
}

// UploadScore implements ranking.Store. The decision (no score yet, delete-old
// mode, or a better score) is the WHERE of the upsert, so it is one atomic
// statement: two nodes uploading for one player at once never let the worse
// score win.
func (r *RankingStore) UploadScore(ctx context.Context, c ranking.Category, pid types.PID, uid uint64, s ranking.ScoreData, now time.Time) (bool, error) {
	groups := s.Groups
	if groups == nil {
		groups = []byte{}
	}
	tag, err := r.s.pool.Exec(ctx, `INSERT INTO ranking_scores AS old (category, pid, unique_id, score, sort_key, g0, g1, groups, param, updated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT (category, pid, unique_id) DO UPDATE SET score = excluded.score, sort_key = excluded.sort_key,
			g0 = excluded.g0, g1 = excluded.g1, groups = excluded.groups, param = excluded.param, updated = excluded.updated
		WHERE $11 OR excluded.sort_key < old.sort_key`,
		int64(c.ID), int64(pid), int64(uid), int64(s.Score), sortKey(c, s.Score), groupCol(groups, 0), groupCol(groups, 1),
		groups, int64(s.Param), now.UnixNano(), s.UpdateMode == ranking.UpdateDeleteOld)
	if err != nil {
		return false, fmt.Errorf("pgstore: upload score: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

func (r *RankingStore) exec(ctx context.Context, what, query string, args ...any) (int64, error) {
	tag, err := r.s.pool.Exec(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("pgstore: %s: %w", what, err)
	}
	return tag.RowsAffected(), nil
}

// DeleteScore implements ranking.Store.
func (r *RankingStore) DeleteScore(ctx context.Context, pid types.PID, uid uint64, category uint32) (bool, error) {
	n, err := r.exec(ctx, "delete score", `DELETE FROM ranking_scores WHERE category = $1 AND pid = $2 AND unique_id = $3`,
		int64(category), int64(pid), int64(uid))
	return n > 0, err
}

// DeleteAllScores implements ranking.Store.
func (r *RankingStore) DeleteAllScores(ctx context.Context, pid types.PID, uid uint64) (int64, error) {
	return r.exec(ctx, "delete scores", `DELETE FROM ranking_scores WHERE pid = $1 AND unique_id = $2`, int64(pid), int64(uid))
}

// ChangeAttributes implements ranking.Store.
func (r *RankingStore) ChangeAttributes(ctx context.Context, pid types.PID, uid uint64, category uint32, all bool, p ranking.ChangeAttributesParam) (int64, error) {
	var set string
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if p.Flag&ranking.ChangeGroups != 0 {
		groups := p.Groups
		if groups == nil {
			groups = []byte{}
		}
		set = "groups = " + arg(groups) + ", g0 = " + arg(groupCol(groups, 0)) + ", g1 = " + arg(groupCol(groups, 1))
	}
	if p.Flag&ranking.ChangeParam != 0 {
		if set != "" {
			set += ", "
		}
		set += "param = " + arg(int64(p.Param))
	}
	where := "pid = " + arg(int64(pid)) + " AND unique_id = " + arg(int64(uid))
	if !all {
		where += " AND category = " + arg(int64(category))
	}
	if set == "" {
		// Nothing to change: count what would have been changed.
		var n int64
		if err := r.s.pool.QueryRow(ctx, `SELECT count(*) FROM ranking_scores WHERE `+where, args...).Scan(&n); err != nil {
			return 0, fmt.Errorf("pgstore: change attributes: %w", err)
		}
		return n, nil
	}
	return r.exec(ctx, "change attributes", `UPDATE ranking_scores SET `+set+` WHERE `+where, args...)
}

// PutCommonData implements ranking.Store.
func (r *RankingStore) PutCommonData(ctx context.Context, pid types.PID, uid uint64, data []byte, now time.Time) error {
	if data == nil {
		data = []byte{}
	}
	_, err := r.exec(ctx, "upload common data", `INSERT INTO ranking_common (pid, unique_id, data, updated) VALUES ($1, $2, $3, $4)
		ON CONFLICT (pid, unique_id) DO UPDATE SET data = excluded.data, updated = excluded.updated`,
		int64(pid), int64(uid), data, now.UnixNano())
	return err
}

// CommonData implements ranking.Store.
func (r *RankingStore) CommonData(ctx context.Context, pid types.PID, uid uint64) ([]byte, error) {
	var data []byte
	err := r.s.pool.QueryRow(ctx, `SELECT data FROM ranking_common WHERE pid = $1 AND unique_id = $2`, int64(pid), int64(uid)).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: common data of PID %d unique id %d", ranking.ErrNotFound, pid, uid)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: common data: %w", err)
	}
	return data, nil
}

// DeleteCommonData implements ranking.Store.
func (r *RankingStore) DeleteCommonData(ctx context.Context, pid types.PID, uid uint64) (bool, error) {
	n, err := r.exec(ctx, "delete common data", `DELETE FROM ranking_common WHERE pid = $1 AND unique_id = $2`, int64(pid), int64(uid))
	return n > 0, err
}

// rankFilter is the WHERE clause of a query (category and group), which the
// order and group indexes serve; its arguments are $1 and $2.
func rankFilter(q ranking.Query) (string, []any) {
	switch q.GroupIndex {
	case 0:
		return "s.category = $1 AND s.g0 = $2", []any{int64(q.Category.ID), int16(q.GroupNum)}
	case 1:
		return "s.category = $1 AND s.g1 = $2", []any{int64(q.Category.ID), int16(q.GroupNum)}
	}
	return "s.category = $1", []any{int64(q.Category.ID)}
}

// next returns the placeholder after args.
func next(args []any, k int) string { return fmt.Sprintf("$%d", len(args)+k) }

const entryColumns = `s.pid, s.unique_id, s.category, s.score, s.groups, s.param, s.updated, c.data, s.sort_key`

const rankOrder = ` ORDER BY s.sort_key, s.updated, s.pid, s.unique_id`

type entryRow struct {
	e       ranking.Entry
	sortKey int64
	updated int64
}

func scanEntry(sc interface{ Scan(...any) error }) (entryRow, error) {
	var row entryRow
	var pid, uid, cat, score, param int64
	if err := sc.Scan(&pid, &uid, &cat, &score, &row.e.Groups, &param, &row.updated, &row.e.CommonData, &row.sortKey); err != nil {
		return row, err
	}
	row.e.PID, row.e.UniqueID, row.e.Category, row.e.Score, row.e.Param = types.PID(pid), uint64(uid), uint32(cat), uint32(score), uint64(param)
	row.e.Updated = time.Unix(0, row.updated)
	return row, nil
}

// listQuery is List's statement for q (exported to the query-plan test).
func listQuery(q ranking.Query) (string, []any) {
	where, args := rankFilter(q)
	return `SELECT ` + entryColumns + ` FROM ranking_scores s
		LEFT JOIN ranking_common c ON c.pid = s.pid AND c.unique_id = s.unique_id
		WHERE ` + where + rankOrder + ` LIMIT ` + next(args, 1) + ` OFFSET ` + next(args, 2), args
}

// List implements ranking.Store.
func (r *RankingStore) List(ctx context.Context, q ranking.Query, offset, limit uint32) ([]ranking.Entry, error) {
	query, args := listQuery(q)
	rows, err := r.s.pool.Query(ctx, query, append(args, int64(limit), int64(offset))...)
	if err != nil {
		return nil, fmt.Errorf("pgstore: ranking list: %w", err)
	}
	defer rows.Close()
	out := make([]ranking.Entry, 0, min(limit, 256))
	for rows.Next() {
		row, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("pgstore: ranking list: %w", err)
		}
		out = append(out, row.e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: ranking list: %w", err)
	}
	return out, nil
}

// positionQuery counts the entries of q ranked before the entry whose order
// key follows q's arguments.
func positionQuery(q ranking.Query) (string, []any) {
	where, args := rankFilter(q)
	return `SELECT count(*) FROM ranking_scores s WHERE ` + where +
		` AND (s.sort_key, s.updated, s.pid, s.unique_id) < (` + next(args, 1) + `, ` + next(args, 2) + `, ` + next(args, 3) + `, ` + next(args, 4) + `)`, args
}

// findQuery is the first entry of q matching extra (a condition on s using
// the placeholders after q's), in rank order.
func findQuery(q ranking.Query, extra func(args []any) string) (string, []any) {
	where, args := rankFilter(q)
	return `SELECT ` + entryColumns + ` FROM ranking_scores s
		LEFT JOIN ranking_common c ON c.pid = s.pid AND c.unique_id = s.unique_id
		WHERE ` + where + ` AND ` + extra(args) + rankOrder + ` LIMIT 1`, args
}

// find returns the first entry matching extra in rank order, and its
// position, from one snapshot (REPEATABLE READ), so a concurrent upload
// cannot move the entry between the two statements.
func (r *RankingStore) find(ctx context.Context, q ranking.Query, what string, extra func(args []any) string, extraArgs ...any) (ranking.Entry, uint32, error) {
	tx, err := r.s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return ranking.Entry{}, 0, fmt.Errorf("pgstore: find score: %w", err)
	}
	defer tx.Rollback(context.Background())
	query, args := findQuery(q, extra)
	row, err := scanEntry(tx.QueryRow(ctx, query, append(args, extraArgs...)...))
	if errors.Is(err, pgx.ErrNoRows) {
		return ranking.Entry{}, 0, fmt.Errorf("%w: no score of %s in category %d", ranking.ErrNotFound, what, q.Category.ID)
	}
	if err != nil {
		return ranking.Entry{}, 0, fmt.Errorf("pgstore: find score: %w", err)
	}
	pq, pargs := positionQuery(q)
	var pos int64
	if err := tx.QueryRow(ctx, pq, append(pargs, row.sortKey, row.updated, int64(row.e.PID), int64(row.e.UniqueID))...).Scan(&pos); err != nil {
		return ranking.Entry{}, 0, fmt.Errorf("pgstore: rank of score: %w", err)
	}
	return row.e, uint32(pos), tx.Commit(ctx)
}

// Find implements ranking.Store.
func (r *RankingStore) Find(ctx context.Context, q ranking.Query, pid types.PID, uid uint64) (ranking.Entry, uint32, error) {
	return r.find(ctx, q, fmt.Sprintf("PID %d unique id %d", pid, uid), func(args []any) string {
		return "s.pid = " + next(args, 1) + " AND s.unique_id = " + next(args, 2)
	}, int64(pid), int64(uid))
}

// FindUnique implements ranking.Store.
func (r *RankingStore) FindUnique(ctx context.Context, q ranking.Query, uid uint64) (ranking.Entry, uint32, error) {
	return r.find(ctx, q, fmt.Sprintf("unique id %d", uid), func(args []any) string {
		return "s.unique_id = " + next(args, 1)
	}, int64(uid))
}

// betterQuery counts the entries of q whose sort key is below the next argument.
func betterQuery(q ranking.Query) (string, []any) {
	where, args := rankFilter(q)
	return `SELECT count(*) FROM ranking_scores s WHERE ` + where + ` AND s.sort_key < ` + next(args, 1), args
}

// CountBetter implements ranking.Store.
func (r *RankingStore) CountBetter(ctx context.Context, q ranking.Query, score uint32) (uint32, error) {
	query, args := betterQuery(q)
	var n int64
	if err := r.s.pool.QueryRow(ctx, query, append(args, sortKey(q.Category, score))...).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: count better scores: %w", err)
	}
	return uint32(n), nil
}

// Count implements ranking.Store.
func (r *RankingStore) Count(ctx context.Context, q ranking.Query) (uint32, error) {
	where, args := rankFilter(q)
	var n int64
	if err := r.s.pool.QueryRow(ctx, `SELECT count(*) FROM ranking_scores s WHERE `+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: count scores: %w", err)
	}
	return uint32(n), nil
}

// Stats implements ranking.Store.
func (r *RankingStore) Stats(ctx context.Context, q ranking.Query) (ranking.Stats, error) {
	where, args := rankFilter(q)
	var n int64
	var sum, lo, hi *float64
	if err := r.s.pool.QueryRow(ctx, `SELECT count(*), sum(s.score)::float8, min(s.score)::float8, max(s.score)::float8
		FROM ranking_scores s WHERE `+where, args...).Scan(&n, &sum, &lo, &hi); err != nil {
		return ranking.Stats{}, fmt.Errorf("pgstore: ranking stats: %w", err)
	}
	val := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	st := ranking.Stats{float64(n), val(sum), val(lo), val(hi), 0}
	if n > 0 {
		st[4] = val(sum) / float64(n)
	}
	return st, nil
}
