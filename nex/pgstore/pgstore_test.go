package pgstore

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/storetest"
)

var (
	serverOnce sync.Once
	server     *pgtest.Server
)

// pg starts one PostgreSQL server for the package's tests (the first caller's
// test owns it; later tests get databases of their own on it).
func pg(t *testing.T) *pgtest.Server {
	t.Helper()
	serverOnce.Do(func() { server = pgtest.Start(t) })
	if server == nil {
		t.Skip("no PostgreSQL server")
	}
	return server
}

func openFresh(t *testing.T) *Store {
	t.Helper()
	dsn := pg(t).NewDatabase(t)
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStoreSuite runs the suite every backend runs (nex/storetest) on PostgreSQL.
func TestStoreSuite(t *testing.T) {
	pg(t) // the server lives as long as this test
	storetest.Accounts(t, func(t *testing.T) storetest.AccountStore { return openFresh(t) })
	storetest.Nodes(t, func(t *testing.T) nodes.Registry { return openFresh(t) })
	t.Run("reopen keeps data and refuses a newer schema", func(t *testing.T) {
		ctx := context.Background()
		dsn := pg(t).NewDatabase(t)
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Pool().Exec(ctx, `UPDATE schema_migrations SET version = 99 WHERE component = 'accounts'`); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := Open(ctx, dsn); !errors.Is(err, ErrSchemaTooNew) {
			t.Fatalf("Open on a newer schema: %v, want ErrSchemaTooNew", err)
		}
	})
	t.Run("concurrent opens migrate once", func(t *testing.T) {
		ctx := context.Background()
		dsn := pg(t).NewDatabase(t)
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := Open(ctx, dsn)
				if err == nil {
					s.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent Open: %v", err)
			}
		}
	})
}
