package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// The communities (matchmaking.CommunityStore) live in mm_communities, with
// the columns the queries select on and the whole PersistentGathering in
// blob, and mm_community_members. Their ids come from mm_gatherings'
// sequence (Dialect.NextGID), so a community and a matchmake session never
// share one.

var _ matchmaking.CommunityStore = (*Matchmaking)(nil)

// EncodeCommunity is a community as stored in mm_communities.blob.
func EncodeCommunity(g *matchmaking.PersistentGathering) ([]byte, error) {
	w := types.NewWriter(nil, BlobSettings)
	g.Append(&w)
	return w.Bytes()
}

// DecodeCommunity reads a community EncodeCommunity stored.
func DecodeCommunity(b []byte) (matchmaking.PersistentGathering, error) {
	r := types.NewReader(b, BlobSettings)
	g := matchmaking.ReadPersistentGathering(&r, "PersistentGathering")
	if err := r.Done(); err != nil {
		return g, fmt.Errorf("stored community: %w", err)
	}
	g.ApplicationBuffer = append([]byte(nil), g.ApplicationBuffer...)
	return g, nil
}

const (
	// communitySessionsQuery reads the sessions of the communities
	// (sessionCounts); system_type is indexed.
	communitySessionsQuery = `SELECT blob FROM mm_gatherings WHERE system_type = ?`
	insertMember           = `INSERT INTO mm_community_members (gid, pid, message, joined) VALUES (?, ?, ?, ?)`
)

// loadCommunity reads community gid, with its row lock
// (Dialect.ForUpdate): joins and updates of one community take turns.
func (m *Matchmaking) loadCommunity(ctx context.Context, tx Querier, gid uint32) (matchmaking.PersistentGathering, error) {
	var blob []byte
	var count int64
	err := tx.QueryRow(ctx, `SELECT blob, count FROM mm_communities WHERE gid = ?`+m.d.ForUpdate, int64(gid)).Scan(&blob, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return matchmaking.PersistentGathering{}, fmt.Errorf("%w: community %d", matchmaking.ResultSessionVoid, gid)
	} else if err != nil {
		return matchmaking.PersistentGathering{}, err
	}
	g, err := DecodeCommunity(blob)
	g.ParticipationCount = uint32(count)
	return g, err
}

// withSessionCount runs execs and then reads the community sessions, in one
// round trip where the driver pipelines, and returns g with its
// MatchmakeSessionCount.
func withSessionCount(ctx context.Context, tx Querier, g matchmaking.PersistentGathering, execs ...Stmt) (matchmaking.PersistentGathering, error) {
	rows, err := tx.Batch(ctx, execs, communitySessionsQuery, int64(matchmaking.CommunitySystemType))
	if err != nil {
		return g, err
	}
	gs := []matchmaking.PersistentGathering{g}
	err = countSessions(rows, gs)
	return gs[0], err
}

// countSessions reads the rows of communitySessionsQuery, closes them and
// fills in the MatchmakeSessionCount of the communities in gs: a community's
// sessions have system type matchmaking.CommunitySystemType and the
// community in Attributes[1]. It decodes every session of that system type:
// fine for thousands of community sessions.
func countSessions(rows Rows, gs []matchmaking.PersistentGathering) error {
	counts := map[uint32]uint32{}
	var blob []byte
	for rows.Next() {
		if err := rows.Scan(&blob); err != nil {
			return closeRows(rows, err)
		}
		s, err := DecodeSession(blob)
		if err != nil {
			return closeRows(rows, err)
		}
		if len(s.Attributes) > 1 {
			counts[s.Attributes[1]]++
		}
	}
	if err := closeRows(rows, nil); err != nil {
		return err
	}
	for i := range gs {
		gs[i].MatchmakeSessionCount = counts[gs[i].ID]
	}
	return nil
}

