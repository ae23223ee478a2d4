package pgstore

import (
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/storetest"
)

// TestTitlesSuites runs the suites of the protocols the titles of nex/games
// add (MessageDelivery) on PostgreSQL.
func TestTitlesSuites(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Messages(t, func(t *testing.T) messagedelivery.Store { return openFresh(t, srv).Messages() })
}
