package accounts

import (
	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The ssb4 component: Super Smash Bros. 4's DataStore additions
// (nex/games/ssb4), the same tables on SQLite and PostgreSQL
// (sqlstore.SSB4SchemaV1).
func init() { registerSchema("ssb4", sqlstore.SSB4SchemaV1) }

// SSB4 returns the Super Smash Bros. 4 store (nex/games/ssb4.Store) in s's
// database; each call is bounded by DefaultQueryTimeout.
func (s *Store) SSB4() *sqlstore.SSB4 {
	return sqlstore.NewSSB4("accounts", dsDB{&DataStoreStore{db: s.db}})
}
