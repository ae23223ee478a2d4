package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/types"
)

// SMMSchemaV1 is the smm component's first schema step, the same on SQLite
// and PostgreSQL (nex/accounts, nex/pgstore register it): custom ranking
// scores and raters' counters, buffer queues, course records and deletion
// reasons, keyed by DataStore data id. Times are Unix nanoseconds.
const SMMSchemaV1 = `
CREATE TABLE smm_custom_rankings (
	application_id BIGINT NOT NULL,
	data_id        BIGINT NOT NULL,
	score          BIGINT NOT NULL,
	PRIMARY KEY (application_id, data_id)
);
CREATE INDEX smm_custom_rankings_score ON smm_custom_rankings (application_id, score DESC, data_id);
CREATE TABLE smm_rate_counters (
	pid            BIGINT NOT NULL,
	application_id BIGINT NOT NULL,
	count          BIGINT NOT NULL,
	PRIMARY KEY (pid, application_id)
);
CREATE TABLE smm_buffer_queues (
	data_id BIGINT NOT NULL,
	slot    BIGINT NOT NULL,
	seq     BIGINT NOT NULL,
	buffer  BYTEA NOT NULL,
	PRIMARY KEY (data_id, slot, seq)
);
CREATE TABLE smm_course_records (
	data_id    BIGINT NOT NULL,
	slot       BIGINT NOT NULL,
	first_pid  BIGINT NOT NULL,
	best_pid   BIGINT NOT NULL,
	best_score BIGINT NOT NULL,
	created    BIGINT NOT NULL,
	updated    BIGINT NOT NULL,
	PRIMARY KEY (data_id, slot)
);
CREATE TABLE smm_deletion_reasons (
	data_id BIGINT PRIMARY KEY,
	reason  BIGINT NOT NULL
);
`

// SMM is smm.Store on either database (the statements written once with ?
// placeholders).
type SMM struct {
	db    DB
	store string
}

// NewSMM returns the Super Mario Maker store on db; store names it in errors.
func NewSMM(store string, db DB) *SMM { return &SMM{db: db, store: store} }

var _ smm.Store = (*SMM)(nil)

func (s *SMM) fail(op string, err error) error {
	if err == nil || errors.Is(err, smm.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s: smm %s: %w", s.store, op, err)
}

// RateCustomRanking implements smm.Store.
func (s *SMM) RateCustomRanking(ctx context.Context, rater types.PID, app uint32, rates []smm.Rate) error {
	return s.fail("rate custom ranking", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		for _, r := range rates {
			n, err := tx.Exec(ctx, `UPDATE smm_custom_rankings SET score = score + ? WHERE application_id = ? AND data_id = ?`,
				int64(r.Score), int64(app), int64(r.DataID))
			if err != nil {
				return err
			}
			if n == 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO smm_custom_rankings (application_id, data_id, score) VALUES (?, ?, ?)`,
					int64(app), int64(r.DataID), int64(r.Score)); err != nil {
					return err
				}
			}
		}
		n, err := tx.Exec(ctx, `UPDATE smm_rate_counters SET count = count + ? WHERE pid = ? AND application_id = ?`,
			int64(len(rates)), int64(rater), int64(app))
		if err == nil && n == 0 {
			_, err = tx.Exec(ctx, `INSERT INTO smm_rate_counters (pid, application_id, count) VALUES (?, ?, ?)`,
				int64(rater), int64(app), int64(len(rates)))
		}
		return err
	}))
}

// CustomRanking implements smm.Store.
func (s *SMM) CustomRanking(ctx context.Context, app uint32, ids []uint64) ([]smm.Ranked, error) {
	out := make([]smm.Ranked, len(ids))
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		for i, id := range ids {
			out[i] = smm.Ranked{DataID: id}
			var score, order int64
			err := q.QueryRow(ctx, `SELECT r.score, (SELECT COUNT(*) FROM smm_custom_rankings b WHERE b.application_id = r.application_id AND b.score > r.score) + 1
				FROM smm_custom_rankings r WHERE r.application_id = ? AND r.data_id = ?`, int64(app), int64(id)).Scan(&score, &order)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				continue
			case err != nil:
				return err
			}
			out[i].Score, out[i].Order = uint32(score), uint32(order)
		}
		return nil
	})
	return out, s.fail("custom ranking", err)
}

// TopCustomRanking implements smm.Store.
func (s *SMM) TopCustomRanking(ctx context.Context, app uint32, offset, limit uint32) ([]smm.Ranked, error) {
	var out []smm.Ranked
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT data_id, score FROM smm_custom_rankings WHERE application_id = ?
			ORDER BY score DESC, data_id LIMIT ? OFFSET ?`, int64(app), int64(limit), int64(offset))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, score int64
			if err = rows.Scan(&id, &score); err != nil {
				break
			}
			out = append(out, smm.Ranked{DataID: uint64(id), Score: uint32(score)})
		}
		return closeRows(rows, err)
	})
	// Equal scores share a place: the first of them sets it.
	for i := range out {
		out[i].Order = offset + uint32(i) + 1
		if i > 0 && out[i].Score == out[i-1].Score {
			out[i].Order = out[i-1].Order
		}
	}
	return out, s.fail("top custom ranking", err)
}

