package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// The ranking component's schema. A score's sort_key is its score for
// ascending categories and MaxUint32 - score for descending ones, so one
// ascending index (category, sort_key, updated, pid, unique_id) gives every
// category in rank order: the first place is the smallest key, ties go to the
// earlier update. The group indexes do the same within one group value.
//
// Version 2 adds a version per category, bumped by every write to its scores
// in the write's transaction: a process's rank index (rankindex.go) compares it
// to the version it was built at and reads the category again when another
// process (a second secure node on the same database) wrote in between.
func init() { registerSchema("ranking", rankingV1, rankingV2) }

const rankingV2 = `
CREATE TABLE ranking_versions (
	category INTEGER PRIMARY KEY,
	version  INTEGER NOT NULL
);
`

// bumpVersion counts a write to a category's scores, in its transaction,
// and returns the category's new version.
func bumpVersion(ctx context.Context, tx *writeTx, category uint32) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, `INSERT INTO ranking_versions (category, version) VALUES (?, 1)
		ON CONFLICT (category) DO UPDATE SET version = version + 1 RETURNING version`, int64(category)).Scan(&v)
	return v, err
}

const rankingV1 = `
CREATE TABLE ranking_categories (
	category   INTEGER PRIMARY KEY,
	descending INTEGER NOT NULL,
	created    INTEGER NOT NULL
);
CREATE TABLE ranking_scores (
	category  INTEGER NOT NULL,
	pid       INTEGER NOT NULL,
	unique_id INTEGER NOT NULL,
	score     INTEGER NOT NULL,
	sort_key  INTEGER NOT NULL,
	g0        INTEGER,
	g1        INTEGER,
	groups    BLOB NOT NULL,
	param     INTEGER NOT NULL,
	updated   INTEGER NOT NULL,
	PRIMARY KEY (category, pid, unique_id)
);
CREATE INDEX ranking_scores_order ON ranking_scores (category, sort_key, updated, pid, unique_id);
CREATE INDEX ranking_scores_g0 ON ranking_scores (category, g0, sort_key, updated, pid, unique_id);
CREATE INDEX ranking_scores_g1 ON ranking_scores (category, g1, sort_key, updated, pid, unique_id);
CREATE INDEX ranking_scores_owner ON ranking_scores (pid, unique_id);
CREATE INDEX ranking_scores_unique ON ranking_scores (category, unique_id, sort_key, updated, pid);
CREATE TABLE ranking_common (
	pid       INTEGER NOT NULL,
	unique_id INTEGER NOT NULL,
	data      BLOB NOT NULL,
	updated   INTEGER NOT NULL,
	PRIMARY KEY (pid, unique_id)
);
`

// RankingStore is the SQLite implementation of ranking.Store, in the account
// store's database. Ranks and counts come from the rank index (rankindex.go);
// the statements both backends run alike are internal/sqlstore's.
type RankingStore struct {
	*sqlstore.Ranking
	db  *sql.DB
	idx *rankIndex
	// Timeout bounds each call; default DefaultQueryTimeout.
	Timeout time.Duration
}

var _ ranking.Store = (*RankingStore)(nil)

// rankIndexes holds the rank index of each open database (rankindex.go).
var rankIndexes sync.Map // *sql.DB -> *rankIndex

// Ranking returns the ranking store in s's database.
func (s *Store) Ranking() *RankingStore {
	idx, _ := rankIndexes.LoadOrStore(s.db, new(rankIndex))
	r := &RankingStore{db: s.db, idx: idx.(*rankIndex)}
	r.Ranking = sqlstore.NewRanking("accounts", rankDB{r})
	return r
}

// rankDB is the store's database as internal/sqlstore uses it (its
// sqlstore.RankingDB).
type rankDB struct{ *RankingStore }

// Do runs f on the database within the store's time limit.
func (r rankDB) Do(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	return f(ctx, sqlstore.Std(r.db))
}

// Locate reads an entry and takes its position from the rank index.
func (r rankDB) Locate(ctx context.Context, q ranking.Query, read func(ctx context.Context, q sqlstore.Querier) (sqlstore.EntryRow, error)) (sqlstore.EntryRow, uint32, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	row, err := read(ctx, sqlstore.Std(r.db))
	if err != nil {
		return row, 0, err
	}
	k := rankKey{row.SortKey, row.Updated, int64(row.Entry.PID), int64(row.Entry.UniqueID)}
	var pos int
	err = r.keys(ctx, q, func(l []rankKey) { pos, _ = slices.BinarySearchFunc(l, k, rankKey.compare) })
	return row, uint32(pos), err
}

// commit commits a write and applies its change to the rank index at once, so
// readers of the index never see it disagree with what was committed. The
// database's write lock is taken before the index's lock, by every writer.
func (r *RankingStore) commit(tx *writeTx, update func(x *rankIndex)) error {
	r.idx.mu.Lock()
	defer r.idx.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	update(r.idx)
	return nil
}

func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = DefaultQueryTimeout
	}
	return context.WithTimeout(ctx, d)
}

