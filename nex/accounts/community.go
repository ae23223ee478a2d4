package accounts

import (
	"context"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/matchmaking"
)

// The communities' schema (matchmaking.CommunityStore, internal/sqlstore's): communities with the
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

// nextGID takes the next gathering id from mm_gatherings' AUTOINCREMENT
// sequence (sqlstore.Dialect.NextGID), so communities and matchmake sessions
// never share an id.
func nextGID(ctx context.Context, tx sqlstore.Querier) (int64, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO sqlite_sequence (name, seq) SELECT 'mm_gatherings', 0
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'mm_gatherings')`); err != nil {
		return 0, err
	}
	var id int64
	err := tx.QueryRow(ctx, `UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(gid), 0) FROM mm_gatherings)) + 1
		WHERE name = 'mm_gatherings' RETURNING seq`).Scan(&id)
	return id, err
}
