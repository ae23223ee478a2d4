package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/types"
)

// SSB4SchemaV1 is the ssb4 component's first schema step, the same on SQLite
// and PostgreSQL (nex/accounts, nex/pgstore register it): profiles, play
// reports (one row per value), replays with their players and winners, the
// viewers' places in the replay queue, fighting power scores, and shared
// data with the fighters it shows and its reports. Times are Unix
// nanoseconds.
const SSB4SchemaV1 = `
CREATE TABLE ssb4_profiles (
	pid     BIGINT PRIMARY KEY,
	profile BYTEA NOT NULL,
	updated BIGINT NOT NULL
);
CREATE TABLE ssb4_play_reports (
	pid     BIGINT NOT NULL,
	idx     BIGINT NOT NULL,
	value   BIGINT NOT NULL,
	PRIMARY KEY (pid, idx)
);
CREATE TABLE ssb4_replays (
	replay_id      BIGINT PRIMARY KEY,
	poster         BIGINT NOT NULL,
	size           BIGINT NOT NULL,
	mode           BIGINT NOT NULL,
	style          BIGINT NOT NULL,
	rule           BIGINT NOT NULL,
	stage          BIGINT NOT NULL,
	replay_type    BIGINT NOT NULL,
	competition_id BIGINT NOT NULL,
	score          BIGINT NOT NULL,
	key_version    BIGINT NOT NULL,
	posted         BIGINT NOT NULL
);
CREATE INDEX ssb4_replays_mode ON ssb4_replays (mode, style, replay_id);
CREATE INDEX ssb4_replays_posted ON ssb4_replays (mode, posted);
CREATE TABLE ssb4_replay_players (
	replay_id    BIGINT NOT NULL,
	idx          BIGINT NOT NULL,
	fighter      BIGINT NOT NULL,
	health       BIGINT NOT NULL,
	winning_rate BIGINT NOT NULL,
	color        BIGINT NOT NULL,
	color2       BIGINT NOT NULL,
	principal_id BIGINT NOT NULL,
	country      BIGINT NOT NULL,
	region       BIGINT NOT NULL,
	number       BIGINT NOT NULL,
	PRIMARY KEY (replay_id, idx)
);
CREATE INDEX ssb4_replay_players_fighter ON ssb4_replay_players (fighter, replay_id);
CREATE TABLE ssb4_replay_winners (
	replay_id BIGINT NOT NULL,
	idx       BIGINT NOT NULL,
	pid       BIGINT NOT NULL,
	PRIMARY KEY (replay_id, idx)
);
CREATE TABLE ssb4_replay_cursors (
	pid       BIGINT PRIMARY KEY,
	replay_id BIGINT NOT NULL
);
CREATE TABLE ssb4_fighting_power (
	pid     BIGINT NOT NULL,
	mode    BIGINT NOT NULL,
	score   BIGINT NOT NULL,
	updated BIGINT NOT NULL,
	PRIMARY KEY (pid, mode)
);
CREATE INDEX ssb4_fighting_power_score ON ssb4_fighting_power (mode, score);
CREATE TABLE ssb4_shared_data (
	data_id    BIGINT PRIMARY KEY,
	owner      BIGINT NOT NULL,
	data_type  BIGINT NOT NULL,
	region     BIGINT NOT NULL,
	attribute1 BIGINT NOT NULL,
	attribute2 BIGINT NOT NULL,
	fighters   BYTEA NOT NULL,
	comment    TEXT NOT NULL,
	posted     BIGINT NOT NULL,
	reports    BIGINT NOT NULL
);
CREATE INDEX ssb4_shared_data_type ON ssb4_shared_data (data_type, data_id);
CREATE TABLE ssb4_shared_data_fighters (
	data_id BIGINT NOT NULL,
	fighter BIGINT NOT NULL,
	PRIMARY KEY (data_id, fighter)
);
CREATE TABLE ssb4_shared_data_reports (
	data_id BIGINT NOT NULL,
	pid     BIGINT NOT NULL,
	PRIMARY KEY (data_id, pid)
);
`

// SSB4 is ssb4.Store on either database (the statements written once with ?
// placeholders).
type SSB4 struct {
	db    DB
	store string
}

// NewSSB4 returns the Super Smash Bros. 4 store on db; store names it in
// errors.
func NewSSB4(store string, db DB) *SSB4 { return &SSB4{db: db, store: store} }

var _ ssb4.Store = (*SSB4)(nil)

