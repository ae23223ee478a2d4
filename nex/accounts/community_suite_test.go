package accounts_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/storetest"
)

// TestCommunitySuite runs the community store suite (nex/storetest) on SQLite.
func TestCommunitySuite(t *testing.T) {
	storetest.Communities(t, func(t *testing.T) storetest.CommunityBackend {
		s, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Matchmaking()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(); s.Close() })
		return m
	})
}
