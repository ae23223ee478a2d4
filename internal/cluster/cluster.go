// Package cluster runs a game the way docs/deploy.md deploys it, on one machine,
// for tests and benchmarks: the gamewire binary built once, a throwaway PostgreSQL
// server (internal/pgtest) or an SQLite data directory, one `serve --role auth`
// process and N `serve --role secure` processes on 127.0.0.1 with free ports. The
// nodes are real child processes, so a test can kill one with SIGKILL (a crash: no
// withdrawal, no cleanup) or restart it, and a benchmark can read each one's CPU
// time apart from its own.
//
// Start returns the running cluster; Close stops everything. StartT is the test
// form (skips without PostgreSQL outside CI, stops everything when the test ends).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/pgstore"
)

// AccessKey is the access key every node of a cluster serves with (serve's
// default).
const AccessKey = "3d37fbdb"

// Options configures Start.
type Options struct {
	// Binary is a gamewire binary (Build); empty builds one into the
	// cluster's directory.
	Binary string
	// Secure is the number of secure nodes; 0 runs one `serve --role all`
	// process instead of the auth + secure topology.
	Secure int
	// SQLite keeps the store in an SQLite data directory shared by the
	// processes instead of PostgreSQL.
	SQLite bool
	// Postgres is the PostgreSQL server to create the game's database on; nil
	// launches one (and Close stops it). Ignored with SQLite.
	Postgres *pgtest.Server
	// PostgresSettings are given to a PostgreSQL server the cluster launches
	// (pgtest.Options.Settings).
	PostgresSettings []string
	// StoreQuery is appended to the --store URL's query (e.g.
	// "statement_timeout=3000&connect_timeout=2").
	StoreQuery string
	// Heartbeat is every secure node's --heartbeat (default 2 s).
	Heartbeat time.Duration
	// Args are further serve flags every process gets.
	Args []string
	// Ready bounds how long Start waits for every node to serve (default 60 s).
	Ready time.Duration
}

// Cluster is a running game.
type Cluster struct {
	// Dir holds the binary (when built here), the data directory and the
	// nodes' logs.
	Dir string
	// Data is the --data directory every process shares (the SQLite store,
	// DataStore bodies).
	Data string
	// PG is the PostgreSQL server (nil on SQLite); DSN the game's database on
	// it in key=value form, StoreURL the same as --store takes it.
	PG       *pgtest.Server
	DSN      string
	StoreURL string
	// Store is the cluster's own handle on the game's store, for setting up
	// accounts and reading what the nodes wrote: *pgstore.Store or
	// *accounts.Store.
	Store Store
	// Auth is the authentication server (the `--role all` process when
	// Options.Secure is 0); Secure the secure nodes, in order.
	Auth   *Node
	Secure []*Node

	binary   string
	ownPG    bool
	closers  []func() error
	closeOne sync.Once
}

// Store is what the cluster's tests and benchmarks use of the game's store
// (pgstore.Store and accounts.Store both have it).
type Store interface {
	Add(ctx context.Context, n accounts.NewAccount) (auth.Account, error)
	nodes.Registry
	Close() error
}

// Build builds cmd/gamewire of the module this package belongs to into dir and
// returns the binary's path. It runs `go build` in the module's directory, found
// with `go list`, so it works from any module that replaces gamewire with a
// local copy (bench/).
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("cluster: building gamewire needs the go command on PATH: %w", err)
	}
	out, err := exec.CommandContext(ctx, goBin, "list", "-m", "-f", "{{.Dir}}", "github.com/gamewire/gamewire").Output()
	if err != nil {
		return "", fmt.Errorf("cluster: find the gamewire module: %w", err)
	}
	root := strings.TrimSpace(string(out))
	bin := filepath.Join(dir, "gamewire")
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/gamewire")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cluster: go build ./cmd/gamewire in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// StartT starts a cluster for tb and closes it when tb ends, building the
// gamewire binary into tb's temporary directory unless opts.Binary names one.
// Without PostgreSQL (and not SQLite) tb is skipped, except under CI=true where
// it fails (pgtest.Start).
func StartT(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	if opts.Binary == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		bin, err := Build(ctx, tb.TempDir())
		cancel()
		if err != nil {
			tb.Fatal(err)
		}
		opts.Binary = bin
	}
	if !opts.SQLite && opts.Postgres == nil {
		opts.Postgres = pgtest.StartWith(tb, pgtest.Options{Settings: opts.PostgresSettings})
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			for _, n := range append([]*Node{c.Auth}, c.Secure...) {
				if n != nil {
					tb.Logf("%s output:\n%s", n.Name, n.Output())
				}
			}
		}
		c.Close()
	})
	return c
}

