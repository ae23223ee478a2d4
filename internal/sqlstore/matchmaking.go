package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/types"
)

// BlobSettings encode sessions in the database: NEX 4 carries every field,
// 8-byte PIDs every PID.
var BlobSettings = types.Settings{PIDSize: 8, StructureHeader: true, Version: types.Version4}

// EncodeSession is a session as stored in mm_gatherings.blob: the structure,
// then the session url when one was given (UpdateSessionURL; blobs stored
// before it end after the structure).
func EncodeSession(s *matchmaking.MatchmakeSession) ([]byte, error) {
	w := types.NewWriter(nil, BlobSettings)
	s.Append(&w)
	if s.SessionURL != "" {
		w.String(s.SessionURL)
	}
	return w.Bytes()
}

// DecodeSession reads a session EncodeSession stored.
func DecodeSession(b []byte) (matchmaking.MatchmakeSession, error) {
	r := types.NewReader(b, BlobSettings)
	s := matchmaking.ReadMatchmakeSession(&r, "MatchmakeSession")
	if r.Remaining() > 0 {
		s.SessionURL = r.String("session url")
	}
	if err := r.Done(); err != nil {
		return s, fmt.Errorf("stored session: %w", err)
	}
	return s, nil
}

// Dialect is what differs between the databases' matchmaking statements.
type Dialect struct {
	// Open is the condition "participation is open", written as the partial
	// indexes mm_gatherings_vacant's and mm_gatherings_match's WHERE have it.
	Open string
	// ForUpdate ends the read of a gathering that a write transaction
	// changes: it locks the row (PostgreSQL's " FOR UPDATE"). "" where a write
	// transaction holds the database's write lock from its start (SQLite):
	// then a row as read stays current.
	ForUpdate string
	// CandidatePage is how many gatherings one statement of a search reads,
	// paging on (count DESC, gid); 0 reads one statement as far as needed.
	CandidatePage int
	// LockSearch, if set, serialises the auto-matchmaking decisions ("join a
	// fitting session, or create one") that could pick the same sessions;
	// narrow says every criterion names game mode gm and system type st.
	LockSearch func(ctx context.Context, tx Querier, narrow bool, gm, st uint32) error
	// Official is the condition "the community is official" on
	// mm_communities, written as the partial index mm_communities_official's
	// WHERE has it.
	Official string
	// NextGID takes the next id of mm_gatherings' sequence in a write
	// transaction, for a community (community.go).
	NextGID func(ctx context.Context, tx Querier) (int64, error)
	// MatchIndex, if set, follows "FROM mm_gatherings" in a search that
	// Search.Match says mm_gatherings_match serves best: SQLite's planner,
	// without statistics, would rather read mm_gatherings_vacant in the
	// order wanted than sort the few sessions the criteria's columns select
	// (" INDEXED BY mm_gatherings_match").
	MatchIndex string
}

// Search is the condition of a search for gatherings (AutoWhere,
// BrowseWhere).
type Search struct {
	Where string
	Args  []any
	// Match: the condition implies the predicate of the partial index
	// mm_gatherings_match (open, with room) and constrains its columns past
	// game mode and system type, so that index serves it best.
	Match bool
}

// Matchmaking implements matchmaking.Store on a DB; a store embeds it.
type Matchmaking struct {
	db     DB
	d      Dialect
	store  string
	locked string      // the read of a gathering with its row lock
	quota  quota.Quota // matchmaking_quota.go
}

// NewMatchmaking returns the matchmaking store on db; store names it in error
// messages ("accounts", "pgstore").
func NewMatchmaking(store string, db DB, d Dialect) *Matchmaking {
	return &Matchmaking{db: db, d: d, store: store, locked: loadQuery + d.ForUpdate}
}

var _ matchmaking.Store = (*Matchmaking)(nil)

const (
	loadQuery         = `SELECT blob, system_pw, seq FROM mm_gatherings WHERE gid = ?`
	participantsQuery = `SELECT pid, slots, message, node, conn FROM mm_participants WHERE gid = ? ORDER BY joined, pid`
)

// write runs f in a write transaction; what names it in errors.
func (m *Matchmaking) write(ctx context.Context, what string, f func(ctx context.Context, tx Querier) error) error {
	return Failure(m.store, what, m.db.Write(ctx, f))
}

// row is a gathering as stored.
type row struct {
	s        matchmaking.MatchmakeSession
	systemPW string
	seq      int64
}

