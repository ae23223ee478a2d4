package pgstore

import "github.com/gamewire/gamewire/internal/sqlstore"

// The subscription component: Subscription's player data, targets and
// privacy levels (nex/subscription), the same tables on SQLite and
// PostgreSQL (sqlstore.SubscriptionSchemaV1).
func init() { registerSchema("subscription", sqlstore.SubscriptionSchemaV1) }

// Subscriptions returns the Subscription store (nex/subscription.Store) on
// s's database.
func (s *Store) Subscriptions() *sqlstore.Subscriptions {
	return sqlstore.NewSubscriptions("pgstore", pgDB{s.pool})
}
