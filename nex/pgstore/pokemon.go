package pgstore

import "github.com/gamewire/gamewire/internal/sqlstore"

// The components of Pokémon X/Y's and Omega Ruby/Alpha Sapphire's protocols.

// The subscription component: Subscription's player data, targets and
// privacy levels (nex/subscription), the same tables on SQLite and
// PostgreSQL (sqlstore.SubscriptionSchemaV1).
func init() { registerSchema("subscription", sqlstore.SubscriptionSchemaV1) }

// Subscriptions returns the Subscription store (nex/subscription.Store) on
// s's database.
func (s *Store) Subscriptions() *sqlstore.Subscriptions {
	return sqlstore.NewSubscriptions("pgstore", pgDB{s.pool})
}

// The rating component: Rating's session tokens (nex/rating), the same
// tables on SQLite and PostgreSQL (sqlstore.RatingSchemaV1).
func init() { registerSchema("rating", sqlstore.RatingSchemaV1) }

// Ratings returns the Rating store (nex/rating.Store) on s's database.
func (s *Store) Ratings() *sqlstore.Ratings { return sqlstore.NewRatings("pgstore", pgDB{s.pool}) }