// Start starts a cluster: the store, then the authentication server and the
// secure nodes, and returns once every secure node has announced itself in the
// store and the authentication server (or the all-in-one process) has printed
// its banner.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	dir, err := os.MkdirTemp("", "gamewire-cluster-")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c = &Cluster{Dir: dir, Data: filepath.Join(dir, "data")}
	c.closers = append(c.closers, func() error { return os.RemoveAll(dir) })
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if err := os.MkdirAll(c.Data, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if c.binary = opts.Binary; c.binary == "" {
		if c.binary, err = Build(ctx, dir); err != nil {
			return nil, err
		}
	}
	if opts.Ready == 0 {
		opts.Ready = time.Minute
	}
	if err := c.openStore(ctx, opts); err != nil {
		return nil, err
	}
	common := []string{"serve", "--data", c.Data}
	if c.StoreURL != "" {
		common = append(common, "--store", c.StoreURL)
	}
	if opts.Heartbeat > 0 {
		common = append(common, "--heartbeat", opts.Heartbeat.String())
	}
	common = append(common, opts.Args...)

	authAddr, err := freeUDP()
	if err != nil {
		return nil, err
	}
	if opts.Secure == 0 {
		secAddr, err := freeUDP()
		if err != nil {
			return nil, err
		}
		dsAddr, err := freeTCP()
		if err != nil {
			return nil, err
		}
		c.Auth = c.newNode("all", "", authAddr, append(common, "--role", "all", "--listen", authAddr,
			"--secure-listen", secAddr, "--datastore-listen", dsAddr))
		c.Auth.DataStoreAddr = dsAddr
	} else {
		c.Auth = c.newNode("auth", "", authAddr, append(common, "--role", "auth", "--listen", authAddr))
		for i := range opts.Secure {
			// --listen is not served by a secure node but must not clash.
			unused, err := freeUDP()
			if err != nil {
				return nil, err
			}
			secAddr, err := freeUDP()
			if err != nil {
				return nil, err
			}
			dsAddr, err := freeTCP()
			if err != nil {
				return nil, err
			}
			id := fmt.Sprintf("node%d", i+1)
			n := c.newNode("secure", id, secAddr, append(common, "--role", "secure", "--node-id", id, "--listen", unused,
				"--secure-listen", secAddr, "--datastore-listen", dsAddr))
			n.DataStoreAddr = dsAddr
			c.Secure = append(c.Secure, n)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, opts.Ready)
	defer cancel()
	started := time.Now()
	for _, n := range append([]*Node{c.Auth}, c.Secure...) {
		if err := n.start(); err != nil {
			return nil, err
		}
	}
	if err := c.Auth.WaitOutput(rctx, "authentication server on"); err != nil {
		return nil, err
	}
	for _, n := range c.Secure {
		if err := c.WaitLive(rctx, n, started); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// openStore creates the game's store (the database and its schema, the special
// accounts) before the processes start, so they do not race to.
func (c *Cluster) openStore(ctx context.Context, opts Options) error {
	if opts.SQLite {
		st, _, err := accounts.Open(ctx, c.Data)
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		c.Store = st
		c.closers = append(c.closers, st.Close)
		return nil
	}
	c.PG = opts.Postgres
	if c.PG == nil {
		pg, err := pgtest.Launch(pgtest.Options{Settings: opts.PostgresSettings})
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		c.PG, c.ownPG = pg, true
		c.closers = append(c.closers, pg.Close)
	}
	dsn, err := c.PG.CreateDatabase()
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.DSN, c.StoreURL = dsn, c.PG.URL(dsn)
	if opts.StoreQuery != "" {
		c.StoreURL += "&" + opts.StoreQuery
	}
	st, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.Store = st
	c.closers = append(c.closers, st.Close)
	return nil
}

// Close stops every process (SIGTERM, then SIGKILL after 5 s), closes the store,
// stops a PostgreSQL server the cluster launched and removes the directory.
func (c *Cluster) Close() error {
	var errs []error
	c.closeOne.Do(func() {
		var wg sync.WaitGroup
		for _, n := range append([]*Node{c.Auth}, c.Secure...) {
			if n != nil {
				wg.Go(func() { n.Stop(5 * time.Second) })
			}
		}
		wg.Wait()
		for i := len(c.closers) - 1; i >= 0; i-- {
			errs = append(errs, c.closers[i]())
		}
	})
	return errors.Join(errs...)
}

// WaitLive waits until secure node n has heartbeated after since: it serves.
func (c *Cluster) WaitLive(ctx context.Context, n *Node, since time.Time) error {
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	for {
		ns, err := c.Store.Nodes(ctx)
		if err == nil {
			for _, x := range ns {
				if x.ID == n.ID && x.Heartbeat.After(since) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: %s did not announce itself (last error %v):\n%s", n.Name, err, n.Output())
		case <-done:
			return fmt.Errorf("cluster: %s exited:\n%s", n.Name, n.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// AuthAddr is where clients log in.
func (c *Cluster) AuthAddr() string { return c.Auth.Addr }

// NodeOfPort returns the secure node serving on the UDP port of a station url
// (nex.Session.SecureURL's "port"), or nil.
func (c *Cluster) NodeOfPort(port string) *Node {
	for _, n := range c.Secure {
		if _, p, _ := net.SplitHostPort(n.Addr); p == port {
			return n
		}
	}
	return nil
}

func (c *Cluster) newNode(role, id, addr string, args []string) *Node {
	name := role
	if id != "" {
		name = id
	}
	return &Node{Name: name, Role: role, ID: id, Addr: addr, bin: c.binary, args: args, log: filepath.Join(c.Dir, name+".log")}
}

func freeUDP() (string, error) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cluster: free UDP port: %w", err)
	}
	defer pc.Close()
	return pc.LocalAddr().String(), nil
}

func freeTCP() (string, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cluster: free TCP port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Node is one gamewire process of the cluster.
type Node struct {
	// Name is "auth", "all" or the secure node's id.
	Name string
	// Role is the --role it runs with; ID its --node-id (secure nodes).
	Role, ID string
	// Addr is the UDP address it serves PRUDP on: the authentication server's
	// for auth and all, the secure server's for a secure node.
	Addr string
	// DataStoreAddr is its DataStore HTTP endpoint (not for auth).
	DataStoreAddr string

	bin  string
	args []string
	log  string // the process's stdout and stderr, appended across restarts

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func (n *Node) start() error {
	f, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "--- %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), strings.Join(n.args, " "))
	cmd := exec.Command(n.bin, n.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cluster: start %s: %w", n.Name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	n.mu.Lock()
	n.cmd, n.done = cmd, done
	n.mu.Unlock()
	return nil
}

// Restart starts a node that was killed or stopped again, with the same flags
// and addresses, and waits until it serves (a secure node: until it announced
// itself in the store).
func (c *Cluster) Restart(ctx context.Context, n *Node) error {
	if n.Running() {
		return fmt.Errorf("cluster: restart %s: it is still running", n.Name)
	}
	started := time.Now()
	if err := n.start(); err != nil {
		return err
	}
	if n.Role == "secure" {
		return c.WaitLive(ctx, n, started)
	}
	return n.WaitOutput(ctx, "authentication server on")
}

// Kill ends the process with SIGKILL, as a crash does: no withdrawal from the
// registry, no cleanup of its players' participations. It returns once the
// process is gone.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	cmd.Process.Kill()
	<-done
}

// Stop ends the process gracefully (SIGTERM: it withdraws), killing it after
// grace.
func (n *Node) Stop(grace time.Duration) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
	}
}

// Running reports whether the process runs.
func (n *Node) Running() bool {
	n.mu.Lock()
	done := n.done
	n.mu.Unlock()
	select {
	case <-done:
		return false
	default:
		return done != nil
	}
}

// PID is the process id of the current process.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd.Process.Pid
}

// Output returns what the process (and its earlier runs) printed.
func (n *Node) Output() string {
	b, _ := os.ReadFile(n.log)
	return string(b)
}

// WaitOutput waits until the current run's output contains s.
func (n *Node) WaitOutput(ctx context.Context, s string) error {
	for {
		out := n.Output()
		if i := strings.LastIndex(out, "\n--- "); i >= 0 {
			out = out[i:]
		}
		if strings.Contains(out, s) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: no %q from %s: %w\n%s", s, n.Name, ctx.Err(), n.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// CPU returns the user and system CPU time the node's process has used, 0
// when it cannot be read (not Linux).
func (n *Node) CPU() time.Duration { return ProcessCPU(n.PID()) }

// clockTick is USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTick = 100

// ProcessCPU returns a process's user and system CPU time, with that of its
// waited-for children; 0 when it cannot be read.
//
// /proc/PID/stat counts in 10 ms ticks, so a process that has run for less
// than a tick reads 0 there; the time its live threads ran is also read in
// nanoseconds from /proc/PID/task/TID/schedstat, and the larger of the two
// (stat also holds threads that have exited) is taken. The children's time
// is only in stat.
func ProcessCPU(pid int) time.Duration {
	f := statFields(pid)
	// f[0] is field 3 (state); utime, stime, cutime, cstime are fields 14-17.
	if len(f) < 15 {
		return 0
	}
	var ticks [4]int64
	for i, s := range f[11:15] {
		ticks[i], _ = strconv.ParseInt(s, 10, 64)
	}
	own := time.Duration(ticks[0]+ticks[1]) * time.Second / clockTick
	children := time.Duration(ticks[2]+ticks[3]) * time.Second / clockTick
	return max(own, threadsRun(pid)) + children
}

// threadsRun returns the sum of the first field of /proc/PID/task/*/schedstat,
// the nanoseconds each live thread has run; 0 when it cannot be read.
func threadsRun(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(dir + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// statFields returns the fields of /proc/PID/stat after the command name
// (field 3 onwards); nil when it cannot be read.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// PostgresCPU returns the CPU time of the PostgreSQL server: the postmaster and
// every process it started that still runs (backends, background workers), with
// what its exited children used. 0 without PostgreSQL.
func (c *Cluster) PostgresCPU() time.Duration {
	if c.PG == nil {
		return 0
	}
	root := c.PG.PID()
	if root == 0 {
		return 0
	}
	total := ProcessCPU(root)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		if parentPID(pid) == root {
			total += ProcessCPU(pid)
		}
	}
	return total
}

func parentPID(pid int) int {
	f := statFields(pid) // f[1] is field 4, the parent's PID
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
