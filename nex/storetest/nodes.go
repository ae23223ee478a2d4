package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/nodes"
)

// Nodes runs the node registry suite against fresh registries made by open.
func Nodes(t *testing.T, open func(t *testing.T) nodes.Registry) {
	ctx := context.Background()
	t.Run("pick spreads over live nodes", func(t *testing.T) {
		r := open(t)
		if _, err := r.Pick(ctx, time.Minute); !errors.Is(err, nodes.ErrNoNode) {
			t.Fatalf("Pick on an empty registry: %v, want ErrNoNode", err)
		}
		for _, id := range []string{"a", "b", "c"} {
			if err := r.Announce(ctx, nodes.Node{ID: id, URL: "prudps:/address=127.0.0.1;port=1;id=" + id}); err != nil {
				t.Fatal(err)
			}
		}
		count := map[string]int{}
		for i := 0; i < 30; i++ {
			n, err := r.Pick(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			count[n.ID]++
		}
		for _, id := range []string{"a", "b", "c"} {
			if count[id] != 10 {
				t.Fatalf("30 picks over 3 nodes: %v, want 10 each", count)
			}
		}
	})
	t.Run("concurrent picks spread", func(t *testing.T) {
		r := open(t)
		for _, id := range []string{"a", "b", "c"} {
			if err := r.Announce(ctx, nodes.Node{ID: id, URL: "u" + id}); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		count := map[string]int{}
		var wg sync.WaitGroup
		for i := 0; i < 30; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := r.Pick(ctx, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				count[n.ID]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		for _, id := range []string{"a", "b", "c"} {
			if count[id] != 10 {
				t.Fatalf("30 concurrent picks over 3 nodes: %v, want 10 each", count)
			}
		}
	})
	t.Run("stale, full and withdrawn nodes are out of rotation", func(t *testing.T) {
		r := open(t)
		if err := r.Announce(ctx, nodes.Node{ID: "old", URL: "u1"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond)
		if err := r.Announce(ctx, nodes.Node{ID: "full", URL: "u2", Load: 5, Capacity: 5}); err != nil {
			t.Fatal(err)
		}
		if err := r.Announce(ctx, nodes.Node{ID: "live", URL: "u3", Load: 100}); err != nil {
			t.Fatal(err)
		}
		n, err := r.Pick(ctx, time.Second)
		if err != nil || n.ID != "live" {
			t.Fatalf("Pick = %q, %v; want the live node with room (the idle one's heartbeat is stale)", n.ID, err)
		}
		if n.Load != 101 {
			t.Fatalf("picked load %d, want 101", n.Load)
		}
		if err := r.Withdraw(ctx, "live"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Pick(ctx, time.Second); !errors.Is(err, nodes.ErrNoNode) {
			t.Fatalf("Pick with only stale and full nodes: %v, want ErrNoNode", err)
		}
		// A heartbeat brings the stale node back.
		if err := r.Announce(ctx, nodes.Node{ID: "old", URL: "u1b"}); err != nil {
			t.Fatal(err)
		}
		if n, err := r.Pick(ctx, time.Second); err != nil || n.ID != "old" || n.URL != "u1b" {
			t.Fatalf("Pick after the heartbeat = %+v, %v", n, err)
		}
		all, err := r.Nodes(ctx)
		if err != nil || len(all) != 2 || all[0].ID != "full" || all[1].ID != "old" {
			t.Fatalf("Nodes = %+v, %v", all, err)
		}
		if err := r.Announce(ctx, nodes.Node{ID: "", URL: "x"}); err == nil {
			t.Fatal("Announce without an id succeeded")
		}
	})
}