func (s *SSB4) fail(op string, err error) error {
	if err == nil || errors.Is(err, ssb4.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s: ssb4 %s: %w", s.store, op, err)
}

// PostProfile implements ssb4.Store.
func (s *SSB4) PostProfile(ctx context.Context, pid types.PID, profile []byte, now time.Time) error {
	return s.fail("post profile", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `DELETE FROM ssb4_profiles WHERE pid = ?`, int64(pid)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ssb4_profiles (pid, profile, updated) VALUES (?, ?, ?)`,
			int64(pid), nonNil(profile), now.UnixNano())
		return err
	}))
}

// Profiles implements ssb4.Store.
func (s *SSB4) Profiles(ctx context.Context, pids []types.PID) ([]ssb4.Profile, error) {
	out := []ssb4.Profile{}
	seen := map[types.PID]bool{}
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		for _, pid := range pids {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			var b []byte
			err := q.QueryRow(ctx, `SELECT profile FROM ssb4_profiles WHERE pid = ?`, int64(pid)).Scan(&b)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				continue
			case err != nil:
				return err
			}
			out = append(out, ssb4.Profile{PID: pid, Profile: nonNil(b)})
		}
		return nil
	})
	return out, s.fail("profiles", err)
}

// SendPlayReport implements ssb4.Store.
func (s *SSB4) SendPlayReport(ctx context.Context, pid types.PID, report []int32, now time.Time) error {
	return s.fail("send play report", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `DELETE FROM ssb4_play_reports WHERE pid = ?`, int64(pid)); err != nil {
			return err
		}
		for i, v := range report {
			if _, err := tx.Exec(ctx, `INSERT INTO ssb4_play_reports (pid, idx, value) VALUES (?, ?, ?)`,
				int64(pid), int64(i), int64(v)); err != nil {
				return err
			}
		}
		return nil
	}))
}

// WorldPlayReport implements ssb4.Store.
func (s *SSB4) WorldPlayReport(ctx context.Context) ([]int64, error) {
	out := []int64{}
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT idx, CAST(SUM(value) AS BIGINT) FROM ssb4_play_reports GROUP BY idx ORDER BY idx`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var idx, sum int64
			if err = rows.Scan(&idx, &sum); err != nil {
				break
			}
			for int64(len(out)) < idx {
				out = append(out, 0)
			}
			out = append(out, sum)
		}
		return closeRows(rows, err)
	})
	return out, s.fail("world play report", err)
}

const replayColumns = `replay_id, poster, size, mode, style, rule, stage, replay_type, competition_id, score, key_version, posted`

// AddReplay implements ssb4.Store.
func (s *SSB4) AddReplay(ctx context.Context, r ssb4.Replay, keep int) error {
	return s.fail("add replay", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `INSERT INTO ssb4_replays (`+replayColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			int64(r.ID), int64(r.Poster), int64(r.Size), int64(r.Mode), int64(r.Style), int64(r.Rule), int64(r.Stage),
			int64(r.ReplayType), int64(r.CompetitionID), int64(r.Score), int64(r.KeyVersion), r.Posted.UnixNano()); err != nil {
			return err
		}
		for i, p := range r.Players {
			if _, err := tx.Exec(ctx, `INSERT INTO ssb4_replay_players (replay_id, idx, fighter, health, winning_rate, color, color2,
				principal_id, country, region, number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				int64(r.ID), int64(i), int64(p.Fighter), int64(p.Health), int64(p.WinningRate), int64(p.Color), int64(p.Color2),
				int64(p.PrincipalID), int64(p.Country), int64(p.Region), int64(p.Number)); err != nil {
				return err
			}
		}
		for i, w := range r.Winners {
			if _, err := tx.Exec(ctx, `INSERT INTO ssb4_replay_winners (replay_id, idx, pid) VALUES (?, ?, ?)`,
				int64(r.ID), int64(i), int64(w)); err != nil {
				return err
			}
		}
		var oldest int64
		err := tx.QueryRow(ctx, `SELECT replay_id FROM ssb4_replays ORDER BY replay_id DESC LIMIT 1 OFFSET ?`, int64(keep)).Scan(&oldest)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, t := range []string{"ssb4_replays", "ssb4_replay_players", "ssb4_replay_winners"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE replay_id <= ?`, oldest); err != nil {
				return err
			}
		}
		return nil
	}))
}

