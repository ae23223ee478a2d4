package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// The matchmaking component's schema: gatherings with the columns the queries
// select on (each query path has its index) and the whole session encoded in
// blob (NEX 4 encoding, which carries every field), and their participants, each
// tagged with the secure server (node) and connection it joined on.
func init() { registerSchema("matchmaking", matchmakingV1, matchmakingV2, matchmakingV3) }

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

// blobSettings and blobVersion encode sessions in the database: NEX 4 carries
// every field, 8-byte PIDs every PID.
var blobSettings = types.Settings{PIDSize: 8, StructureHeader: true}

const blobVersion = types.Version4

// MatchmakeStore is the SQLite implementation of matchmaking.Store, in the
// account store's database. Writes go through one connection whose
// transactions start with BEGIN IMMEDIATE (the database's write lock is taken
// first, so a search and the join it leads to are one serialisable step, also
// against other processes); reads use a pool of their own.
type MatchmakeStore struct {
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
	return &MatchmakeStore{write: w, read: r, writeStmts: &stmtCache{db: w}, readStmts: &stmtCache{db: r},
		writing: make(chan struct{}, 1)}, nil
}

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

// tx runs f in a write transaction.
func (m *MatchmakeStore) tx(ctx context.Context, what string, f func(tx dbtx) error) error {
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	select {
	case m.writing <- struct{}{}:
		defer func() { <-m.writing }()
	case <-ctx.Done():
		return fmt.Errorf("accounts: matchmaking %s: %w", what, ctx.Err())
	}
	tx, err := m.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("accounts: matchmaking %s: %w", what, err)
	}
	defer tx.Rollback()
	if err := f(dbtx{tx: tx, cache: m.writeStmts, n: &m.queries, prepare: true}); err != nil {
		var res types.Result
		if errors.As(err, &res) {
			return err
		}
		return fmt.Errorf("accounts: matchmaking %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("accounts: matchmaking %s: commit: %w", what, err)
	}
	return nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func encodeSession(s *matchmaking.MatchmakeSession) ([]byte, error) {
	w := types.NewWriter(nil, blobSettings)
	s.Append(&w, blobVersion)
	return w.Bytes()
}

func decodeSession(b []byte) (matchmaking.MatchmakeSession, error) {
	r := types.NewReader(b, blobSettings)
	s, _ := matchmaking.ReadMatchmakeSession(&r, blobVersion)
	if err := r.Done(); err != nil {
		return s, fmt.Errorf("stored session: %w", err)
	}
	return s, nil
}

// row is a gathering as stored.
type row struct {
	s        matchmaking.MatchmakeSession
	systemPW string
	seq      uint64
}

func loadRow(ctx context.Context, q querier, gid uint32) (row, error) {
	var blob []byte
	var r row
	err := q.QueryRowContext(ctx, `SELECT blob, system_pw, seq FROM mm_gatherings WHERE gid = ?`, int64(gid)).Scan(&blob, &r.systemPW, &r.seq)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: gathering %d", matchmaking.ResultSessionVoid, gid)
	} else if err != nil {
		return r, err
	}
	r.s, err = decodeSession(blob)
	return r, err
}

func loadParticipants(ctx context.Context, q querier, gid uint32) ([]matchmaking.Participant, error) {
	rows, err := q.QueryContext(ctx, `SELECT pid, slots, message, node, conn FROM mm_participants WHERE gid = ? ORDER BY joined`, int64(gid))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []matchmaking.Participant
	for rows.Next() {
		var p matchmaking.Participant
		var pid, conn int64
		if err := rows.Scan(&pid, &p.Slots, &p.Message, &p.Node, &conn); err != nil {
			return nil, err
		}
		p.PID, p.Conn = types.PID(pid), uint64(conn)
		out = append(out, p)
	}
	return out, rows.Err()
}