// writeGates serialise this process's writers per database before they ask
// SQLite for its write lock: waiting on a channel hands the lock over at once,
// where SQLite's busy handler would sleep and retry (with 16 writers that put
// hundreds of milliseconds on the slowest write). Other processes still meet
// the busy timeout.
var writeGates sync.Map // *sql.DB -> chan struct{}

// writeTx is a transaction holding its database's write gate until it
// commits or rolls back.
type writeTx struct {
	*sql.Tx
	gate chan struct{}
	once sync.Once
}

func (t *writeTx) release() { t.once.Do(func() { <-t.gate }) }

// Commit commits and releases the gate.
func (t *writeTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

// Rollback rolls back (after a commit: does nothing) and releases the gate.
func (t *writeTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}

// beginWrite starts a transaction that holds SQLite's write lock from its
// first statement, so a read-modify-write inside it cannot be overtaken by
// another writer (a deferred transaction would fail with SQLITE_BUSY when it
// upgrades from reading to writing after another commit).
func beginWrite(ctx context.Context, db *sql.DB) (*writeTx, error) {
	g, _ := writeGates.LoadOrStore(db, make(chan struct{}, 1))
	gate := g.(chan struct{})
	select {
	case gate <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		<-gate
		return nil, err
	}
	w := &writeTx{Tx: tx, gate: gate}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_migrations SET version = version WHERE 0`); err != nil {
		w.Rollback()
		return nil, err
	}
	return w, nil
}

// upsertScore stores a score (UploadScore, Import).
const upsertScore = `INSERT INTO ranking_scores (category, pid, unique_id, score, sort_key, g0, g1, groups, param, updated)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (category, pid, unique_id) DO UPDATE SET score = excluded.score, sort_key = excluded.sort_key,
		g0 = excluded.g0, g1 = excluded.g1, groups = excluded.groups, param = excluded.param, updated = excluded.updated`

// UploadScore implements ranking.Store.
func (r *RankingStore) UploadScore(ctx context.Context, c ranking.Category, pid types.PID, uid uint64, s ranking.ScoreData, now time.Time) (bool, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, r.db)
	if err != nil {
		return false, fmt.Errorf("accounts: upload score: %w", err)
	}
	defer tx.Rollback()
	var old rankEntry
	var oldScore int64
	err = tx.QueryRowContext(ctx, `SELECT score, sort_key, updated, g0, g1 FROM ranking_scores WHERE category = ? AND pid = ? AND unique_id = ?`,
		int64(c.ID), int64(pid), int64(uid)).Scan(&oldScore, &old.key.sortKey, &old.key.updated, &old.g0, &old.g1)
	had := err == nil
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, fmt.Errorf("accounts: upload score: %w", err)
	case s.UpdateMode != ranking.UpdateDeleteOld && !c.Better(s.Score, uint32(oldScore)):
		return false, nil
	}
	groups := s.Groups
	if groups == nil {
		groups = []byte{}
	}
	e := rankEntry{key: rankKey{sqlstore.SortKey(c, s.Score), now.UnixNano(), int64(pid), int64(uid)}}
	if len(groups) > 0 {
		e.g0 = sql.NullInt64{Int64: int64(groups[0]), Valid: true}
	}
	if len(groups) > 1 {
		e.g1 = sql.NullInt64{Int64: int64(groups[1]), Valid: true}
	}
	old.key.pid, old.key.uid = e.key.pid, e.key.uid
	if _, err := tx.ExecContext(ctx, upsertScore, int64(c.ID), int64(pid), int64(uid), int64(s.Score), e.key.sortKey, e.g0, e.g1,
		groups, int64(s.Param), e.key.updated); err != nil {
		return false, fmt.Errorf("accounts: upload score: %w", err)
	}
	v, err := bumpVersion(ctx, tx, c.ID)
	if err != nil {
		return false, fmt.Errorf("accounts: upload score: %w", err)
	}
	if err := r.commit(tx, func(x *rankIndex) {
		if ci := x.current(c.ID, v); ci != nil {
			if had {
				ci.remove(old)
			}
			ci.add(e)
		}
	}); err != nil {
		return false, fmt.Errorf("accounts: upload score: %w", err)
	}
	return true, nil
}

// DeleteScores deletes the scores where selects and takes them out of the
// rank index.
func (r rankDB) DeleteScores(ctx context.Context, where string, args ...any) (int64, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, r.db)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `DELETE FROM ranking_scores WHERE `+where+` RETURNING category, sort_key, updated, pid, unique_id, g0, g1`, args...)
	if err != nil {
		return 0, err
	}
	type deleted struct {
		cat uint32
		e   rankEntry
	}
	var gone []deleted
	for rows.Next() {
		var d deleted
		if err := rows.Scan(&d.cat, &d.e.key.sortKey, &d.e.key.updated, &d.e.key.pid, &d.e.key.uid, &d.e.g0, &d.e.g1); err != nil {
			rows.Close()
			return 0, err
		}
		gone = append(gone, d)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	versions := map[uint32]int64{}
	for _, d := range gone {
		if versions[d.cat] == 0 {
			if versions[d.cat], err = bumpVersion(ctx, tx, d.cat); err != nil {
				return 0, err
			}
		}
	}
	err = r.commit(tx, func(x *rankIndex) {
		for c, v := range versions {
			ci := x.current(c, v)
			if ci == nil {
				continue
			}
			for _, d := range gone {
				if d.cat == c {
					ci.remove(d.e)
				}
			}
		}
	})
	return int64(len(gone)), err
}

// UpdateScores updates scores; new groups move entries between group lists,
// so their categories are read into the rank index again when next needed.
func (r rankDB) UpdateScores(ctx context.Context, set, where string, groups bool, args ...any) (int64, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, r.db)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE ranking_scores SET `+set+` WHERE `+where+` RETURNING category`, args...)
	if err != nil {
		return 0, err
	}
	var cats []uint32
	for rows.Next() {
		var c uint32
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return 0, err
		}
		cats = append(cats, c)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if groups {
		for _, c := range cats {
			if _, err := bumpVersion(ctx, tx, c); err != nil {
				return 0, err
			}
		}
	}
	err = r.commit(tx, func(x *rankIndex) {
		if groups {
			for _, c := range cats {
				x.forget(c)
			}
		}
	})
	return int64(len(cats)), err
}