// private reports whether the session in r has a user or a system password.
func (r *row) private() bool {
	return r.systemPW != "" || r.s.UserPasswordEnabled || r.s.UserPassword != ""
}

// loadRow reads gathering gid; lock takes its row lock (Dialect.ForUpdate)
// in a write transaction.
func (m *Matchmaking) loadRow(ctx context.Context, q Querier, gid uint32, lock bool) (row, error) {
	query := loadQuery
	if lock {
		query = m.locked
	}
	var blob []byte
	var r row
	err := q.QueryRow(ctx, query, int64(gid)).Scan(&blob, &r.systemPW, &r.seq)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: gathering %d", matchmaking.ResultSessionVoid, gid)
	} else if err != nil {
		return r, err
	}
	r.s, err = DecodeSession(blob)
	return r, err
}

func loadParticipants(ctx context.Context, q Querier, gid uint32) ([]matchmaking.Participant, error) {
	rows, err := q.Query(ctx, participantsQuery, int64(gid))
	if err != nil {
		return nil, err
	}
	return scanParticipants(rows)
}

// scanParticipants reads the rows of participantsQuery and closes them.
func scanParticipants(rows Rows) ([]matchmaking.Participant, error) {
	var out []matchmaking.Participant
	// The scan targets escape (Rows is an interface): one set for all rows.
	var p matchmaking.Participant
	var pid, slots, conn int64
	for rows.Next() {
		if err := rows.Scan(&pid, &slots, &p.Message, &p.Node, &conn); err != nil {
			return nil, closeRows(rows, err)
		}
		p.PID, p.Slots, p.Conn = types.PID(pid), uint16(slots), uint64(conn)
		out = append(out, p)
	}
	return out, closeRows(rows, nil)
}

// save writes r back with the next seq and returns the change. The update,
// the statements in before (queued ahead of it: a join's insert) and the
// read of the participants go in one round trip where the driver pipelines.
func save(ctx context.Context, tx Querier, r *row, before ...Stmt) (matchmaking.Change, error) {
	blob, err := EncodeSession(&r.s)
	if err != nil {
		return matchmaking.Change{}, err
	}
	r.seq++
	args := []any{int64(r.s.Owner), int64(r.s.GameMode), int64(r.s.MatchmakeSystemType), int32(r.s.MaxParticipants),
		int64(r.s.ParticipationCount), r.s.OpenParticipation, r.systemPW, r.seq, blob}
	args = append(append(args, searchColumns(r)...), int64(r.s.ID))
	update := Stmt{`UPDATE mm_gatherings SET owner = ?, game_mode = ?, system_type = ?, max_p = ?, count = ?,
		open = ?, system_pw = ?, seq = ?, blob = ?, min_p = ?, a0 = ?, a1 = ?, a2 = ?, a3 = ?, a4 = ?, a5 = ?, pw_flags = ?
		WHERE gid = ?`, args}
	rows, err := tx.Batch(ctx, append(before, update), participantsQuery, int64(r.s.ID))
	if err != nil {
		return matchmaking.Change{}, err
	}
	ps, err := scanParticipants(rows)
	return matchmaking.Change{Session: r.s, Participants: ps, Seq: uint64(r.seq)}, err
}

// Bits of mm_gatherings.pw_flags: the passwords a session has.
const (
	pwUser   = 1
	pwSystem = 2
)

// searchColumns are the values of the columns the searches select on beyond
// game mode, system type, maximum, count and open (index mm_gatherings_match):
// min_p, a0 to a5 (NULL past the session's attributes, which no criterion on
// them matches) and pw_flags.
func searchColumns(r *row) []any {
	out := make([]any, 0, 2+matchmaking.MaxAttributes)
	out = append(out, int32(r.s.MinParticipants))
	for i := range matchmaking.MaxAttributes {
		if i < len(r.s.Attributes) {
			out = append(out, int64(r.s.Attributes[i]))
		} else {
			out = append(out, nil)
		}
	}
	var flags int32
	if r.s.UserPasswordEnabled || r.s.UserPassword != "" {
		flags |= pwUser
	}
	if r.systemPW != "" {
		flags |= pwSystem
	}
	return append(out, flags)
}

