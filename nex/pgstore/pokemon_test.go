package pgstore

import (
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/storetest"
	"github.com/gamewire/gamewire/nex/subscription"
)

// TestPokemonSuites runs the suites of the protocols Pokémon X/Y and Omega
// Ruby/Alpha Sapphire add (Subscription, Rating) on PostgreSQL.
func TestPokemonSuites(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Subscriptions(t, func(t *testing.T) subscription.Store { return openFresh(t, srv).Subscriptions() })
	storetest.Ratings(t, func(t *testing.T) rating.Store { return openFresh(t, srv).Ratings() })
}
