package accounts_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/storetest"
)

// openMatchmaking opens a matchmaking store on the database in dir.
func openMatchmaking(t *testing.T, dir string) matchmaking.Store {
	s, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m
}

// TestMatchmakingSuite runs the matchmaking store suite (nex/storetest) on
// SQLite, the concurrency case also over two stores sharing one database.
func TestMatchmakingSuite(t *testing.T) {
	storetest.Matchmaking(t, func(t *testing.T) matchmaking.Store {
		return openMatchmaking(t, filepath.Join(t.TempDir(), "data"))
	}, func(t *testing.T) (matchmaking.Store, matchmaking.Store) {
		dir := filepath.Join(t.TempDir(), "data")
		return openMatchmaking(t, dir), openMatchmaking(t, dir)
	})
}
