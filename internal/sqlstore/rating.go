package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/types"
)

// RatingSchemaV1 is the rating component's first schema step, the same on
// SQLite and PostgreSQL (nex/accounts, nex/pgstore register it): the rating
// session tokens issued (Rating, 118) and the players who presented each.
// Times are Unix nanoseconds.
const RatingSchemaV1 = `
CREATE TABLE rt_tokens (
	id     BIGINT PRIMARY KEY,
	secret BYTEA NOT NULL,
	owner  BIGINT NOT NULL,
	issued BIGINT NOT NULL
);
CREATE INDEX rt_tokens_owner ON rt_tokens (owner, issued DESC, id DESC);
CREATE TABLE rt_token_users (
	id   BIGINT NOT NULL,
	pid  BIGINT NOT NULL,
	used BIGINT NOT NULL,
	PRIMARY KEY (id, pid)
);
`

// Ratings is rating.Store on either database.
type Ratings struct {
	db    DB
	store string
}

var _ rating.Store = (*Ratings)(nil)

// NewRatings returns the Rating store on db; store names it in errors.
func NewRatings(store string, db DB) *Ratings { return &Ratings{db: db, store: store} }

// IssueToken implements rating.Store.
func (s *Ratings) IssueToken(ctx context.Context, t rating.Token, keep int) error {
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM rt_tokens WHERE id = ?`, int64(t.ID)).Scan(&one)
		if err == nil {
			return rating.ErrTokenExists
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rt_tokens (id, secret, owner, issued) VALUES (?, ?, ?, ?)`,
			int64(t.ID), nonNil(t.Key), int64(t.Owner), t.Issued.UnixNano()); err != nil {
			return err
		}
		// The owner has at most keep tokens before this one: read them all.
		rows, err := tx.Query(ctx, `SELECT id FROM rt_tokens WHERE owner = ? ORDER BY issued DESC, id DESC`, int64(t.Owner))
		if err != nil {
			return err
		}
		var own []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return closeRows(rows, err)
			}
			own = append(own, id)
		}
		if err := closeRows(rows, nil); err != nil {
			return err
		}
		for _, id := range own[min(keep, len(own)):] {
			if _, err := tx.Exec(ctx, `DELETE FROM rt_token_users WHERE id = ?`, id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM rt_tokens WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, rating.ErrTokenExists) {
		return err
	}
	return Failure(s.store, "issue a rating token", err)
}

// UseToken implements rating.Store.
func (s *Ratings) UseToken(ctx context.Context, pid types.PID, id uint64, key []byte, notBefore, now time.Time) error {
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		var have []byte
		var issued int64
		err := tx.QueryRow(ctx, `SELECT secret, issued FROM rt_tokens WHERE id = ?`, int64(id)).Scan(&have, &issued)
		if errors.Is(err, sql.ErrNoRows) || err == nil && (!bytes.Equal(have, key) || issued < notBefore.UnixNano()) {
			return rating.UnknownToken(id)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO rt_token_users (id, pid, used) VALUES (?, ?, ?) ON CONFLICT (id, pid) DO NOTHING`,
			int64(id), int64(pid), now.UnixNano())
		return err
	})
	return Failure(s.store, "take a rating token", err)
}

// TokenUsers implements rating.Store.
func (s *Ratings) TokenUsers(ctx context.Context, id uint64) ([]types.PID, error) {
	var out []types.PID
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = queryPIDs(ctx, q, `SELECT pid FROM rt_token_users WHERE id = ? ORDER BY used, pid`, int64(id))
		return err
	})
	return out, Failure(s.store, "read rating token users", err)
}