// replays reads the replays a query selects, with their players and winners.
func replays(ctx context.Context, q Querier, query string, args ...any) ([]ssb4.Replay, error) {
	rows, err := q.Query(ctx, `SELECT `+replayColumns+` FROM ssb4_replays `+query, args...)
	if err != nil {
		return nil, err
	}
	out := []ssb4.Replay{}
	for rows.Next() {
		var v [12]int64
		if err = rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]); err != nil {
			break
		}
		out = append(out, ssb4.Replay{ID: uint64(v[0]), Poster: types.PID(v[1]), Size: uint32(v[2]), Mode: uint8(v[3]),
			Style: uint8(v[4]), Rule: uint8(v[5]), Stage: uint8(v[6]), ReplayType: uint8(v[7]), CompetitionID: uint64(v[8]),
			Score: int32(v[9]), KeyVersion: uint16(v[10]), Posted: time.Unix(0, v[11]),
			Players: []ssb4.ReplayPlayer{}, Winners: []uint32{}})
	}
	if err := closeRows(rows, err); err != nil {
		return nil, err
	}
	for i := range out {
		if err := replayPlayers(ctx, q, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func replayPlayers(ctx context.Context, q Querier, r *ssb4.Replay) error {
	rows, err := q.Query(ctx, `SELECT fighter, health, winning_rate, color, color2, principal_id, country, region, number
		FROM ssb4_replay_players WHERE replay_id = ? ORDER BY idx`, int64(r.ID))
	if err != nil {
		return err
	}
	for rows.Next() {
		var v [9]int64
		if err = rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]); err != nil {
			break
		}
		r.Players = append(r.Players, ssb4.ReplayPlayer{Fighter: uint8(v[0]), Health: uint8(v[1]), WinningRate: uint16(v[2]),
			Color: uint8(v[3]), Color2: uint8(v[4]), PrincipalID: uint32(v[5]), Country: uint32(v[6]), Region: uint8(v[7]), Number: uint8(v[8])})
	}
	if err := closeRows(rows, err); err != nil {
		return err
	}
	rows, err = q.Query(ctx, `SELECT pid FROM ssb4_replay_winners WHERE replay_id = ? ORDER BY idx`, int64(r.ID))
	if err != nil {
		return err
	}
	for rows.Next() {
		var pid int64
		if err = rows.Scan(&pid); err != nil {
			break
		}
		r.Winners = append(r.Winners, uint32(pid))
	}
	return closeRows(rows, err)
}

// Replay implements ssb4.Store.
func (s *SSB4) Replay(ctx context.Context, id uint64) (ssb4.Replay, error) {
	var out []ssb4.Replay
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = replays(ctx, q, `WHERE replay_id = ?`, int64(id))
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("%w: no replay %d", ssb4.ErrNotFound, id)
		}
		return err
	})
	if err != nil {
		return ssb4.Replay{}, s.fail("replay", err)
	}
	return out[0], nil
}

// ReplaysAfter implements ssb4.Store.
func (s *SSB4) ReplaysAfter(ctx context.Context, after uint64, limit int) ([]ssb4.Replay, error) {
	var out []ssb4.Replay
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = replays(ctx, q, `WHERE replay_id > ? ORDER BY replay_id LIMIT ?`, int64(after), int64(limit))
		return err
	})
	return out, s.fail("replays after", err)
}

// SearchReplays implements ssb4.Store.
func (s *SSB4) SearchReplays(ctx context.Context, rq ssb4.ReplayQuery) ([]ssb4.Replay, error) {
	var out []ssb4.Replay
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = replays(ctx, q, `WHERE mode = ? AND style = ? AND EXISTS (SELECT 1 FROM ssb4_replay_players p
			WHERE p.replay_id = ssb4_replays.replay_id AND p.fighter = ?) ORDER BY replay_id DESC LIMIT ? OFFSET ?`,
			int64(rq.Mode), int64(rq.Style), int64(rq.Fighter), int64(rq.Limit), int64(rq.Offset))
		return err
	})
	return out, s.fail("search replays", err)
}

