package matchmaking

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
)

// TestSequencerOrder: deliveries handed over out of order (handlers finishing
// in another order than their commits) go out in commit order.
func TestSequencerOrder(t *testing.T) {
	var q sequencer
	var mu sync.Mutex
	var got []uint64
	send := func(_ context.Context, a addressed) {
		mu.Lock()
		got = append(got, a.ev.Param1)
		mu.Unlock()
	}
	d := func(seq uint64) delivery {
		return delivery{seq: seq, events: []addressed{{ev: notifications.Event{Param1: seq}}}}
	}
	ctx := context.Background()
	q.submit(ctx, 1, d(1), false, false, send)
	q.submit(ctx, 1, d(3), false, false, send)
	q.submit(ctx, 1, d(4), false, false, send)
	q.submit(ctx, 1, d(2), false, false, send)
	q.submit(ctx, 1, d(5), true, false, send)
	mu.Lock()
	if len(got) != 5 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 || got[4] != 5 {
		t.Fatalf("delivered %v", got)
	}
	mu.Unlock()
	q.mu.Lock()
	if len(q.gaths) != 0 {
		t.Fatalf("deleted gathering still queued: %v", q.gaths)
	}
	q.mu.Unlock()

	// A change that never arrives (made by another server) holds the later
	// ones only for gapWait.
	got = nil
	q.submit(ctx, 2, d(1), false, false, send)
	q.submit(ctx, 2, d(3), false, false, send)
	deadline := time.Now().Add(10 * gapWait)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %v after the gap wait", got)
		}
		time.Sleep(gapWait / 4)
	}
}
