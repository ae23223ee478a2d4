// Package pgtest starts a real, throwaway PostgreSQL server for tests: Debian's
// postgresql package's initdb into a temporary directory, then pg_ctl with the server
// listening only on a Unix socket in that directory (no TCP port at all), stopped and
// removed when the test ends. No mock: the store tests run against the same server
// binary a deployment uses.
//
// When PostgreSQL is not installed, Start skips the test with a message saying how to
// install it, except under CI (CI=true), where the test fails: CI installs it
// (.ci/run), so a missing server there is a broken machine, not a reason to pass.
//
// PostgreSQL refuses to run as root; when the test runs as root, initdb and the server
// run as the "postgres" system user the Debian package creates.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Server is a running throwaway PostgreSQL server.
type Server struct {
	// Dir holds the cluster (Dir/data) and the Unix socket.
	Dir string
	// DSN connects to the "postgres" database as the superuser over the socket,
	// in the key=value form pgx and libpq accept.
	DSN string

	bin      string
	cred     *syscall.Credential
	settings []string // -c name=value of every start
}

// Options configures Launch.
type Options struct {
	// Settings are server settings given to every start of the server as
	// name=value (postgres -c), after the package's own: e.g.
	// "shared_preload_libraries=pg_stat_statements".
	Settings []string
}

// ErrNotInstalled is returned by Launch (and BinDir) when PostgreSQL's server
// programs are not installed.
var ErrNotInstalled = errors.New("PostgreSQL is not installed (initdb and pg_ctl not found; on Debian: apt-get install postgresql)")

var dbSeq atomic.Uint64

// BinDir returns the directory holding initdb and pg_ctl (the newest version under
// /usr/lib/postgresql, or the directory of an initdb on PATH), or ErrNotInstalled.
func BinDir() (string, error) {
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin"); len(dirs) > 0 {
		sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
				return d, nil
			}
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNotInstalled
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start starts a server for tb and stops it when tb ends. It skips tb when
// PostgreSQL is missing, unless CI=true.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartWith(tb, Options{})
}

// StartWith is Start with options.
func StartWith(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Launch(opts)
	if errors.Is(err, ErrNotInstalled) {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("pgtest: %v (CI installs it: .ci/run)", err)
		}
		tb.Skipf("pgtest: %v; skipping", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Logf("pgtest: %v", err)
		}
	})
	return s
}

// Launch initializes a cluster in a new temporary directory and starts a server
// on it, for programs that are not tests (benchmark commands); Close stops it
// and removes the directory.
func Launch(opts Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gamewire-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{Dir: dir, bin: bin, settings: opts.Settings}
	if err := s.init(); err != nil {
		s.Close()
		return nil, err
	}
	s.DSN = fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", dir)
	return s, nil
}

func (s *Server) init() error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("pgtest: running as root and there is no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.Dir, uid, gid); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	if err := os.Chmod(s.Dir, 0o755); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if out, err := s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return s.StartAgain()
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// StartAgain starts the server on its cluster after Stop (and is how Launch
// starts it the first time). It returns once the server accepts connections.
func (s *Server) StartAgain() error {
	// Only a Unix socket in Dir; fsync off: the cluster is thrown away.
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.Dir)
	for _, kv := range s.settings {
		opts += fmt.Sprintf(" -c '%s'", kv)
	}
	if out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "server.log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
		return fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server (fast shutdown: open sessions are ended, their
// transactions rolled back), keeping the cluster for StartAgain.
func (s *Server) Stop() error {
	if out, err := s.run("pg_ctl", "-D", s.data(), "-m", "fast", "-w", "stop"); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// Close stops the server if it runs (immediate shutdown) and removes its
// directory.
func (s *Server) Close() error {
	var err error
	if _, statErr := os.Stat(filepath.Join(s.data(), "postmaster.pid")); statErr == nil {
		if out, e := s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop"); e != nil {
			err = fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", e, out)
		}
	}
	return errors.Join(err, os.RemoveAll(s.Dir))
}

// PID returns the server's process id (the postmaster), or 0 when it is not
// running.
func (s *Server) PID() int {
	b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, _ := strconv.Atoi(string(bytes.TrimSpace(line)))
	return pid
}

// NewDatabase creates an empty database on the server and returns its DSN, so each
// test (or each node of a topology test) can have a schema of its own.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	dsn, err := s.CreateDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// CreateDatabase creates an empty database and returns its DSN (key=value).
func (s *Server) CreateDatabase() (string, error) {
	name := fmt.Sprintf("gw_%d_%d", os.Getpid(), dbSeq.Add(1))
	if out, err := s.run("psql", "-h", s.Dir, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w\n%s", err, out)
	}
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", s.Dir, name), nil
}

// URL returns the postgres:// form of a DSN CreateDatabase returned (what
// `gamewire serve --store` takes): the same database over the same socket.
func (s *Server) URL(dsn string) string {
	db := "postgres"
	for _, f := range strings.Fields(dsn) {
		if v, ok := strings.CutPrefix(f, "dbname="); ok {
			db = v
		}
	}
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=5432&sslmode=disable", db, url.QueryEscape(s.Dir))
}

// Restart stops the server and starts it again on the same cluster after down
// (for tests of clients reconnecting).
func (s *Server) Restart(tb testing.TB, down time.Duration) {
	tb.Helper()
	if err := s.Stop(); err != nil {
		tb.Fatal(err)
	}
	time.Sleep(down)
	if err := s.StartAgain(); err != nil {
		tb.Fatal(err)
	}
}

func (s *Server) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, name)
	if _, err := os.Stat(path); err != nil {
		if p, err := exec.LookPath(name); err == nil {
			path = p
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGHOST="+s.Dir)
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	// Output goes to a file, not a pipe: pg_ctl start leaves the server running
	// with the descriptors it inherited, and a pipe would keep Run waiting for it.
	f, err := os.CreateTemp("", "pgtest-out-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	return bytes.TrimSpace(out), err
}
