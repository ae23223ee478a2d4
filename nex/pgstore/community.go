package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

// The communities' schema (matchmaking.CommunityStore), the same shape as
// nex/accounts' SQLite one: communities with the columns the queries select
// on and the whole PersistentGathering in blob, their members, and an index on
// the sessions' system type for counting a community's sessions. The component
// sorts after "matchmaking", whose mm_gatherings it indexes; it only adds
// tables and an index, so a database from before it migrates in place. Every
// query path has its index: gid (primary key), owner, official, the members'
// pid, and the sessions' system type (TestQueryPlans).
func init() { registerSchema("matchmaking_community", communityV1) }

const communityV1 = `
CREATE TABLE mm_communities (
	gid        BIGINT PRIMARY KEY,
	owner      BIGINT NOT NULL,
	official   BOOLEAN NOT NULL,
	max_p      INTEGER NOT NULL,
	count      INTEGER NOT NULL,
	start_date BIGINT NOT NULL,
	end_date   BIGINT NOT NULL,
	blob       BYTEA NOT NULL,
	created    BIGINT NOT NULL
);
CREATE INDEX mm_communities_owner ON mm_communities (owner, gid);
CREATE INDEX mm_communities_official ON mm_communities (gid) WHERE official;
CREATE TABLE mm_community_members (
	gid     BIGINT NOT NULL,
	pid     BIGINT NOT NULL,
	message TEXT NOT NULL,
	joined  BIGINT NOT NULL,
	PRIMARY KEY (gid, pid)
);
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

// nextGID takes the next gathering id from mm_gatherings' identity sequence,
// so communities and matchmake sessions never share an id.
func nextGID(ctx context.Context, tx pgx.Tx) (uint32, error) {
	var id int64
	err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('mm_gatherings', 'gid'))`).Scan(&id)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "2200H" { // sequence_generator_limit_exceeded
			return 0, fmt.Errorf("gathering ids exhausted: %w", err)
		}
		return 0, err
	}
	if id <= 0 || id > math.MaxUint32 {
		return 0, fmt.Errorf("gathering ids exhausted (%d)", id)
	}
	return uint32(id), nil
}

// loadCommunity reads community gid and locks its row until the transaction
// ends (joins and updates of one community take turns).
func loadCommunity(ctx context.Context, tx pgx.Tx, gid uint32) (matchmaking.PersistentGathering, error) {
	var blob []byte
	var count int32
	err := tx.QueryRow(ctx, `SELECT blob, count FROM mm_communities WHERE gid = $1 FOR UPDATE`, int64(gid)).Scan(&blob, &count)
	if errors.Is(err, pgx.ErrNoRows) {
		return matchmaking.PersistentGathering{}, fmt.Errorf("%w: community %d", matchmaking.ResultSessionVoid, gid)
	} else if err != nil {
		return matchmaking.PersistentGathering{}, err
	}
	g, err := decodeCommunity(blob)
	g.ParticipationCount = uint32(count)
	return g, err
}

