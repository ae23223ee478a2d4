package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
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

// RankingStore is the PostgreSQL implementation of ranking.Store. Every node
// writes scores, so ranks and counts are counted in SQL (on the order and group
// indexes) rather than kept in memory as the SQLite store's rank index is: an
// index here would be read again after nearly every other node's upload. The
// statements both backends run alike are internal/sqlstore's.
type RankingStore struct {
	*sqlstore.Ranking
	db pgDB
}

var _ ranking.Store = (*RankingStore)(nil)

// Ranking returns the ranking store on s's database.
func (s *Store) Ranking() *RankingStore {
	r := &RankingStore{db: pgDB{s.pool}}
	r.Ranking = sqlstore.NewRanking("pgstore", rankDB{r.db})
	return r
}

// rankDB is the database as internal/sqlstore uses it (its
// sqlstore.RankingDB).
type rankDB struct{ pgDB }

// Locate reads the entry and counts the entries before it in one snapshot,
// so a concurrent upload cannot move the entry between the two statements.
func (d rankDB) Locate(ctx context.Context, q ranking.Query, read func(ctx context.Context, q sqlstore.Querier) (sqlstore.EntryRow, error)) (row sqlstore.EntryRow, pos uint32, err error) {
	err = d.Snapshot(ctx, func(ctx context.Context, tx sqlstore.Querier) error {
		if row, err = read(ctx, tx); err != nil {
			return err
		}
		query, args := positionQuery(q)
		return tx.QueryRow(ctx, query, append(args, row.SortKey, row.Updated, int64(row.Entry.PID), int64(row.Entry.UniqueID))...).Scan(&pos)
	})
	return row, pos, err
}

// DeleteScores deletes the scores where selects.
func (d rankDB) DeleteScores(ctx context.Context, where string, args ...any) (int64, error) {
	return pgq{d.pool}.Exec(ctx, `DELETE FROM ranking_scores WHERE `+where, args...)
}

// UpdateScores updates scores (ranks are counted when asked: nothing else to
// change).
func (d rankDB) UpdateScores(ctx context.Context, set, where string, _ bool, args ...any) (int64, error) {
	return pgq{d.pool}.Exec(ctx, `UPDATE ranking_scores SET `+set+` WHERE `+where, args...)
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
	n, err := pgq{r.db.pool}.Exec(ctx, `INSERT INTO ranking_scores AS old (category, pid, unique_id, score, sort_key, g0, g1, groups, param, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (category, pid, unique_id) DO UPDATE SET score = excluded.score, sort_key = excluded.sort_key,
			g0 = excluded.g0, g1 = excluded.g1, groups = excluded.groups, param = excluded.param, updated = excluded.updated
		WHERE ? OR excluded.sort_key < old.sort_key`,
		int64(c.ID), int64(pid), int64(uid), int64(s.Score), sqlstore.SortKey(c, s.Score), sqlstore.GroupCol(groups, 0), sqlstore.GroupCol(groups, 1),
		groups, int64(s.Param), now.UnixNano(), s.UpdateMode == ranking.UpdateDeleteOld)
	if err != nil {
		return false, fmt.Errorf("pgstore: upload score: %w", err)
	}
	return n > 0, nil
}

// listQuery is List's statement for q; the limit and the offset follow q's
// arguments.
func listQuery(q ranking.Query) (string, []any) {
	where, args := sqlstore.Filter(q)
	return sqlstore.EntriesFrom + ` WHERE ` + where + sqlstore.RankOrder + ` LIMIT ? OFFSET ?`, args
}

// List implements ranking.Store.
func (r *RankingStore) List(ctx context.Context, q ranking.Query, offset, limit uint32) ([]ranking.Entry, error) {
	query, args := listQuery(q)
	rows, err := pgq{r.db.pool}.Query(ctx, query, append(args, int64(limit), int64(offset))...)
	if err == nil {
		var out []ranking.Entry
		if out, err = sqlstore.Entries(rows, limit); err == nil {
			return out, nil
		}
	}
	return nil, fmt.Errorf("pgstore: ranking list: %w", err)
}

// positionQuery counts the entries of q ranked before the entry whose order
// key follows q's arguments.
func positionQuery(q ranking.Query) (string, []any) {
	where, args := sqlstore.Filter(q)
	return `SELECT count(*) FROM ranking_scores s WHERE ` + where + ` AND (s.sort_key, s.updated, s.pid, s.unique_id) < (?, ?, ?, ?)`, args
}

// betterQuery counts the entries of q whose sort key is below the next argument.
func betterQuery(q ranking.Query) (string, []any) {
	where, args := sqlstore.Filter(q)
	return `SELECT count(*) FROM ranking_scores s WHERE ` + where + ` AND s.sort_key < ?`, args
}

// count runs a count of ranked entries.
func (r *RankingStore) count(ctx context.Context, what, query string, args ...any) (uint32, error) {
	var n int64
	if err := (pgq{r.db.pool}).QueryRow(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: %s: %w", what, err)
	}
	return uint32(n), nil
}

// CountBetter implements ranking.Store.
func (r *RankingStore) CountBetter(ctx context.Context, q ranking.Query, score uint32) (uint32, error) {
	query, args := betterQuery(q)
	return r.count(ctx, "count better scores", query, append(args, sqlstore.SortKey(q.Category, score))...)
}

// Count implements ranking.Store.
func (r *RankingStore) Count(ctx context.Context, q ranking.Query) (uint32, error) {
	where, args := sqlstore.Filter(q)
	return r.count(ctx, "count scores", `SELECT count(*) FROM ranking_scores s WHERE `+where, args...)
}
