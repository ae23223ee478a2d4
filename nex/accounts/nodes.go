package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex/nodes"
)

func init() { registerSchema("nodes", nodesV1) }

const nodesV1 = `
CREATE TABLE nodes (
	id        TEXT PRIMARY KEY,
	url       TEXT NOT NULL,
	load      INTEGER NOT NULL DEFAULT 0,
	capacity  INTEGER NOT NULL DEFAULT 0,
	heartbeat INTEGER NOT NULL -- unix milliseconds
);
CREATE INDEX nodes_live ON nodes (heartbeat, load);
`

var _ nodes.Registry = (*Store)(nil)

// Announce implements nodes.Registry.
func (s *Store) Announce(ctx context.Context, n nodes.Node) error {
	if n.ID == "" || n.URL == "" {
		return fmt.Errorf("accounts: announce node: id and url are required (got %q, %q)", n.ID, n.URL)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO nodes (id, url, load, capacity, heartbeat) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET url = excluded.url, load = excluded.load,
			capacity = excluded.capacity, heartbeat = excluded.heartbeat`,
		n.ID, n.URL, n.Load, n.Capacity, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("accounts: announce node %q: %w", n.ID, err)
	}
	return nil
}

// Pick implements nodes.Registry.
func (s *Store) Pick(ctx context.Context, maxAge time.Duration) (nodes.Node, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nodes.Node{}, fmt.Errorf("accounts: pick node: %w", err)
	}
	defer tx.Rollback()
	var n nodes.Node
	var hb int64
	err = tx.QueryRowContext(ctx, `SELECT id, url, load, capacity, heartbeat FROM nodes
		WHERE heartbeat >= ? AND (capacity = 0 OR load < capacity)
		ORDER BY load, id LIMIT 1`, time.Now().Add(-maxAge).UnixMilli()).Scan(&n.ID, &n.URL, &n.Load, &n.Capacity, &hb)
	if errors.Is(err, sql.ErrNoRows) {
		return nodes.Node{}, nodes.ErrNoNode
	}
	if err != nil {
		return nodes.Node{}, fmt.Errorf("accounts: pick node: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE nodes SET load = load + 1 WHERE id = ?`, n.ID); err != nil {
		return nodes.Node{}, fmt.Errorf("accounts: pick node: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nodes.Node{}, fmt.Errorf("accounts: pick node: %w", err)
	}
	n.Load++
	n.Heartbeat = time.UnixMilli(hb)
	return n, nil
}

// Withdraw implements nodes.Registry.
func (s *Store) Withdraw(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM nodes WHERE id = ?`, id); err != nil {
		return fmt.Errorf("accounts: withdraw node %q: %w", id, err)
	}
	return nil
}

// Nodes implements nodes.Registry.
func (s *Store) Nodes(ctx context.Context) ([]nodes.Node, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, url, load, capacity, heartbeat FROM nodes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("accounts: list nodes: %w", err)
	}
	defer rows.Close()
	var out []nodes.Node
	for rows.Next() {
		var n nodes.Node
		var hb int64
		if err := rows.Scan(&n.ID, &n.URL, &n.Load, &n.Capacity, &hb); err != nil {
			return nil, fmt.Errorf("accounts: list nodes: %w", err)
		}
		n.Heartbeat = time.UnixMilli(hb)
		out = append(out, n)
	}
	return out, rows.Err()
}