// RateCount implements smm.Store.
func (s *SMM) RateCount(ctx context.Context, rater types.PID, app uint32) (uint32, error) {
	var n int64
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		err := q.QueryRow(ctx, `SELECT count FROM smm_rate_counters WHERE pid = ? AND application_id = ?`, int64(rater), int64(app)).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			n, err = 0, nil
		}
		return err
	})
	return uint32(n), s.fail("rate count", err)
}

// ResetRateCount implements smm.Store.
func (s *SMM) ResetRateCount(ctx context.Context, rater types.PID, app uint32) error {
	return s.fail("reset rate count", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		_, err := tx.Exec(ctx, `DELETE FROM smm_rate_counters WHERE pid = ? AND application_id = ?`, int64(rater), int64(app))
		return err
	}))
}

// AddToBufferQueue implements smm.Store.
func (s *SMM) AddToBufferQueue(ctx context.Context, qid smm.QueueID, buf []byte, keep int) error {
	return s.fail("add to buffer queue", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		var next int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM smm_buffer_queues WHERE data_id = ? AND slot = ?`,
			int64(qid.DataID), int64(qid.Slot)).Scan(&next); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO smm_buffer_queues (data_id, slot, seq, buffer) VALUES (?, ?, ?, ?)`,
			int64(qid.DataID), int64(qid.Slot), next, buf); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM smm_buffer_queues WHERE data_id = ? AND slot = ? AND seq <= ?`,
			int64(qid.DataID), int64(qid.Slot), next-int64(keep))
		return err
	}))
}

// BufferQueue implements smm.Store.
func (s *SMM) BufferQueue(ctx context.Context, qid smm.QueueID) ([][]byte, error) {
	out := [][]byte{}
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT buffer FROM smm_buffer_queues WHERE data_id = ? AND slot = ? ORDER BY seq`,
			int64(qid.DataID), int64(qid.Slot))
		if err != nil {
			return err
		}
		for rows.Next() {
			var b []byte
			if err = rows.Scan(&b); err != nil {
				break
			}
			out = append(out, b)
		}
		return closeRows(rows, err)
	})
	return out, s.fail("buffer queue", err)
}

const courseRecordColumns = `data_id, slot, first_pid, best_pid, best_score, created, updated`

func scanCourseRecord(row Row) (smm.CourseRecord, error) {
	var id, slot, first, best, score, created, updated int64
	if err := row.Scan(&id, &slot, &first, &best, &score, &created, &updated); err != nil {
		return smm.CourseRecord{}, err
	}
	return smm.CourseRecord{DataID: uint64(id), Slot: uint8(slot), FirstPID: types.PID(first), BestPID: types.PID(best),
		BestScore: int32(score), Created: time.Unix(0, created), Updated: time.Unix(0, updated)}, nil
}

// UploadCourseRecord implements smm.Store.
func (s *SMM) UploadCourseRecord(ctx context.Context, dataID uint64, slot uint8, pid types.PID, score int32, now time.Time) (smm.CourseRecord, error) {
	var rec smm.CourseRecord
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		n, err := tx.Exec(ctx, `UPDATE smm_course_records SET best_pid = ?, best_score = ?, updated = ?
			WHERE data_id = ? AND slot = ? AND best_score > ?`, int64(pid), int64(score), now.UnixNano(), int64(dataID), int64(slot), int64(score))
		if err != nil {
			return err
		}
		if n == 0 {
			var exists int64
			err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM smm_course_records WHERE data_id = ? AND slot = ?`, int64(dataID), int64(slot)).Scan(&exists)
			if err != nil {
				return err
			}
			if exists == 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO smm_course_records (`+courseRecordColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					int64(dataID), int64(slot), int64(pid), int64(pid), int64(score), now.UnixNano(), now.UnixNano()); err != nil {
					return err
				}
			}
		}
		rec, err = scanCourseRecord(tx.QueryRow(ctx, `SELECT `+courseRecordColumns+` FROM smm_course_records WHERE data_id = ? AND slot = ?`,
			int64(dataID), int64(slot)))
		return err
	})
	return rec, s.fail("upload course record", err)
}

// CourseRecord implements smm.Store.
func (s *SMM) CourseRecord(ctx context.Context, dataID uint64, slot uint8) (smm.CourseRecord, error) {
	var rec smm.CourseRecord
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		rec, err = scanCourseRecord(q.QueryRow(ctx, `SELECT `+courseRecordColumns+` FROM smm_course_records WHERE data_id = ? AND slot = ?`,
			int64(dataID), int64(slot)))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no course record for object %d slot %d", smm.ErrNotFound, dataID, slot)
		}
		return err
	})
	return rec, s.fail("course record", err)
}

// SetDeletionReason implements smm.Store.
func (s *SMM) SetDeletionReason(ctx context.Context, ids []uint64, reason uint32) error {
	return s.fail("set deletion reason", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		for _, id := range ids {
			if _, err := tx.Exec(ctx, `DELETE FROM smm_deletion_reasons WHERE data_id = ?`, int64(id)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO smm_deletion_reasons (data_id, reason) VALUES (?, ?)`, int64(id), int64(reason)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// DeletionReasons implements smm.Store.
func (s *SMM) DeletionReasons(ctx context.Context, ids []uint64) ([]uint32, error) {
	out := make([]uint32, len(ids))
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		for i, id := range ids {
			var r int64
			err := q.QueryRow(ctx, `SELECT reason FROM smm_deletion_reasons WHERE data_id = ?`, int64(id)).Scan(&r)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				out[i] = uint32(r)
			}
		}
		return nil
	})
	return out, s.fail("deletion reasons", err)
}
