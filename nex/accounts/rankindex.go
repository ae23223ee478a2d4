package accounts

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The rank index: for each category the store has read, the keys of its scores
// in rank order, in memory, with one more sorted list per value of each of the
// first two group bytes. A rank (how many entries come before one), a count and
// "the entry at position N" are binary searches there, so no ranking query
// counts or skips rows in SQL: SQLite only seeks to a key and reads the entries
// wanted (see List). The index belongs to the process that writes the
// database, and knows which version of each category it holds: every write
// bumps the category's version in ranking_versions in its transaction, and a
// reader finding another version there (a second process wrote) reads the
// category again.

// rankKey orders a category's entries: sort key (better first), then the
// earlier update, then PID and unique id, exactly as sqlstore.RankOrder sorts in SQL.
type rankKey struct {
	sortKey, updated, pid, uid int64
}

func (a rankKey) compare(b rankKey) int {
	if c := cmp.Compare(a.sortKey, b.sortKey); c != 0 {
		return c
	}
	if c := cmp.Compare(a.updated, b.updated); c != 0 {
		return c
	}
	if c := cmp.Compare(a.pid, b.pid); c != 0 {
		return c
	}
	return cmp.Compare(a.uid, b.uid)
}

// rankEntry is a key with the group bytes that file it in the group lists.
type rankEntry struct {
	key    rankKey
	g0, g1 sql.NullInt64
}

type categoryIndex struct {
	version int64 // ranking_versions.version it reflects (0: none yet)
	all     []rankKey
	groups  [2]map[int64][]rankKey
}

type rankIndex struct {
	mu   sync.Mutex
	cats map[uint32]*categoryIndex
}

// list returns the sorted keys a query ranks among (nil when none); call
// with mu held.
func (c *categoryIndex) list(groupIndex uint8, groupNum uint8) []rankKey {
	if groupIndex <= 1 {
		return c.groups[groupIndex][int64(groupNum)]
	}
	return c.all
}

func insertKey(l []rankKey, k rankKey) []rankKey {
	i, _ := slices.BinarySearchFunc(l, k, rankKey.compare)
	return slices.Insert(l, i, k)
}

func deleteKey(l []rankKey, k rankKey) []rankKey {
	if i, ok := slices.BinarySearchFunc(l, k, rankKey.compare); ok {
		return slices.Delete(l, i, i+1)
	}
	return l
}

func (c *categoryIndex) add(e rankEntry) {
	c.all = insertKey(c.all, e.key)
	for i, g := range []sql.NullInt64{e.g0, e.g1} {
		if g.Valid {
			c.groups[i][g.Int64] = insertKey(c.groups[i][g.Int64], e.key)
		}
	}
}

func (c *categoryIndex) remove(e rankEntry) {
	c.all = deleteKey(c.all, e.key)
	for i, g := range []sql.NullInt64{e.g0, e.g1} {
		if g.Valid {
			c.groups[i][g.Int64] = deleteKey(c.groups[i][g.Int64], e.key)
		}
	}
}

// categoryVersion reads a category's version (0 before its first write); it
// runs before the index's lock is taken, so readers do not queue behind each
// other's queries.
func categoryVersion(ctx context.Context, db *sql.DB, id uint32) (int64, error) {
	var v int64
	err := db.QueryRowContext(ctx, `SELECT version FROM ranking_versions WHERE category = ?`, int64(id)).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("accounts: rank index of category %d: %w", id, err)
	}
	return v, nil
}

// category returns a category's index at version v or later (this process's
// own writes may have moved it on since v was read), reading it again when it
// is older (another process wrote) or on first use: one indexed read in rank
// order, in one read transaction with the version. Call with mu held.
func (x *rankIndex) category(ctx context.Context, db *sql.DB, id uint32, v int64) (*categoryIndex, error) {
	if c, ok := x.cats[id]; ok && c.version >= v {
		return c, nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("accounts: load rank index of category %d: %w", id, err)
	}
	defer tx.Rollback()
	c := &categoryIndex{groups: [2]map[int64][]rankKey{{}, {}}}
	err = tx.QueryRowContext(ctx, `SELECT version FROM ranking_versions WHERE category = ?`, int64(id)).Scan(&c.version)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("accounts: load rank index of category %d: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT s.sort_key, s.updated, s.pid, s.unique_id, s.g0, s.g1 FROM ranking_scores s
		WHERE s.category = ?`+sqlstore.RankOrder, int64(id))
	if err != nil {
		return nil, fmt.Errorf("accounts: load rank index of category %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e rankEntry
		if err := rows.Scan(&e.key.sortKey, &e.key.updated, &e.key.pid, &e.key.uid, &e.g0, &e.g1); err != nil {
			return nil, fmt.Errorf("accounts: load rank index of category %d: %w", id, err)
		}
		// Rows come in rank order: appending keeps every list sorted.
		c.all = append(c.all, e.key)
		for i, g := range []sql.NullInt64{e.g0, e.g1} {
			if g.Valid {
				c.groups[i][g.Int64] = append(c.groups[i][g.Int64], e.key)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: load rank index of category %d: %w", id, err)
	}
	if x.cats == nil {
		x.cats = make(map[uint32]*categoryIndex)
	}
	x.cats[id] = c
	return c, nil
}

// current returns a category's index if it is loaded and reflects the version
// just before v, marking it v (the caller applies the write that made v);
// otherwise it forgets it (another process wrote in between) and returns nil.
// Call with mu held.
func (x *rankIndex) current(id uint32, v int64) *categoryIndex {
	c := x.cats[id]
	if c == nil {
		return nil
	}
	if c.version != v-1 {
		delete(x.cats, id)
		return nil
	}
	c.version = v
	return c
}

// forget drops a category's index (it is read again when next needed); call
// with mu held.
func (x *rankIndex) forget(id uint32) { delete(x.cats, id) }