// save writes r back with the next seq and returns the change.
func save(ctx context.Context, tx dbtx, r *row) (matchmaking.Change, error) {
	blob, err := encodeSession(&r.s)
	if err != nil {
		return matchmaking.Change{}, err
	}
	r.seq++
	_, err = tx.ExecContext(ctx, `UPDATE mm_gatherings SET owner = ?, game_mode = ?, system_type = ?, max_p = ?, count = ?,
		open = ?, system_pw = ?, seq = ?, blob = ? WHERE gid = ?`,
		int64(r.s.Owner), r.s.GameMode, r.s.MatchmakeSystemType, r.s.MaxParticipants, r.s.ParticipationCount,
		r.s.OpenParticipation, r.systemPW, r.seq, blob, int64(r.s.ID))
	if err != nil {
		return matchmaking.Change{}, err
	}
	ps, err := loadParticipants(ctx, tx, r.s.ID)
	return matchmaking.Change{Session: r.s, Participants: ps, Seq: r.seq}, err
}

func insertParticipant(ctx context.Context, tx dbtx, gid uint32, p matchmaking.Participant, seq uint64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO mm_participants (gid, pid, slots, message, node, conn, joined) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		int64(gid), int64(p.PID), max(p.Slots, 1), p.Message, p.Node, int64(p.Conn), int64(seq))
	return err
}

// create inserts s with p as owner and first participant.
func create(ctx context.Context, tx dbtx, s matchmaking.MatchmakeSession, p matchmaking.Participant) (matchmaking.Change, error) {
	if err := matchmaking.Validate(&s); err != nil {
		return matchmaking.Change{}, err
	}
	slots := max(p.Slots, 1)
	if int(slots) > int(s.MaxParticipants) {
		return matchmaking.Change{}, fmt.Errorf("%w: %d players for a session of %d", matchmaking.ResultSessionFull, slots, s.MaxParticipants)
	}
	s.Owner, s.Host, s.ParticipationCount = p.PID, p.PID, uint32(slots)
	if s.StartedTime == 0 {
		s.StartedTime = types.DateTimeFromTime(time.Now())
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO mm_gatherings (owner, game_mode, system_type, max_p, count, open, seq, blob, created)
		VALUES (?, ?, ?, ?, ?, ?, 1, x'', ?)`, int64(p.PID), s.GameMode, s.MatchmakeSystemType, s.MaxParticipants, slots,
		s.OpenParticipation, time.Now().Unix())
	if err != nil {
		return matchmaking.Change{}, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return matchmaking.Change{}, err
	}
	if id <= 0 || id > 0xFFFFFFFF {
		return matchmaking.Change{}, fmt.Errorf("gathering ids exhausted (%d)", id)
	}
	s.ID = uint32(id)
	if err := insertParticipant(ctx, tx, s.ID, p, 1); err != nil {
		return matchmaking.Change{}, err
	}
	r := row{s: s, seq: 0}
	c, err := save(ctx, tx, &r)
	c.Joined = &p
	return c, err
}

// Create implements matchmaking.Store.
func (m *MatchmakeStore) Create(ctx context.Context, s matchmaking.MatchmakeSession, p matchmaking.Participant) (c matchmaking.Change, err error) {
	err = m.tx(ctx, "create", func(tx dbtx) error {
		c, err = create(ctx, tx, s, p)
		return err
	})
	return c, err
}

// join adds p to the gathering in r.
func join(ctx context.Context, tx dbtx, r *row, p matchmaking.Participant, pw *matchmaking.Passwords) (matchmaking.Change, error) {
	gid := r.s.ID
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mm_participants WHERE gid = ? AND pid = ?`, int64(gid), int64(p.PID)).Scan(&n); err != nil {
		return matchmaking.Change{}, err
	}
	if n > 0 {
		return matchmaking.Change{}, fmt.Errorf("%w: PID %d in gathering %d", matchmaking.ResultAlreadyParticipatedGathering, p.PID, gid)
	}
	if !r.s.OpenParticipation {
		return matchmaking.Change{}, fmt.Errorf("%w: gathering %d", matchmaking.ResultSessionClosed, gid)
	}
	slots := uint32(max(p.Slots, 1))
	if r.s.ParticipationCount+slots > uint32(r.s.MaxParticipants) {
		return matchmaking.Change{}, fmt.Errorf("%w: gathering %d has %d of %d, %d more asked", matchmaking.ResultSessionFull,
			gid, r.s.ParticipationCount, r.s.MaxParticipants, slots)
	}
	if pw != nil {
		if r.s.UserPassword != "" && pw.User != r.s.UserPassword {
			return matchmaking.Change{}, fmt.Errorf("%w: gathering %d", matchmaking.ResultUserPasswordUnmatch, gid)
		}
		if r.systemPW != "" && pw.System != r.systemPW {
			return matchmaking.Change{}, fmt.Errorf("%w: gathering %d", matchmaking.ResultSystemPasswordUnmatch, gid)
		}
	}
	r.s.ParticipationCount += slots
	if err := insertParticipant(ctx, tx, gid, p, r.seq+1); err != nil {
		return matchmaking.Change{}, err
	}
	c, err := save(ctx, tx, r)
	c.Joined = &p
	return c, err
}

