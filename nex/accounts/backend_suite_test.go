package accounts_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/games/tkcd"
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

// TestSMMSuite runs Super Mario Maker's store suite on SQLite.
func TestSMMSuite(t *testing.T) {
	storetest.SMM(t, func(t *testing.T) smm.Store { return openSQLite(t).SMM() })
}

// TestQuotaSuite runs the quota and sweep suite (nex/storetest) on SQLite.
func TestQuotaSuite(t *testing.T) {
	storetest.Quotas(t, func(t *testing.T) storetest.QuotaBackend {
		s := openSQLite(t)
		m, err := s.Matchmaking()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return storetest.QuotaBackend{Matchmaking: m, DataStore: s.DataStore(), Ranking: s.Ranking()}
	})
}

// TestDataStoreQuotaConcurrent: two handles on one SQLite database create
// for one player at once; exactly the quota's objects are created.
func TestDataStoreQuotaConcurrent(t *testing.T) {
	storetest.DataStoreQuotaConcurrent(t, func(t *testing.T) (storetest.QuotaDataStore, storetest.QuotaDataStore) {
		dir := t.TempDir()
		var ds [2]storetest.QuotaDataStore
		for i := range ds {
			s, _, err := accounts.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			ds[i] = s.DataStore()
		}
		return ds[0], ds[1]
	})
}

// TestCredentialsSuite runs the NNID store suite (nex/storetest) on SQLite.
func TestCredentialsSuite(t *testing.T) {
	storetest.Credentials(t, func(t *testing.T) storetest.CredentialStore {
		s := openSQLite(t)
		return struct {
			*sqlstore.Credentials
			*accounts.Store
		}{s.Credentials(), s}
	})
}

// TestKirbyBadgeArcadeSuites runs Team Kirby Clash Deluxe's and Badge
// Arcade's store suites on SQLite.
func TestKirbyBadgeArcadeSuites(t *testing.T) {
	storetest.TKCD(t, func(t *testing.T) tkcd.Store { return openSQLite(t).TKCD() })
	storetest.BadgeArcade(t, func(t *testing.T) badgearcade.Store { return openSQLite(t).BadgeArcade() })
}

// TestSSB4Suite runs Super Smash Bros. 4's store suite on SQLite.
func TestSSB4Suite(t *testing.T) {
	storetest.SSB4(t, func(t *testing.T) ssb4.Store { return openSQLite(t).SSB4() })
}
