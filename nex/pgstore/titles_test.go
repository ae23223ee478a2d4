package pgstore

import (
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/storetest"
	"github.com/gamewire/gamewire/nex/utility"
)

// TestTitlesSuites runs the suites of the protocols the titles of nex/games
// add (MessageDelivery, Utility, Storage Manager) on PostgreSQL.
func TestTitlesSuites(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Messages(t, func(t *testing.T) messagedelivery.Store { return openFresh(t, srv).Messages() })
	storetest.UniqueIDs(t, func(t *testing.T) utility.Store { return openFresh(t, srv).UniqueIDs() })
	storetest.Slots(t, func(t *testing.T) storagemanager.Store { return openFresh(t, srv).Slots() })
}

// TestKirbyBadgeArcadeSuites runs Team Kirby Clash Deluxe's and Badge
// Arcade's store suites on PostgreSQL.
func TestKirbyBadgeArcadeSuites(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.TKCD(t, func(t *testing.T) tkcd.Store { return openFresh(t, srv).TKCD() })
	storetest.BadgeArcade(t, func(t *testing.T) badgearcade.Store { return openFresh(t, srv).BadgeArcade() })
}
