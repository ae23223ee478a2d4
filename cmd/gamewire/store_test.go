package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/ranking"
)

// postgresURL turns a pgtest DSN (key=value over a Unix socket) into the
// postgres:// URL form --store takes.
func postgresURL(t *testing.T, dsn string) string {
	t.Helper()
	kv := map[string]string{}
	for _, f := range strings.Fields(dsn) {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	return "postgres://" + kv["user"] + "@/" + kv["dbname"] + "?host=" + url.QueryEscape(kv["host"]) + "&sslmode=disable"
}

// TestServePostgres: accounts --store adds an account to a PostgreSQL
// database; serve --store postgres://... logs it in and keeps rankings and
// DataStore metadata there (a ranking upload and get, a DataStore put and get),
// DataStore bodies in --data, and nothing in an SQLite file.
func TestServePostgres(t *testing.T) {
	srv := pgtest.Start(t)
	store := postgresURL(t, srv.NewDatabase(t))
	dir := t.TempDir()
	// accounts --store manages the same database.
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--store", store, "--name", "alice", "--password", "a secret"); err != nil ||
		!strings.Contains(out, `added account PID 1000 name "alice"`) {
		t.Fatalf("accounts add --store: %v\n%s", err, out)
	}
	if out, err := runAccountsCLI(t, "", "accounts", "list", "--store", store); err != nil || !strings.Contains(out, "alice") || !strings.Contains(out, "guest") {
		t.Fatalf("accounts list --store: %v\n%s", err, out)
	}
	if _, err := runAccountsCLI(t, "", "accounts", "list", "--store", "sqlite:///x"); err == nil {
		t.Fatal("accounts list --store sqlite:///x succeeded")
	}
	addr, out, stop := startServeNEX(t, dir, "--store", store)
	if !strings.Contains(out.String(), "postgres://") {
		t.Fatalf("banner does not name the PostgreSQL store:\n%s", out)
	}
	alice := guestLogin()
	alice.user, alice.password = "alice", "a secret"
	ctx, cancel := context.WithTimeout(context.Background(), alice.timeout)
	sess, err := alice.login(ctx, addr)
	cancel()
	if err != nil || sess.PID != 1000 {
		t.Fatalf("login as alice: %v", err)
	}
	closeSession(sess)
	var cmd *cobra.Command
	var cout *bytes.Buffer

	upload := nexRankingOptions{loginOptions: guestLogin(), server: addr, category: 5, score: 4321,
		order: "desc", update: "best", groups: "1,2", param: 9}
	cmd, cout = clientCmd()
	if err := runNEXRanking(cmd, &upload, true); err != nil {
		t.Fatalf("upload: %v\n%s", err, cout)
	}
	get := nexRankingOptions{loginOptions: guestLogin(), server: addr, category: 5, mode: "global", length: 10, groupIndex: 255}
	cmd, cout = clientCmd()
	if err := runNEXRanking(cmd, &get, false); err != nil {
		t.Fatalf("get: %v\n%s", err, cout)
	}
	if !strings.Contains(cout.String(), "1 entries in all") || !strings.Contains(cout.String(), "score 4321") {
		t.Fatalf("ranking get:\n%s", cout)
	}

	file := filepath.Join(t.TempDir(), "level.bin")
	if err := os.WriteFile(file, []byte("a level body"), 0o600); err != nil {
		t.Fatal(err)
	}
	put := nexDataStoreOptions{loginOptions: guestLogin(), server: addr, tags: []string{"x"}, permission: "everyone", period: 90}
	cmd, cout = clientCmd()
	if err := runNEXDataStorePut(cmd, &put, file); err != nil {
		t.Fatalf("put: %v\n%s", err, cout)
	}
	dsGet := nexDataStoreOptions{loginOptions: guestLogin(), server: addr}
	cmd, cout = clientCmd()
	if err := runNEXDataStoreGet(cmd, &dsGet, "1"); err != nil || !strings.Contains(cout.String(), "a level body") {
		t.Fatalf("datastore get: %v\n%s", err, cout)
	}
	stop()

	// What serve stored is in the database; the body in --data; no SQLite file.
	ctx = context.Background()
	s, err := pgstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cat, err := s.Ranking().Category(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Ranking().Count(ctx, ranking.Query{Category: cat, GroupIndex: ranking.NoGroup}); err != nil || n != 1 {
		t.Fatalf("scores in PostgreSQL: %d %v", n, err)
	}
	if o, err := s.DataStore().Object(ctx, 1); err != nil || o.Size != 12 {
		t.Fatalf("object in PostgreSQL: %+v %v", o, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "datastore", "1", "1")); err != nil {
		t.Fatalf("body not in the data directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "accounts.db")); err == nil {
		t.Fatal("serve --store created an SQLite store too")
	}
}

func TestServeStoreRefusesOtherSchemes(t *testing.T) {
	t.Parallel()
	if _, err := openBackend(context.Background(), t.TempDir(), "mysql://x"); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Fatalf("--store mysql://x: %v", err)
	}
}
