package tkcd

import (
	"context"
	"errors"

	"github.com/gamewire/gamewire/nex/types"
)

// ErrSupportIDTaken is returned by a Store when the support id offered for a
// new player is already another player's.
var ErrSupportIDTaken = errors.New("tkcd: support id already taken")

// Store keeps what Team Kirby Clash Deluxe's ServiceItem methods keep across
// connections: each player's support id. internal/sqlstore's TKCD implements
// it on SQLite (nex/accounts) and PostgreSQL (nex/pgstore);
// nex/storetest.TKCD is its suite.
type Store interface {
	// SupportID returns pid's support id. A player without one gets
	// candidate, stored in the same transaction; ErrSupportIDTaken when
	// candidate is another player's.
	SupportID(ctx context.Context, pid types.PID, candidate string) (string, error)
}
