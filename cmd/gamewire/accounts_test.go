package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// runAccountsCLI runs gamewire with args (and stdin) and restores the accounts
// flags afterwards, so later tests see pristine flags.
func runAccountsCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetIn(strings.NewReader(stdin))
	rootCmd.SetArgs(args)
	defer func() {
		rootCmd.SetArgs(nil)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		rootCmd.SetIn(nil)
		resetFlags(accountsCmd.PersistentFlags())
		for _, c := range accountsCmd.Commands() {
			resetFlags(c.Flags())
		}
	}()
	err := rootCmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestAccountsCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	out, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--password", "hunter2")
	if err != nil || !strings.Contains(out, `added account PID 1000 name "1000"`) || !strings.Contains(out, "created account store") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if strings.Contains(out, "hunter2") {
		t.Fatal("the password was printed")
	}
	out, err = runAccountsCLI(t, "s3cret\n", "accounts", "add", "--data", dir, "--name", "alice", "--pid", "5000", "--password-stdin")
	if err != nil || !strings.Contains(out, `PID 5000 name "alice"`) {
		t.Fatalf("add from stdin: %v\n%s", err, out)
	}
	out, err = runAccountsCLI(t, "", "accounts", "list", "--data", dir)
	for _, want := range []string{"guest", "Quazal Rendez-Vous", "special", "alice", "5000", "user"} {
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("list lacks %q: %v\n%s", want, err, out)
		}
	}
	if _, err := runAccountsCLI(t, "", "accounts", "passwd", "--data", dir, "alice", "--password", "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", "ALICE", "--password", "x"); err == nil {
		t.Fatal("a duplicate name (another case) was accepted")
	}
	if _, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--password", "x", "--password-stdin"); err == nil {
		t.Fatal("both password sources accepted")
	}
	// The store holds the new password's key.
	s, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.AccountByName(context.Background(), "alice")
	if err != nil || a.KeyNEX != kerberos.DeriveKey("new", 5000) {
		t.Fatalf("passwd did not take: %v", err)
	}
}
