package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gamewire/gamewire/dissect"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// runAccountsCLI runs gamewire with args, and stdin as its standard input.
func runAccountsCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := executeCLI(context.Background(), strings.NewReader(stdin), &out, &out, args...)
	return out.String(), err
}

func TestAccountsCLI(t *testing.T) {
	t.Parallel()
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

// TestAccountsListEscapes: names written into the store by another program (Add
// refuses them) reach the terminal escaped and the column stays narrow: no ESC byte,
// no 65,534-column padding.
func TestAccountsListEscapes(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", "plain", "--password", "pw"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, accounts.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"\x1b[31mred\x1b[0m", strings.Repeat("w", 65534), "evil\u202etxt.exe", "bad\xff"} {
		if _, err := db.Exec(`INSERT INTO accounts (pid, name, key_nex, key_switch, special, created) VALUES (?, ?, ?, ?, 0, 'now')`,
			6000+i, name, make([]byte, 16), make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out, err := runAccountsCLI(t, "", "accounts", "list", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out, "\x1b\u202e") || strings.Contains(out, "\xff") {
		t.Fatalf("a control character reached the output:\n%q", out)
	}
	for _, want := range []string{`"\x1b[31mred\x1b[0m"`, `"evil\u202etxt.exe"`, `"bad\xff"`, "plain", "wwww…"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %s:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("a line of %d columns: %.60q...", n, line)
		}
	}
	// Add refuses such names, and says why, before asking for a password.
	_, err = runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", "\x1b[31m")
	if err == nil || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("add of an escape sequence: %v", err)
	}
	_, err = runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", strings.Repeat("n", 100))
	if err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Fatalf("add of a long name: %v", err)
	}
	_, err = runAccountsCLI(t, strings.Repeat("p", 10000)+"\n", "accounts", "add", "--data", dir, "--password-stdin")
	if err == nil || !strings.Contains(err.Error(), "at most 256") {
		t.Fatalf("add with a long password: %v", err)
	}
}

// TestAccountsReadingCreatesNothing: list and passwd with a mistyped --data fail
// with a clear error and leave no directory behind.
func TestAccountsReadingCreatesNothing(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	typo := filepath.Join(base, "typo", "dir")
	for _, args := range [][]string{
		{"accounts", "list", "--data", typo},
		{"accounts", "passwd", "--data", typo, "alice", "--password", "pw"},
	} {
		_, err := runAccountsCLI(t, "", args...)
		if err == nil || !errors.Is(err, accounts.ErrNoStore) || !strings.Contains(err.Error(), "check --data") {
			t.Errorf("%v: %v", args, err)
		}
		if _, err := os.Stat(filepath.Join(base, "typo")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%v created %s", args, typo)
		}
	}
}

// TestAccountsExportKey: export-key prints a keys-file line that decode --keys
// reads, holding the key the server derives from the account's password (the
// secure server's by default; by PID or name, NEX or Switch derivation).
func TestAccountsExportKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--name", "alice", "--pid", "5000", "--password", "s3cret-pw"); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		pid  uint64
		key  func() [16]byte
	}{
		{nil, 2, nil},
		{[]string{"5000"}, 5000, func() [16]byte { return kerberos.DeriveKey("s3cret-pw", 5000) }},
		{[]string{"alice", "--switch"}, 5000, func() [16]byte { return kerberos.DeriveKeySwitch("s3cret-pw", 5000) }},
	} {
		out, err := runAccountsCLI(t, "", append([]string{"accounts", "export-key", "--data", dir}, c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		k, err := dissect.ParseKeys(strings.NewReader(out))
		if err != nil || len(k.KerberosKeys[c.pid]) != 16 {
			t.Fatalf("%v: keys file %q: %v", c.args, out, err)
		}
		if c.key != nil {
			if want := c.key(); !bytes.Equal(k.KerberosKeys[c.pid], want[:]) {
				t.Errorf("%v: key %x, want %x", c.args, k.KerberosKeys[c.pid], want)
			}
		}
	}
	if _, err := runAccountsCLI(t, "", "accounts", "export-key", "--data", dir, "nobody"); err == nil || !strings.Contains(err.Error(), "no such account") {
		t.Errorf("unknown account: %v", err)
	}
}
