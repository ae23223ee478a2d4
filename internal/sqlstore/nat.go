package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/types"
)

// NAT-aware matchmaking (matchmaking.NATStore): mm_nat keeps, per PID, the NAT
// mapping and filtering the player last reported through NAT Traversal and the
// secure node and connection that reported it (Disconnect and ResetNode
// delete the rows of the connections they end), so every node sharing the
// database judges the players of the others too.

var _ matchmaking.NATStore = (*Matchmaking)(nil)

const natColumns = `pid, node, conn, mapping, filtering, rtt, successes, failures`

// SetNAT implements matchmaking.NATStore.
func (m *Matchmaking) SetNAT(ctx context.Context, r matchmaking.NATRecord) error {
	return m.write(ctx, "matchmaking NAT report", func(ctx context.Context, tx Querier) error {
		_, err := tx.Exec(ctx, `INSERT INTO mm_nat (`+natColumns+`) VALUES (?, ?, ?, ?, ?, ?, 0, 0)
			ON CONFLICT (pid) DO UPDATE SET node = excluded.node, conn = excluded.conn, mapping = excluded.mapping,
			filtering = excluded.filtering, rtt = excluded.rtt`,
			int64(r.PID), r.Node, int64(r.Conn), int64(r.Mapping), int64(r.Filtering), int64(r.RTT))
		return err
	})
}

// AddNATResult implements matchmaking.NATStore.
func (m *Matchmaking) AddNATResult(ctx context.Context, r matchmaking.NATRecord, success bool) error {
	var ok, failed int64 = 1, 0
	if !success {
		ok, failed = 0, 1
	}
	return m.write(ctx, "matchmaking NAT traversal result", func(ctx context.Context, tx Querier) error {
		_, err := tx.Exec(ctx, `INSERT INTO mm_nat (`+natColumns+`) VALUES (?, ?, ?, 0, 0, 0, ?, ?)
			ON CONFLICT (pid) DO UPDATE SET node = excluded.node, conn = excluded.conn,
			successes = mm_nat.successes + excluded.successes, failures = mm_nat.failures + excluded.failures`,
			int64(r.PID), r.Node, int64(r.Conn), ok, failed)
		return err
	})
}

// NAT implements matchmaking.NATStore.
func (m *Matchmaking) NAT(ctx context.Context, pid types.PID) (r matchmaking.NATRecord, ok bool, err error) {
	err = m.db.Do(ctx, func(ctx context.Context, q Querier) error {
		var p, conn, mapping, filtering, rtt, succ, fail int64
		err := q.QueryRow(ctx, `SELECT `+natColumns+` FROM mm_nat WHERE pid = ?`, int64(pid)).
			Scan(&p, &r.Node, &conn, &mapping, &filtering, &rtt, &succ, &fail)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		ok = true
		r.PID, r.Conn = types.PID(p), uint64(conn)
		r.Mapping, r.Filtering, r.RTT = uint32(mapping), uint32(filtering), uint32(rtt)
		r.Successes, r.Failures = uint32(succ), uint32(fail)
		return nil
	})
	return r, ok, Failure(m.store, "matchmaking NAT record", err)
}

// AutoMatchmakeNAT implements matchmaking.NATStore.
func (m *Matchmaking) AutoMatchmakeNAT(ctx context.Context, criteria []matchmaking.SearchCriteria, s matchmaking.MatchmakeSession, p matchmaking.Participant, o matchmaking.NATOrder) (matchmaking.Change, bool, matchmaking.NATChoice, error) {
	return m.autoMatchmake(ctx, criteria, s, p, o)
}

// RankNAT implements matchmaking.NATStore.
func (m *Matchmaking) RankNAT(ctx context.Context, pid types.PID, gids []uint32, o matchmaking.NATOrder) ([]uint32, error) {
	if o.Policy == matchmaking.NATOff || len(gids) == 0 {
		return gids, nil
	}
	if len(gids) > matchmaking.MaxBrowseResults {
		return nil, fmt.Errorf("%w: %d gathering ids to rank, at most %d", types.CoreInvalidArgument, len(gids), matchmaking.MaxBrowseResults)
	}
	var out []uint32
	err := m.db.Snapshot(ctx, func(ctx context.Context, q Querier) error {
		args := make([]any, 0, padded(len(gids)))
		for _, gid := range gids {
			args = append(args, int64(gid))
		}
		in, args := padIn(args)
		rows, err := q.Query(ctx, `SELECT gid, owner FROM mm_gatherings WHERE gid IN (`+in+`)`, args...)
		if err != nil {
			return err
		}
		owner := make(map[uint32]types.PID, len(gids))
		for rows.Next() {
			var gid, pid int64
			if err := rows.Scan(&gid, &pid); err != nil {
				return closeRows(rows, err)
			}
			owner[uint32(gid)] = types.PID(pid)
		}
		if err := closeRows(rows, nil); err != nil {
			return err
		}
		owners := make([]types.PID, len(gids))
		for i, gid := range gids {
			owners[i] = owner[gid] // 0 (no record: unknown) when it does not exist
		}
		props, err := natProperties(ctx, q, []types.PID{pid})
		if err != nil {
			return err
		}
		reach, err := reachOf(ctx, q, props[pid], gids, owners, o.AllParticipants)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, i := range natRank(reach) {
			if o.Policy != matchmaking.NATStrict || reach[i] != nattraversal.Unreachable {
				out = append(out, gids[i])
			}
		}
		return nil
	})
	return out, Failure(m.store, "matchmaking NAT rank", err)
}