// CreateCommunity implements matchmaking.CommunityStore.
func (m *Matchmaking) CreateCommunity(ctx context.Context, g matchmaking.PersistentGathering, p matchmaking.Participant, official bool) (out matchmaking.PersistentGathering, err error) {
	if err := matchmaking.ValidateCommunity(&g); err != nil {
		return g, err
	}
	err = m.write(ctx, "matchmaking create community", func(ctx context.Context, tx Querier) error {
		if err := m.checkCommunities(ctx, tx, p.PID); err != nil {
			return err
		}
		id, err := m.d.NextGID(ctx, tx)
		if err != nil {
			return err
		}
		if id <= 0 || id > math.MaxUint32 {
			return fmt.Errorf("gathering ids exhausted (%d)", id)
		}
		c := g
		c.ID, c.Owner, c.Host = uint32(id), p.PID, p.PID
		c.ParticipationCount, c.MatchmakeSessionCount = 1, 0
		c.ApplicationBuffer = append([]byte(nil), g.ApplicationBuffer...)
		blob, err := EncodeCommunity(&c)
		if err != nil {
			return err
		}
		now := time.Now()
		// The member's insert returns a row so that the two go in one round
		// trip (Batch); reading it to the end runs it.
		rows, err := tx.Batch(ctx, []Stmt{{`INSERT INTO mm_communities (gid, owner, official, max_p, count, start_date, end_date, blob, created)
			VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)`, []any{id, int64(p.PID), official, int32(c.MaxParticipants),
			int64(c.ParticipationStartDate), int64(c.ParticipationEndDate), blob, now.Unix()}}},
			insertMember+` RETURNING gid`, id, int64(p.PID), p.Message, now.UnixNano())
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		if err := closeRows(rows, nil); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// UpdateCommunity implements matchmaking.CommunityStore. The update is
// validated as a new community is; the maximum may not go below the members.
func (m *Matchmaking) UpdateCommunity(ctx context.Context, gid uint32, f func(g *matchmaking.PersistentGathering) error) (out matchmaking.PersistentGathering, err error) {
	err = m.write(ctx, "matchmaking update community", func(ctx context.Context, tx Querier) error {
		g, err := m.loadCommunity(ctx, tx, gid)
		if err != nil {
			return err
		}
		id, owner, host, count := g.ID, g.Owner, g.Host, g.ParticipationCount
		if err := f(&g); err != nil {
			return err
		}
		g.ID, g.Owner, g.Host, g.ParticipationCount = id, owner, host, count
		if err := matchmaking.ValidateCommunity(&g); err != nil {
			return err
		}
		if uint32(g.MaxParticipants) < count {
			return fmt.Errorf("%w: community %d has %d members, maximum %d asked", types.CoreInvalidArgument, gid, count, g.MaxParticipants)
		}
		blob, err := EncodeCommunity(&g)
		if err != nil {
			return err
		}
		out, err = withSessionCount(ctx, tx, g, Stmt{`UPDATE mm_communities SET owner = ?, max_p = ?, count = ?, start_date = ?, end_date = ?, blob = ?
			WHERE gid = ?`, []any{int64(g.Owner), int32(g.MaxParticipants), int64(g.ParticipationCount), int64(g.ParticipationStartDate),
			int64(g.ParticipationEndDate), blob, int64(g.ID)}})
		return err
	})
	return out, err
}

// JoinCommunity implements matchmaking.CommunityStore. The community's row
// lock (or the database's write lock) makes concurrent joins take turns, so
// none over-fills it.
func (m *Matchmaking) JoinCommunity(ctx context.Context, gid uint32, p matchmaking.Participant, password string, now types.DateTime) (out matchmaking.PersistentGathering, err error) {
	err = m.write(ctx, "matchmaking join community", func(ctx context.Context, tx Querier) error {
		g, err := m.loadCommunity(ctx, tx, gid)
		if err != nil {
			return err
		}
		var member bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mm_community_members WHERE gid = ? AND pid = ?)`,
			int64(gid), int64(p.PID)).Scan(&member); err != nil {
			return err
		}
		switch {
		case member:
			return fmt.Errorf("%w: PID %d in community %d", matchmaking.ResultAlreadyParticipatedGathering, p.PID, gid)
		case g.Password != "" && password != g.Password:
			return fmt.Errorf("%w: community %d", matchmaking.ResultInvalidGatheringPassword, gid)
		case !g.Open(now):
			return fmt.Errorf("%w: community %d takes participants from %v to %v", matchmaking.ResultSessionClosed, gid, g.ParticipationStartDate, g.ParticipationEndDate)
		case g.ParticipationCount >= uint32(g.MaxParticipants):
			return fmt.Errorf("%w: community %d has %d of %d members", matchmaking.ResultSessionFull, gid, g.ParticipationCount, g.MaxParticipants)
		}
		g.ParticipationCount++
		out, err = withSessionCount(ctx, tx, g,
			Stmt{insertMember, []any{int64(gid), int64(p.PID), p.Message, time.Now().UnixNano()}},
			Stmt{`UPDATE mm_communities SET count = count + 1 WHERE gid = ?`, []any{int64(gid)}})
		return err
	})
	return out, err
}

// page is a query's page size (at most matchmaking.MaxBrowseResults, which 0
// also means) and offset (0xFFFFFFFF means 0).
func page(size, offset uint32) (int64, int64) {
	if size == 0 || size > matchmaking.MaxBrowseResults {
		size = matchmaking.MaxBrowseResults
	}
	if offset == 0xFFFFFFFF {
		offset = 0
	}
	return int64(size), int64(offset)
}

// CommunityQuery is FindCommunities' statement for q, its page included.
func CommunityQuery(d Dialect, q matchmaking.CommunityQuery) (string, []any, error) {
	where, args, err := findConds("c.", "mm_community_members", q.GIDs, q.Owner, q.Participant)
	if err != nil {
		return "", nil, err
	}
	if q.Official {
		where = append(where, "c."+d.Official)
	}
	if len(where) == 0 {
		return "", nil, fmt.Errorf("%w: empty community query", types.CoreInvalidArgument)
	}
	if q.Available {
		where = append(where, "c.start_date <= ?", "(c.end_date = 0 OR c.end_date >= ?)", "c.count < c.max_p")
		args = append(args, int64(q.Now), int64(q.Now))
	}
	size, offset := page(q.Size, q.Offset)
	args = append(args, size, offset)
	return `SELECT c.blob, c.count FROM mm_communities c WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY c.gid LIMIT ? OFFSET ?`, args, nil
}

// FindCommunities implements matchmaking.CommunityStore.
func (m *Matchmaking) FindCommunities(ctx context.Context, q matchmaking.CommunityQuery) ([]matchmaking.PersistentGathering, error) {
	query, args, err := CommunityQuery(m.d, q)
	if err != nil {
		return nil, err
	}
	var out []matchmaking.PersistentGathering
	err = m.db.Do(ctx, func(ctx context.Context, q Querier) error {
		rows, err := q.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		var blob []byte
		var count int64
		for rows.Next() {
			if err := rows.Scan(&blob, &count); err != nil {
				return closeRows(rows, err)
			}
			g, err := DecodeCommunity(blob)
			if err != nil {
				return closeRows(rows, err)
			}
			g.ParticipationCount = uint32(count)
			out = append(out, g)
		}
		if err := closeRows(rows, nil); err != nil || len(out) == 0 {
			return err
		}
		if rows, err = q.Query(ctx, communitySessionsQuery, int64(matchmaking.CommunitySystemType)); err != nil {
			return err
		}
		return countSessions(rows, out)
	})
	if err != nil {
		return nil, Failure(m.store, "matchmaking find communities", err)
	}
	return out, nil
}