// keys runs f on the sorted keys q ranks among, under the index's lock.
func (r *RankingStore) keys(ctx context.Context, q ranking.Query, f func(l []rankKey)) error {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	v, err := categoryVersion(ctx, r.db, q.Category.ID)
	if err != nil {
		return err
	}
	r.idx.mu.Lock()
	defer r.idx.mu.Unlock()
	ci, err := r.idx.category(ctx, r.db, q.Category.ID, v)
	if err != nil {
		return err
	}
	f(ci.list(q.GroupIndex, q.GroupNum))
	return nil
}

// List implements ranking.Store: the rank index gives the key at position
// offset, and SQLite seeks to it (no OFFSET, no row skipped).
func (r *RankingStore) List(ctx context.Context, q ranking.Query, offset, limit uint32) ([]ranking.Entry, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	var from rankKey
	found := false
	if err := r.keys(ctx, q, func(l []rankKey) {
		if int(offset) < len(l) {
			from, found = l[offset], true
		}
	}); err != nil {
		return nil, err
	}
	if !found || limit == 0 {
		return nil, nil
	}
	where, args := sqlstore.Filter(q)
	rows, err := r.db.QueryContext(ctx, sqlstore.EntriesFrom+` WHERE `+where+` AND (s.sort_key, s.updated, s.pid, s.unique_id) >= (?, ?, ?, ?)`+
		sqlstore.RankOrder+` LIMIT ?`, append(args, from.sortKey, from.updated, from.pid, from.uid, int64(limit))...)
	if err != nil {
		return nil, fmt.Errorf("accounts: ranking list: %w", err)
	}
	out, err := sqlstore.Entries(rows, limit)
	if err != nil {
		return nil, fmt.Errorf("accounts: ranking list: %w", err)
	}
	return out, nil
}

// CountBetter implements ranking.Store (a binary search in the rank index).
func (r *RankingStore) CountBetter(ctx context.Context, q ranking.Query, score uint32) (uint32, error) {
	k := sqlstore.SortKey(q.Category, score)
	var n int
	err := r.keys(ctx, q, func(l []rankKey) { n = sort.Search(len(l), func(i int) bool { return l[i].sortKey >= k }) })
	return uint32(n), err
}

// Count implements ranking.Store (the length of a rank index list).
func (r *RankingStore) Count(ctx context.Context, q ranking.Query) (uint32, error) {
	var n int
	err := r.keys(ctx, q, func(l []rankKey) { n = len(l) })
	return uint32(n), err
}

// Import stores many scores of one category in one transaction (as UploadScore
// with UpdateDeleteOld would, one by one): for moving rankings in from
// elsewhere and for benchmarks. The category is created if needed, ordered as c
// says. Unlike the other methods it runs under the caller's context alone (no
// Timeout): a large import takes longer than any one query should.
func (r *RankingStore) Import(ctx context.Context, c ranking.Category, entries []ranking.Entry) error {
	if err := r.AddCategory(ctx, c); err != nil {
		return err
	}
	tx, err := beginWrite(ctx, r.db)
	if err != nil {
		return fmt.Errorf("accounts: import scores: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, upsertScore)
	if err != nil {
		return fmt.Errorf("accounts: import scores: %w", err)
	}
	defer stmt.Close()
	for i, e := range entries {
		groups := e.Groups
		if groups == nil {
			groups = []byte{}
		}
		if _, err := stmt.ExecContext(ctx, int64(c.ID), int64(e.PID), int64(e.UniqueID), int64(e.Score), sqlstore.SortKey(c, e.Score),
			sqlstore.GroupCol(groups, 0), sqlstore.GroupCol(groups, 1), groups, int64(e.Param), e.Updated.UnixNano()); err != nil {
			return fmt.Errorf("accounts: import score %d: %w", i, err)
		}
	}
	if _, err := bumpVersion(ctx, tx, c.ID); err != nil {
		return fmt.Errorf("accounts: import scores: %w", err)
	}
	return r.commit(tx, func(x *rankIndex) { x.forget(c.ID) })
}