// natCandidate chooses, among the first NATWindow sessions the search selects
// that take the joiner (in the usual order), the first of the best
// reachability from joiner by o, locked (Dialect.ForUpdate); NATStrict passes
// over the unreachable ones. nil when none is left.
func (m *Matchmaking) natCandidate(ctx context.Context, tx Querier, search Search, cs []matchmaking.Criteria, joining int, joiner types.PID, o matchmaking.NATOrder) (*row, matchmaking.NATChoice, error) {
	var choice matchmaking.NATChoice
	props, err := natProperties(ctx, tx, []types.PID{joiner})
	if err != nil {
		return nil, choice, err
	}
	me := props[joiner]
	if nattraversal.Reach(me, nattraversal.Properties{}) == nattraversal.Reachable {
		// The joiner's NAT reaches every station: the usual first is as
		// good as any, and nothing past it need be read.
		found, err := m.firstCandidate(ctx, tx, search, cs, joining)
		return found, choice, err // choice.Reach: Reachable
	}
	var window []row
	err = m.scanCandidates(ctx, tx, search, func(r row) (bool, error) {
		if matchAny(cs, &r, joining) {
			window = append(window, r)
		}
		return len(window) < matchmaking.NATWindow, nil
	})
	if err != nil || len(window) == 0 {
		return nil, choice, err
	}
	gids, owners := make([]uint32, len(window)), make([]types.PID, len(window))
	for i := range window {
		gids[i], owners[i] = window[i].s.ID, window[i].s.Owner
	}
	reach, err := reachOf(ctx, tx, me, gids, owners, o.AllParticipants)
	if err != nil {
		return nil, choice, err
	}
	for _, i := range natRank(reach) {
		if o.Policy == matchmaking.NATStrict && reach[i] == nattraversal.Unreachable {
			choice.Refused++
			continue
		}
		locked, ok, err := m.relock(ctx, tx, window[i], cs, joining)
		if err != nil {
			return nil, choice, err
		}
		if ok {
			choice.Reach, choice.Passed = reach[i], i
			return &locked, choice, nil
		}
	}
	return nil, choice, nil
}

// natRank returns the indexes of reach, best reachability first, in their
// order within each.
func natRank(reach []nattraversal.Reachability) []int {
	idx := make([]int, len(reach))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return int(reach[a]) - int(reach[b]) })
	return idx
}

// reachOf judges each gathering gids[i] from a joiner with properties me: by
// its owner owners[i], or, with all, by the worst of its participants.
// Players without a record count as unknown.
func reachOf(ctx context.Context, q Querier, me nattraversal.Properties, gids []uint32, owners []types.PID, all bool) ([]nattraversal.Reachability, error) {
	out := make([]nattraversal.Reachability, len(gids))
	if !all {
		props, err := natProperties(ctx, q, owners)
		if err != nil {
			return nil, err
		}
		for i, o := range owners {
			out[i] = nattraversal.Reach(me, props[o])
		}
		return out, nil
	}
	// Every participant's properties, read by mm_participants' primary key.
	at := make(map[uint32]int, len(gids))
	args := make([]any, 0, padded(len(gids)))
	for i, gid := range gids {
		at[gid] = i
		args = append(args, int64(gid))
	}
	in, args := padIn(args)
	rows, err := q.Query(ctx, `SELECT p.gid, COALESCE(n.mapping, 0), COALESCE(n.filtering, 0) FROM mm_participants p
		LEFT JOIN mm_nat n ON n.pid = p.pid WHERE p.gid IN (`+in+`)`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var gid, mapping, filtering int64
		if err := rows.Scan(&gid, &mapping, &filtering); err != nil {
			return nil, closeRows(rows, err)
		}
		i, ok := at[uint32(gid)]
		if !ok {
			continue
		}
		r := nattraversal.Reach(me, nattraversal.Properties{Mapping: uint32(mapping), Filtering: uint32(filtering)})
		out[i] = max(out[i], r)
	}
	return out, closeRows(rows, nil)
}

// natProperties reads the properties of pids (absent: none reported).
func natProperties(ctx context.Context, q Querier, pids []types.PID) (map[types.PID]nattraversal.Properties, error) {
	args := make([]any, 0, padded(len(pids)))
	for _, p := range pids {
		args = append(args, int64(p))
	}
	in, args := padIn(args)
	rows, err := q.Query(ctx, `SELECT pid, mapping, filtering, rtt FROM mm_nat WHERE pid IN (`+in+`)`, args...)
	if err != nil {
		return nil, err
	}
	out := make(map[types.PID]nattraversal.Properties, len(pids))
	for rows.Next() {
		var pid, mapping, filtering, rtt int64
		if err := rows.Scan(&pid, &mapping, &filtering, &rtt); err != nil {
			return nil, closeRows(rows, err)
		}
		out[types.PID(pid)] = nattraversal.Properties{Mapping: uint32(mapping), Filtering: uint32(filtering), RTT: uint32(rtt)}
	}
	return out, closeRows(rows, nil)
}

// padded is n rounded up to a power of two (at least 4).
func padded(n int) int {
	p := 4
	for p < n {
		p *= 2
	}
	return p
}

// padIn pads the values of an IN list to a power of two by repeating the last
// (the same set), so the statements take a few shapes only and the SQLite
// store's prepared statement cache keeps them; it returns the placeholders.
func padIn(args []any) (string, []any) {
	for len(args) < padded(len(args)) {
		args = append(args, args[len(args)-1])
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(args)), ", "), args
}