// ReplayStats implements ssb4.Store.
func (s *SSB4) ReplayStats(ctx context.Context, mode uint8, since time.Time) (int, []uint8, error) {
	var n int64
	fighters := []uint8{}
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM ssb4_replays WHERE mode = ? AND posted >= ?`,
			int64(mode), since.UnixNano()).Scan(&n); err != nil {
			return err
		}
		rows, err := q.Query(ctx, `SELECT DISTINCT p.fighter FROM ssb4_replay_players p JOIN ssb4_replays r ON r.replay_id = p.replay_id
			WHERE r.mode = ? AND r.posted >= ? ORDER BY p.fighter`, int64(mode), since.UnixNano())
		if err != nil {
			return err
		}
		for rows.Next() {
			var f int64
			if err = rows.Scan(&f); err != nil {
				break
			}
			fighters = append(fighters, uint8(f))
		}
		return closeRows(rows, err)
	})
	return int(n), fighters, s.fail("replay stats", err)
}

// ReplayCursor implements ssb4.Store.
func (s *SSB4) ReplayCursor(ctx context.Context, viewer types.PID) (uint64, error) {
	var id int64
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		err := q.QueryRow(ctx, `SELECT replay_id FROM ssb4_replay_cursors WHERE pid = ?`, int64(viewer)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			id, err = 0, nil
		}
		return err
	})
	return uint64(id), s.fail("replay cursor", err)
}

// SetReplayCursor implements ssb4.Store.
func (s *SSB4) SetReplayCursor(ctx context.Context, viewer types.PID, id uint64) error {
	return s.fail("set replay cursor", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `DELETE FROM ssb4_replay_cursors WHERE pid = ?`, int64(viewer)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO ssb4_replay_cursors (pid, replay_id) VALUES (?, ?)`, int64(viewer), int64(id))
		return err
	}))
}

