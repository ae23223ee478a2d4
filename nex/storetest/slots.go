package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/types"
)

// Slots runs the suite of storagemanager.Store against fresh stores made by
// open.
func Slots(t *testing.T, open func(t *testing.T) storagemanager.Store) {
	ctx := context.Background()
	t.Run("one unique id per player, slot and card, created once", func(t *testing.T) {
		s := open(t)
		card, other := uint64(0xfedcba9876543210), uint64(7)
		a, first, err := s.SlotUniqueID(ctx, 1000, 0, nil)
		if err != nil || !first || a == 0 {
			t.Fatalf("first: %d %v %v", a, first, err)
		}
		if again, first, err := s.SlotUniqueID(ctx, 1000, 0, nil); err != nil || first || again != a {
			t.Fatalf("again: %d %v %v, want %d", again, first, err, a)
		}
		var ids []uint32
		for _, k := range []struct {
			pid  types.PID
			slot uint8
			card *uint64
		}{{1000, 1, nil}, {1000, 0, &card}, {1000, 0, &other}, {2000, 0, nil}, {2000, 0, &card}} {
			id, first, err := s.SlotUniqueID(ctx, k.pid, k.slot, k.card)
			if err != nil || !first || id == a || slices.Contains(ids, id) {
				t.Fatalf("%+v: %d %v %v (ids %d, %v)", k, id, first, err, a, ids)
			}
			ids = append(ids, id)
		}
		if id, first, err := s.SlotUniqueID(ctx, 1000, 0, &card); err != nil || first || id != ids[1] {
			t.Errorf("card again: %d %v %v, want %d", id, first, err, ids[1])
		}
		if pid, err := s.SlotOwner(ctx, ids[3]); err != nil || pid != 2000 {
			t.Errorf("owner of %d: %d, %v", ids[3], pid, err)
		}
		if _, err := s.SlotOwner(ctx, ids[4]+1000); !errors.Is(err, types.CoreInvalidArgument) {
			t.Errorf("owner of an unknown id: %v", err)
		}
		if got, err := s.SlotUniqueIDs(ctx, 1000); err != nil || !slices.Equal(got, []uint32{a, ids[0], ids[1], ids[2]}) {
			t.Errorf("player's ids %v, %v", got, err)
		}
	})
}
