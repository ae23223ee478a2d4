package accounts

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gamewire/gamewire/nex/nodes"
)

func init() { registerSchema("mailbox", mailboxV1) }

// mailboxV1 holds the mail between secure nodes (nodes.Mailbox) and the station
// urls each node recorded for its players (nodes.Directory).
const mailboxV1 = `
CREATE TABLE node_mail (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	node    TEXT NOT NULL,
	pid     INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	payload BLOB NOT NULL
);
CREATE INDEX node_mail_node ON node_mail (node, id);
CREATE TABLE node_stations (
	node TEXT NOT NULL,
	pid  INTEGER NOT NULL,
	urls TEXT NOT NULL, -- a JSON array of strings
	PRIMARY KEY (pid, node)
);
CREATE INDEX node_stations_node ON node_stations (node);
`

var (
	_ nodes.Mailbox   = (*Store)(nil)
	_ nodes.Directory = (*Store)(nil)
)

// Post implements nodes.Mailbox.
func (s *Store) Post(ctx context.Context, node string, msgs ...nodes.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	for _, m := range msgs {
		if len(m.Payload) > nodes.MaxMailPayload {
			return fmt.Errorf("accounts: post to node %q: a %q message of %d bytes (at most %d)", node, m.Kind, len(m.Payload), nodes.MaxMailPayload)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("accounts: post to node %q: %w", node, err)
	}
	defer tx.Rollback()
	for _, m := range msgs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO node_mail (node, pid, kind, payload) VALUES (?, ?, ?, ?)`,
			node, int64(m.PID), m.Kind, payload(m.Payload)); err != nil {
			return fmt.Errorf("accounts: post to node %q: %w", node, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("accounts: post to node %q: %w", node, err)
	}
	return nil
}

// Take implements nodes.Mailbox. The query that finds no mail (what a node's
// loop mostly runs) is one index probe, without a write transaction.
func (s *Store) Take(ctx context.Context, node string, max int) ([]nodes.Message, error) {
	if max <= 0 {
		return nil, nil
	}
	var any int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM node_mail WHERE node = ? LIMIT 1)`, node).Scan(&any); err != nil {
		return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
	}
	if any == 0 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `DELETE FROM node_mail WHERE id IN
		(SELECT id FROM node_mail WHERE node = ? ORDER BY id LIMIT ?) RETURNING id, pid, kind, payload`, node, max)
	if err != nil {
		return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
	}
	type row struct {
		id int64
		m  nodes.Message
	}
	var got []row
	for rows.Next() {
		var r row
		var pid int64
		if err := rows.Scan(&r.id, &pid, &r.m.Kind, &r.m.Payload); err != nil {
			rows.Close()
			return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
		}
		r.m.PID = uint64(pid)
		got = append(got, r)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("accounts: take mail of node %q: %w", node, err)
	}
	// RETURNING gives no order: sort by id.
	for i := 1; i < len(got); i++ {
		for j := i; j > 0 && got[j].id < got[j-1].id; j-- {
			got[j], got[j-1] = got[j-1], got[j]
		}
	}
	out := make([]nodes.Message, len(got))
	for i, r := range got {
		out[i] = r.m
	}
	return out, nil
}

// SetStations implements nodes.Directory.
func (s *Store) SetStations(ctx context.Context, node string, pid uint64, urls []string) error {
	var err error
	if len(urls) == 0 {
		_, err = s.db.ExecContext(ctx, `DELETE FROM node_stations WHERE pid = ? AND node = ?`, int64(pid), node)
	} else {
		b, _ := json.Marshal(urls) // strings always marshal
		_, err = s.db.ExecContext(ctx, `INSERT INTO node_stations (node, pid, urls) VALUES (?, ?, ?)
			ON CONFLICT (pid, node) DO UPDATE SET urls = excluded.urls`, node, int64(pid), string(b))
	}
	if err != nil {
		return fmt.Errorf("accounts: record the stations of PID %d on node %q: %w", pid, node, err)
	}
	return nil
}

// StationsOf implements nodes.Directory.
func (s *Store) StationsOf(ctx context.Context, pid uint64) ([]nodes.Stations, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT node, urls FROM node_stations WHERE pid = ? ORDER BY node`, int64(pid))
	if err != nil {
		return nil, fmt.Errorf("accounts: stations of PID %d: %w", pid, err)
	}
	defer rows.Close()
	var out []nodes.Stations
	for rows.Next() {
		st := nodes.Stations{PID: pid}
		var urls string
		if err := rows.Scan(&st.Node, &urls); err != nil {
			return nil, fmt.Errorf("accounts: stations of PID %d: %w", pid, err)
		}
		if err := json.Unmarshal([]byte(urls), &st.URLs); err != nil {
			return nil, fmt.Errorf("accounts: stations of PID %d on node %q: %w", pid, st.Node, err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// ClearStations implements nodes.Directory.
func (s *Store) ClearStations(ctx context.Context, node string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM node_stations WHERE node = ?`, node); err != nil {
		return fmt.Errorf("accounts: clear the stations of node %q: %w", node, err)
	}
	return nil
}

// payload is p, or an empty payload for nil (the column is NOT NULL).
func payload(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}
