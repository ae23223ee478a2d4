package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gamewire/gamewire/nex/nodes"
)

func init() { registerSchema("nodes", nodesV1) }

const nodesV1 = `
CREATE TABLE nodes (
	id        TEXT PRIMARY KEY,
	url       TEXT NOT NULL,
	load      INTEGER NOT NULL DEFAULT 0,
	capacity  INTEGER NOT NULL DEFAULT 0,
	heartbeat TIMESTAMPTZ NOT NULL
);
CREATE INDEX nodes_live ON nodes (heartbeat, load);
`

var _ nodes.Registry = (*Store)(nil)

// Announce implements nodes.Registry; the heartbeat is the database's clock, so
// nodes with skewed clocks are judged alike.
func (s *Store) Announce(ctx context.Context, n nodes.Node) error {
	if n.ID == "" || n.URL == "" {
		return fmt.Errorf("pgstore: announce node: id and url are required (got %q, %q)", n.ID, n.URL)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO nodes (id, url, load, capacity, heartbeat) VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (id) DO UPDATE SET url = excluded.url, load = excluded.load,
			capacity = excluded.capacity, heartbeat = excluded.heartbeat`,
		n.ID, n.URL, n.Load, n.Capacity)
	if err != nil {
		return fmt.Errorf("pgstore: announce node %q: %w", n.ID, err)
	}
	return nil
}

// pickLock is the advisory lock key serializing Pick: under READ COMMITTED an
// UPDATE ... WHERE id = (SELECT ... FOR UPDATE) lets two pickers that saw the same
// least-loaded row both raise it, so picks would not spread evenly.
const pickLock = 0x67770002

// Pick implements nodes.Registry: in one short transaction holding pickLock, the
// least-loaded live row is chosen and its load raised, so concurrent picks on
// several authentication servers spread.
func (s *Store) Pick(ctx context.Context, maxAge time.Duration) (nodes.Node, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nodes.Node{}, fmt.Errorf("pgstore: pick node: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pickLock)); err != nil {
		return nodes.Node{}, fmt.Errorf("pgstore: pick node: lock: %w", err)
	}
	var n nodes.Node
	err = tx.QueryRow(ctx, `UPDATE nodes SET load = load + 1 WHERE id = (
			SELECT id FROM nodes
			WHERE heartbeat >= now() - make_interval(secs => $1) AND (capacity = 0 OR load < capacity)
			ORDER BY load, id LIMIT 1)
		RETURNING id, url, load, capacity, heartbeat`, maxAge.Seconds()).Scan(&n.ID, &n.URL, &n.Load, &n.Capacity, &n.Heartbeat)
	if errors.Is(err, pgx.ErrNoRows) {
		return nodes.Node{}, nodes.ErrNoNode
	}
	if err != nil {
		return nodes.Node{}, fmt.Errorf("pgstore: pick node: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nodes.Node{}, fmt.Errorf("pgstore: pick node: %w", err)
	}
	return n, nil
}

// Withdraw implements nodes.Registry.
func (s *Store) Withdraw(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM nodes WHERE id = $1`, id); err != nil {
		return fmt.Errorf("pgstore: withdraw node %q: %w", id, err)
	}
	return nil
}

// Nodes implements nodes.Registry.
func (s *Store) Nodes(ctx context.Context) ([]nodes.Node, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, url, load, capacity, heartbeat FROM nodes ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list nodes: %w", err)
	}
	defer rows.Close()
	var out []nodes.Node
	for rows.Next() {
		var n nodes.Node
		if err := rows.Scan(&n.ID, &n.URL, &n.Load, &n.Capacity, &n.Heartbeat); err != nil {
			return nil, fmt.Errorf("pgstore: list nodes: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
