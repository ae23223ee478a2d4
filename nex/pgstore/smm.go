package pgstore

import (
	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The smm component: Super Mario Maker's DataStore additions (nex/games/smm),
// the same tables on SQLite and PostgreSQL (sqlstore.SMMSchemaV1).
func init() { registerSchema("smm", sqlstore.SMMSchemaV1) }

// SMM returns the Super Mario Maker store (nex/games/smm.Store) on s's
// database.
func (s *Store) SMM() *sqlstore.SMM { return sqlstore.NewSMM("pgstore", pgDB{s.pool}) }
