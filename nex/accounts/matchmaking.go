package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The matchmaking component's schema: gatherings with the columns the queries
// select on (each query path has its index) and the whole session encoded in
// blob (NEX 4 encoding, which carries every field), and their participants, each
// tagged with the secure server (node) and connection it joined on.
func init() {
	registerSchema("matchmaking", matchmakingV1, matchmakingV2, matchmakingV3, matchmakingV4)
}

const matchmakingV1 = `
CREATE TABLE mm_gatherings (
	gid         INTEGER PRIMARY KEY AUTOINCREMENT,
	owner       INTEGER NOT NULL,
	game_mode   INTEGER NOT NULL,
	system_type INTEGER NOT NULL,
	max_p       INTEGER NOT NULL,
	count       INTEGER NOT NULL,
	open        INTEGER NOT NULL,
	system_pw   TEXT NOT NULL DEFAULT '',
	seq         INTEGER NOT NULL DEFAULT 1,
	blob        BLOB NOT NULL,
	created     INTEGER NOT NULL
);
CREATE INDEX mm_gatherings_owner ON mm_gatherings (owner);
CREATE INDEX mm_gatherings_vacant ON mm_gatherings (game_mode, system_type, count DESC, gid)
	WHERE open = 1 AND count < max_p;
CREATE TABLE mm_participants (
	gid     INTEGER NOT NULL,
	pid     INTEGER NOT NULL,
	slots   INTEGER NOT NULL,
	message TEXT NOT NULL,
	node    TEXT NOT NULL,
	conn    INTEGER NOT NULL,
	joined  INTEGER NOT NULL,
	PRIMARY KEY (gid, pid)
) WITHOUT ROWID;
CREATE INDEX mm_participants_pid ON mm_participants (pid);
CREATE INDEX mm_participants_conn ON mm_participants (node, conn);
`

// matchmakingV2 added an outbox of notifications between secure nodes; the
// nodes' mailbox (nodes.Exchange, mailbox.go) carries them instead, and V3
// drops it.
const matchmakingV2 = `
CREATE TABLE mm_outbox (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	node     TEXT NOT NULL,
	pid      INTEGER NOT NULL,
	source   INTEGER NOT NULL,
	type     INTEGER NOT NULL,
	param1   INTEGER NOT NULL,
	param2   INTEGER NOT NULL,
	param3   INTEGER NOT NULL,
	text     TEXT NOT NULL,
	created  INTEGER NOT NULL
);
CREATE INDEX mm_outbox_node ON mm_outbox (node, id);
`

const matchmakingV3 = `DROP TABLE mm_outbox;`

// matchmakingV4 bounds the searches by an index: the columns a criterion
// constrains (minimum participants, attributes 0 to 5: a0 to a5, NULL past
// the session's own) and the passwords a session has (pw_flags: 1 user, 2
// system) beside game mode, system type and maximum, leading the partial
// index of the open sessions with room, in the order auto-matchmaking reads
// them (count DESC, gid). Sessions stored before this step have NULL there:
// found by id, not by a search, until their next change (docs/nex.md).
const matchmakingV4 = `
ALTER TABLE mm_gatherings ADD COLUMN min_p INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN a0 INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN a1 INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN a2 INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN a3 INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN a4 INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN a5 INTEGER;
ALTER TABLE mm_gatherings ADD COLUMN pw_flags INTEGER;
CREATE INDEX mm_gatherings_match ON mm_gatherings
	(game_mode, system_type, pw_flags, a0, a1, a2, a3, a4, a5, min_p, max_p, count DESC, gid)
	WHERE open = 1 AND count < max_p;
`

// MatchmakeStore is the SQLite implementation of matchmaking.Store
// (internal/sqlstore's, on database/sql), in the account store's database.
// Writes go through one connection whose transactions start with BEGIN
// IMMEDIATE (the database's write lock is taken first, so a search and the
// join it leads to are one serialisable step, also against other processes);
// reads use a pool of their own.
type MatchmakeStore struct {
	*sqlstore.Matchmaking
	write, read           *sql.DB
	writeStmts, readStmts *stmtCache
	// QueryTimeout bounds every transaction; default DefaultQueryTimeout.
	QueryTimeout time.Duration
	queries      atomic.Uint64
	// writing admits one write transaction of this process at a time, so
	// they queue here rather than in SQLite's busy handler, which sleeps.
	// Correctness does not rest on it: the transactions are serialisable in
	// the database (BEGIN IMMEDIATE), also against other processes.
	writing chan struct{}
}

// Queries returns how many SQL statements the store has run (transaction
// control excluded), for the query count per operation in benchmarks.
func (m *MatchmakeStore) Queries() uint64 { return m.queries.Load() }

// dbtx runs a transaction's (or a pool's) statements, prepared once per
// connection (SQLite spends more time parsing a statement than running these)
// and counted.
type dbtx struct {
	tx    *sql.Tx // nil: run on the pool
	cache *stmtCache
	n     *atomic.Uint64
	// prepare: a statement not prepared yet may be prepared now, on another
	// connection of the pool, which must be free (the write pool has two
	// connections and one write transaction at a time; read transactions
	// only use statements prepared already).
	prepare bool
}

