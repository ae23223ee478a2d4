package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gamewire/gamewire/internal/pgtest"
)

// TestAccountsErrorsSayWhat: adding a name that exists blames the name (not
// the free PID picked for it), a taken PID blames the PID, passwd of an
// unknown account says so in words, and list --format json prints one
// object per account.
func TestAccountsErrorsSayWhat(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", "bob", "--password", "one secret"); err != nil {
		t.Fatalf("add bob: %v\n%s", err, out)
	}
	_, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", "bob", "--password", "two secret")
	if err == nil || !strings.Contains(err.Error(), `the name "bob" is taken`) || strings.Contains(err.Error(), "PID") {
		t.Errorf("add an existing name: %v", err)
	}
	_, err = runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--pid", "1000", "--name", "carol", "--password", "two secret")
	if err == nil || !strings.Contains(err.Error(), "PID 1000 is taken") {
		t.Errorf("add an existing PID: %v", err)
	}
	_, err = runAccountsCLI(t, "", "accounts", "passwd", "--data", dir, "nobody", "--password", "x secret")
	if err == nil || !strings.Contains(err.Error(), `no account is named "nobody" or has that PID`) {
		t.Errorf("passwd nobody: %v", err)
	}
	out, err := runAccountsCLI(t, "", "accounts", "list", "--data", dir, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var a struct {
			PID  uint64
			Name string
			Kind string
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("list --format json: %q: %v", line, err)
		}
		found = found || a.Name == "bob" && a.PID == 1000 && a.Kind == "user"
	}
	if !found {
		t.Errorf("list --format json lacks bob:\n%s", out)
	}
}

// TestAccountsListStoreReadsOnly: accounts list --store on a database serve
// never migrated fails saying so, and leaves the database as it was (no
// schema written); once migrated it lists.
func TestAccountsListStoreReadsOnly(t *testing.T) {
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	store := postgresURL(t, dsn)
	_, err := runAccountsCLI(t, "", "accounts", "list", "--store", store)
	if err == nil || !strings.Contains(err.Error(), "no gamewire schema") {
		t.Fatalf("list --store on an empty database: %v", err)
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var tables int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("list --store wrote %d tables (%v)", tables, err)
	}
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--store", store, "--name", "dave", "--password", "a secret"); err != nil {
		t.Fatalf("add --store: %v\n%s", err, out)
	}
	if out, err := runAccountsCLI(t, "", "accounts", "list", "--store", store); err != nil || !strings.Contains(out, "dave") {
		t.Fatalf("list --store after add: %v\n%s", err, out)
	}
}

// TestPostgresTLSHint: a server that refuses TLS under sslmode=require gets
// the hint; other errors are left alone.
func TestPostgresTLSHint(t *testing.T) {
	refused := errors.New("pgstore: connect postgres://db/x?sslmode=require: failed to connect to `host=db user=x database=x`: server refused TLS connection")
	if err := pgHint("postgres://db/x?sslmode=require", refused); !errors.Is(err, refused) || !strings.Contains(err.Error(), "sslmode=disable") {
		t.Errorf("pgHint: %v", err)
	}
	other := errors.New("password authentication failed")
	if err := pgHint("postgres://db/x", other); err != other {
		t.Errorf("pgHint of another error: %v", err)
	}
}
