package sqlstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/types"
)

// TKCDSchemaV1 is the tkcd component's first schema step, the same on SQLite
// and PostgreSQL (nex/accounts, nex/pgstore register it): Team Kirby Clash
// Deluxe's support ids, one per player, unique.
const TKCDSchemaV1 = `
CREATE TABLE tkcd_support_ids (
	pid        BIGINT PRIMARY KEY,
	support_id TEXT NOT NULL UNIQUE
);
`

// TKCD is tkcd.Store on either database.
type TKCD struct {
	db    DB
	store string
}

// NewTKCD returns Team Kirby Clash Deluxe's store on db; store names it in
// errors.
func NewTKCD(store string, db DB) *TKCD { return &TKCD{db: db, store: store} }

var _ tkcd.Store = (*TKCD)(nil)

// SupportID implements tkcd.Store.
func (s *TKCD) SupportID(ctx context.Context, pid types.PID, candidate string) (string, error) {
	var id string
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		err := tx.QueryRow(ctx, `SELECT support_id FROM tkcd_support_ids WHERE pid = ?`, int64(pid)).Scan(&id)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO tkcd_support_ids (pid, support_id) VALUES (?, ?) ON CONFLICT DO NOTHING`,
			int64(pid), candidate); err != nil {
			return err
		}
		// Inserted, or the player got one meanwhile; else the number is
		// another player's.
		err = tx.QueryRow(ctx, `SELECT support_id FROM tkcd_support_ids WHERE pid = ?`, int64(pid)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return tkcd.ErrSupportIDTaken
		}
		return err
	})
	if err != nil && !errors.Is(err, tkcd.ErrSupportIDTaken) {
		return "", fmt.Errorf("%s: tkcd support id: %w", s.store, err)
	}
	return id, err
}

// BadgeArcadeSchemaV1 is the badgearcade component's first schema step, the
// same on SQLite and PostgreSQL: Badge Arcade's play logs (unknown1 as
// little-endian u32s; received in Unix seconds).
const BadgeArcadeSchemaV1 = `
CREATE TABLE badgearcade_play_logs (
	pid       BIGINT NOT NULL,
	seq       BIGINT NOT NULL,
	unknown1  BYTEA NOT NULL,
	timestamp BIGINT NOT NULL,
	unknown2  TEXT NOT NULL,
	received  BIGINT NOT NULL,
	PRIMARY KEY (pid, seq)
);
`

// BadgeArcade is badgearcade.Store on either database.
type BadgeArcade struct {
	db    DB
	store string
}

// NewBadgeArcade returns Badge Arcade's store on db; store names it in errors.
func NewBadgeArcade(store string, db DB) *BadgeArcade { return &BadgeArcade{db: db, store: store} }

var _ badgearcade.Store = (*BadgeArcade)(nil)

// AddPlayLog implements badgearcade.Store.
func (s *BadgeArcade) AddPlayLog(ctx context.Context, l badgearcade.PlayLog, keep int) error {
	u1 := make([]byte, 0, 4*len(l.Unknown1))
	for _, v := range l.Unknown1 {
		u1 = binary.LittleEndian.AppendUint32(u1, v)
	}
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM badgearcade_play_logs WHERE pid = ?`, int64(l.PID)).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO badgearcade_play_logs (pid, seq, unknown1, timestamp, unknown2, received) VALUES (?, ?, ?, ?, ?, ?)`,
			int64(l.PID), seq, u1, int64(l.Timestamp), l.Unknown2, l.Received.Unix()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM badgearcade_play_logs WHERE pid = ? AND seq <= ?`, int64(l.PID), seq-int64(max(keep, 0)))
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: badge arcade play log: %w", s.store, err)
	}
	return nil
}

// PlayLogs implements badgearcade.Store.
func (s *BadgeArcade) PlayLogs(ctx context.Context, pid types.PID, limit int) ([]badgearcade.PlayLog, error) {
	var out []badgearcade.PlayLog
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, `SELECT unknown1, timestamp, unknown2, received FROM badgearcade_play_logs
			WHERE pid = ? ORDER BY seq DESC LIMIT ?`, int64(pid), int64(max(limit, 0)))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u1 []byte
			var ts, recv int64
			l := badgearcade.PlayLog{PID: pid}
			if err := rows.Scan(&u1, &ts, &l.Unknown2, &recv); err != nil {
				return err
			}
			if len(u1)%4 != 0 {
				return fmt.Errorf("play log unknown1 of %d bytes", len(u1))
			}
			l.Unknown1 = make([]uint32, 0, len(u1)/4)
			for i := 0; i < len(u1); i += 4 {
				l.Unknown1 = append(l.Unknown1, binary.LittleEndian.Uint32(u1[i:]))
			}
			l.Timestamp, l.Received = types.DateTime(ts), time.Unix(recv, 0)
			out = append(out, l)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: badge arcade play logs: %w", s.store, err)
	}
	return out, nil
}
