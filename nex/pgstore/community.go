package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/matchmaking"
)

// The communities' schema (matchmaking.CommunityStore, internal/sqlstore's), the same shape as
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

// nextGID takes the next gathering id from mm_gatherings' identity sequence
// (sqlstore.Dialect.NextGID), so communities and matchmake sessions never
// share an id.
func nextGID(ctx context.Context, tx sqlstore.Querier) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('mm_gatherings', 'gid'))`).Scan(&id)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "2200H" { // sequence_generator_limit_exceeded
		return 0, fmt.Errorf("gathering ids exhausted: %w", err)
	}
	return id, err
}
