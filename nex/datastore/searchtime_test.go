package datastore

import (
	"math"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

// TestSearchTimeFarFuture: the descriptions' "future" default for a search's
// date bounds (the year 9999) is past what the stores' nanosecond times hold;
// it must become the latest such time, not a wrapped-around one.
func TestSearchTimeFarFuture(t *testing.T) {
	future := types.MakeDateTime(9999, 12, 31, 2, 59, 59)
	if got := searchTime(future); got.UnixNano() != math.MaxInt64 {
		t.Errorf("year 9999 bound = %v (%d ns), want the latest representable time", got, got.UnixNano())
	}
	if got := searchTime(types.MakeDateTime(1, 1, 1, 0, 0, 0)); got.UnixNano() != math.MinInt64 {
		t.Errorf("year 1 bound = %d ns, want the earliest representable time", got.UnixNano())
	}
	now := types.MakeDateTime(2026, 11, 27, 10, 0, 0)
	if got := searchTime(now); !got.Equal(now.Time()) {
		t.Errorf("2026 bound changed: %v", got)
	}
}
