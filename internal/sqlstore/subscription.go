package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/subscription"
	"github.com/gamewire/gamewire/nex/types"
)

// SubscriptionSchemaV1 is the subscription component's first schema step,
// the same on SQLite and PostgreSQL (nex/accounts, nex/pgstore register it):
// each player's published data (Subscription, 117), its targets in order
// (seq) and its privacy level. Times are Unix nanoseconds.
const SubscriptionSchemaV1 = `
CREATE TABLE sub_data (
	pid      BIGINT PRIMARY KEY,
	content  BYTEA NOT NULL,
	unknown1 BIGINT NOT NULL,
	unknown2 BIGINT NOT NULL,
	created  BIGINT NOT NULL,
	updated  BIGINT NOT NULL
);
CREATE INDEX sub_data_updated ON sub_data (updated DESC, pid);
CREATE TABLE sub_targets (
	pid    BIGINT NOT NULL,
	target BIGINT NOT NULL,
	seq    BIGINT NOT NULL,
	PRIMARY KEY (pid, target)
);
CREATE INDEX sub_targets_target ON sub_targets (target, pid);
CREATE TABLE sub_privacy (
	pid   BIGINT PRIMARY KEY,
	level BIGINT NOT NULL
);
`

// Subscriptions is subscription.Store on either database.
type Subscriptions struct {
	db    DB
	store string
}

var _ subscription.Store = (*Subscriptions)(nil)

// NewSubscriptions returns the Subscription store on db; store names it in
// errors.
func NewSubscriptions(store string, db DB) *Subscriptions {
	return &Subscriptions{db: db, store: store}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// PutData implements subscription.Store.
func (s *Subscriptions) PutData(ctx context.Context, r subscription.Record, create bool) error {
	set := `content = excluded.content, updated = excluded.updated`
	if create {
		set += `, unknown1 = excluded.unknown1, unknown2 = excluded.unknown2, created = excluded.created`
	}
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		_, err := tx.Exec(ctx, `INSERT INTO sub_data (pid, content, unknown1, unknown2, created, updated) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (pid) DO UPDATE SET `+set,
			int64(r.PID), nonNil(r.Content), int64(r.Unknown1), b2i(r.Unknown2), r.Created.UnixNano(), r.Updated.UnixNano())
		return err
	})
	return Failure(s.store, "put subscription data", err)
}

// ClearData implements subscription.Store.
func (s *Subscriptions) ClearData(ctx context.Context, pid types.PID) error {
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `DELETE FROM sub_data WHERE pid = ?`, int64(pid)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM sub_targets WHERE pid = ?`, int64(pid))
		return err
	})
	return Failure(s.store, "clear subscription data", err)
}

const subColumns = `pid, content, unknown1, unknown2, created, updated`

func scanRecords(rows Rows, err error) ([]subscription.Record, error) {
	if err != nil {
		return nil, err
	}
	var out []subscription.Record
	for rows.Next() {
		var pid, u1, u2, created, updated int64
		var content []byte
		if err := rows.Scan(&pid, &content, &u1, &u2, &created, &updated); err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, subscription.Record{PID: types.PID(pid), Content: append([]byte{}, content...), Unknown1: uint32(u1),
			Unknown2: u2 != 0, Created: time.Unix(0, created), Updated: time.Unix(0, updated)})
	}
	return out, closeRows(rows, nil)
}

// pidArgs returns "?, ?, ..." for n values and the PIDs as arguments.
func pidArgs(pids []types.PID) (string, []any) {
	args := make([]any, len(pids))
	for i, p := range pids {
		args[i] = int64(p)
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(pids)), ", "), args
}

// Data implements subscription.Store.
func (s *Subscriptions) Data(ctx context.Context, pids []types.PID) ([]subscription.Record, error) {
	if len(pids) == 0 {
		return nil, nil
	}
	var out []subscription.Record
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		in, args := pidArgs(pids)
		rs, err := scanRecords(q.Query(ctx, `SELECT `+subColumns+` FROM sub_data WHERE pid IN (`+in+`)`, args...))
		if err != nil {
			return err
		}
		byPID := make(map[types.PID]subscription.Record, len(rs))
		for _, r := range rs {
			byPID[r.PID] = r
		}
		out = out[:0]
		for _, p := range pids {
			if r, ok := byPID[p]; ok {
				out = append(out, r)
				delete(byPID, p)
			}
		}
		return nil
	})
	return out, Failure(s.store, "read subscription data", err)
}

// Active implements subscription.Store.
func (s *Subscriptions) Active(ctx context.Context, exclude types.PID, since time.Time, limit int) ([]subscription.Record, error) {
	var out []subscription.Record
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = scanRecords(q.Query(ctx, `SELECT `+subColumns+` FROM sub_data WHERE updated >= ? AND pid <> ?
			ORDER BY updated DESC, pid LIMIT ?`, sinceNano(since), int64(exclude), int64(limit)))
		return err
	})
	return out, Failure(s.store, "read active players", err)
}

// sinceNano is since in Unix nanoseconds, the smallest value for the zero
// time (every record).
func sinceNano(since time.Time) int64 {
	if since.IsZero() {
		return -1 << 63
	}
	return since.UnixNano()
}

// queryPIDs runs a query whose rows are one PID each.
func queryPIDs(ctx context.Context, q Querier, query string, args ...any) ([]types.PID, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []types.PID
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, types.PID(p))
	}
	return out, closeRows(rows, nil)
}

// targets reads pid's targets in order.
func targets(ctx context.Context, q Querier, pid types.PID) ([]types.PID, error) {
	return queryPIDs(ctx, q, `SELECT target FROM sub_targets WHERE pid = ? ORDER BY seq`, int64(pid))
}

// appendTargets inserts the targets pid does not have yet after its others,
// failing when that makes more than max.
func appendTargets(ctx context.Context, tx Querier, pid types.PID, add []types.PID, max int) error {
	have, err := targets(ctx, tx, pid)
	if err != nil {
		return err
	}
	seen := make(map[types.PID]bool, len(have)+len(add))
	for _, t := range have {
		seen[t] = true
	}
	var next int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM sub_targets WHERE pid = ?`, int64(pid)).Scan(&next); err != nil {
		return err
	}
	n := len(have)
	for _, t := range add {
		if seen[t] {
			continue
		}
		seen[t] = true
		if n++; n > max {
			return subscription.TooManyTargets(len(seen), max)
		}
		next++
		if _, err := tx.Exec(ctx, `INSERT INTO sub_targets (pid, target, seq) VALUES (?, ?, ?)`, int64(pid), int64(t), next); err != nil {
			return err
		}
	}
	return nil
}

