package accounts_test

import (
	"testing"

	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/storetest"
	"github.com/gamewire/gamewire/nex/subscription"
)

// TestSubscriptionsSuite runs the Subscription store's suite on SQLite.
func TestSubscriptionsSuite(t *testing.T) {
	storetest.Subscriptions(t, func(t *testing.T) subscription.Store { return openSQLite(t).Subscriptions() })
}

// TestMemorySubscriptions runs the same suite on subscription.Memory.
func TestMemorySubscriptions(t *testing.T) {
	storetest.Subscriptions(t, func(t *testing.T) subscription.Store { return new(subscription.Memory) })
}

// TestRatingsSuite runs the Rating store's suite on SQLite.
func TestRatingsSuite(t *testing.T) {
	storetest.Ratings(t, func(t *testing.T) rating.Store { return openSQLite(t).Ratings() })
}

// TestMemoryRatings runs the same suite on rating.Memory.
func TestMemoryRatings(t *testing.T) {
	storetest.Ratings(t, func(t *testing.T) rating.Store { return new(rating.Memory) })
}
