package sqlstore

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/types"
)

// SetQuota sets the per-player limits the create paths check (its
// Gatherings and Communities; the zero Quota, the default, limits nothing).
// Call it before the store is used.
func (m *Matchmaking) SetQuota(q quota.Quota) { m.quota = q }

// checkOwned refuses a creation when owner already owns limit rows of table
// (mm_gatherings, mm_communities; through their owner index), inside the
// creating transaction: exact where writers take turns (SQLite); on
// PostgreSQL one player's creations in flight at once may each see the
// last place free.
func checkOwned(ctx context.Context, tx Querier, table string, owner types.PID, limit int, refuse types.Result) error {
	if limit <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE owner = ?`, int64(owner)).Scan(&n); err != nil {
		return err
	}
	if n >= limit {
		return fmt.Errorf("%w: PID %d owns %d (quota %d)", refuse, owner, n, limit)
	}
	return nil
}

func (m *Matchmaking) checkGatherings(ctx context.Context, tx Querier, owner types.PID) error {
	return checkOwned(ctx, tx, "mm_gatherings", owner, m.quota.Gatherings, quota.ResultLimitExceeded)
}

func (m *Matchmaking) checkCommunities(ctx context.Context, tx Querier, owner types.PID) error {
	return checkOwned(ctx, tx, "mm_communities", owner, m.quota.Communities, quota.ResultPersistentGatheringCreationMax)
}
