package pgstore

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/internal/sqlstore"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/storetest"
)

// openFresh opens the store on a new, empty database of srv.
func openFresh(t *testing.T, srv *pgtest.Server) *Store {
	t.Helper()
	s, err := Open(context.Background(), srv.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStoreSuite runs the suite every backend runs (nex/storetest) on PostgreSQL.
func TestStoreSuite(t *testing.T) {
	srv := pgtest.Start(t) // one server for the suite, a database per subtest
	storetest.Accounts(t, func(t *testing.T) storetest.AccountStore { return openFresh(t, srv) })
	storetest.Nodes(t, func(t *testing.T) nodes.Registry { return openFresh(t, srv) })
	storetest.Mailbox(t, func(t *testing.T) storetest.MailStore { return openFresh(t, srv) })
	t.Run("mail wakes its node", func(t *testing.T) { storetest.MailboxListener(t, openFresh(t, srv)) })
	t.Run("reopen keeps data and refuses a newer schema", func(t *testing.T) {
		ctx := context.Background()
		dsn := srv.NewDatabase(t)
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
		dsn := srv.NewDatabase(t)
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

// TestCredentialsSuite runs the NNID store suite (nex/storetest) on PostgreSQL.
func TestCredentialsSuite(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Credentials(t, func(t *testing.T) storetest.CredentialStore {
		s := openFresh(t, srv)
		return struct {
			*sqlstore.Credentials
			*Store
		}{s.Credentials(), s}
	})
}
