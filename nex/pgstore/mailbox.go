package pgstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gamewire/gamewire/nex/nodes"
)

func init() { registerSchema("mailbox", mailboxV1) }

// mailboxV1 holds the mail between secure nodes (nodes.Mailbox) and the station
// urls each node recorded for its players (nodes.Directory).
const mailboxV1 = `
CREATE TABLE node_mail (
	id      BIGSERIAL PRIMARY KEY,
	node    TEXT NOT NULL,
	pid     BIGINT NOT NULL,
	kind    TEXT NOT NULL,
	payload BYTEA NOT NULL
);
CREATE INDEX node_mail_node ON node_mail (node, id);
CREATE TABLE node_stations (
	node TEXT NOT NULL,
	pid  BIGINT NOT NULL,
	urls TEXT[] NOT NULL,
	PRIMARY KEY (pid, node)
);
CREATE INDEX node_stations_node ON node_stations (node);
`

var (
	_ nodes.Mailbox   = (*Store)(nil)
	_ nodes.Directory = (*Store)(nil)
	_ nodes.Listener  = (*Store)(nil)
)

// mailChannel is the NOTIFY channel Post signals on, with the node as payload.
const mailChannel = "gamewire_mail"

// Listen implements nodes.Listener with LISTEN on a connection of its own
// (taken out of the pool for as long as ctx lasts). A lost connection is
// replaced after a second; meanwhile the node's poll finds its mail.
func (s *Store) Listen(ctx context.Context, node string) (<-chan struct{}, error) {
	conn, err := s.listenConn(ctx)
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err == nil {
				if n.Payload == node {
					select {
					case ch <- struct{}{}:
					default:
					}
				}
				continue
			}
			conn.Close(context.Background())
			for {
				if ctx.Err() != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				if conn, err = s.listenConn(ctx); err == nil {
					break
				}
			}
		}
	}()
	return ch, nil
}

// listenConn takes a connection out of the pool and listens on mailChannel.
func (s *Store) listenConn(ctx context.Context) (*pgx.Conn, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgstore: listen for mail: %w", err)
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, `LISTEN `+mailChannel); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("pgstore: listen for mail: %w", err)
	}
	return conn, nil
}

// Post implements nodes.Mailbox.
func (s *Store) Post(ctx context.Context, node string, msgs ...nodes.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, m := range msgs {
		if len(m.Payload) > nodes.MaxMailPayload {
			return fmt.Errorf("pgstore: post to node %q: a %q message of %d bytes (at most %d)", node, m.Kind, len(m.Payload), nodes.MaxMailPayload)
		}
		b.Queue(`INSERT INTO node_mail (node, pid, kind, payload) VALUES ($1, $2, $3, $4)`, node, int64(m.PID), m.Kind, mailPayload(m.Payload))
	}
	// Delivered to the listeners when the batch commits (Listen).
	b.Queue(`SELECT pg_notify('`+mailChannel+`', $1)`, node)
	// One round trip; pgx runs a batch in an implicit transaction.
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("pgstore: post to node %q: %w", node, err)
	}
	return nil
}

// Take implements nodes.Mailbox. Ids come from a sequence, so a message
// committed late may have a lower id than one already taken: order holds for
// each poster (whose posts commit one after another), not across posters.
func (s *Store) Take(ctx context.Context, node string, max int) ([]nodes.Message, error) {
	if max <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `DELETE FROM node_mail WHERE id IN
		(SELECT id FROM node_mail WHERE node = $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING id, pid, kind, payload`, node, max)
	if err != nil {
		return nil, fmt.Errorf("pgstore: take mail of node %q: %w", node, err)
	}
	type row struct {
		id int64
		m  nodes.Message
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		var pid int64
		err := r.Scan(&x.id, &pid, &x.m.Kind, &x.m.Payload)
		x.m.PID = uint64(pid)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: take mail of node %q: %w", node, err)
	}
	slices.SortFunc(got, func(a, b row) int { return int(a.id - b.id) })
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
		_, err = s.pool.Exec(ctx, `DELETE FROM node_stations WHERE pid = $1 AND node = $2`, int64(pid), node)
	} else {
		_, err = s.pool.Exec(ctx, `INSERT INTO node_stations (node, pid, urls) VALUES ($1, $2, $3)
			ON CONFLICT (pid, node) DO UPDATE SET urls = excluded.urls`, node, int64(pid), urls)
	}
	if err != nil {
		return fmt.Errorf("pgstore: record the stations of PID %d on node %q: %w", pid, node, err)
	}
	return nil
}

// StationsOf implements nodes.Directory.
func (s *Store) StationsOf(ctx context.Context, pid uint64) ([]nodes.Stations, error) {
	rows, err := s.pool.Query(ctx, `SELECT node, urls FROM node_stations WHERE pid = $1 ORDER BY node`, int64(pid))
	if err != nil {
		return nil, fmt.Errorf("pgstore: stations of PID %d: %w", pid, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (nodes.Stations, error) {
		st := nodes.Stations{PID: pid}
		err := r.Scan(&st.Node, &st.URLs)
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: stations of PID %d: %w", pid, err)
	}
	return out, nil
}

// ClearStations implements nodes.Directory.
func (s *Store) ClearStations(ctx context.Context, node string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM node_stations WHERE node = $1`, node); err != nil {
		return fmt.Errorf("pgstore: clear the stations of node %q: %w", node, err)
	}
	return nil
}

// mailPayload stores an empty payload as empty, not NULL.
func mailPayload(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