// PostFightingPower implements ssb4.Store.
func (s *SSB4) PostFightingPower(ctx context.Context, pid types.PID, scores []ssb4.FightingPower, now time.Time) error {
	return s.fail("post fighting power", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		for _, f := range scores {
			if _, err := tx.Exec(ctx, `DELETE FROM ssb4_fighting_power WHERE pid = ? AND mode = ?`, int64(pid), int64(f.Mode)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO ssb4_fighting_power (pid, mode, score, updated) VALUES (?, ?, ?, ?)`,
				int64(pid), int64(f.Mode), int64(f.Score), now.UnixNano()); err != nil {
				return err
			}
		}
		return nil
	}))
}

// FightingPowerChart implements ssb4.Store: the points are the scores at
// evenly spaced places of the ranking, the best and the worst included
// (every player's when there are at most points players).
func (s *SSB4) FightingPowerChart(ctx context.Context, mode uint8, points int) (uint32, []ssb4.ChartPoint, error) {
	var n int64
	chart := []ssb4.ChartPoint{}
	err := s.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM ssb4_fighting_power WHERE mode = ?`, int64(mode)).Scan(&n); err != nil {
			return err
		}
		if n == 0 || points <= 0 {
			return nil
		}
		last := int64(-1)
		for i := range int64(points) {
			place := int64(0)
			if points > 1 {
				place = i * (n - 1) / int64(points-1)
			}
			if place == last {
				continue
			}
			last = place
			var score, above int64
			if err := q.QueryRow(ctx, `SELECT score FROM ssb4_fighting_power WHERE mode = ? ORDER BY score DESC LIMIT 1 OFFSET ?`,
				int64(mode), place).Scan(&score); err != nil {
				return err
			}
			if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM ssb4_fighting_power WHERE mode = ? AND score > ?`,
				int64(mode), score).Scan(&above); err != nil {
				return err
			}
			p := ssb4.ChartPoint{Score: uint32(score), Rank: uint32(above + 1)}
			if len(chart) > 0 && chart[len(chart)-1] == p {
				continue
			}
			chart = append(chart, p)
		}
		return nil
	})
	return uint32(n), chart, s.fail("fighting power chart", err)
}

// FightingPowerModes implements ssb4.Store.
func (s *SSB4) FightingPowerModes(ctx context.Context) ([]uint8, error) {
	out := []uint8{}
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, `SELECT DISTINCT mode FROM ssb4_fighting_power ORDER BY mode`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var m int64
			if err = rows.Scan(&m); err != nil {
				break
			}
			out = append(out, uint8(m))
		}
		return closeRows(rows, err)
	})
	return out, s.fail("fighting power modes", err)
}

const sharedDataColumns = `data_id, owner, data_type, region, attribute1, attribute2, fighters, comment, posted, reports`

// AddSharedData implements ssb4.Store.
func (s *SSB4) AddSharedData(ctx context.Context, d ssb4.SharedData) error {
	return s.fail("add shared data", s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if _, err := tx.Exec(ctx, `INSERT INTO ssb4_shared_data (`+sharedDataColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
			int64(d.ID), int64(d.Owner), int64(d.DataType), int64(d.Region), int64(d.Attribute1), int64(d.Attribute2),
			nonNil(d.Fighters), d.Comment, d.Posted.UnixNano()); err != nil {
			return err
		}
		seen := map[byte]bool{}
		for _, f := range d.Fighters {
			if seen[f] {
				continue
			}
			seen[f] = true
			if _, err := tx.Exec(ctx, `INSERT INTO ssb4_shared_data_fighters (data_id, fighter) VALUES (?, ?)`, int64(d.ID), int64(f)); err != nil {
				return err
			}
		}
		return nil
	}))
}

func sharedData(ctx context.Context, q Querier, query string, args ...any) ([]ssb4.SharedData, error) {
	rows, err := q.Query(ctx, `SELECT `+sharedDataColumns+` FROM ssb4_shared_data `+query, args...)
	if err != nil {
		return nil, err
	}
	out := []ssb4.SharedData{}
	for rows.Next() {
		var v [6]int64
		var posted, reports int64
		var fighters []byte
		var comment string
		if err = rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &fighters, &comment, &posted, &reports); err != nil {
			break
		}
		out = append(out, ssb4.SharedData{ID: uint64(v[0]), Owner: types.PID(v[1]), DataType: uint8(v[2]), Region: uint8(v[3]),
			Attribute1: uint8(v[4]), Attribute2: uint8(v[5]), Fighters: nonNil(fighters), Comment: comment,
			Posted: time.Unix(0, posted), Reports: int(reports)})
	}
	return out, closeRows(rows, err)
}

// SharedData implements ssb4.Store.
func (s *SSB4) SharedData(ctx context.Context, id uint64) (ssb4.SharedData, error) {
	var out []ssb4.SharedData
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = sharedData(ctx, q, `WHERE data_id = ?`, int64(id))
		if err == nil && len(out) == 0 {
			err = fmt.Errorf("%w: no shared data %d", ssb4.ErrNotFound, id)
		}
		return err
	})
	if err != nil {
		return ssb4.SharedData{}, s.fail("shared data", err)
	}
	return out[0], nil
}

// SearchSharedData implements ssb4.Store.
func (s *SSB4) SearchSharedData(ctx context.Context, sq ssb4.SharedDataQuery) ([]ssb4.SharedData, error) {
	where, args := `WHERE data_type = ?`, []any{int64(sq.DataType)}
	if sq.Owner != 0 {
		where, args = where+` AND owner = ?`, append(args, int64(sq.Owner))
	}
	for _, c := range []struct {
		column string
		v      uint8
	}{{"region", sq.Region}, {"attribute1", sq.Attribute1}, {"attribute2", sq.Attribute2}} {
		if c.v != ssb4.Any {
			where, args = where+` AND `+c.column+` = ?`, append(args, int64(c.v))
		}
	}
	if sq.Fighter != ssb4.Any {
		where, args = where+` AND EXISTS (SELECT 1 FROM ssb4_shared_data_fighters f WHERE f.data_id = ssb4_shared_data.data_id AND f.fighter = ?)`,
			append(args, int64(sq.Fighter))
	}
	if sq.MaxReports > 0 {
		where, args = where+` AND reports < ?`, append(args, int64(sq.MaxReports))
	}
	var out []ssb4.SharedData
	err := s.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var err error
		out, err = sharedData(ctx, q, where+` ORDER BY data_id DESC LIMIT ? OFFSET ?`, append(args, int64(sq.Limit), int64(sq.Offset))...)
		return err
	})
	return out, s.fail("search shared data", err)
}

// ReportSharedData implements ssb4.Store.
func (s *SSB4) ReportSharedData(ctx context.Context, id uint64, reporter types.PID) (int, error) {
	var n int64
	err := s.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		var exists int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM ssb4_shared_data WHERE data_id = ?`, int64(id)).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			return fmt.Errorf("%w: no shared data %d", ssb4.ErrNotFound, id)
		}
		var already int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM ssb4_shared_data_reports WHERE data_id = ? AND pid = ?`,
			int64(id), int64(reporter)).Scan(&already); err != nil {
			return err
		}
		if already == 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO ssb4_shared_data_reports (data_id, pid) VALUES (?, ?)`, int64(id), int64(reporter)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE ssb4_shared_data SET reports = reports + 1 WHERE data_id = ?`, int64(id)); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, `SELECT reports FROM ssb4_shared_data WHERE data_id = ?`, int64(id)).Scan(&n)
	})
	return int(n), s.fail("report shared data", err)
}