// stmtCache holds the prepared statements of one pool. Queries built at run
// time (the search filters) have few shapes; past maxCachedStmts new ones run
// unprepared.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

const maxCachedStmts = 64

func (c *stmtCache) stmt(ctx context.Context, tx *sql.Tx, query string, prepare bool) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.m[query]
	if !ok && prepare && len(c.m) < maxCachedStmts {
		var err error
		if st, err = c.db.PrepareContext(ctx, query); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		if c.m == nil {
			c.m = make(map[string]*sql.Stmt)
		}
		c.m[query] = st
	}
	c.mu.Unlock()
	if st == nil {
		return nil, nil
	}
	if tx != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}

func (d dbtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	d.n.Add(1)
	st, err := d.cache.stmt(ctx, d.tx, query, d.prepare)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return st.ExecContext(ctx, args...)
	case d.tx != nil:
		return d.tx.ExecContext(ctx, query, args...)
	}
	return d.cache.db.ExecContext(ctx, query, args...)
}

func (d dbtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.n.Add(1)
	st, err := d.cache.stmt(ctx, d.tx, query, d.prepare)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return st.QueryContext(ctx, args...)
	case d.tx != nil:
		return d.tx.QueryContext(ctx, query, args...)
	}
	return d.cache.db.QueryContext(ctx, query, args...)
}

// QueryRowContext returns a row whose error, if preparing failed, comes out
// of Scan (by running the query unprepared).
func (d dbtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	d.n.Add(1)
	if st, err := d.cache.stmt(ctx, d.tx, query, d.prepare); err == nil && st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if d.tx != nil {
		return d.tx.QueryRowContext(ctx, query, args...)
	}
	return d.cache.db.QueryRowContext(ctx, query, args...)
}

// Matchmaking opens the matchmaking store on s's database. Close it before s.
func (s *Store) Matchmaking() (*MatchmakeStore, error) {
	base := "file:" + s.path + "?_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)"
	w, err := sql.Open("sqlite", base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("accounts: open matchmaking store %s: %w", s.path, err)
	}
	// Two connections, one write transaction at a time (MatchmakeStore.tx):
	// the other connection prepares statements meanwhile.
	w.SetMaxOpenConns(2)
	r, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("accounts: open matchmaking store %s: %w", s.path, err)
	}
	r.SetMaxOpenConns(4)
	m := &MatchmakeStore{write: w, read: r, writeStmts: &stmtCache{db: w}, readStmts: &stmtCache{db: r},
		writing: make(chan struct{}, 1)}
	m.Matchmaking = sqlstore.NewMatchmaking("accounts", mmDB{m}, sqliteDialect)
	return m, nil
}

// sqliteDialect is SQLite's matchmaking: a write transaction holds the
// database's write lock from its start (no row locks), a search is one
// statement read as far as needed, booleans are 0 and 1, and gathering ids
// come from sqlite_sequence (nextGID).
var sqliteDialect = sqlstore.Dialect{Open: "open = 1", Official: "official = 1", NextGID: nextGID,
	MatchIndex: " INDEXED BY mm_gatherings_match"}

// Close closes the store's connections.
func (m *MatchmakeStore) Close() error {
	return errors.Join(m.writeStmts.close(), m.readStmts.close(), m.write.Close(), m.read.Close())
}

// reader runs statements on the read pool.
func (m *MatchmakeStore) reader() dbtx { return dbtx{cache: m.readStmts, n: &m.queries, prepare: true} }

func (m *MatchmakeStore) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	d := m.QueryTimeout
	if d <= 0 {
		d = DefaultQueryTimeout
	}
	return context.WithTimeout(ctx, d)
}

// runWrite runs f in a write transaction, one of this process at a time.
func (m *MatchmakeStore) runWrite(ctx context.Context, f func(tx dbtx) error) error {
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	select {
	case m.writing <- struct{}{}:
		defer func() { <-m.writing }()
	case <-ctx.Done():
		return ctx.Err()
	}
	tx, err := m.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(dbtx{tx: tx, cache: m.writeStmts, n: &m.queries, prepare: true}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// mmDB is the store's database as internal/sqlstore uses it (its
// sqlstore.DB).
type mmDB struct{ *MatchmakeStore }

// Do runs f on the read pool.
func (m mmDB) Do(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	return f(ctx, sqlstore.Std(m.reader()))
}

// Snapshot runs f in a read transaction on the read pool, with the statements
// prepared already.
func (m mmDB) Snapshot(ctx context.Context, f func(ctx context.Context, q sqlstore.Querier) error) error {
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	tx, err := m.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return f(ctx, sqlstore.Std(dbtx{tx: tx, cache: m.readStmts, n: &m.queries}))
}

// Write runs f in a write transaction.
func (m mmDB) Write(ctx context.Context, f func(ctx context.Context, tx sqlstore.Querier) error) error {
	return m.runWrite(ctx, func(tx dbtx) error { return f(ctx, sqlstore.Std(tx)) })
}
