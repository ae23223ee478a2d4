package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// Ranking is the part of ranking.Store that both databases answer alike. A
// store embeds it and adds what ranks its own way (UploadScore, List, Count,
// CountBetter): the SQLite store from its in-memory rank index, the PostgreSQL
// store, whose nodes all write, by counting in SQL.
type Ranking struct {
	db    RankingDB
	store string
}

// RankingDB is a ranking store's database, with the steps that touch ranks.
type RankingDB interface {
	Pool
	// Locate runs read, which reads one entry of q, and returns the entry
	// with its position among q's entries (how many rank before it).
	Locate(ctx context.Context, q ranking.Query, read func(ctx context.Context, q Querier) (EntryRow, error)) (EntryRow, uint32, error)
	// DeleteScores deletes the scores where selects (a condition on
	// ranking_scores) and returns how many there were.
	DeleteScores(ctx context.Context, where string, args ...any) (int64, error)
	// UpdateScores runs UPDATE ranking_scores SET set WHERE where (args are
	// set's, then where's) and returns how many scores changed; groups says
	// that set moves scores between groups.
	UpdateScores(ctx context.Context, set, where string, groups bool, args ...any) (int64, error)
}

// NewRanking returns the shared part of a ranking store on db; store names it
// in error messages ("accounts", "pgstore").
func NewRanking(store string, db RankingDB) *Ranking { return &Ranking{db: db, store: store} }

// SortKey is a score's key in rank order: the score in an ascending category,
// MaxUint32 - score in a descending one, so the smallest key comes first.
func SortKey(c ranking.Category, score uint32) int64 {
	if c.Descending {
		return int64(math.MaxUint32 - score)
	}
	return int64(score)
}

// GroupCol is the value of column g0 (i 0) or g1 (i 1): a group byte, or NULL.
func GroupCol(groups []byte, i int) any {
	if i < len(groups) {
		return int64(groups[i])
	}
	return nil
}

// Filter is the WHERE clause of a query (category and group), which the order
// and group indexes serve.
func Filter(q ranking.Query) (string, []any) {
	switch q.GroupIndex {
	case 0:
		return "s.category = ? AND s.g0 = ?", []any{int64(q.Category.ID), int64(q.GroupNum)}
	case 1:
		return "s.category = ? AND s.g1 = ?", []any{int64(q.Category.ID), int64(q.GroupNum)}
	}
	return "s.category = ?", []any{int64(q.Category.ID)}
}

// EntriesFrom selects entries with their common data; ScanEntry reads them.
const EntriesFrom = `SELECT s.pid, s.unique_id, s.category, s.score, s.groups, s.param, s.updated, c.data, s.sort_key
	FROM ranking_scores s LEFT JOIN ranking_common c ON c.pid = s.pid AND c.unique_id = s.unique_id`

// RankOrder is rank order (better first, then the earlier update), as the
// order index holds it.
const RankOrder = ` ORDER BY s.sort_key, s.updated, s.pid, s.unique_id`

// EntryRow is an entry with its place in rank order.
type EntryRow struct {
	Entry   ranking.Entry
	SortKey int64
	Updated int64 // Unix nanoseconds
}

// ScanEntry reads an entry of EntriesFrom.
func ScanEntry(sc Row) (EntryRow, error) {
	var row EntryRow
	var pid, uid, cat, score, param int64
	if err := sc.Scan(&pid, &uid, &cat, &score, &row.Entry.Groups, &param, &row.Updated, &row.Entry.CommonData, &row.SortKey); err != nil {
		return row, err
	}
	row.Entry.PID, row.Entry.UniqueID, row.Entry.Category = types.PID(pid), uint64(uid), uint32(cat)
	row.Entry.Score, row.Entry.Param, row.Entry.Updated = uint32(score), uint64(param), time.Unix(0, row.Updated)
	return row, nil
}

// Entries reads the rows of a query of EntriesFrom and closes them.
func Entries(rows Rows, limit uint32) ([]ranking.Entry, error) {
	out := make([]ranking.Entry, 0, min(limit, 256))
	for rows.Next() {
		row, err := ScanEntry(rows)
		if err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, row.Entry)
	}
	return out, closeRows(rows, nil)
}