// fieldColumns are the columns of the criteria's fields (matchmaking.Field).
var fieldColumns = [...]string{matchmaking.FieldGameMode: "game_mode", matchmaking.FieldSystemType: "system_type",
	matchmaking.FieldMinParticipants: "min_p", matchmaking.FieldMaxParticipants: "max_p",
	matchmaking.FieldAttribute: "a0", "a1", "a2", "a3", "a4", "a5"}

// termsWhere is the condition of a criterion's terms (ANDed; "1 = 1" when it
// has none), for an index search on mm_gatherings_match.
func termsWhere(c *matchmaking.Criteria) (string, []any) {
	var conds []string
	var args []any
	for _, t := range c.Terms() {
		col := fieldColumns[t.Field]
		switch {
		case t.Values == nil && t.Lo == t.Hi:
			conds, args = append(conds, col+" = ?"), append(args, int64(t.Lo))
		case t.Values == nil:
			conds, args = append(conds, col+" BETWEEN ? AND ?"), append(args, int64(t.Lo), int64(t.Hi))
		case len(t.Values) == 1:
			conds, args = append(conds, col+" = ?"), append(args, int64(t.Values[0]))
		default:
			conds = append(conds, col+" IN (?"+strings.Repeat(", ?", len(t.Values)-1)+")")
			for _, v := range t.Values {
				args = append(args, int64(v))
			}
		}
	}
	if len(conds) == 0 {
		return "1 = 1", nil
	}
	return strings.Join(conds, " AND "), args
}

// insertParticipant is the statement adding p to gathering gid.
func insertParticipant(gid uint32, p matchmaking.Participant, seq int64) Stmt {
	return Stmt{`INSERT INTO mm_participants (gid, pid, slots, message, node, conn, joined) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		[]any{int64(gid), int64(p.PID), int32(max(p.Slots, 1)), p.Message, p.Node, int64(p.Conn), seq}}
}

// create inserts s with p as owner and first participant.
func create(ctx context.Context, tx Querier, s matchmaking.MatchmakeSession, p matchmaking.Participant) (matchmaking.Change, error) {
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
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO mm_gatherings (owner, game_mode, system_type, max_p, count, open, seq, blob, created)
		VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?) RETURNING gid`, int64(p.PID), int64(s.GameMode), int64(s.MatchmakeSystemType),
		int32(s.MaxParticipants), int32(slots), s.OpenParticipation, []byte{}, time.Now().Unix()).Scan(&id)
	if err != nil {
		return matchmaking.Change{}, err
	}
	if id <= 0 || id > math.MaxUint32 {
		return matchmaking.Change{}, fmt.Errorf("gathering ids exhausted (%d)", id)
	}
	s.ID = uint32(id)
	// A session created with m_SystemPasswordEnabled has its system password
	// from the start, as one turned on later (Update) has.
	r := row{s: s, seq: 0, systemPW: systemPassword(s.SystemPasswordEnabled, "", s.ID)}
	c, err := save(ctx, tx, &r, insertParticipant(s.ID, p, 1))
	c.Joined = &p
	return c, err
}

// Create implements matchmaking.Store.
func (m *Matchmaking) Create(ctx context.Context, s matchmaking.MatchmakeSession, p matchmaking.Participant) (c matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking create", func(ctx context.Context, tx Querier) error {
		if err := m.checkGatherings(ctx, tx, p.PID); err != nil {
			return err
		}
		c, err = create(ctx, tx, s, p)
		return err
	})
	return c, err
}

