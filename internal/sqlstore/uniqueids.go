package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/nex/utility"
)

// UniqueIDs is utility.Store: ut_unique_ids holds each unique id issued with
// its password (a uint64 stored as its int64 bits), ut_associations the ids
// associated with each player, in order (seq).
type UniqueIDs struct {
	db    DB
	store string
}

var _ utility.Store = (*UniqueIDs)(nil)

// NewUniqueIDs returns the unique ids of db; store names it in errors.
func NewUniqueIDs(store string, db DB) *UniqueIDs { return &UniqueIDs{db: db, store: store} }

// IssueUniqueID implements utility.Store.
func (u *UniqueIDs) IssueUniqueID(ctx context.Context, password uint64) (uint64, error) {
	var id int64
	err := u.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		return tx.QueryRow(ctx, `INSERT INTO ut_unique_ids (password, created) VALUES (?, ?) RETURNING id`,
			int64(password), time.Now().UnixNano()).Scan(&id)
	})
	return uint64(id), Failure(u.store, "issue a unique id", err)
}

// AssociateUniqueIDs implements utility.Store.
func (u *UniqueIDs) AssociateUniqueIDs(ctx context.Context, pid types.PID, infos []utility.UniqueIDInfo) error {
	err := u.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		issued := map[uint64]uint64{}
		for _, in := range infos {
			var pw int64
			err := tx.QueryRow(ctx, `SELECT password FROM ut_unique_ids WHERE id = ?`, int64(in.ID)).Scan(&pw)
			if err == nil {
				issued[in.ID] = uint64(pw)
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if err := utility.CheckIssued(infos, func(id uint64) (uint64, bool) { pw, ok := issued[id]; return pw, ok }); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM ut_associations WHERE pid = ?`, int64(pid)); err != nil {
			return err
		}
		for i, in := range infos {
			if _, err := tx.Exec(ctx, `INSERT INTO ut_associations (pid, seq, id) VALUES (?, ?, ?)`, int64(pid), i, int64(in.ID)); err != nil {
				return err
			}
		}
		return nil
	})
	return Failure(u.store, "associate unique ids", err)
}

// AssociatedUniqueIDs implements utility.Store.
func (u *UniqueIDs) AssociatedUniqueIDs(ctx context.Context, pid types.PID) ([]utility.UniqueIDInfo, error) {
	var out []utility.UniqueIDInfo
	err := u.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT a.id, i.password FROM ut_associations a JOIN ut_unique_ids i ON i.id = a.id
			WHERE a.pid = ? ORDER BY a.seq`, int64(pid))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, pw int64
			if err := rows.Scan(&id, &pw); err != nil {
				return closeRows(rows, err)
			}
			out = append(out, utility.UniqueIDInfo{ID: uint64(id), Password: uint64(pw)})
		}
		return closeRows(rows, nil)
	})
	return out, Failure(u.store, "read associated unique ids", err)
}
