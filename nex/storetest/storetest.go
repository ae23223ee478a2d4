// Package storetest is the store test suite every storage backend of gamewire runs:
// the embedded SQLite store (nex/accounts) and the PostgreSQL store (nex/pgstore)
// call the same functions, so both behave the same to the servers above them.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/types"
)

// AccountStore is what a backend offers for accounts: the ticket-granting
// server's lookups and the management the CLI does.
type AccountStore interface {
	auth.Accounts
	Add(ctx context.Context, n accounts.NewAccount) (auth.Account, error)
	SetPassword(ctx context.Context, nameOrPID, password string) (auth.Account, error)
	Find(ctx context.Context, nameOrPID string) (auth.Account, error)
	List(ctx context.Context) ([]accounts.Info, error)
	SecureKey(ctx context.Context, d auth.KeyDerivation) ([]byte, error)
	SchemaVersions(ctx context.Context) (map[string]int, error)
	Ping(ctx context.Context) error
	Close() error
}

// Accounts runs the account suite against fresh stores made by open.
func Accounts(t *testing.T, open func(t *testing.T) AccountStore) {
	ctx := context.Background()
	t.Run("special accounts seeded", func(t *testing.T) {
		s := open(t)
		g, err := s.AccountByName(ctx, "guest")
		if err != nil {
			t.Fatal(err)
		}
		if g.PID != auth.PIDGuest || g != auth.NewAccount(auth.PIDGuest, "guest", auth.GuestPassword) {
			t.Fatalf("guest = %+v, want PID %d with the published password's keys", g, auth.PIDGuest)
		}
		if _, err := s.SecureKey(ctx, auth.DeriveNEX); err != nil {
			t.Fatalf("SecureKey: %v", err)
		}
		v, err := s.SchemaVersions(ctx)
		if err != nil || v["accounts"] < 1 {
			t.Fatalf("SchemaVersions = %v, %v; want accounts >= 1", v, err)
		}
		if err := s.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("add find list passwd", func(t *testing.T) {
		s := open(t)
		a, err := s.Add(ctx, accounts.NewAccount{Name: "Alice", Password: "pw1"})
		if err != nil {
			t.Fatal(err)
		}
		if a.PID != accounts.FirstUserPID {
			t.Fatalf("first PID %d, want %d", a.PID, accounts.FirstUserPID)
		}
		b, err := s.Add(ctx, accounts.NewAccount{Password: "pw2"})
		if err != nil {
			t.Fatal(err)
		}
		if b.PID != a.PID+1 || b.Name != fmt.Sprint(uint64(b.PID)) {
			t.Fatalf("second account %d %q, want %d named by its PID", b.PID, b.Name, a.PID+1)
		}
		for _, q := range []string{"alice", "ALICE", fmt.Sprint(uint64(a.PID))} {
			got, err := s.Find(ctx, q)
			if err != nil || got.PID != a.PID {
				t.Fatalf("Find(%q) = %d, %v; want %d", q, got.PID, err, a.PID)
			}
		}
		if _, err := s.Add(ctx, accounts.NewAccount{Name: "aLiCe", Password: "x"}); !errors.Is(err, accounts.ErrExists) {
			t.Fatalf("duplicate name (other case): %v, want ErrExists", err)
		}
		if _, err := s.Add(ctx, accounts.NewAccount{PID: a.PID, Name: "bob", Password: "x"}); !errors.Is(err, accounts.ErrExists) {
			t.Fatalf("duplicate PID: %v, want ErrExists", err)
		}
		if _, err := s.Add(ctx, accounts.NewAccount{Name: "carol"}); !errors.Is(err, accounts.ErrEmptyPass) {
			t.Fatalf("empty password: %v, want ErrEmptyPass", err)
		}
		if _, err := s.Add(ctx, accounts.NewAccount{Name: "x\x00y", Password: "x"}); !errors.Is(err, accounts.ErrBadName) {
			t.Fatalf("NUL in name: %v, want ErrBadName", err)
		}
		if _, err := s.Add(ctx, accounts.NewAccount{Name: strings.Repeat("n", types.MaxStringLen+1), Password: "x"}); !errors.Is(err, accounts.ErrBadName) {
			t.Fatalf("long name: %v, want ErrBadName", err)
		}
		if _, err := s.Add(ctx, accounts.NewAccount{PID: accounts.MaxPID + 1, Password: "x"}); !errors.Is(err, accounts.ErrBadPID) {
			t.Fatalf("PID past MaxPID: %v, want ErrBadPID", err)
		}
		np, err := s.SetPassword(ctx, "alice", "new")
		if err != nil {
			t.Fatal(err)
		}
		if np != auth.NewAccount(a.PID, "Alice", "new") {
			t.Fatalf("after SetPassword: %+v", np)
		}
		got, _ := s.AccountByPID(ctx, a.PID)
		if got != np {
			t.Fatalf("AccountByPID after SetPassword = %+v, want %+v", got, np)
		}
		if _, err := s.AccountByName(ctx, "nobody"); !errors.Is(err, auth.ErrNoAccount) {
			t.Fatalf("unknown name: %v, want ErrNoAccount", err)
		}
		if _, err := s.AccountByPID(ctx, accounts.MaxPID+1); !errors.Is(err, auth.ErrNoAccount) {
			t.Fatalf("huge PID: %v, want ErrNoAccount", err)
		}
		list, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var users []string
		for i, in := range list {
			if i > 0 && list[i-1].PID >= in.PID {
				t.Fatalf("List not in PID order at %d", i)
			}
			if !in.Special {
				users = append(users, in.Name)
			}
			if in.Created == "" {
				t.Fatalf("List entry %d has no creation time", in.PID)
			}
		}
		if strings.Join(users, ",") != "Alice,"+fmt.Sprint(uint64(b.PID)) {
			t.Fatalf("users %v", users)
		}
	})
	t.Run("concurrent adds get distinct PIDs", func(t *testing.T) {
		s := open(t)
		const n = 16
		var wg sync.WaitGroup
		pids := make(chan types.PID, n)
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				a, err := s.Add(ctx, accounts.NewAccount{Name: fmt.Sprintf("user%d", i), Password: "pw"})
				if err != nil {
					errs <- err
					return
				}
				pids <- a.PID
			}(i)
		}
		wg.Wait()
		close(pids)
		close(errs)
		for err := range errs {
			t.Fatalf("concurrent Add: %v", err)
		}
		seen := map[types.PID]bool{}
		for p := range pids {
			if seen[p] {
				t.Fatalf("PID %d handed out twice", p)
			}
			seen[p] = true
		}
		if len(seen) != n {
			t.Fatalf("%d accounts, want %d", len(seen), n)
		}
	})
	t.Run("name and password rules", func(t *testing.T) {
		s := open(t)
		for _, name := range []string{strings.Repeat("n", accounts.MaxNameLen+1), "bell\a", "\xff\xfe"} {
			if _, err := s.Add(ctx, accounts.NewAccount{Name: name, Password: "x"}); !errors.Is(err, accounts.ErrBadName) {
				t.Fatalf("name %q: %v, want ErrBadName", name, err)
			}
		}
		long := strings.Repeat("p", accounts.MaxPasswordLen+1)
		if _, err := s.Add(ctx, accounts.NewAccount{Name: "dave", Password: long}); !errors.Is(err, accounts.ErrBadPassword) {
			t.Fatalf("long password: %v, want ErrBadPassword", err)
		}
		if _, err := s.Add(ctx, accounts.NewAccount{Name: strings.Repeat("é", accounts.MaxNameLen/2), Password: "x"}); err != nil {
			t.Fatalf("name of MaxNameLen bytes: %v", err)
		}
		if _, err := s.SetPassword(ctx, "guest", long); !errors.Is(err, accounts.ErrBadPassword) {
			t.Fatalf("SetPassword with a long password: %v, want ErrBadPassword", err)
		}
	})
}
