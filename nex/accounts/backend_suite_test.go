package accounts_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/storetest"
)

// openSQLite opens a store on a fresh data directory.
func openSQLite(t *testing.T) *accounts.Store {
	t.Helper()
	s, _, err := accounts.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openMatchmakingSQLite opens n matchmaking stores on one database, as n
// secure nodes sharing one data directory would.
func openMatchmakingSQLite(t *testing.T, n int) []matchmaking.Store {
	dir := filepath.Join(t.TempDir(), "data")
	out := make([]matchmaking.Store, n)
	for i := range out {
		s, _, err := accounts.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Matchmaking()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(); s.Close() })
		out[i] = m
	}
	return out
}

// TestMatchmakingNodesSuite, TestRankingSuite and TestDataStoreSuite run the
// service store suites every backend runs (nex/storetest) on SQLite.
func TestMatchmakingNodesSuite(t *testing.T) { storetest.MatchmakingNodes(t, openMatchmakingSQLite) }

func TestRankingSuite(t *testing.T) {
	storetest.Ranking(t, func(t *testing.T) ranking.Store { return openSQLite(t).Ranking() })
}

func TestDataStoreSuite(t *testing.T) {
	storetest.DataStore(t, func(t *testing.T) datastore.Store { return openSQLite(t).DataStore() })
}

// TestFriendsSuite runs the friends store suite (nex/storetest) on SQLite.
func TestFriendsSuite(t *testing.T) {
	storetest.Friends(t, func(t *testing.T) friends.Store { return openSQLite(t).Friends() })
}

func BenchmarkAutoMatchmakeSuite(b *testing.B) {
	storetest.BenchmarkAutoMatchmake(b, func(b *testing.B) []matchmaking.Store {
		s, _, err := accounts.Open(context.Background(), b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		m, err := s.Matchmaking()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(); s.Close() })
		return []matchmaking.Store{m}
	})
}
