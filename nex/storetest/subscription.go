package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/subscription"
	"github.com/gamewire/gamewire/nex/types"
)

// Subscriptions runs the suite of subscription.Store against fresh stores
// made by open.
func Subscriptions(t *testing.T, open func(t *testing.T) subscription.Store) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	pids := func(rs []subscription.Record) []types.PID {
		out := make([]types.PID, len(rs))
		for i, r := range rs {
			out[i] = r.PID
		}
		return out
	}

	t.Run("data is created, updated keeping the create's values, read in the order asked and cleared", func(t *testing.T) {
		s := open(t)
		if err := s.PutData(ctx, subscription.Record{PID: 1000, Content: []byte{1, 2, 3}, Unknown1: 0xfffffffe, Unknown2: true,
			Created: t0, Updated: t0}, true); err != nil {
			t.Fatal(err)
		}
		if err := s.PutData(ctx, subscription.Record{PID: 2000, Content: nil, Created: t0, Updated: t0.Add(time.Second)}, false); err != nil {
			t.Fatal(err)
		}
		t1 := t0.Add(time.Minute)
		if err := s.PutData(ctx, subscription.Record{PID: 1000, Content: []byte{9}, Created: t1, Updated: t1}, false); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Data(ctx, []types.PID{2000, 3000, 1000})
		if err != nil || !slices.Equal(pids(rs), []types.PID{2000, 1000}) {
			t.Fatalf("data %v, %v; want 2000 then 1000 (3000 has none)", rs, err)
		}
		if r := rs[1]; !bytes.Equal(r.Content, []byte{9}) || r.Unknown1 != 0xfffffffe || !r.Unknown2 || !r.Created.Equal(t0) || !r.Updated.Equal(t1) {
			t.Errorf("updated record %+v: want content 09, the create's unknowns and time, the update's time", r)
		}
		if r := rs[0]; len(r.Content) != 0 || r.Unknown1 != 0 || r.Unknown2 {
			t.Errorf("record published by an update %+v", r)
		}
		// A create replaces everything.
		if err := s.PutData(ctx, subscription.Record{PID: 1000, Content: []byte{7, 7}, Unknown1: 5, Created: t1, Updated: t1}, true); err != nil {
			t.Fatal(err)
		}
		rs, err = s.Data(ctx, []types.PID{1000})
		if err != nil || len(rs) != 1 || rs[0].Unknown1 != 5 || rs[0].Unknown2 || !rs[0].Created.Equal(t1) || !bytes.Equal(rs[0].Content, []byte{7, 7}) {
			t.Fatalf("recreated %+v, %v", rs, err)
		}
		if err := s.AddTargets(ctx, 1000, []types.PID{2000}, 10); err != nil {
			t.Fatal(err)
		}
		if err := s.ClearData(ctx, 1000); err != nil {
			t.Fatal(err)
		}
		rs, err = s.Data(ctx, []types.PID{1000, 2000})
		if err != nil || !slices.Equal(pids(rs), []types.PID{2000}) {
			t.Errorf("after clear %v, %v", rs, err)
		}
		if ts, err := s.Targets(ctx, 1000); err != nil || len(ts) != 0 {
			t.Errorf("targets after clear %v, %v", ts, err)
		}
		if err := s.ClearData(ctx, 1000); err != nil {
			t.Errorf("clearing nothing: %v", err)
		}
	})

	t.Run("active players are the newest since a time, without the caller, bounded", func(t *testing.T) {
		s := open(t)
		for i, pid := range []types.PID{10, 20, 30, 40} {
			at := t0.Add(time.Duration(i) * time.Minute)
			if err := s.PutData(ctx, subscription.Record{PID: pid, Content: []byte{byte(i)}, Created: at, Updated: at}, true); err != nil {
				t.Fatal(err)
			}
		}
		rs, err := s.Active(ctx, 30, t0.Add(time.Minute), 10)
		if err != nil || !slices.Equal(pids(rs), []types.PID{40, 20}) {
			t.Errorf("active since 1m without 30: %v, %v; want 40, 20", pids(rs), err)
		}
		rs, err = s.Active(ctx, 0, time.Time{}, 2)
		if err != nil || !slices.Equal(pids(rs), []types.PID{40, 30}) {
			t.Errorf("two newest: %v, %v", pids(rs), err)
		}
		if rs[0].Content[0] != 3 {
			t.Errorf("content %v", rs[0].Content)
		}
	})

	t.Run("targets keep their order, once each, within their limit", func(t *testing.T) {
		s := open(t)
		if err := s.AddTargets(ctx, 1, []types.PID{5, 3}, 4); err != nil {
			t.Fatal(err)
		}
		if err := s.AddTargets(ctx, 1, []types.PID{3, 9}, 4); err != nil {
			t.Fatal(err)
		}
		if ts, err := s.Targets(ctx, 1); err != nil || !slices.Equal(ts, []types.PID{5, 3, 9}) {
			t.Fatalf("targets %v, %v", ts, err)
		}
		if err := s.AddTargets(ctx, 1, []types.PID{10, 11}, 4); !errors.Is(err, types.CoreInvalidArgument) {
			t.Errorf("over the limit: %v, want Core::InvalidArgument", err)
		}
		if ts, err := s.Targets(ctx, 1); err != nil || !slices.Equal(ts, []types.PID{5, 3, 9}) {
			t.Fatalf("a refused add changed the targets: %v, %v", ts, err)
		}
		if err := s.AddTargets(ctx, 2, []types.PID{3}, 4); err != nil {
			t.Fatal(err)
		}
		if ws, err := s.Watchers(ctx, 3, 10); err != nil || !slices.Equal(ws, []types.PID{1, 2}) {
			t.Errorf("watchers of 3: %v, %v", ws, err)
		}
		if ws, err := s.Watchers(ctx, 3, 1); err != nil || !slices.Equal(ws, []types.PID{1}) {
			t.Errorf("one watcher of 3: %v, %v", ws, err)
		}
		if err := s.DeleteTargets(ctx, 1, []types.PID{3, 77}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddTargets(ctx, 1, []types.PID{3}, 4); err != nil {
			t.Fatal(err)
		}
		if ts, err := s.Targets(ctx, 1); err != nil || !slices.Equal(ts, []types.PID{5, 9, 3}) {
			t.Fatalf("deleted and added again: %v, %v", ts, err)
		}
		if err := s.ReplaceTargets(ctx, 1, []types.PID{8, 8, 7}, 4); err != nil {
			t.Fatal(err)
		}
		if ts, err := s.Targets(ctx, 1); err != nil || !slices.Equal(ts, []types.PID{8, 7}) {
			t.Fatalf("replaced: %v, %v", ts, err)
		}
		if err := s.ReplaceTargets(ctx, 1, []types.PID{1, 2, 3, 4, 5}, 4); !errors.Is(err, types.CoreInvalidArgument) {
			t.Errorf("replace over the limit: %v", err)
		}
		if ts, err := s.Targets(ctx, 1); err != nil || !slices.Equal(ts, []types.PID{8, 7}) {
			t.Fatalf("a refused replace changed the targets: %v, %v", ts, err)
		}
		if err := s.ReplaceTargets(ctx, 1, nil, 4); err != nil {
			t.Fatal(err)
		}
		if ts, err := s.Targets(ctx, 1); err != nil || len(ts) != 0 {
			t.Fatalf("cleared: %v, %v", ts, err)
		}
	})

	t.Run("privacy levels", func(t *testing.T) {
		s := open(t)
		if _, ok, err := s.PrivacyLevel(ctx, 1); ok || err != nil {
			t.Fatalf("unset level: %v, %v", ok, err)
		}
		for _, l := range []uint32{0, 0xffffffff, 2} {
			if err := s.SetPrivacyLevel(ctx, 1, l); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := s.PrivacyLevel(ctx, 1); got != l || !ok || err != nil {
				t.Errorf("level %d: got %d, %v, %v", l, got, ok, err)
			}
		}
		if _, ok, _ := s.PrivacyLevel(ctx, 2); ok {
			t.Error("another player's level is set")
		}
	})
}
