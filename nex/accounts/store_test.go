package accounts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

func TestStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	s, created, err := Open(ctx, dir)
	if err != nil || !created {
		t.Fatalf("Open: %v created=%v", err, created)
	}
	defer s.Close()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v %v", fi.Mode(), err)
	}

	// The special accounts exist; guest has the published password's keys.
	list, err := s.List(ctx)
	if err != nil || len(list) != len(auth.SpecialAccounts) {
		t.Fatalf("List: %v %v", list, err)
	}
	g, err := s.AccountByName(ctx, "GUEST")
	want := kerberos.DeriveKey(auth.GuestPassword, 100)
	if err != nil || g.PID != 100 || g.KeyNEX != want {
		t.Fatalf("guest: %+v %v", g, err)
	}
	if rv, err := s.AccountByPID(ctx, 2); err != nil || rv.Name != "Quazal Rendez-Vous" {
		t.Fatalf("Quazal Rendez-Vous: %+v %v", rv, err)
	}
	key, err := s.SecureKey(ctx, auth.DeriveNEX)
	if err != nil || len(key) != 16 {
		t.Fatalf("SecureKey: %v", err)
	}

	// Add picks PIDs from FirstUserPID and names them by PID.
	a, err := s.Add(ctx, NewAccount{Password: "hunter2"})
	if err != nil || a.PID != FirstUserPID || a.Name != "1000" || a.KeyNEX != kerberos.DeriveKey("hunter2", 1000) {
		t.Fatalf("Add: %+v %v", a, err)
	}
	b, err := s.Add(ctx, NewAccount{Name: "Alice", Password: "pw"})
	if err != nil || b.PID != 1001 {
		t.Fatalf("Add Alice: %+v %v", b, err)
	}
	if _, err := s.Add(ctx, NewAccount{Name: "alice", Password: "pw"}); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate name (case-insensitive): %v", err)
	}
	if _, err := s.Add(ctx, NewAccount{PID: 2, Password: "pw"}); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate PID: %v", err)
	}
	if _, err := s.Add(ctx, NewAccount{Name: "bob"}); !errors.Is(err, ErrEmptyPass) {
		t.Fatalf("empty password: %v", err)
	}
	if _, err := s.Add(ctx, NewAccount{PID: 1 << 63, Password: "x"}); !errors.Is(err, ErrBadPID) {
		t.Fatalf("PID beyond int64: %v", err)
	}
	sw, err := s.Add(ctx, NewAccount{PID: 1405107338776927049, Password: "switch"})
	if err != nil || sw.KeySwitch != kerberos.DeriveKeySwitch("switch", 1405107338776927049) {
		t.Fatalf("64-bit PID: %+v %v", sw, err)
	}

	// SetPassword by name or by PID.
	if _, err := s.SetPassword(ctx, "1001", "new"); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.AccountByName(ctx, "alice"); b.KeyNEX != kerberos.DeriveKey("new", 1001) {
		t.Fatal("password not changed")
	}
	if _, err := s.SetPassword(ctx, "nobody", "x"); !errors.Is(err, auth.ErrNoAccount) {
		t.Fatalf("SetPassword of nobody: %v", err)
	}
	if _, err := s.AccountByPID(ctx, 4242); !errors.Is(err, auth.ErrNoAccount) {
		t.Fatalf("unknown PID: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Reopening keeps everything and does not re-seed (the secure key is stable).
	s2, created, err := Open(ctx, dir)
	if err != nil || created {
		t.Fatalf("reopen: %v created=%v", err, created)
	}
	defer s2.Close()
	key2, _ := s2.SecureKey(ctx, auth.DeriveNEX)
	if string(key) != string(key2) {
		t.Fatal("secure server key changed on reopen")
	}
	if list, _ := s2.List(ctx); len(list) != len(auth.SpecialAccounts)+3 {
		t.Fatalf("reopened list: %d accounts", len(list))
	}
	var _ auth.Accounts = s2
}

// TestNameAndPasswordBounds: names longer than MaxNameLen, not UTF-8 or with a
// control character (a terminal escape), and passwords longer than MaxPasswordLen
// are refused with an error naming the bound; the limits themselves are accepted.
func TestNameAndPasswordBounds(t *testing.T) {
	ctx := context.Background()
	s, _, err := Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name, password string
		want           error
		says           string
	}{
		{strings.Repeat("n", 65534), "pw", ErrBadName, "65534 bytes, at most 64"},
		{strings.Repeat("n", MaxNameLen+1), "pw", ErrBadName, "at most 64"},
		{"\x1b[31mred", "pw", ErrBadName, "control character U+001B"},
		{"tab\there", "pw", ErrBadName, "control character"},
		{"bad\xffutf8", "pw", ErrBadName, "not UTF-8"},
		{"long-pass", strings.Repeat("p", MaxPasswordLen+1), ErrBadPassword, "257 bytes, at most 256"},
	} {
		_, err := s.Add(ctx, NewAccount{Name: tc.name, Password: tc.password})
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Add(%.20q): %v, want %v saying %q", tc.name, err, tc.want, tc.says)
		}
		if len(err.Error()) > 200 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
	}
	if _, err := s.Add(ctx, NewAccount{Name: strings.Repeat("é", MaxNameLen/2), Password: strings.Repeat("p", MaxPasswordLen)}); err != nil {
		t.Fatalf("the limits themselves: %v", err)
	}
	if _, err := s.SetPassword(ctx, "guest", strings.Repeat("p", MaxPasswordLen+1)); !errors.Is(err, ErrBadPassword) {
		t.Fatalf("SetPassword beyond the limit: %v", err)
	}
}
