package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// The communities' schema (matchmaking.CommunityStore): communities with the
// columns the queries select on and the whole PersistentGathering in blob,
// their members, and an index on the sessions' system type for counting a
// community's sessions. The component sorts after "matchmaking", whose
// mm_gatherings it indexes. Every query path has its index: gid (primary key),
// owner, official, the members' pid, and the sessions' system type.
func init() { registerSchema("matchmaking_community", communityV1) }

const communityV1 = `
CREATE TABLE mm_communities (
	gid        INTEGER PRIMARY KEY,
	owner      INTEGER NOT NULL,
	official   INTEGER NOT NULL,
	max_p      INTEGER NOT NULL,
	count      INTEGER NOT NULL,
	start_date INTEGER NOT NULL,
	end_date   INTEGER NOT NULL,
	blob       BLOB NOT NULL,
	created    INTEGER NOT NULL
);
CREATE INDEX mm_communities_owner ON mm_communities (owner, gid);
CREATE INDEX mm_communities_official ON mm_communities (gid) WHERE official = 1;
CREATE TABLE mm_community_members (
	gid     INTEGER NOT NULL,
	pid     INTEGER NOT NULL,
	message TEXT NOT NULL,
	joined  INTEGER NOT NULL,
	PRIMARY KEY (gid, pid)
) WITHOUT ROWID;
CREATE INDEX mm_community_members_pid ON mm_community_members (pid, gid);
CREATE INDEX mm_gatherings_system_type ON mm_gatherings (system_type);
`

var _ matchmaking.CommunityStore = (*MatchmakeStore)(nil)

func encodeCommunity(g *matchmaking.PersistentGathering) ([]byte, error) {
	w := types.NewWriter(nil, sqlstore.BlobSettings)
	g.Append(&w)
	return w.Bytes()
}

func decodeCommunity(b []byte) (matchmaking.PersistentGathering, error) {
	r := types.NewReader(b, sqlstore.BlobSettings)
	g := matchmaking.ReadPersistentGathering(&r, "PersistentGathering")
	if err := r.Done(); err != nil {
		return g, fmt.Errorf("stored community: %w", err)
	}
	g.ApplicationBuffer = append([]byte(nil), g.ApplicationBuffer...)
	return g, nil
}

// nextGID takes the next gathering id from mm_gatherings' AUTOINCREMENT
// sequence, so communities and matchmake sessions never share an id.
func nextGID(ctx context.Context, tx dbtx) (uint32, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) SELECT 'mm_gatherings', 0
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'mm_gatherings')`); err != nil {
		return 0, err
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(gid), 0) FROM mm_gatherings)) + 1
		WHERE name = 'mm_gatherings' RETURNING seq`).Scan(&id); err != nil {
		return 0, err
	}
	if id <= 0 || id > 0xFFFFFFFF {
		return 0, fmt.Errorf("gathering ids exhausted (%d)", id)
	}
	return uint32(id), nil
}

func loadCommunity(ctx context.Context, q querier, gid uint32) (matchmaking.PersistentGathering, error) {
	var blob []byte
	var count int64
	err := q.QueryRowContext(ctx, `SELECT blob, count FROM mm_communities WHERE gid = ?`, int64(gid)).Scan(&blob, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return matchmaking.PersistentGathering{}, fmt.Errorf("%w: community %d", matchmaking.ResultSessionVoid, gid)
	} else if err != nil {
		return matchmaking.PersistentGathering{}, err
	}
	g, err := decodeCommunity(blob)
	g.ParticipationCount = uint32(count)
	return g, err
}

func saveCommunity(ctx context.Context, tx dbtx, g *matchmaking.PersistentGathering) error {
	blob, err := encodeCommunity(g)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE mm_communities SET owner = ?, max_p = ?, count = ?, start_date = ?, end_date = ?, blob = ?
		WHERE gid = ?`, int64(g.Owner), g.MaxParticipants, g.ParticipationCount, int64(g.ParticipationStartDate),
		int64(g.ParticipationEndDate), blob, int64(g.ID))
	return err
}

// sessionCounts counts the open matchmake sessions of the communities in gs
// (system type matchmaking.CommunitySystemType, Attributes[1] the community)
// and fills in their MatchmakeSessionCount.
func sessionCounts(ctx context.Context, q querier, gs []matchmaking.PersistentGathering) error {
	if len(gs) == 0 {
		return nil
	}
	rows, err := q.QueryContext(ctx, `SELECT blob FROM mm_gatherings WHERE system_type = ?`, matchmaking.CommunitySystemType)
	if err != nil {
		return err
	}
	defer rows.Close()
	counts := map[uint32]uint32{}
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			return err
		}
		s, err := sqlstore.DecodeSession(blob)
		if err != nil {
			return err
		}
		if len(s.Attributes) > 1 {
			counts[s.Attributes[1]]++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range gs {
		gs[i].MatchmakeSessionCount = counts[gs[i].ID]
	}
	return nil
}

// CreateCommunity implements matchmaking.CommunityStore.
func (m *MatchmakeStore) CreateCommunity(ctx context.Context, g matchmaking.PersistentGathering, p matchmaking.Participant, official bool) (out matchmaking.PersistentGathering, err error) {
	if err := matchmaking.ValidateCommunity(&g); err != nil {
		return g, err
	}
	err = m.tx(ctx, "create community", func(tx dbtx) error {
		gid, err := nextGID(ctx, tx)
		if err != nil {
			return err
		}
		g.ID, g.Owner, g.Host = gid, p.PID, p.PID
		g.ParticipationCount, g.MatchmakeSessionCount = 1, 0
		g.ApplicationBuffer = append([]byte(nil), g.ApplicationBuffer...)
		if _, err := tx.ExecContext(ctx, `INSERT INTO mm_communities (gid, owner, official, max_p, count, start_date, end_date, blob, created)
			VALUES (?, ?, ?, 0, 0, 0, 0, x'', ?)`, int64(gid), int64(p.PID), official, time.Now().Unix()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO mm_community_members (gid, pid, message, joined) VALUES (?, ?, ?, ?)`,
			int64(gid), int64(p.PID), p.Message, time.Now().UnixNano()); err != nil {
			return err
		}
		out = g
		return saveCommunity(ctx, tx, &g)
	})
	return out, err
}