// Join implements matchmaking.Store.
func (m *MatchmakeStore) Join(ctx context.Context, gid uint32, p matchmaking.Participant, pw matchmaking.Passwords) (c matchmaking.Change, err error) {
	err = m.tx(ctx, "join", func(tx dbtx) error {
		r, err := loadRow(ctx, tx, gid)
		if err != nil {
			return err
		}
		c, err = join(ctx, tx, &r, p, &pw)
		return err
	})
	return c, err
}

// candidates returns the open sessions with room that a criteria list could
// pick, best first: the fullest (to start games soonest), then the oldest. The
// partial index mm_gatherings_vacant serves the query.
func candidates(ctx context.Context, q querier, cs []matchmaking.Criteria, joining int, exclude types.PID, limit int) ([]row, error) {
	where := []string{"open = 1", "count < max_p", "count + ? <= max_p",
		"NOT EXISTS (SELECT 1 FROM mm_participants p WHERE p.gid = mm_gatherings.gid AND p.pid = ?)"}
	args := []any{joining, int64(exclude)}
	// Narrow by game mode and system type when every criterion names exactly one.
	if gm, ok := commonValue(cs, (*matchmaking.Criteria).GameMode); ok {
		where, args = append(where, "game_mode = ?"), append(args, gm)
	}
	if st, ok := commonValue(cs, (*matchmaking.Criteria).SystemType); ok {
		where, args = append(where, "system_type = ?"), append(args, st)
	}
	query := `SELECT gid, blob, system_pw, seq FROM mm_gatherings WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY count DESC, gid`
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	for rows.Next() && len(out) < limit {
		var gid int64
		var blob []byte
		var r row
		if err := rows.Scan(&gid, &blob, &r.systemPW, &r.seq); err != nil {
			return nil, err
		}
		if r.s, err = decodeSession(blob); err != nil {
			return nil, err
		}
		for i := range cs {
			if cs[i].Match(&r.s, r.systemPW != "", joining) {
				out = append(out, r)
				break
			}
		}
	}
	return out, rows.Err()
}

func commonValue(cs []matchmaking.Criteria, f func(*matchmaking.Criteria) (uint32, bool)) (uint32, bool) {
	var v uint32
	for i := range cs {
		x, ok := f(&cs[i])
		if !ok || (i > 0 && x != v) {
			return 0, false
		}
		v = x
	}
	return v, len(cs) > 0
}

// AutoMatchmake implements matchmaking.Store: the search and the join (or the
// creation) are one write transaction, so two clients never both create a
// session while one could have joined the other's, and a session is never
// filled past its maximum.
func (m *MatchmakeStore) AutoMatchmake(ctx context.Context, criteria []matchmaking.SearchCriteria, s matchmaking.MatchmakeSession, p matchmaking.Participant) (c matchmaking.Change, created bool, err error) {
	var cs []matchmaking.Criteria
	if criteria == nil {
		cs = []matchmaking.Criteria{matchmaking.AutoCriteria(&s)}
	} else {
		if len(criteria) > matchmaking.MaxSearchCriteria {
			return c, false, fmt.Errorf("%w: %d search criteria, at most %d", types.CoreInvalidArgument, len(criteria), matchmaking.MaxSearchCriteria)
		}
		for _, sc := range criteria {
			cc, err := matchmaking.Compile(sc)
			if err != nil {
				return c, false, err
			}
			cs = append(cs, cc)
		}
	}
	if err := matchmaking.Validate(&s); err != nil {
		return c, false, err
	}
	err = m.tx(ctx, "auto-matchmake", func(tx dbtx) error {
		found, err := candidates(ctx, tx, cs, int(max(p.Slots, 1)), p.PID, 1)
		if err != nil {
			return err
		}
		if len(found) > 0 {
			c, err = join(ctx, tx, &found[0], p, nil)
			return err
		}
		created = true
		c, err = create(ctx, tx, s, p)
		return err
	})
	return c, created, err
}

