package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/types"
)

// TKCD runs the suite of Team Kirby Clash Deluxe's store
// (nex/games/tkcd.Store) on a fresh store from open: a player's support id
// is the first candidate offered and stays; a number another player has is
// refused; concurrent first calls agree.
func TKCD(t *testing.T, open func(t *testing.T) tkcd.Store) {
	ctx := context.Background()
	t.Run("support ids", func(t *testing.T) {
		s := open(t)
		id, err := s.SupportID(ctx, 1000, "1111222233334444")
		if err != nil || id != "1111222233334444" {
			t.Fatalf("first: %q %v", id, err)
		}
		if id, err := s.SupportID(ctx, 1000, "9999888877776666"); err != nil || id != "1111222233334444" {
			t.Fatalf("again: %q %v, want the first", id, err)
		}
		if id, err := s.SupportID(ctx, 2000, "1111222233334444"); !errors.Is(err, tkcd.ErrSupportIDTaken) {
			t.Fatalf("another player's number: %q %v, want ErrSupportIDTaken", id, err)
		}
		if id, err := s.SupportID(ctx, 2000, "5555"); err != nil || id != "5555" {
			t.Fatalf("second player: %q %v", id, err)
		}
	})
	t.Run("concurrent first calls agree", func(t *testing.T) {
		s := open(t)
		const n = 8
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { ids[i], errs[i] = s.SupportID(ctx, 3000, string(rune('a'+i))) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("call %d: %q %v; call 0: %q", i, ids[i], errs[i], ids[0])
			}
		}
	})
}

// BadgeArcade runs the suite of Badge Arcade's store
// (nex/games/badgearcade.Store) on a fresh store from open: play logs come
// back newest first, as stored, per player, bounded by keep.
func BadgeArcade(t *testing.T, open func(t *testing.T) badgearcade.Store) {
	ctx := context.Background()
	t.Run("play logs", func(t *testing.T) {
		s := open(t)
		at := time.Unix(1_800_000_000, 0)
		for i := range 5 {
			l := badgearcade.PlayLog{PID: 1000, Unknown1: []uint32{uint32(i), 0xFFFFFFFF}, Timestamp: types.DateTimeFromTime(at.Add(time.Duration(i) * time.Second)),
				Unknown2: "play " + string(rune('0'+i)), Received: at.Add(time.Duration(i) * time.Minute)}
			if i == 4 {
				l.Unknown1 = nil
			}
			if err := s.AddPlayLog(ctx, l, 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddPlayLog(ctx, badgearcade.PlayLog{PID: 2000, Unknown2: "other", Received: at}, 3); err != nil {
			t.Fatal(err)
		}
		got, err := s.PlayLogs(ctx, 1000, 10)
		if err != nil || len(got) != 3 {
			t.Fatalf("PlayLogs: %v %v, want the newest 3", got, err)
		}
		for j, i := range []int{4, 3, 2} {
			l := got[j]
			wantU1 := []uint32{uint32(i), 0xFFFFFFFF}
			if i == 4 {
				wantU1 = nil
			}
			if l.PID != 1000 || !slices.Equal(l.Unknown1, wantU1) || l.Timestamp != types.DateTimeFromTime(at.Add(time.Duration(i)*time.Second)) ||
				l.Unknown2 != "play "+string(rune('0'+i)) || !l.Received.Equal(at.Add(time.Duration(i)*time.Minute)) {
				t.Errorf("entry %d: %+v, want play %d", j, l, i)
			}
		}
		if got, err := s.PlayLogs(ctx, 1000, 1); err != nil || len(got) != 1 || got[0].Unknown2 != "play 4" {
			t.Errorf("PlayLogs limit 1: %v %v", got, err)
		}
		if got, err := s.PlayLogs(ctx, 2000, 10); err != nil || len(got) != 1 || got[0].Unknown2 != "other" || len(got[0].Unknown1) != 0 {
			t.Errorf("other player: %v %v", got, err)
		}
		if got, err := s.PlayLogs(ctx, 3000, 10); err != nil || len(got) != 0 {
			t.Errorf("no logs: %v %v", got, err)
		}
	})
}