// AddTargets implements subscription.Store.
func (s *Subscriptions) AddTargets(ctx context.Context, pid types.PID, add []types.PID, max int) error {
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error { return appendTargets(ctx, tx, pid, add, max) })
	return Failure(s.store, "add subscription targets", err)
}

// DeleteTargets implements subscription.Store.
func (s *Subscriptions) DeleteTargets(ctx context.Context, pid types.PID, del []types.PID) error {
	if len(del) == 0 {
		return nil
	}
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		in, args := pidArgs(del)
		_, err := tx.Exec(ctx, `DELETE FROM sub_targets WHERE pid = ? AND target IN (`+in+`)`, append([]any{int64(pid)}, args...)...)
		return err
	})
	return Failure(s.store, "delete subscription targets", err)
}

// ReplaceTargets implements subscription.Store.
func (s *Subscriptions) ReplaceTargets(ctx context.Context, pid types.PID, ts []types.PID, max int) error {
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `DELETE FROM sub_targets WHERE pid = ?`, int64(pid)); err != nil {
			return err
		}
		return appendTargets(ctx, tx, pid, ts, max)
	})
	return Failure(s.store, "replace subscription targets", err)
}

// Targets implements subscription.Store.
func (s *Subscriptions) Targets(ctx context.Context, pid types.PID) ([]types.PID, error) {
	var out []types.PID
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = targets(ctx, q, pid)
		return err
	})
	return out, Failure(s.store, "read subscription targets", err)
}

// Watchers implements subscription.Store.
func (s *Subscriptions) Watchers(ctx context.Context, pid types.PID, limit int) ([]types.PID, error) {
	var out []types.PID
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = queryPIDs(ctx, q, `SELECT pid FROM sub_targets WHERE target = ? ORDER BY pid LIMIT ?`, int64(pid), int64(limit))
		return err
	})
	return out, Failure(s.store, "read subscription watchers", err)
}

// SetPrivacyLevel implements subscription.Store.
func (s *Subscriptions) SetPrivacyLevel(ctx context.Context, pid types.PID, level uint32) error {
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		_, err := tx.Exec(ctx, `INSERT INTO sub_privacy (pid, level) VALUES (?, ?) ON CONFLICT (pid) DO UPDATE SET level = excluded.level`,
			int64(pid), int64(level))
		return err
	})
	return Failure(s.store, "set privacy level", err)
}

// PrivacyLevel implements subscription.Store.
func (s *Subscriptions) PrivacyLevel(ctx context.Context, pid types.PID) (uint32, bool, error) {
	var level int64
	ok := false
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		ok = false
		err := q.QueryRow(ctx, `SELECT level FROM sub_privacy WHERE pid = ?`, int64(pid)).Scan(&level)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		ok = err == nil
		return err
	})
	return uint32(level), ok, Failure(s.store, "read privacy level", err)
}
