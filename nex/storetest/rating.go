package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/rating"
	"github.com/gamewire/gamewire/nex/types"
)

// Ratings runs the suite of rating.Store against fresh stores made by open.
func Ratings(t *testing.T, open func(t *testing.T) rating.Store) {
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	key := []byte("0123456789abcdef\x00")
	t.Run("tokens are taken back with their key, within their lifetime, and record who presented them", func(t *testing.T) {
		s := open(t)
		tok := rating.Token{ID: 0xfedcba9876543210, Key: key, Owner: 1000, Issued: t0}
		if err := s.IssueToken(ctx, tok, 8); err != nil {
			t.Fatal(err)
		}
		if err := s.IssueToken(ctx, rating.Token{ID: tok.ID, Key: key, Owner: 2000, Issued: t0}, 8); !errors.Is(err, rating.ErrTokenExists) {
			t.Fatalf("same id again: %v, want ErrTokenExists", err)
		}
		for _, bad := range []struct {
			id        uint64
			key       []byte
			notBefore time.Time
		}{
			{tok.ID + 1, key, t0},
			{tok.ID, []byte("0123456789abcdef"), t0},
			{tok.ID, key, t0.Add(time.Nanosecond)},
		} {
			if err := s.UseToken(ctx, 1000, bad.id, bad.key, bad.notBefore, t0); !errors.Is(err, types.CoreInvalidArgument) {
				t.Errorf("token %d %q not before %v: %v, want Core::InvalidArgument", bad.id, bad.key, bad.notBefore, err)
			}
		}
		for i, pid := range []types.PID{2000, 1000, 2000} {
			if err := s.UseToken(ctx, pid, tok.ID, key, t0, t0.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if us, err := s.TokenUsers(ctx, tok.ID); err != nil || !slices.Equal(us, []types.PID{2000, 1000}) {
			t.Errorf("users %v, %v; want 2000, 1000", us, err)
		}
		if us, err := s.TokenUsers(ctx, tok.ID+1); err != nil || len(us) != 0 {
			t.Errorf("users of no token %v, %v", us, err)
		}
	})
	t.Run("a player keeps its newest tokens", func(t *testing.T) {
		s := open(t)
		for i := range 4 {
			if err := s.IssueToken(ctx, rating.Token{ID: uint64(10 + i), Key: key, Owner: 1, Issued: t0.Add(time.Duration(i) * time.Second)}, 2); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.IssueToken(ctx, rating.Token{ID: 99, Key: key, Owner: 2, Issued: t0}, 2); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[uint64]bool{10: false, 11: false, 12: true, 13: true, 99: true} {
			err := s.UseToken(ctx, 5, id, key, t0, t0)
			if got := err == nil; got != want {
				t.Errorf("token %d kept %v (%v), want %v", id, got, err, want)
			}
		}
		// A dropped id can be issued again.
		if err := s.IssueToken(ctx, rating.Token{ID: 10, Key: key, Owner: 3, Issued: t0}, 2); err != nil {
			t.Fatal(err)
		}
		if us, err := s.TokenUsers(ctx, 10); err != nil || len(us) != 0 {
			t.Errorf("a reissued id has users %v, %v", us, err)
		}
	})
}