// Category implements ranking.Store.
func (r *Ranking) Category(ctx context.Context, id uint32) (c ranking.Category, err error) {
	err = r.db.Do(ctx, func(ctx context.Context, q Querier) error {
		err := q.QueryRow(ctx, `SELECT descending FROM ranking_categories WHERE category = ?`, int64(id)).Scan(&c.Descending)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %d", ranking.ErrNoCategory, id)
		}
		return err
	})
	c.ID = id
	return c, Failure(r.store, fmt.Sprintf("ranking category %d", id), err)
}

// AddCategory implements ranking.Store.
func (r *Ranking) AddCategory(ctx context.Context, c ranking.Category) error {
	err := r.db.Do(ctx, func(ctx context.Context, q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO ranking_categories (category, descending, created) VALUES (?, ?, ?)
			ON CONFLICT (category) DO NOTHING`, int64(c.ID), c.Descending, time.Now().UnixNano())
		return err
	})
	return Failure(r.store, fmt.Sprintf("add ranking category %d", c.ID), err)
}

// exec runs one statement and returns how many rows it changed.
func (r *Ranking) exec(ctx context.Context, what, query string, args ...any) (n int64, err error) {
	err = r.db.Do(ctx, func(ctx context.Context, q Querier) error {
		n, err = q.Exec(ctx, query, args...)
		return err
	})
	return n, Failure(r.store, what, err)
}

// DeleteScore implements ranking.Store.
func (r *Ranking) DeleteScore(ctx context.Context, pid types.PID, uid uint64, category uint32) (bool, error) {
	n, err := r.db.DeleteScores(ctx, `category = ? AND pid = ? AND unique_id = ?`, int64(category), int64(pid), int64(uid))
	return n > 0, Failure(r.store, "delete score", err)
}

// DeleteAllScores implements ranking.Store.
func (r *Ranking) DeleteAllScores(ctx context.Context, pid types.PID, uid uint64) (int64, error) {
	n, err := r.db.DeleteScores(ctx, `pid = ? AND unique_id = ?`, int64(pid), int64(uid))
	return n, Failure(r.store, "delete scores", err)
}

// ChangeAttributes implements ranking.Store.
func (r *Ranking) ChangeAttributes(ctx context.Context, pid types.PID, uid uint64, category uint32, all bool, p ranking.ChangeAttributesParam) (int64, error) {
	set := ""
	var args []any
	groups := p.Flag&ranking.ChangeGroups != 0
	if groups {
		g := p.Groups
		if g == nil {
			g = []byte{}
		}
		set = "groups = ?, g0 = ?, g1 = ?"
		args = append(args, g, GroupCol(g, 0), GroupCol(g, 1))
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
	var n int64
	var err error
	if set == "" {
		// Nothing to change: count what would have been changed.
		err = r.db.Do(ctx, func(ctx context.Context, q Querier) error {
			return q.QueryRow(ctx, `SELECT count(*) FROM ranking_scores WHERE `+where, args...).Scan(&n)
		})
	} else {
		n, err = r.db.UpdateScores(ctx, set, where, groups, args...)
	}
	return n, Failure(r.store, "change attributes", err)
}

// PutCommonData implements ranking.Store.
func (r *Ranking) PutCommonData(ctx context.Context, pid types.PID, uid uint64, data []byte, now time.Time) error {
	if data == nil {
		data = []byte{}
	}
	_, err := r.exec(ctx, "upload common data", `INSERT INTO ranking_common (pid, unique_id, data, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (pid, unique_id) DO UPDATE SET data = excluded.data, updated = excluded.updated`,
		int64(pid), int64(uid), data, now.UnixNano())
	return err
}

// CommonData implements ranking.Store.
func (r *Ranking) CommonData(ctx context.Context, pid types.PID, uid uint64) (data []byte, err error) {
	err = r.db.Do(ctx, func(ctx context.Context, q Querier) error {
		err := q.QueryRow(ctx, `SELECT data FROM ranking_common WHERE pid = ? AND unique_id = ?`, int64(pid), int64(uid)).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: common data of PID %d unique id %d", ranking.ErrNotFound, pid, uid)
		}
		return err
	})
	return data, Failure(r.store, "common data", err)
}

// DeleteCommonData implements ranking.Store.
func (r *Ranking) DeleteCommonData(ctx context.Context, pid types.PID, uid uint64) (bool, error) {
	n, err := r.exec(ctx, "delete common data", `DELETE FROM ranking_common WHERE pid = ? AND unique_id = ?`, int64(pid), int64(uid))
	return n > 0, err
}

// FindQuery selects the first entry of q matching extra (a condition on s,
// whose arguments follow q's) in rank order.
func FindQuery(q ranking.Query, extra string) (string, []any) {
	where, args := Filter(q)
	return EntriesFrom + ` WHERE ` + where + ` AND ` + extra + RankOrder + ` LIMIT 1`, args
}

// find returns the first entry of q matching extra in rank order, and its
// position.
func (r *Ranking) find(ctx context.Context, q ranking.Query, what, extra string, extraArgs ...any) (ranking.Entry, uint32, error) {
	query, args := FindQuery(q, extra)
	row, pos, err := r.db.Locate(ctx, q, func(ctx context.Context, tx Querier) (EntryRow, error) {
		row, err := ScanEntry(tx.QueryRow(ctx, query, append(args, extraArgs...)...))
		if errors.Is(err, sql.ErrNoRows) {
			return row, fmt.Errorf("%w: no score of %s in category %d", ranking.ErrNotFound, what, q.Category.ID)
		}
		return row, err
	})
	return row.Entry, pos, Failure(r.store, "find score", err)
}

// Find implements ranking.Store.
func (r *Ranking) Find(ctx context.Context, q ranking.Query, pid types.PID, uid uint64) (ranking.Entry, uint32, error) {
	return r.find(ctx, q, fmt.Sprintf("PID %d unique id %d", pid, uid), "s.pid = ? AND s.unique_id = ?", int64(pid), int64(uid))
}

// FindUnique implements ranking.Store.
func (r *Ranking) FindUnique(ctx context.Context, q ranking.Query, uid uint64) (ranking.Entry, uint32, error) {
	return r.find(ctx, q, fmt.Sprintf("unique id %d", uid), "s.unique_id = ?", int64(uid))
}

// Stats implements ranking.Store.
func (r *Ranking) Stats(ctx context.Context, q ranking.Query) (ranking.Stats, error) {
	where, args := Filter(q)
	var n int64
	var sum, lo, hi sql.NullFloat64
	err := r.db.Do(ctx, func(ctx context.Context, tx Querier) error {
		return tx.QueryRow(ctx, `SELECT count(*), CAST(sum(s.score) AS DOUBLE PRECISION), CAST(min(s.score) AS DOUBLE PRECISION),
			CAST(max(s.score) AS DOUBLE PRECISION) FROM ranking_scores s WHERE `+where, args...).Scan(&n, &sum, &lo, &hi)
	})
	if err != nil {
		return ranking.Stats{}, Failure(r.store, "ranking stats", err)
	}
	st := ranking.Stats{float64(n), sum.Float64, lo.Float64, hi.Float64, 0}
	if n > 0 {
		st[4] = sum.Float64 / float64(n)
	}
	return st, nil
}

// Usage implements ranking.Store, in one statement: the player's rows are
// found through ranking_scores_owner and ranking_common's key.
func (r *Ranking) Usage(ctx context.Context, pid types.PID, category uint32, uid uint64) (u ranking.Usage, err error) {
	var in, has int
	err = r.db.Do(ctx, func(ctx context.Context, q Querier) error {
		return q.QueryRow(ctx, `SELECT (SELECT count(DISTINCT category) FROM ranking_scores WHERE pid = ?),
			(SELECT count(*) FROM ranking_scores WHERE pid = ? AND category = ?),
			(SELECT count(*) FROM ranking_common WHERE pid = ?),
			(SELECT count(*) FROM ranking_common WHERE pid = ? AND unique_id = ?)`,
			int64(pid), int64(pid), int64(category), int64(pid), int64(pid), int64(uid)).Scan(&u.Categories, &in, &u.CommonData, &has)
	})
	u.InCategory, u.HasCommonData = in > 0, has > 0
	return u, Failure(r.store, "usage", err)
}
