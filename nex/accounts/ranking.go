package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

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
// store's database.
type RankingStore struct {
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
	return &RankingStore{db: s.db, idx: idx.(*rankIndex)}
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

func sortKey(c ranking.Category, score uint32) int64 {
	if c.Descending {
		return int64(math.MaxUint32 - score)
	}
	return int64(score)
}

func groupCol(groups []byte, i int) any {
	if i < len(groups) {
		return int64(groups[i])
	}
	return nil
}

// Category implements ranking.Store.
func (r *RankingStore) Category(ctx context.Context, id uint32) (ranking.Category, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	var desc bool
	err := r.db.QueryRowContext(ctx, `SELECT descending FROM ranking_categories WHERE category = ?`, int64(id)).Scan(&desc)
	if errors.Is(err, sql.ErrNoRows) {
		return ranking.Category{}, fmt.Errorf("%w: %d", ranking.ErrNoCategory, id)
	}
	if err != nil {
		return ranking.Category{}, fmt.Errorf("accounts: ranking category %d: %w", id, err)
	}
	return ranking.Category{ID: id, Descending: desc}, nil
}

// AddCategory implements ranking.Store.
func (r *RankingStore) AddCategory(ctx context.Context, c ranking.Category) error {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	if _, err := r.db.ExecContext(ctx, `INSERT INTO ranking_categories (category, descending, created) VALUES (?, ?, ?)
		ON CONFLICT (category) DO NOTHING`, int64(c.ID), c.Descending, time.Now().UnixNano()); err != nil {
		return fmt.Errorf("accounts: add ranking category %d: %w", c.ID, err)
	}
	return nil
}

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
	e := rankEntry{key: rankKey{sortKey(c, s.Score), now.UnixNano(), int64(pid), int64(uid)}}
	if len(groups) > 0 {
		e.g0 = sql.NullInt64{Int64: int64(groups[0]), Valid: true}
	}
	if len(groups) > 1 {
		e.g1 = sql.NullInt64{Int64: int64(groups[1]), Valid: true}
	}
	old.key.pid, old.key.uid = e.key.pid, e.key.uid
	if _, err := tx.ExecContext(ctx, `INSERT INTO ranking_scores (category, pid, unique_id, score, sort_key, g0, g1, groups, param, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (category, pid, unique_id) DO UPDATE SET score = excluded.score, sort_key = excluded.sort_key,
			g0 = excluded.g0, g1 = excluded.g1, groups = excluded.groups, param = excluded.param, updated = excluded.updated`,
		int64(c.ID), int64(pid), int64(uid), int64(s.Score), e.key.sortKey, e.g0, e.g1,
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

// deleteReturning runs a DELETE ... RETURNING category, sort_key, updated,
// pid, unique_id, g0, g1 and takes what it deleted out of the rank index.
func (r *RankingStore) deleteReturning(ctx context.Context, what, query string, args ...any) (int64, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, r.db)
	if err != nil {
		return 0, fmt.Errorf("accounts: %s: %w", what, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, query+` RETURNING category, sort_key, updated, pid, unique_id, g0, g1`, args...)
	if err != nil {
		return 0, fmt.Errorf("accounts: %s: %w", what, err)
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
			return 0, fmt.Errorf("accounts: %s: %w", what, err)
		}
		gone = append(gone, d)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("accounts: %s: %w", what, err)
	}
	versions := map[uint32]int64{}
	for _, d := range gone {
		if versions[d.cat] == 0 {
			if versions[d.cat], err = bumpVersion(ctx, tx, d.cat); err != nil {
				return 0, fmt.Errorf("accounts: %s: %w", what, err)
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
	if err != nil {
		return 0, fmt.Errorf("accounts: %s: %w", what, err)
	}
	return int64(len(gone)), nil
}

func (r *RankingStore) exec(ctx context.Context, what, query string, args ...any) (int64, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	res, err := r.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("accounts: %s: %w", what, err)
	}
	return res.RowsAffected()
}

// DeleteScore implements ranking.Store.
func (r *RankingStore) DeleteScore(ctx context.Context, pid types.PID, uid uint64, category uint32) (bool, error) {
	n, err := r.deleteReturning(ctx, "delete score", `DELETE FROM ranking_scores WHERE category = ? AND pid = ? AND unique_id = ?`,
		int64(category), int64(pid), int64(uid))
	return n > 0, err
}

// DeleteAllScores implements ranking.Store.
func (r *RankingStore) DeleteAllScores(ctx context.Context, pid types.PID, uid uint64) (int64, error) {
	return r.deleteReturning(ctx, "delete scores", `DELETE FROM ranking_scores WHERE pid = ? AND unique_id = ?`, int64(pid), int64(uid))
}

// ChangeAttributes implements ranking.Store.
func (r *RankingStore) ChangeAttributes(ctx context.Context, pid types.PID, uid uint64, category uint32, all bool, p ranking.ChangeAttributesParam) (int64, error) {
	set := ""
	var args []any
	if p.Flag&ranking.ChangeGroups != 0 {
		groups := p.Groups
		if groups == nil {
			groups = []byte{}
		}
		set = "groups = ?, g0 = ?, g1 = ?"
		args = append(args, groups, groupCol(groups, 0), groupCol(groups, 1))
	}
	if p.Flag&ranking.ChangeParam != 0 {
		if set != "" {
			set += ", "
		}
		set += "param = ?"
		args = append(args, int64(p.Param))
	}
	where := "pid = ? AND unique_id = ?"
	args = append(args, int64(pid), int64(uid))
	if !all {
		where += " AND category = ?"
		args = append(args, int64(category))
	}
	if set == "" {
		// Nothing to change: count what would have been changed.
		ctx, cancel := withTimeout(ctx, r.Timeout)
		defer cancel()
		var n int64
		err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM ranking_scores WHERE `+where, args...).Scan(&n)
		return n, err
	}
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	tx, err := beginWrite(ctx, r.db)
	if err != nil {
		return 0, fmt.Errorf("accounts: change attributes: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `UPDATE ranking_scores SET `+set+` WHERE `+where+` RETURNING category`, args...)
	if err != nil {
		return 0, fmt.Errorf("accounts: change attributes: %w", err)
	}
	var cats []uint32
	for rows.Next() {
		var c uint32
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return 0, fmt.Errorf("accounts: change attributes: %w", err)
		}
		cats = append(cats, c)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("accounts: change attributes: %w", err)
	}
	if p.Flag&ranking.ChangeGroups != 0 {
		for _, c := range cats {
			if _, err := bumpVersion(ctx, tx, c); err != nil {
				return 0, fmt.Errorf("accounts: change attributes: %w", err)
			}
		}
	}
	// New groups move entries between group lists: those categories are
	// read again when next needed.
	err = r.commit(tx, func(x *rankIndex) {
		if p.Flag&ranking.ChangeGroups != 0 {
			for _, c := range cats {
				x.forget(c)
			}
		}
	})
	if err != nil {
		return 0, fmt.Errorf("accounts: change attributes: %w", err)
	}
	return int64(len(cats)), nil
}

// PutCommonData implements ranking.Store.
func (r *RankingStore) PutCommonData(ctx context.Context, pid types.PID, uid uint64, data []byte, now time.Time) error {
	if data == nil {
		data = []byte{}
	}
	_, err := r.exec(ctx, "upload common data", `INSERT INTO ranking_common (pid, unique_id, data, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (pid, unique_id) DO UPDATE SET data = excluded.data, updated = excluded.updated`,
		int64(pid), int64(uid), data, now.UnixNano())
	return err
}

// CommonData implements ranking.Store.
func (r *RankingStore) CommonData(ctx context.Context, pid types.PID, uid uint64) ([]byte, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	var data []byte
	err := r.db.QueryRowContext(ctx, `SELECT data FROM ranking_common WHERE pid = ? AND unique_id = ?`, int64(pid), int64(uid)).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: common data of PID %d unique id %d", ranking.ErrNotFound, pid, uid)
	}
	if err != nil {
		return nil, fmt.Errorf("accounts: common data: %w", err)
	}
	return data, nil
}

// DeleteCommonData implements ranking.Store.
func (r *RankingStore) DeleteCommonData(ctx context.Context, pid types.PID, uid uint64) (bool, error) {
	n, err := r.exec(ctx, "delete common data", `DELETE FROM ranking_common WHERE pid = ? AND unique_id = ?`, int64(pid), int64(uid))
	return n > 0, err
}

// filter is the WHERE clause of a query (category and group), which the
// order and group indexes serve.
func filter(q ranking.Query) (string, []any) {
	switch q.GroupIndex {
	case 0:
		return "s.category = ? AND s.g0 = ?", []any{int64(q.Category.ID), int64(q.GroupNum)}
	case 1:
		return "s.category = ? AND s.g1 = ?", []any{int64(q.Category.ID), int64(q.GroupNum)}
	}
	return "s.category = ?", []any{int64(q.Category.ID)}
}

const entryColumns = `s.pid, s.unique_id, s.category, s.score, s.groups, s.param, s.updated, c.data, s.sort_key`

const rankOrder = ` ORDER BY s.sort_key, s.updated, s.pid, s.unique_id`

type entryRow struct {
	e       ranking.Entry
	sortKey int64
	updated int64
}

func scanEntry(sc interface{ Scan(...any) error }) (entryRow, error) {
	var row entryRow
	var pid, uid, score, param int64
	if err := sc.Scan(&pid, &uid, &row.e.Category, &score, &row.e.Groups, &param, &row.updated, &row.e.CommonData, &row.sortKey); err != nil {
		return row, err
	}
	row.e.PID, row.e.UniqueID, row.e.Score, row.e.Param = types.PID(pid), uint64(uid), uint32(score), uint64(param)
	row.e.Updated = time.Unix(0, row.updated)
	return row, nil
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
	where, args := filter(q)
	rows, err := r.db.QueryContext(ctx, `SELECT `+entryColumns+` FROM ranking_scores s
		LEFT JOIN ranking_common c ON c.pid = s.pid AND c.unique_id = s.unique_id
		WHERE `+where+` AND (s.sort_key, s.updated, s.pid, s.unique_id) >= (?, ?, ?, ?)`+rankOrder+` LIMIT ?`,
		append(args, from.sortKey, from.updated, from.pid, from.uid, int64(limit))...)
	if err != nil {
		return nil, fmt.Errorf("accounts: ranking list: %w", err)
	}
	defer rows.Close()
	out := make([]ranking.Entry, 0, min(limit, 256))
	for rows.Next() {
		row, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("accounts: ranking list: %w", err)
		}
		out = append(out, row.e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: ranking list: %w", err)
	}
	return out, nil
}

// find returns the first entry matching extra (a condition on s) in rank
// order, and its position from the rank index.
func (r *RankingStore) find(ctx context.Context, q ranking.Query, what, extra string, extraArgs ...any) (ranking.Entry, uint32, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	where, args := filter(q)
	row, err := scanEntry(r.db.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM ranking_scores s
		LEFT JOIN ranking_common c ON c.pid = s.pid AND c.unique_id = s.unique_id
		WHERE `+where+` AND `+extra+rankOrder+` LIMIT 1`, append(args, extraArgs...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return ranking.Entry{}, 0, fmt.Errorf("%w: no score of %s in category %d", ranking.ErrNotFound, what, q.Category.ID)
	}
	if err != nil {
		return ranking.Entry{}, 0, fmt.Errorf("accounts: find score: %w", err)
	}
	k := rankKey{row.sortKey, row.updated, int64(row.e.PID), int64(row.e.UniqueID)}
	var pos int
	if err := r.keys(ctx, q, func(l []rankKey) { pos, _ = slices.BinarySearchFunc(l, k, rankKey.compare) }); err != nil {
		return ranking.Entry{}, 0, err
	}
	return row.e, uint32(pos), nil
}

// Find implements ranking.Store.
func (r *RankingStore) Find(ctx context.Context, q ranking.Query, pid types.PID, uid uint64) (ranking.Entry, uint32, error) {
	return r.find(ctx, q, fmt.Sprintf("PID %d unique id %d", pid, uid), "s.pid = ? AND s.unique_id = ?", int64(pid), int64(uid))
}

// FindUnique implements ranking.Store.
func (r *RankingStore) FindUnique(ctx context.Context, q ranking.Query, uid uint64) (ranking.Entry, uint32, error) {
	return r.find(ctx, q, fmt.Sprintf("unique id %d", uid), "s.unique_id = ?", int64(uid))
}

// CountBetter implements ranking.Store (a binary search in the rank index).
func (r *RankingStore) CountBetter(ctx context.Context, q ranking.Query, score uint32) (uint32, error) {
	k := sortKey(q.Category, score)
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

// Stats implements ranking.Store.
func (r *RankingStore) Stats(ctx context.Context, q ranking.Query) (ranking.Stats, error) {
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	where, args := filter(q)
	var n int64
	var sum, lo, hi sql.NullFloat64
	if err := r.db.QueryRowContext(ctx, `SELECT count(*), sum(s.score), min(s.score), max(s.score) FROM ranking_scores s WHERE `+where,
		args...).Scan(&n, &sum, &lo, &hi); err != nil {
		return ranking.Stats{}, fmt.Errorf("accounts: ranking stats: %w", err)
	}
	st := ranking.Stats{float64(n), sum.Float64, lo.Float64, hi.Float64, 0}
	if n > 0 {
		st[4] = sum.Float64 / float64(n)
	}
	return st, nil
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
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO ranking_scores (category, pid, unique_id, score, sort_key, g0, g1, groups, param, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (category, pid, unique_id) DO UPDATE SET score = excluded.score, sort_key = excluded.sort_key,
			g0 = excluded.g0, g1 = excluded.g1, groups = excluded.groups, param = excluded.param, updated = excluded.updated`)
	if err != nil {
		return fmt.Errorf("accounts: import scores: %w", err)
	}
	defer stmt.Close()
	for i, e := range entries {
		groups := e.Groups
		if groups == nil {
			groups = []byte{}
		}
		if _, err := stmt.ExecContext(ctx, int64(c.ID), int64(e.PID), int64(e.UniqueID), int64(e.Score), sortKey(c, e.Score),
			groupCol(groups, 0), groupCol(groups, 1), groups, int64(e.Param), e.Updated.UnixNano()); err != nil {
			return fmt.Errorf("accounts: import score %d: %w", i, err)
		}
	}
	if _, err := bumpVersion(ctx, tx, c.ID); err != nil {
		return fmt.Errorf("accounts: import scores: %w", err)
	}
	return r.commit(tx, func(x *rankIndex) { x.forget(c.ID) })
}