// UpdateCommunity implements matchmaking.CommunityStore. The update is
// validated as a new community is; the maximum may not go below the members.
func (m *MatchmakeStore) UpdateCommunity(ctx context.Context, gid uint32, f func(g *matchmaking.PersistentGathering) error) (out matchmaking.PersistentGathering, err error) {
	err = m.tx(ctx, "update community", func(tx dbtx) error {
		g, err := loadCommunity(ctx, tx, gid)
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
		if err := saveCommunity(ctx, tx, &g); err != nil {
			return err
		}
		gs := []matchmaking.PersistentGathering{g}
		err = sessionCounts(ctx, tx, gs)
		out = gs[0]
		return err
	})
	return out, err
}

// JoinCommunity implements matchmaking.CommunityStore.
func (m *MatchmakeStore) JoinCommunity(ctx context.Context, gid uint32, p matchmaking.Participant, password string, now types.DateTime) (out matchmaking.PersistentGathering, err error) {
	err = m.tx(ctx, "join community", func(tx dbtx) error {
		g, err := loadCommunity(ctx, tx, gid)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mm_community_members WHERE gid = ? AND pid = ?`, int64(gid), int64(p.PID)).Scan(&n); err != nil {
			return err
		}
		switch {
		case n > 0:
			return fmt.Errorf("%w: PID %d in community %d", matchmaking.ResultAlreadyParticipatedGathering, p.PID, gid)
		case g.Password != "" && password != g.Password:
			return fmt.Errorf("%w: community %d", matchmaking.ResultInvalidGatheringPassword, gid)
		case !g.Open(now):
			return fmt.Errorf("%w: community %d takes participants from %v to %v", matchmaking.ResultSessionClosed, gid, g.ParticipationStartDate, g.ParticipationEndDate)
		case g.ParticipationCount >= uint32(g.MaxParticipants):
			return fmt.Errorf("%w: community %d has %d of %d members", matchmaking.ResultSessionFull, gid, g.ParticipationCount, g.MaxParticipants)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO mm_community_members (gid, pid, message, joined) VALUES (?, ?, ?, ?)`,
			int64(gid), int64(p.PID), p.Message, time.Now().UnixNano()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mm_communities SET count = count + 1 WHERE gid = ?`, int64(gid)); err != nil {
			return err
		}
		g.ParticipationCount++
		gs := []matchmaking.PersistentGathering{g}
		err = sessionCounts(ctx, tx, gs)
		out = gs[0]
		return err
	})
	return out, err
}

// FindCommunities implements matchmaking.CommunityStore.
func (m *MatchmakeStore) FindCommunities(ctx context.Context, q matchmaking.CommunityQuery) ([]matchmaking.PersistentGathering, error) {
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
		where = append(where, "c.gid IN (?"+strings.Repeat(", ?", len(q.GIDs)-1)+")")
		for _, g := range q.GIDs {
			args = append(args, int64(g))
		}
	}
	if q.Owner != 0 {
		where, args = append(where, "c.owner = ?"), append(args, int64(q.Owner))
	}
	if q.Participant != 0 {
		where, args = append(where, "c.gid IN (SELECT gid FROM mm_community_members WHERE pid = ?)"), append(args, int64(q.Participant))
	}
	if q.Official {
		where = append(where, "c.official = 1")
	}
	if len(where) == 0 {
		return nil, fmt.Errorf("%w: empty community query", types.CoreInvalidArgument)
	}
	if q.Available {
		where = append(where, "c.start_date <= ?", "(c.end_date = 0 OR c.end_date >= ?)", "c.count < c.max_p")
		args = append(args, int64(q.Now), int64(q.Now))
	}
	args = append(args, size, offset)
	ctx, cancel := m.timeout(ctx)
	defer cancel()
	rd := m.reader()
	rows, err := rd.QueryContext(ctx, `SELECT c.blob, c.count FROM mm_communities c WHERE `+strings.Join(where, " AND ")+
		` ORDER BY c.gid LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("accounts: find communities: %w", err)
	}
	var out []matchmaking.PersistentGathering
	for rows.Next() {
		var blob []byte
		var count int64
		if err := rows.Scan(&blob, &count); err != nil {
			rows.Close()
			return nil, fmt.Errorf("accounts: find communities: %w", err)
		}
		g, err := decodeCommunity(blob)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("accounts: find communities: %w", err)
		}
		g.ParticipationCount = uint32(count)
		out = append(out, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: find communities: %w", err)
	}
	if err := sessionCounts(ctx, rd, out); err != nil {
		return nil, fmt.Errorf("accounts: find communities: %w", err)
	}
	return out, nil
}