func saveCommunity(ctx context.Context, tx pgx.Tx, g *matchmaking.PersistentGathering) error {
	blob, err := encodeCommunity(g)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE mm_communities SET owner = $1, max_p = $2, count = $3, start_date = $4, end_date = $5, blob = $6
		WHERE gid = $7`, int64(g.Owner), int32(g.MaxParticipants), int32(g.ParticipationCount), int64(g.ParticipationStartDate),
		int64(g.ParticipationEndDate), blob, int64(g.ID))
	return err
}

// sessionCounts counts the matchmake sessions of the communities in gs
// (system type matchmaking.CommunitySystemType, Attributes[1] the community)
// and fills in their MatchmakeSessionCount. It decodes every session of that
// system type (indexed): fine for thousands of community sessions.
func sessionCounts(ctx context.Context, q querier, gs []matchmaking.PersistentGathering) error {
	if len(gs) == 0 {
		return nil
	}
	rows, err := q.Query(ctx, `SELECT blob FROM mm_gatherings WHERE system_type = $1`, int64(matchmaking.CommunitySystemType))
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

// withSessionCount returns g with its MatchmakeSessionCount filled in.
func withSessionCount(ctx context.Context, tx pgx.Tx, g matchmaking.PersistentGathering) (matchmaking.PersistentGathering, error) {
	gs := []matchmaking.PersistentGathering{g}
	err := sessionCounts(ctx, tx, gs)
	return gs[0], err
}

// CreateCommunity implements matchmaking.CommunityStore.
func (m *MatchmakeStore) CreateCommunity(ctx context.Context, g matchmaking.PersistentGathering, p matchmaking.Participant, official bool) (out matchmaking.PersistentGathering, err error) {
	if err := matchmaking.ValidateCommunity(&g); err != nil {
		return g, err
	}
	err = m.tx(ctx, "create community", func(tx pgx.Tx) error {
		gid, err := nextGID(ctx, tx)
		if err != nil {
			return err
		}
		c := g
		c.ID, c.Owner, c.Host = gid, p.PID, p.PID
		c.ParticipationCount, c.MatchmakeSessionCount = 1, 0
		c.ApplicationBuffer = append([]byte(nil), g.ApplicationBuffer...)
		blob, err := encodeCommunity(&c)
		if err != nil {
			return err
		}
		now := time.Now()
		var b pgx.Batch
		b.Queue(`INSERT INTO mm_communities (gid, owner, official, max_p, count, start_date, end_date, blob, created)
			VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8)`, int64(gid), int64(p.PID), official, int32(c.MaxParticipants),
			int64(c.ParticipationStartDate), int64(c.ParticipationEndDate), blob, now.Unix())
		b.Queue(`INSERT INTO mm_community_members (gid, pid, message, joined) VALUES ($1, $2, $3, $4)`,
			int64(gid), int64(p.PID), p.Message, now.UnixNano())
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// UpdateCommunity implements matchmaking.CommunityStore. The update is
// validated as a new community is; the maximum may not go below the members.
func (m *MatchmakeStore) UpdateCommunity(ctx context.Context, gid uint32, f func(g *matchmaking.PersistentGathering) error) (out matchmaking.PersistentGathering, err error) {
	err = m.tx(ctx, "update community", func(tx pgx.Tx) error {
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
		out, err = withSessionCount(ctx, tx, g)
		return err
	})
	return out, err
}

// JoinCommunity implements matchmaking.CommunityStore. The community's row
// lock makes concurrent joins take turns, so none over-fills it.
func (m *MatchmakeStore) JoinCommunity(ctx context.Context, gid uint32, p matchmaking.Participant, password string, now types.DateTime) (out matchmaking.PersistentGathering, err error) {
	err = m.tx(ctx, "join community", func(tx pgx.Tx) error {
		g, err := loadCommunity(ctx, tx, gid)
		if err != nil {
			return err
		}
		var member bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mm_community_members WHERE gid = $1 AND pid = $2)`,
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
		var b pgx.Batch
		b.Queue(`INSERT INTO mm_community_members (gid, pid, message, joined) VALUES ($1, $2, $3, $4)`,
			int64(gid), int64(p.PID), p.Message, time.Now().UnixNano())
		b.Queue(`UPDATE mm_communities SET count = count + 1 WHERE gid = $1`, int64(gid))
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		g.ParticipationCount++
		out, err = withSessionCount(ctx, tx, g)
		return err
	})
	return out, err
}

// communityQuery is FindCommunities' statement for q, its page included.
func communityQuery(q matchmaking.CommunityQuery) (string, []any, error) {
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
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if len(q.GIDs) > 0 {
		if len(q.GIDs) > matchmaking.MaxBrowseResults {
			return "", nil, fmt.Errorf("%w: %d gathering ids, at most %d", types.CoreInvalidArgument, len(q.GIDs), matchmaking.MaxBrowseResults)
		}
		ids := make([]int64, len(q.GIDs))
		for i, g := range q.GIDs {
			ids[i] = int64(g)
		}
		where = append(where, "c.gid = ANY("+arg(ids)+")")
	}
	if q.Owner != 0 {
		where = append(where, "c.owner = "+arg(int64(q.Owner)))
	}
	if q.Participant != 0 {
		where = append(where, "c.gid IN (SELECT gid FROM mm_community_members WHERE pid = "+arg(int64(q.Participant))+")")
	}
	if q.Official {
		where = append(where, "c.official")
	}
	if len(where) == 0 {
		return "", nil, fmt.Errorf("%w: empty community query", types.CoreInvalidArgument)
	}
	if q.Available {
		now := arg(int64(q.Now))
		where = append(where, "c.start_date <= "+now, "(c.end_date = 0 OR c.end_date >= "+now+")", "c.count < c.max_p")
	}
	query := `SELECT c.blob, c.count FROM mm_communities c WHERE ` + strings.Join(where, " AND ") + ` ORDER BY c.gid LIMIT ` +
		arg(int64(size)) + ` OFFSET ` + arg(int64(offset))
	return query, args, nil
}

// FindCommunities implements matchmaking.CommunityStore.
func (m *MatchmakeStore) FindCommunities(ctx context.Context, q matchmaking.CommunityQuery) ([]matchmaking.PersistentGathering, error) {
	query, args, err := communityQuery(q)
	if err != nil {
		return nil, err
	}
	var out []matchmaking.PersistentGathering
	err = m.tx(ctx, "find communities", func(tx pgx.Tx) error {
		out = out[:0]
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var blob []byte
			var count int32
			if err := rows.Scan(&blob, &count); err != nil {
				return err
			}
			g, err := decodeCommunity(blob)
			if err != nil {
				return err
			}
			g.ParticipationCount = uint32(count)
			out = append(out, g)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		return sessionCounts(ctx, tx, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
