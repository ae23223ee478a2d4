package pgstore

import (
	"github.com/gamewire/gamewire/internal/sqlstore"
)

// The tkcd and badgearcade components: Team Kirby Clash Deluxe's support ids
// (nex/games/tkcd) and Badge Arcade's play logs (nex/games/badgearcade), the
// same tables on SQLite and PostgreSQL.
func init() {
	registerSchema("tkcd", sqlstore.TKCDSchemaV1)
	registerSchema("badgearcade", sqlstore.BadgeArcadeSchemaV1)
}

// TKCD returns Team Kirby Clash Deluxe's store (nex/games/tkcd.Store) on s's
// database.
func (s *Store) TKCD() *sqlstore.TKCD { return sqlstore.NewTKCD("pgstore", pgDB{s.pool}) }

// BadgeArcade returns Badge Arcade's store (nex/games/badgearcade.Store) on
// s's database.
func (s *Store) BadgeArcade() *sqlstore.BadgeArcade {
	return sqlstore.NewBadgeArcade("pgstore", pgDB{s.pool})
}
