package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/nex/utility"
)

// UniqueIDs runs the suite of utility.Store against fresh stores made by open.
func UniqueIDs(t *testing.T, open func(t *testing.T) utility.Store) {
	ctx := context.Background()
	t.Run("issued ids associate with their password, replace, and read back in order", func(t *testing.T) {
		s := open(t)
		a, err := s.IssueUniqueID(ctx, 0xfedcba9876543210) // above MaxInt64: kept bit for bit
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.IssueUniqueID(ctx, 0)
		if err != nil || b == a || a == 0 || b == 0 {
			t.Fatalf("ids %d, %d, %v", a, b, err)
		}
		if got, err := s.AssociatedUniqueIDs(ctx, 1000); err != nil || len(got) != 0 {
			t.Fatalf("nothing associated yet: %v, %v", got, err)
		}
		want := []utility.UniqueIDInfo{{ID: b}, {ID: a, Password: 0xfedcba9876543210}}
		if err := s.AssociateUniqueIDs(ctx, 1000, want); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AssociatedUniqueIDs(ctx, 1000); err != nil || !slices.Equal(got, want) {
			t.Fatalf("associated %v, %v; want %v", got, err, want)
		}
		// A wrong password or an id never issued changes nothing.
		for _, bad := range [][]utility.UniqueIDInfo{{{ID: a, Password: 1}}, {{ID: b}, {ID: a + b + 100}}} {
			if err := s.AssociateUniqueIDs(ctx, 1000, bad); !errors.Is(err, types.CoreInvalidArgument) {
				t.Errorf("associate %v: %v, want Core::InvalidArgument", bad, err)
			}
		}
		if got, err := s.AssociatedUniqueIDs(ctx, 1000); err != nil || !slices.Equal(got, want) {
			t.Fatalf("after refused associations %v, %v", got, err)
		}
		// Replacing, and another player's own list.
		if err := s.AssociateUniqueIDs(ctx, 1000, want[:1]); err != nil {
			t.Fatal(err)
		}
		if err := s.AssociateUniqueIDs(ctx, 2000, want[1:]); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AssociatedUniqueIDs(ctx, 1000); err != nil || !slices.Equal(got, want[:1]) {
			t.Errorf("replaced: %v, %v", got, err)
		}
		if got, err := s.AssociatedUniqueIDs(ctx, 2000); err != nil || !slices.Equal(got, want[1:]) {
			t.Errorf("other player: %v, %v", got, err)
		}
		if err := s.AssociateUniqueIDs(ctx, 1000, nil); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AssociatedUniqueIDs(ctx, 1000); err != nil || len(got) != 0 {
			t.Errorf("cleared: %v, %v", got, err)
		}
	})
}
