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
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
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

	bin  string
	cred *syscall.Credential
	tb   testing.TB
}

var dbSeq atomic.Uint64

// BinDir returns the directory holding initdb and pg_ctl (the newest version under
// /usr/lib/postgresql, or the directory of an initdb on PATH), or an error saying
// PostgreSQL is not installed.
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
	return "", errors.New("PostgreSQL is not installed (initdb and pg_ctl not found; on Debian: apt-get install postgresql)")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start starts a server for tb and stops it when tb ends. It skips tb when
// PostgreSQL is missing, unless CI=true.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := BinDir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("pgtest: %v (CI installs it: .ci/run)", err)
		}
		tb.Skipf("pgtest: %v; skipping", err)
	}
	dir, err := os.MkdirTemp("", "gamewire-pg-")
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	s := &Server{Dir: dir, bin: bin, tb: tb}
	tb.Cleanup(func() { s.stop(); os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("pgtest: running as root and there is no postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			tb.Fatalf("pgtest: %v", err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		tb.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	// Only a Unix socket in dir; fsync off: the cluster is thrown away.
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir)
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		tb.Fatalf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	s.DSN = fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", dir)
	return s
}

// NewDatabase creates an empty database on the server and returns its DSN, so each
// test (or each node of a topology test) can have a schema of its own.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("gw_%d_%d", os.Getpid(), dbSeq.Add(1))
	if out, err := s.run("psql", "-h", s.Dir, "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v\n%s", err, out)
	}
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", s.Dir, name)
}

// Restart stops the server and starts it again on the same cluster (for tests of
// clients reconnecting).
func (s *Server) Restart(tb testing.TB, down time.Duration) {
	tb.Helper()
	data := filepath.Join(s.Dir, "data")
	if out, err := s.run("pg_ctl", "-D", data, "-m", "fast", "-w", "stop"); err != nil {
		tb.Fatalf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
	time.Sleep(down)
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.Dir)
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(s.Dir, "server.log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		tb.Fatalf("pgtest: pg_ctl start: %v\n%s", err, out)
	}
}

func (s *Server) stop() {
	data := filepath.Join(s.Dir, "data")
	if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err != nil {
		return
	}
	if out, err := s.run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
		s.tb.Logf("pgtest: pg_ctl stop: %v\n%s", err, out)
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