// leave removes pid from the gathering in r: a non-owner just leaves; an owner
// hands ownership to the earliest remaining participant when the gathering has
// FlagMigrateOwner, and otherwise (or when nobody is left) the gathering goes.
func leave(ctx context.Context, tx dbtx, r *row, pid types.PID) (matchmaking.Change, error) {
	gid := r.s.ID
	ps, err := loadParticipants(ctx, tx, gid)
	if err != nil {
		return matchmaking.Change{}, err
	}
	var left *matchmaking.Participant
	var rest []matchmaking.Participant
	for i := range ps {
		if ps[i].PID == pid && left == nil {
			left = &ps[i]
		} else {
			rest = append(rest, ps[i])
		}
	}
	if left == nil {
		return matchmaking.Change{}, fmt.Errorf("%w: PID %d is not in gathering %d", matchmaking.ResultNotParticipatedGathering, pid, gid)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mm_participants WHERE gid = ? AND pid = ?`, int64(gid), int64(pid)); err != nil {
		return matchmaking.Change{}, err
	}
	r.s.ParticipationCount -= min(r.s.ParticipationCount, uint32(left.SlotCount()))
	if len(rest) == 0 || (pid == r.s.Owner && r.s.Flags&matchmaking.FlagMigrateOwner == 0) {
		c, err := remove(ctx, tx, r)
		c.Left = left
		return c, err
	}
	var prev types.PID
	if pid == r.s.Owner {
		prev = r.s.Owner
		r.s.Owner = rest[0].PID
		if r.s.Host == pid {
			r.s.Host = rest[0].PID
		}
	}
	c, err := save(ctx, tx, r)
	c.Left, c.PrevOwner = left, prev
	return c, err
}

// remove deletes the gathering in r and returns the change (with the
// participants it had).
func remove(ctx context.Context, tx dbtx, r *row) (matchmaking.Change, error) {
	ps, err := loadParticipants(ctx, tx, r.s.ID)
	if err != nil {
		return matchmaking.Change{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mm_participants WHERE gid = ?`, int64(r.s.ID)); err != nil {
		return matchmaking.Change{}, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mm_gatherings WHERE gid = ?`, int64(r.s.ID)); err != nil {
		return matchmaking.Change{}, err
	}
	r.seq++
	return matchmaking.Change{Session: r.s, Participants: ps, Seq: r.seq, Deleted: true}, nil
}

// Leave implements matchmaking.Store.
func (m *MatchmakeStore) Leave(ctx context.Context, gid uint32, pid types.PID) (c matchmaking.Change, err error) {
	err = m.tx(ctx, "leave", func(tx dbtx) error {
		r, err := loadRow(ctx, tx, gid)
		if err != nil {
			return err
		}
		c, err = leave(ctx, tx, &r, pid)
		return err
	})
	return c, err
}

// Disconnect implements matchmaking.Store.
func (m *MatchmakeStore) Disconnect(ctx context.Context, node string, conn uint64) (cs []matchmaking.Change, err error) {
	err = m.tx(ctx, "disconnect", func(tx dbtx) error {
		cs, err = leaveAll(ctx, tx, `SELECT gid, pid FROM mm_participants WHERE node = ? AND conn = ?`, node, int64(conn))
		return err
	})
	return cs, err
}

// ResetNode implements matchmaking.Store.
func (m *MatchmakeStore) ResetNode(ctx context.Context, node string) (cs []matchmaking.Change, err error) {
	err = m.tx(ctx, "reset", func(tx dbtx) error {
		cs, err = leaveAll(ctx, tx, `SELECT gid, pid FROM mm_participants WHERE node = ?`, node)
		return err
	})
	return cs, err
}

// leaveAll makes the participants the query selects (gid, pid) leave, as
// Leave does one: owners hand over or end their gatherings.
func leaveAll(ctx context.Context, tx dbtx, query string, args ...any) ([]matchmaking.Change, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	type gp struct {
		gid uint32
		pid types.PID
	}
	var gone []gp
	for rows.Next() {
		var gid, pid int64
		if err := rows.Scan(&gid, &pid); err != nil {
			rows.Close()
			return nil, err
		}
		gone = append(gone, gp{uint32(gid), types.PID(pid)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var cs []matchmaking.Change
	for _, g := range gone {
		r, err := loadRow(ctx, tx, g.gid)
		if errors.Is(err, matchmaking.ResultSessionVoid) {
			continue // ended by an earlier leave of this batch
		} else if err != nil {
			return nil, err
		}
		c, err := leave(ctx, tx, &r, g.pid)
		if errors.Is(err, matchmaking.ResultNotParticipatedGathering) {
			continue
		} else if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Get implements matchmaking.Store.
func (m *MatchmakeStore) Get(ctx context.Context, gid uint32) (s matchmaking.MatchmakeSession, ps []matchmaking.Participant, err error) {
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	rtx, err := m.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s, nil, fmt.Errorf("accounts: matchmaking get: %w", err)
	}
	defer rtx.Rollback()
	tx := dbtx{tx: rtx, cache: m.readStmts, n: &m.queries}
	r, err := loadRow(ctx, tx, gid)
	if err != nil {
		return s, nil, err
	}
	ps, err = loadParticipants(ctx, tx, gid)
	return r.s, ps, err
}

// Update implements matchmaking.Store.
func (m *MatchmakeStore) Update(ctx context.Context, gid uint32, f func(s *matchmaking.MatchmakeSession, ps []matchmaking.Participant) error) (c matchmaking.Change, err error) {
	err = m.tx(ctx, "update", func(tx dbtx) error {
		r, err := loadRow(ctx, tx, gid)
		if err != nil {
			return err
		}
		ps, err := loadParticipants(ctx, tx, gid)
		if err != nil {
			return err
		}
		prev := r.s.Owner
		s := r.s
		s.Attributes = append([]uint32(nil), s.Attributes...)
		if err := f(&s, ps); err != nil {
			return err
		}
		if err := matchmaking.Validate(&s); err != nil {
			return err
		}
		// What f may not change: the id, and the count the participants make.
		s.ID, s.ParticipationCount = r.s.ID, r.s.ParticipationCount
		if s.SystemPasswordEnabled != r.s.SystemPasswordEnabled {
			r.systemPW = systemPassword(s.SystemPasswordEnabled, r.systemPW, gid)
		}
		r.s = s
		c, err = save(ctx, tx, &r)
		if s.Owner != prev {
			c.PrevOwner = prev
		}
		return err
	})
	return c, err
}

// systemPassword derives a session's system password when one is turned on
// (GenerateMatchmakeSessionSystemPassword): unpredictable enough for a
// matchmaking gate, stable for the session.
func systemPassword(on bool, old string, gid uint32) string {
	if !on {
		return ""
	}
	if old != "" {
		return old
	}
	return fmt.Sprintf("%08x%s", gid, randomPassword()[:8])
}

// SystemPassword returns a session's system password ("" when none).
func (m *MatchmakeStore) SystemPassword(ctx context.Context, gid uint32) (string, error) {
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	r, err := loadRow(ctx, m.reader(), gid)
	return r.systemPW, err
}

// Delete implements matchmaking.Store.
func (m *MatchmakeStore) Delete(ctx context.Context, gid uint32, f func(s *matchmaking.MatchmakeSession, ps []matchmaking.Participant) error) (c matchmaking.Change, err error) {
	err = m.tx(ctx, "delete", func(tx dbtx) error {
		r, err := loadRow(ctx, tx, gid)
		if err != nil {
			return err
		}
		if f != nil {
			ps, err := loadParticipants(ctx, tx, gid)
			if err != nil {
				return err
			}
			if err := f(&r.s, ps); err != nil {
				return err
			}
		}
		c, err = remove(ctx, tx, &r)
		return err
	})
	return c, err
}

// Browse implements matchmaking.Store.
func (m *MatchmakeStore) Browse(ctx context.Context, sc matchmaking.SearchCriteria, offset, size uint32) ([]matchmaking.MatchmakeSession, error) {
	c, err := matchmaking.Compile(sc)
	if err != nil {
		return nil, err
	}
	if size == 0 || size > matchmaking.MaxBrowseResults {
		size = matchmaking.MaxBrowseResults
	}
	if offset == 0xFFFFFFFF { // "from the start" in NEX result ranges
		offset = 0
	}
	if offset > 10000 {
		return nil, fmt.Errorf("%w: result range offset %d", types.CoreInvalidArgument, offset)
	}
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	rows, err := candidatesAll(ctx, m.reader(), c, int(offset)+int(size))
	if err != nil {
		return nil, fmt.Errorf("accounts: matchmaking browse: %w", err)
	}
	if int(offset) >= len(rows) {
		return nil, nil
	}
	rows = rows[offset:]
	out := make([]matchmaking.MatchmakeSession, len(rows))
	for i := range rows {
		out[i] = rows[i].s
	}
	return out, nil
}

// candidatesAll is candidates for a browse: closed and full sessions count too
// unless the criteria exclude them.
func candidatesAll(ctx context.Context, q querier, c matchmaking.Criteria, limit int) ([]row, error) {
	where := []string{"1 = 1"}
	var args []any
	if gm, ok := c.GameMode(); ok {
		where, args = append(where, "game_mode = ?"), append(args, gm)
	}
	if st, ok := c.SystemType(); ok {
		where, args = append(where, "system_type = ?"), append(args, st)
	}
	if c.ExcludeLocked {
		where = append(where, "open = 1")
	}
	if c.VacantOnly {
		where = append(where, "count < max_p")
	}
	rows, err := q.QueryContext(ctx, `SELECT blob, system_pw, seq FROM mm_gatherings WHERE `+strings.Join(where, " AND ")+
		` ORDER BY count DESC, gid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	for rows.Next() && len(out) < limit {
		var blob []byte
		var r row
		if err := rows.Scan(&blob, &r.systemPW, &r.seq); err != nil {
			return nil, err
		}
		if r.s, err = decodeSession(blob); err != nil {
			return nil, err
		}
		if c.Match(&r.s, r.systemPW != "", 0) {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}

// Find implements matchmaking.Store.
func (m *MatchmakeStore) Find(ctx context.Context, q matchmaking.Query) ([]matchmaking.MatchmakeSession, error) {
	size := q.Size
	if size == 0 || size > matchmaking.MaxBrowseResults {
		size = matchmaking.MaxBrowseResults
	}
	offset := q.Offset
	if offset == 0xFFFFFFFF {
		offset = 0
	}
	var where []string
	var args []any
	if len(q.GIDs) > 0 {
		if len(q.GIDs) > matchmaking.MaxBrowseResults {
			return nil, fmt.Errorf("%w: %d gathering ids, at most %d", types.CoreInvalidArgument, len(q.GIDs), matchmaking.MaxBrowseResults)
		}
		where = append(where, "gid IN (?"+strings.Repeat(", ?", len(q.GIDs)-1)+")")
		for _, g := range q.GIDs {
			args = append(args, int64(g))
		}
	}
	if q.Owner != 0 {
		where, args = append(where, "owner = ?"), append(args, int64(q.Owner))
	}
	if q.Participant != 0 {
		where, args = append(where, "gid IN (SELECT gid FROM mm_participants WHERE pid = ?)"), append(args, int64(q.Participant))
	}
	if len(where) == 0 {
		return nil, fmt.Errorf("%w: empty gathering query", types.CoreInvalidArgument)
	}
	args = append(args, size, offset)
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	rows, err := m.reader().QueryContext(ctx, `SELECT blob FROM mm_gatherings WHERE `+strings.Join(where, " AND ")+` ORDER BY gid LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("accounts: matchmaking find: %w", err)
	}
	defer rows.Close()
	var out []matchmaking.MatchmakeSession
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			return nil, err
		}
		s, err := decodeSession(blob)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
