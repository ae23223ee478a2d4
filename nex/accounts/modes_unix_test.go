//go:build unix

package accounts

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// withUmask runs f with the process umask set to mask (the most permissive, 0, shows
// modes that come from the code, not from the environment). The umask is
// process-wide: the tests of this package do not run in parallel.
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// storeModes returns the modes of the store's files that exist.
func storeModes(t *testing.T, path string) map[string]os.FileMode {
	t.Helper()
	m := map[string]os.FileMode{}
	for _, suffix := range sideFiles {
		if fi, err := os.Stat(path + suffix); err == nil {
			m[filepath.Base(path+suffix)] = fi.Mode().Perm()
		}
	}
	return m
}

// TestStoreFilesPrivate: with umask 0, the database and the -wal and -shm files
// SQLite creates beside it (which hold the Kerberos keys too) are 0600.
func TestStoreFilesPrivate(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	var s *Store
	var err error
	withUmask(0, func() {
		s, _, err = Open(ctx, dir)
		if err == nil {
			_, err = s.Add(ctx, NewAccount{Name: "alice", Password: "pw"})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	modes := storeModes(t, s.Path())
	if _, ok := modes[FileName+"-wal"]; !ok {
		t.Fatalf("no -wal file to check: %v", modes)
	}
	for name, mode := range modes {
		if mode != 0o600 {
			t.Errorf("%s is %v, want 0600 (all: %v)", name, mode, modes)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory: %v %v", fi.Mode(), err)
	}
}

// TestStoreNarrowsOldModes: a store an earlier gamewire left 0644 in a 0755
// directory is narrowed to 0600 on open, with a warning for each file and one for
// the directory, which keeps its mode.
func TestStoreNarrowsOldModes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	s, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, FileName)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-shm", nil, 0o644); err != nil { // as SQLite left it
		t.Fatal(err)
	}
	os.Chmod(path+"-shm", 0o644)
	os.Chmod(dir, 0o755)
	var logs bytes.Buffer
	s, _, err = OpenWith(ctx, dir, &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, mode := range storeModes(t, path) {
		if mode != 0o600 {
			t.Errorf("%s is %v after open, want 0600", name, mode)
		}
	}
	for _, want := range []string{"data directory is open to other users", "now 0600"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q warning in:\n%s", want, logs.String())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o755 {
		t.Errorf("the directory's mode was changed to %v", fi.Mode().Perm())
	}
}

// TestOpenReadOnly: a read-only open of a missing store creates nothing and says
// so; of an existing one, it reads and refuses writes.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	typo := filepath.Join(base, "typo", "dir")
	if _, _, err := OpenWith(ctx, typo, &Options{ReadOnly: true}); !errors.Is(err, ErrNoStore) {
		t.Fatalf("read-only open of a missing directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "typo")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the read-only open created %s: %v", typo, err)
	}
	empty := filepath.Join(base, "empty")
	os.Mkdir(empty, 0o700)
	if _, _, err := OpenWith(ctx, empty, &Options{ReadOnly: true}); !errors.Is(err, ErrNoStore) {
		t.Fatalf("read-only open of an empty directory: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Fatalf("the read-only open created %v", ents)
	}
	dir := filepath.Join(base, "data")
	s, _, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, NewAccount{Name: "alice", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, created, err := OpenWith(ctx, dir, &Options{ReadOnly: true})
	if err != nil || created {
		t.Fatalf("read-only open: %v %v", err, created)
	}
	defer ro.Close()
	if a, err := ro.AccountByName(ctx, "alice"); err != nil || a.PID != FirstUserPID {
		t.Fatalf("read: %+v %v", a, err)
	}
	if _, err := ro.Add(ctx, NewAccount{Name: "bob", Password: "pw"}); err == nil {
		t.Fatal("a read-only store took a write")
	}
}