// Seed registers sessions in bulk, each with its owner (Owner) as its only
// participant, on node: for benchmarks and load tests. The sessions are
// created as Create creates one (Validate, server-owned fields reset), in
// transactions of up to 1,000, with no notifications.
func (m *Matchmaking) Seed(ctx context.Context, ss []matchmaking.MatchmakeSession, node string) error {
	for start := 0; start < len(ss); start += 1000 {
		part := ss[start:min(start+1000, len(ss))]
		err := m.write(ctx, "matchmaking seed", func(ctx context.Context, tx Querier) error {
			for _, s := range part {
				p := matchmaking.Participant{PID: s.Owner, Node: node, Conn: uint64(s.Owner)}
				if _, err := create(ctx, tx, s, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// join adds p to the gathering in r (locked).
func join(ctx context.Context, tx Querier, r *row, p matchmaking.Participant, pw *matchmaking.Passwords) (matchmaking.Change, error) {
	gid := r.s.ID
	var in bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mm_participants WHERE gid = ? AND pid = ?)`, int64(gid), int64(p.PID)).Scan(&in); err != nil {
		return matchmaking.Change{}, err
	}
	if in {
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
		if !pw.IgnoreBlockList {
			blocked, err := blocks(ctx, tx, p.PID, gid)
			if err != nil {
				return matchmaking.Change{}, err
			}
			if blocked {
				return matchmaking.Change{}, fmt.Errorf("%w: PID %d and a participant of gathering %d block one another", matchmaking.ResultPermissionDenied, p.PID, gid)
			}
		}
	}
	r.s.ParticipationCount += slots
	c, err := save(ctx, tx, r, insertParticipant(gid, p, r.seq+1))
	c.Joined = &p
	return c, err
}

// Join implements matchmaking.Store.
func (m *Matchmaking) Join(ctx context.Context, gid uint32, p matchmaking.Participant, pw matchmaking.Passwords) (c matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking join", func(ctx context.Context, tx Querier) error {
		r, err := m.loadRow(ctx, tx, gid, true)
		if err != nil {
			return err
		}
		c, err = join(ctx, tx, &r, p, &pw)
		return err
	})
	return c, err
}

// CandidatesQuery is the statement of a search for gatherings where selects,
// in the order auto-matchmaking picks them: the fullest first (to start
// games soonest), then the oldest. Paged (d.CandidatePage), its last three
// arguments after where's are the keyset: count, count again and gid of the
// last row read.
func CandidatesQuery(d Dialect, s Search) string {
	from := "mm_gatherings"
	if s.Match {
		from += d.MatchIndex
	}
	query := `SELECT gid, count, blob, system_pw, seq FROM ` + from + ` WHERE ` + s.Where
	if d.CandidatePage > 0 {
		return query + ` AND (count < ? OR (count = ? AND gid > ?)) ORDER BY count DESC, gid LIMIT ` + strconv.Itoa(d.CandidatePage)
	}
	return query + ` ORDER BY count DESC, gid`
}

// scanCandidates reads the gatherings s selects (CandidatesQuery), calling
// keep on each until it returns false. Paged, keep runs once a page is read,
// so it may run statements of its own.
func (m *Matchmaking) scanCandidates(ctx context.Context, q Querier, s Search, keep func(r row) (bool, error)) error {
	query, page, args := CandidatesQuery(m.d, s), m.d.CandidatePage, s.Args
	lastCount, lastGID := int64(math.MaxInt32), int64(0)
	for {
		pageArgs := args
		if page > 0 {
			pageArgs = append(args[:len(args):len(args)], lastCount, lastCount, lastGID)
		}
		rows, err := q.Query(ctx, query, pageArgs...)
		if err != nil {
			return err
		}
		var buf []row
		n, more := 0, true
		var gid, count int64
		var blob []byte
		var pw string
		var seq int64
		for more && rows.Next() {
			if err := rows.Scan(&gid, &count, &blob, &pw, &seq); err != nil {
				return closeRows(rows, err)
			}
			r := row{systemPW: pw, seq: seq}
			if r.s, err = DecodeSession(blob); err != nil {
				return closeRows(rows, err)
			}
			r.s.ID = uint32(gid)
			lastCount, lastGID = count, gid
			n++
			if page > 0 {
				buf = append(buf, r)
			} else if more, err = keep(r); err != nil {
				return closeRows(rows, err)
			}
		}
		if err := closeRows(rows, nil); err != nil {
			return err
		}
		for _, r := range buf {
			if more, err = keep(r); err != nil || !more {
				return err
			}
		}
		if !more || page == 0 || n < page {
			return nil
		}
	}
}

// AutoWhere is the condition of an auto-matchmaking search: open sessions
// without passwords, with room for joining more players, that exclude has
// not joined, and that fit the criteria's terms (one criterion's, or any of
// several, then also narrowed by the game mode and system type every one of
// them names, if they all name the same). The partial index
// mm_gatherings_match serves it: the terms' columns lead it, so the search
// reads the sessions that fit them, not every open one. narrow reports that
// every criterion names game mode gm and system type st.
func AutoWhere(d Dialect, cs []matchmaking.Criteria, joining int, exclude types.PID) (s Search, gm, st uint32, narrow bool) {
	conds := []string{d.Open, "count < max_p", "pw_flags = 0", "count + ? <= max_p",
		// The sessions exclude is in, read once by mm_participants' pid
		// index (PostgreSQL: a hashed subplan), whatever number of
		// sessions the planner expects the search to read; NOT EXISTS let
		// PostgreSQL anti-join every participant when it expected many.
		"gid NOT IN (SELECT gid FROM mm_participants WHERE pid = ?)",
		// Nor sessions with a player exclude blocked or that blocked
		// exclude (mm_blocks, read by its two indexes).
		blockedWith}
	args := []any{int64(joining), int64(exclude), int64(exclude), int64(exclude)}
	gm, okGM := commonValue(cs, (*matchmaking.Criteria).GameMode)
	st, okST := commonValue(cs, (*matchmaking.Criteria).SystemType)
	narrow = okGM && okST
	for i := range cs {
		s.Match = s.Match || deepTerms(&cs[i])
	}
	if len(cs) == 1 {
		w, a := termsWhere(&cs[0])
		conds, args = append(conds, w), append(args, a...)
		return Search{strings.Join(conds, " AND "), args, s.Match}, gm, st, narrow
	}
	if okGM {
		conds, args = append(conds, "game_mode = ?"), append(args, int64(gm))
	}
	if okST {
		conds, args = append(conds, "system_type = ?"), append(args, int64(st))
	}
	if len(cs) > 0 {
		var alts []string
		for i := range cs {
			w, a := termsWhere(&cs[i])
			alts, args = append(alts, "("+w+")"), append(args, a...)
		}
		conds = append(conds, "("+strings.Join(alts, " OR ")+")")
	}
	return Search{strings.Join(conds, " AND "), args, s.Match}, gm, st, narrow
}

// deepTerms reports whether c constrains a column of mm_gatherings_match
// past game mode and system type.
func deepTerms(c *matchmaking.Criteria) bool {
	for _, t := range c.Terms() {
		if t.Field != matchmaking.FieldGameMode && t.Field != matchmaking.FieldSystemType {
			return true
		}
	}
	return false
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

// matchAny reports whether an auto-matchmake with criteria cs may join the
// session in r: one criterion fits and the session has no password (an
// auto-matchmake carries none, so it never enters a passworded session,
// whatever the criteria's exclude flags say; docs/nex.md "Passwords and
// ownership").
func matchAny(cs []matchmaking.Criteria, r *row, joining int) bool {
	if r.private() {
		return false
	}
	for i := range cs {
		if cs[i].Match(&r.s, r.systemPW != "", joining) {
			return true
		}
	}
	return false
}

// compileAuto compiles an auto-matchmake's criteria (s's own when nil).
func compileAuto(criteria []matchmaking.SearchCriteria, s *matchmaking.MatchmakeSession) ([]matchmaking.Criteria, error) {
	if criteria == nil {
		return []matchmaking.Criteria{matchmaking.AutoCriteria(s)}, nil
	}
	if len(criteria) > matchmaking.MaxSearchCriteria {
		return nil, fmt.Errorf("%w: %d search criteria, at most %d", types.CoreInvalidArgument, len(criteria), matchmaking.MaxSearchCriteria)
	}
	cs := make([]matchmaking.Criteria, 0, len(criteria))
	for _, sc := range criteria {
		c, err := matchmaking.Compile(sc)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// AutoMatchmake implements matchmaking.Store: the search and the join (or the
// creation) are one write transaction, serialised against the searches that
// could pick the same sessions (Dialect.LockSearch, or the database's write
// lock), so two clients never both create a session while one could have
// joined the other's, and a session is never filled past its maximum.
func (m *Matchmaking) AutoMatchmake(ctx context.Context, criteria []matchmaking.SearchCriteria, s matchmaking.MatchmakeSession, p matchmaking.Participant) (c matchmaking.Change, created bool, err error) {
	c, created, _, err = m.autoMatchmake(ctx, criteria, s, p, matchmaking.NATOrder{Policy: matchmaking.NATOff})
	return c, created, err
}

// autoMatchmake is AutoMatchmake, choosing among the sessions that fit by o
// (nat.go) unless its policy is NATOff.
func (m *Matchmaking) autoMatchmake(ctx context.Context, criteria []matchmaking.SearchCriteria, s matchmaking.MatchmakeSession, p matchmaking.Participant, o matchmaking.NATOrder) (c matchmaking.Change, created bool, choice matchmaking.NATChoice, err error) {
	cs, err := compileAuto(criteria, &s)
	if err != nil {
		return c, false, choice, err
	}
	if err := matchmaking.Validate(&s); err != nil {
		return c, false, choice, err
	}
	joining := int(max(p.Slots, 1))
	search, gm, st, narrow := AutoWhere(m.d, cs, joining, p.PID)
	err = m.write(ctx, "matchmaking auto-matchmake", func(ctx context.Context, tx Querier) error {
		created, choice = false, matchmaking.NATChoice{}
		if m.d.LockSearch != nil {
			if err := m.d.LockSearch(ctx, tx, narrow, gm, st); err != nil {
				return err
			}
		}
		var found *row
		var err error
		if o.Policy == matchmaking.NATOff {
			found, err = m.firstCandidate(ctx, tx, search, cs, joining)
		} else {
			found, choice, err = m.natCandidate(ctx, tx, search, cs, joining, p.PID, o)
		}
		if err != nil {
			return err
		}
		if found != nil {
			c, err = join(ctx, tx, found, p, nil)
			return err
		}
		if err := m.checkGatherings(ctx, tx, p.PID); err != nil {
			return err
		}
		created = true
		choice.Reach, choice.Passed = nattraversal.Reachable, 0
		c, err = create(ctx, tx, s, p)
		return err
	})
	return c, created, choice, err
}

// firstCandidate returns the first session the search selects that takes the
// joiner (nil when none does), locked (Dialect.ForUpdate).
func (m *Matchmaking) firstCandidate(ctx context.Context, tx Querier, search Search, cs []matchmaking.Criteria, joining int) (*row, error) {
	var found *row
	err := m.scanCandidates(ctx, tx, search, func(r row) (bool, error) {
		if !matchAny(cs, &r, joining) {
			return true, nil
		}
		locked, ok, err := m.relock(ctx, tx, r, cs, joining)
		if !ok || err != nil {
			return err == nil, err
		}
		found = &locked
		return false, nil
	})
	return found, err
}

// relock locks the session in r (Dialect.ForUpdate) and checks it again: a
// join on another node may have filled it since the page was read. ok is
// false when it no longer takes the joiner.
func (m *Matchmaking) relock(ctx context.Context, tx Querier, r row, cs []matchmaking.Criteria, joining int) (row, bool, error) {
	if m.d.ForUpdate == "" {
		return r, true, nil
	}
	locked, err := m.loadRow(ctx, tx, r.s.ID, true)
	if errors.Is(err, matchmaking.ResultSessionVoid) {
		return r, false, nil // deleted since
	}
	if err != nil {
		return r, false, err
	}
	if !matchAny(cs, &locked, joining) {
		return r, false, nil
	}
	return locked, true, nil
}

// leave removes pid from the gathering in r (locked): a non-owner just leaves;
// an owner hands ownership to the earliest remaining participant when the
// gathering has FlagMigrateOwner, and otherwise (or when nobody is left) the
// gathering goes.
func leave(ctx context.Context, tx Querier, r *row, pid types.PID) (matchmaking.Change, error) {
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
	del := Stmt{`DELETE FROM mm_participants WHERE gid = ? AND pid = ?`, []any{int64(gid), int64(pid)}}
	r.s.ParticipationCount -= min(r.s.ParticipationCount, uint32(left.SlotCount()))
	if len(rest) == 0 || (pid == r.s.Owner && r.s.Flags&matchmaking.FlagMigrateOwner == 0) {
		if _, err := tx.Exec(ctx, del.SQL, del.Args...); err != nil {
			return matchmaking.Change{}, err
		}
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
			r.s.SessionURL = "" // the departed host's
		}
	}
	c, err := save(ctx, tx, r, del)
	c.Left, c.PrevOwner = left, prev
	return c, err
}

// remove deletes the gathering in r and returns the change (with the
// participants it had).
func remove(ctx context.Context, tx Querier, r *row) (matchmaking.Change, error) {
	ps, err := loadParticipants(ctx, tx, r.s.ID)
	if err != nil {
		return matchmaking.Change{}, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM mm_participants WHERE gid = ?`, int64(r.s.ID)); err != nil {
		return matchmaking.Change{}, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM mm_gatherings WHERE gid = ?`, int64(r.s.ID)); err != nil {
		return matchmaking.Change{}, err
	}
	r.seq++
	return matchmaking.Change{Session: r.s, Participants: ps, Seq: uint64(r.seq), Deleted: true}, nil
}

// Leave implements matchmaking.Store.
func (m *Matchmaking) Leave(ctx context.Context, gid uint32, pid types.PID) (c matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking leave", func(ctx context.Context, tx Querier) error {
		r, err := m.loadRow(ctx, tx, gid, true)
		if err != nil {
			return err
		}
		c, err = leave(ctx, tx, &r, pid)
		return err
	})
	return c, err
}

// Disconnect implements matchmaking.Store.
func (m *Matchmaking) Disconnect(ctx context.Context, node string, conn uint64) (cs []matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking disconnect", func(ctx context.Context, tx Querier) error {
		cs, err = m.leaveAll(ctx, tx, `SELECT gid, pid FROM mm_participants WHERE node = ? AND conn = ? ORDER BY gid, pid`, node, int64(conn))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM mm_nat WHERE node = ? AND conn = ?`, node, int64(conn))
		return err
	})
	return cs, err
}

// ResetNode implements matchmaking.Store.
func (m *Matchmaking) ResetNode(ctx context.Context, node string) (cs []matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking reset", func(ctx context.Context, tx Querier) error {
		cs, err = m.leaveAll(ctx, tx, `SELECT gid, pid FROM mm_participants WHERE node = ? ORDER BY gid, pid`, node)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM mm_nat WHERE node = ?`, node)
		return err
	})
	return cs, err
}

// leaveAll makes the participants the query selects (gid, pid) leave, as
// Leave does one: owners hand over or end their gatherings. The gatherings
// are locked in gid order, as every transaction locking several does.
func (m *Matchmaking) leaveAll(ctx context.Context, tx Querier, query string, args ...any) ([]matchmaking.Change, error) {
	rows, err := tx.Query(ctx, query, args...)
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
			return nil, closeRows(rows, err)
		}
		gone = append(gone, gp{uint32(gid), types.PID(pid)})
	}
	if err := closeRows(rows, nil); err != nil {
		return nil, err
	}
	var cs []matchmaking.Change
	for _, g := range gone {
		r, err := m.loadRow(ctx, tx, g.gid, true)
		if errors.Is(err, matchmaking.ResultSessionVoid) {
			continue // ended by an earlier leave of this batch, or by another node
		} else if err != nil {
			return nil, err
		}
		c, err := leave(ctx, tx, &r, g.pid)
		if errors.Is(err, matchmaking.ResultNotParticipatedGathering) {
			continue // left meanwhile
		} else if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Get implements matchmaking.Store; the gathering and its participants come
// from one snapshot.
func (m *Matchmaking) Get(ctx context.Context, gid uint32) (s matchmaking.MatchmakeSession, ps []matchmaking.Participant, err error) {
	err = m.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		r, err := m.loadRow(ctx, q, gid, false)
		if err != nil {
			return err
		}
		s = r.s
		ps, err = loadParticipants(ctx, q, gid)
		return err
	})
	if err != nil {
		return matchmaking.MatchmakeSession{}, nil, Failure(m.store, "matchmaking get", err)
	}
	return s, ps, nil
}

// Update implements matchmaking.Store.
func (m *Matchmaking) Update(ctx context.Context, gid uint32, f func(s *matchmaking.MatchmakeSession, ps []matchmaking.Participant) error) (c matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking update", func(ctx context.Context, tx Querier) error {
		r, err := m.loadRow(ctx, tx, gid, true)
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
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%08x%s", gid, hex.EncodeToString(b[:]))
}

// SystemPassword returns a session's system password ("" when none).
func (m *Matchmaking) SystemPassword(ctx context.Context, gid uint32) (pw string, err error) {
	err = m.db.Do(ctx, func(ctx context.Context, q Querier) error {
		r, err := m.loadRow(ctx, q, gid, false)
		pw = r.systemPW
		return err
	})
	return pw, Failure(m.store, "matchmaking system password", err)
}

// Delete implements matchmaking.Store.
func (m *Matchmaking) Delete(ctx context.Context, gid uint32, f func(s *matchmaking.MatchmakeSession, ps []matchmaking.Participant) error) (c matchmaking.Change, err error) {
	err = m.write(ctx, "matchmaking delete", func(ctx context.Context, tx Querier) error {
		r, err := m.loadRow(ctx, tx, gid, true)
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

// BrowseWhere is the condition of a browse: the criterion's terms; closed,
// full and passworded sessions count too unless the criteria exclude them.
// Excluding closed and full sessions (as clients do) puts the search on the
// partial index mm_gatherings_match.
func BrowseWhere(d Dialect, c matchmaking.Criteria) Search {
	where, args := termsWhere(&c)
	conds := []string{where}
	if c.ExcludeLocked {
		conds = append(conds, d.Open)
	}
	if c.VacantOnly {
		conds = append(conds, "count < max_p")
	}
	// pw_flags, the index's third column, is always constrained (every
	// value, when neither password is excluded), so the criterion's
	// attributes after it still narrow the index search.
	switch {
	case c.ExcludeUserPasswordSet && c.ExcludeSystemPasswordSet:
		conds = append(conds, "pw_flags = 0")
	case c.ExcludeUserPasswordSet:
		conds = append(conds, "pw_flags IN (0, 2)")
	case c.ExcludeSystemPasswordSet:
		conds = append(conds, "pw_flags IN (0, 1)")
	default:
		conds = append(conds, "pw_flags IN (0, 1, 2, 3)")
	}
	return Search{strings.Join(conds, " AND "), args, c.ExcludeLocked && c.VacantOnly && deepTerms(&c)}
}

// Browse implements matchmaking.Store.
func (m *Matchmaking) Browse(ctx context.Context, sc matchmaking.SearchCriteria, offset, size uint32) ([]matchmaking.MatchmakeSession, error) {
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
	limit := int(offset) + int(size)
	search := BrowseWhere(m.d, c)
	read := m.db.Do
	if m.d.CandidatePage > 0 {
		read = m.db.Snapshot // the pages of one browse see one snapshot
	}
	var out []matchmaking.MatchmakeSession
	err = read(ctx, func(ctx context.Context, q Querier) error {
		return m.scanCandidates(ctx, q, search, func(r row) (bool, error) {
			if c.Match(&r.s, r.systemPW != "", 0) {
				out = append(out, r.s)
			}
			return len(out) < limit, nil
		})
	})
	if err != nil {
		return nil, Failure(m.store, "matchmaking browse", err)
	}
	if int(offset) >= len(out) {
		return nil, nil
	}
	return out[offset:], nil
}

// findConds is the conditions of a find by ids, owner and member on the
// gatherings aliased as col ("" or "c."), whose members members lists.
func findConds(col, members string, gids []uint32, owner, member types.PID) ([]string, []any, error) {
	var conds []string
	var args []any
	if len(gids) > 0 {
		if len(gids) > matchmaking.MaxBrowseResults {
			return nil, nil, fmt.Errorf("%w: %d gathering ids, at most %d", types.CoreInvalidArgument, len(gids), matchmaking.MaxBrowseResults)
		}
		conds = append(conds, col+"gid IN (?"+strings.Repeat(", ?", len(gids)-1)+")")
		for _, g := range gids {
			args = append(args, int64(g))
		}
	}
	if owner != 0 {
		conds, args = append(conds, col+"owner = ?"), append(args, int64(owner))
	}
	if member != 0 {
		conds, args = append(conds, col+"gid IN (SELECT gid FROM "+members+" WHERE pid = ?)"), append(args, int64(member))
	}
	return conds, args, nil
}

// GatheringsQuery is Find's statement for q.
func GatheringsQuery(q matchmaking.Query) (string, []any, error) {
	conds, args, err := findConds("", "mm_participants", q.GIDs, q.Owner, q.Participant)
	if err != nil {
		return "", nil, err
	}
	if len(conds) == 0 {
		return "", nil, fmt.Errorf("%w: empty gathering query", types.CoreInvalidArgument)
	}
	size, offset := page(q.Size, q.Offset)
	args = append(args, size, offset)
	return `SELECT blob FROM mm_gatherings WHERE ` + strings.Join(conds, " AND ") + ` ORDER BY gid LIMIT ? OFFSET ?`, args, nil
}

// Find implements matchmaking.Store.
func (m *Matchmaking) Find(ctx context.Context, q matchmaking.Query) ([]matchmaking.MatchmakeSession, error) {
	query, args, err := GatheringsQuery(q)
	if err != nil {
		return nil, err
	}
	var out []matchmaking.MatchmakeSession
	err = m.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var blob []byte
			if err := rows.Scan(&blob); err != nil {
				return closeRows(rows, err)
			}
			s, err := DecodeSession(blob)
			if err != nil {
				return closeRows(rows, err)
			}
			out = append(out, s)
		}
		return closeRows(rows, nil)
	})
	if err != nil {
		return nil, Failure(m.store, "matchmaking find", err)
	}
	return out, nil
}
