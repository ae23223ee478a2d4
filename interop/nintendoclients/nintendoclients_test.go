package nintendoclients

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// holdSeconds keeps every session open past two of NintendoClients' 5 s PINGs
// (reliable, numbered on substream 0's sequence: docs/peers.md) before the
// last RMC call, so a peer that mishandles them stalls that call.
const holdSeconds = 12.5

// knownBugs are gamewire bugs these tests found that are not fixed yet, with
// where the fix goes (docs/interop.md). Their checks skip with the evidence
// instead of failing, so the tests stay green for everyone else; when a fix
// lands the check passes and logs that its entry can go, and deleting the
// entry makes a regression fail again.
var knownBugs = map[string]string{}

// knownBug fails the test, or skips it when the bug is listed in knownBugs.
func knownBug(t *testing.T, name, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if where, ok := knownBugs[name]; ok {
		t.Skipf("KNOWN GAMEWIRE BUG %s (%s): %s", name, where, msg)
	}
	t.Error(msg)
}

// fixed notes that a known bug's check passed.
func fixed(t *testing.T, name string) {
	t.Helper()
	if _, ok := knownBugs[name]; ok {
		t.Logf("known bug %s no longer shows: delete its knownBugs entry so a regression fails", name)
	}
}

// env returns the NintendoClients copy and the Python interpreter, or skips.
func env(t *testing.T) (dir, python string) {
	t.Helper()
	dir = os.Getenv("NINTENDOCLIENTS_DIR")
	if dir == "" {
		t.Skip("NINTENDOCLIENTS_DIR is not set: it must name a local copy of NintendoClients' nintendo/ package and anynet " +
			"(see docs/interop.md); skipping the NintendoClients interop tests")
	}
	for _, f := range []string{"nintendo/nex/prudp.py", "nintendo/nex/backend.py", "anynet/udp.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("NINTENDOCLIENTS_DIR=%s is not a NintendoClients copy: %v", dir, err)
		}
	}
	python = os.Getenv("NINTENDOCLIENTS_PYTHON")
	if python == "" {
		python = "python3"
	}
	p, err := exec.LookPath(python)
	if err != nil {
		t.Fatalf("NINTENDOCLIENTS_DIR is set but no Python interpreter %q: %v", python, err)
	}
	return dir, p
}

// needWebSocket fails a test that needs NintendoClients' WebSocket transport
// when the copy has only a placeholder for anynet's websocket.py (copies made
// before docs/interop.md listed it).
func needWebSocket(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "anynet", "websocket.py"))
	if err != nil || !bytes.Contains(b, []byte("def calculate_key_hash")) {
		t.Fatalf("%s/anynet/websocket.py is missing or a placeholder (%v): rebuild the copy with anynet's websocket.py and http.py "+
			"(docs/interop.md, \"Making the local copy\")", dir, err)
	}
}

// pyCmd runs one of the drivers next to this file.
func pyCmd(ctx context.Context, dir, python, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, python, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NINTENDOCLIENTS_DIR="+dir, "PYTHONDONTWRITEBYTECODE=1")
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// steps collects the "STEP name k=v ..." lines a driver prints.
type steps []string

func (s steps) find(name string) (string, bool) {
	for _, l := range s {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "STEP" && f[1] == name {
			return l, true
		}
	}
	return "", false
}

// beforeStopping returns the lines nc_server.py printed before it began to
// stop: after that, packets still in flight (gamewire's last delayed ACK
// arrives after its DISCONNECT) meet ports already unbound, which is the
// harness's doing, not a peer's.
func (s steps) beforeStopping() steps {
	for i, l := range s {
		if l == "STEP stopping" {
			return s[:i]
		}
	}
	return s
}

func (s steps) count(name string) int {
	n := 0
	for _, l := range s {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "STEP" && f[1] == name {
			n++
		}
	}
	return n
}

// field returns the integer value of key=N in line.
func field(t *testing.T, line, key string) int {
	t.Helper()
	m := regexp.MustCompile(`\b` + key + `=(\d+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no %s= in %q", key, line)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The accounts gamewire's server knows: the Quazal Rendez-Vous account whose
// key opens tickets on the secure server, guest with its published password,
// and a normal account named by its PID as NEX names them.
const (
	userPID      = 1800000123
	userPassword = "interop-Pa55"
)

// startGamewire serves gamewire's NEX authentication and secure servers on
// loopback ports and returns the authentication server's address.
func startGamewire(t *testing.T, cfg prudp.Config) string {
	t.Helper()
	store := &auth.Memory{}
	store.Add(2, "Quazal Rendez-Vous", "interop-secure-server-password")
	store.Add(100, "guest", "MMQea3n!fsik")
	store.Add(userPID, strconv.Itoa(userPID), userPassword)
	addr, _ := serveNEX(t, &nex.Server{Config: cfg, Accounts: store})
	return addr
}

// serveNEX runs srv's authentication and secure servers on loopback ports and
// returns the authentication server's address and a function that shuts it
// down (also run at the test's cleanup; once).
func serveNEX(t *testing.T, srv *nex.Server) (addr string, stop func()) {
	t.Helper()
	authPC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	securePC, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		authPC.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(authPC, securePC) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
			if err := <-done; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
				t.Errorf("gamewire server: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return authPC.LocalAddr().String(), stop
}

// TestNintendoClientsClientLogsInToGamewire runs NintendoClients' client
// (backend.connect + login, as its examples do) against gamewire's NEX server
// in V1 and both V0 modes: Login, the secure connection with the ticket,
// Health.PingDaemon, a hold past two PINGs, PingDaemon again, and graceful
// disconnects of both connections.
func TestNintendoClientsClientLogsInToGamewire(t *testing.T) {
	dir, python := env(t)
	script := "nc_client.py"
	for _, tc := range []struct {
		name   string
		cfg    prudp.Config
		args   []string
		normal bool // log in as the normal account (named by its PID) instead of guest
	}{
		{"v1", prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"},
			[]string{"--profile", "default", "--access-key", "3d37fbdb"}, true},
		{"v0-friends", prudp.Config{Dialect: prudp.NEXV0Friends, AccessKey: "ridfebb9", Kerberos: kerberos.Friends},
			[]string{"--profile", "friends", "--access-key", "ridfebb9"}, false},
		{"v0-games", prudp.Config{Dialect: prudp.NEXV0, AccessKey: "9f2b4678"},
			[]string{"--profile", "default", "--set", "prudp.version=0", "--access-key", "9f2b4678"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := startGamewire(t, tc.cfg)
			host, port, _ := net.SplitHostPort(addr)
			args := append([]string{"--host", host, "--port", port, "--hold", fmt.Sprint(holdSeconds), "--timeout", "50"}, tc.args...)
			wantPID := 100
			if tc.normal {
				wantPID = userPID
				args = append(args, "--user", strconv.Itoa(userPID), "--password", userPassword)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
			defer cancel()
			cmd := pyCmd(ctx, dir, python, script, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
			t.Logf("NintendoClients client:\n%s", stdout.String())
			if err != nil {
				t.Fatalf("NintendoClients client failed: %v\nstderr:\n%s", err, stderr.String())
			}
			line, ok := out.find("secure-connected")
			if !ok {
				t.Fatal("no secure connection")
			}
			if got := field(t, line, "pid"); got != wantPID {
				t.Errorf("secure connection for PID %d, want %d", got, wantPID)
			}
			for _, s := range []string{"rmc", "rmc-after-hold"} {
				if line, ok := out.find(s); !ok || !strings.Contains(line, "result=True") {
					t.Errorf("%s: Health.PingDaemon did not return true (%q)", s, line)
				}
			}
			if _, ok := out.find("disconnected"); !ok {
				t.Error("no graceful disconnect")
			}
			counters, _ := out.find("counters")
			// Two connections (authentication and secure) open for the hold:
			// at least two PINGs each, every one acknowledged by gamewire.
			pings, acks := field(t, counters, "pings_sent"), field(t, counters, "ping_acks")
			if pings < 4 || acks != pings {
				t.Errorf("PINGs: %d sent, %d acknowledged by gamewire (want >= 4, all acknowledged)", pings, acks)
			}
			if n := field(t, counters, "warnings"); n != 0 {
				t.Errorf("NintendoClients logged %d warnings about gamewire's packets", n)
			}
			t.Logf("NintendoClients resent %d packets", field(t, counters, "resends"))
		})
	}
}

// ncServer runs nc_server.py and returns its authentication address, its
// secure server's port and a function that stops it and returns every STEP
// line it printed.
func ncServer(t *testing.T, dir, python string, args ...string) (string, int, func() steps) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	if os.Getenv("NINTENDOCLIENTS_DEBUG") != "" {
		args = append(args, "--debug")
	}
	cmd := pyCmd(ctx, dir, python, "nc_server.py", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		lines steps
	)
	ready := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "READY ") {
				ready <- l
				continue
			}
			mu.Lock()
			lines = append(lines, l)
			mu.Unlock()
		}
	}()
	stop := func() steps {
		stdin.Close()
		<-readDone
		if err := cmd.Wait(); err != nil {
			t.Errorf("NintendoClients server: %v\nstderr:\n%s", err, stderr.String())
		} else if os.Getenv("NINTENDOCLIENTS_DEBUG") != "" {
			t.Logf("NintendoClients server's log:\n%s", stderr.String())
		}
		cancel()
		mu.Lock()
		defer mu.Unlock()
		return append(steps(nil), lines...)
	}
	select {
	case l := <-ready:
		return fmt.Sprintf("127.0.0.1:%d", field(t, l, "auth")), field(t, l, "secure"), stop
	case <-readDone:
	case <-time.After(30 * time.Second):
	}
	cmd.Process.Kill()
	stdin.Close()
	cmd.Wait()
	cancel()
	t.Fatalf("NintendoClients server did not start\nstderr:\n%s", stderr.String())
	return "", 0, nil
}

// TestGamewireLogsInToNintendoClientsServer runs gamewire's client (nex.Login)
// against a server made of NintendoClients' own classes: NintendoClients checks
// gamewire's SYN, CONNECT and the Kerberos request in it, issues the tickets,
// answers Register and Health.PingDaemon, and PINGs gamewire every 5 s on the
// reliable sequence while the session is held.
//
// The server runs with --tolerate-syn-session-id so that the rest of the flow
// is tested even while gamewire sends a non-zero session id in its SYN, which
// NintendoClients refuses; the syn-session-id subtest checks that one thing
// strictly (docs/interop.md).
func TestGamewireLogsInToNintendoClientsServer(t *testing.T) {
	dir, python := env(t)
	for _, tc := range []struct {
		name string
		cfg  prudp.Config
		args []string
		lite bool // PRUDP Lite over ws:// (the Switch profile), as gamewire login --dialect nex-lite does
	}{
		{"v1", prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"},
			[]string{"--profile", "default", "--access-key", "3d37fbdb"}, false},
		{"v0-friends", prudp.Config{Dialect: prudp.NEXV0Friends, AccessKey: "ridfebb9", Kerberos: kerberos.Friends},
			[]string{"--profile", "friends", "--access-key", "ridfebb9"}, false},
		{"v0-games", prudp.Config{Dialect: prudp.NEXV0, AccessKey: "9f2b4678"},
			[]string{"--profile", "default", "--set", "prudp.version=0", "--access-key", "9f2b4678"}, false},
		// NintendoClients' switch profile serves Lite over WebSocket (anynet's
		// websocket.py), ws:// as nc_server.py gives no TLS context; the secure
		// server is virtual port 2 of the same listener, announced at 0.0.0.1.
		{"lite-ws", prudp.Config{Dialect: prudp.NEXLite, AccessKey: "6f599f81", Kerberos: kerberos.Switch, Port: 1},
			[]string{"--profile", "switch", "--nex-version", "40000", "--access-key", "6f599f81"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lc := nex.LoginConfig{User: strconv.Itoa(userPID), Password: userPassword, Config: tc.cfg}
			args := append(tc.args, "--tolerate-syn-session-id", "--pid", strconv.Itoa(userPID), "--password", userPassword)
			var port int
			if tc.lite {
				needWebSocket(t, dir)
				port = freeTCPPort(t)
				args = append(args, "--port", strconv.Itoa(port))
				lc.Derivation = auth.DeriveSwitch
				lc.Dial = func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
					return lite.Dial(ctx, url, c, nil)
				}
			}
			addr, _, stop := ncServer(t, dir, python, args...)
			if tc.lite {
				addr = fmt.Sprintf("ws://127.0.0.1:%d/", port)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
			defer cancel()
			sess, err := nex.Login(ctx, addr, lc)
			if err != nil {
				lines := stop()
				t.Fatalf("gamewire login: %v\nNintendoClients server:\n%s", err, strings.Join(lines, "\n"))
			}
			if sess.PID != userPID || sess.ConnectionID == 0 {
				t.Errorf("session PID %d, connection id %d", sess.PID, sess.ConnectionID)
			}
			ping := func(when string) {
				res, err := sess.RMC.Call(ctx, rmc.ProtocolHealth, 1, nil)
				if err != nil || !bytes.Equal(res, []byte{1}) {
					t.Errorf("%s: Health.PingDaemon = %x, %v; want 01", when, res, err)
				}
			}
			ping("first call")
			time.Sleep(time.Duration(holdSeconds * float64(time.Second)))
			ping("after the hold")
			st := sess.Conn.Stats()
			if err := sess.Close(ctx); err != nil {
				t.Errorf("graceful close: %v", err)
			}
			lines := stop()
			t.Logf("NintendoClients server:\n%s", strings.Join(lines, "\n"))
			t.Logf("gamewire secure connection: %d packets in, %d out, %d retransmits, drops %v", st.PacketsIn, st.PacketsOut, st.Retransmits, st.Drops)
			if n := lines.count("ping-daemon"); n != 2 {
				t.Errorf("NintendoClients answered %d PingDaemon calls, want 2", n)
			}
			if _, ok := lines.find("register"); !ok {
				t.Error("NintendoClients saw no Register")
			}
			// NintendoClients' server PINGs every 5 s on the reliable sequence: the
			// second PingDaemon's response comes after them, so it only arrives if
			// gamewire counted them in its receive window.
			sent, acked := lines.count("ping-sent"), lines.count("ping-acked")
			if sent < 2 || acked != sent {
				t.Errorf("NintendoClients sent %d PINGs, gamewire acknowledged %d (want >= 2, all)", sent, acked)
			}
			t.Logf("gamewire sent %d PINGs of its own", lines.count("ping-received"))
			for _, l := range lines.beforeStopping() {
				if strings.HasPrefix(l, "STEP warning") || strings.HasPrefix(l, "STEP resend") {
					t.Errorf("NintendoClients: %s", l)
				}
			}
			t.Run("syn-session-id", func(t *testing.T) {
				if n := lines.count("tolerated"); n != 0 {
					l, _ := lines.find("tolerated")
					knownBug(t, "syn-session-id", "%d of gamewire's SYNs carried a non-zero session id (%s); NintendoClients' server refuses them "+
						"(\"Received invalid SYN packet\") and real consoles send 0 (testdata/prudp/vectors.json v1-terraria-syn)", n, l)
				} else {
					fixed(t, "syn-session-id")
				}
			})
		})
	}
}

// TestNintendoClientsClientLogsInToServeCommand is issue 9 as a user meets it:
// `gamewire serve` (the binary, built from this tree) with a default account
// store, and NintendoClients' client logging in as guest with the profile
// NintendoClients ships for that kind of server.
func TestNintendoClientsClientLogsInToServeCommand(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	for _, tc := range []struct {
		name       string
		serveArgs  []string
		clientArgs []string
		bug        string // the known bug that breaks this case, if any,
		bugSign    string // and how the client's error line shows it
	}{
		{"v1", []string{"--dialect", "nex-v1", "--access-key", "3d37fbdb"},
			[]string{"--profile", "default", "--access-key", "3d37fbdb"}, "", ""},
		// NintendoClients reads the 16-byte session key the friends profile
		// expects, then the target PID and the internal ticket's length from
		// the rest of gamewire's 32-byte key: the buffer read overflows.
		{"v0-friends", []string{"--dialect", "nex-v0-friends", "--access-key", "ridfebb9"},
			[]string{"--profile", "friends", "--access-key", "ridfebb9"}, "serve-friends-session-key", "STEP error type=OverflowError"},
		{"v0-games", []string{"--dialect", "nex-v0", "--access-key", "9f2b4678"},
			[]string{"--profile", "default", "--set", "prudp.version=0", "--access-key", "9f2b4678"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := freeUDPPortPair(t)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
			defer cancel()
			defer startServe(t, ctx, bin, append([]string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
				"--data", t.TempDir()}, tc.serveArgs...)...)()
			// NintendoClients resends its SYN after 1 s, twice: a server that
			// binds within that time is reached.
			cmd := pyCmd(ctx, dir, python, "nc_client.py", append([]string{"--port", strconv.Itoa(port), "--timeout", "40"}, tc.clientArgs...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			t.Logf("NintendoClients client:\n%s", stdout.String())
			out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
			if err != nil {
				if l, ok := out.find("error"); ok && tc.bug != "" && strings.HasPrefix(l, tc.bugSign) {
					knownBug(t, tc.bug, "NintendoClients client failed after Login: %s", l)
				}
				t.Fatalf("NintendoClients client failed: %v\nstderr:\n%s", err, stderr.String())
			}
			if tc.bug != "" {
				fixed(t, tc.bug)
			}
			if line, ok := out.find("rmc"); !ok || !strings.Contains(line, "result=True") {
				t.Errorf("Health.PingDaemon did not return true (%q)", line)
			}
			if _, ok := out.find("disconnected"); !ok {
				t.Error("no graceful disconnect")
			}
		})
	}
}

// freeUDPPortPair returns a loopback UDP port p such that p and p+1 (serve's
// secure server) were both free a moment ago.
func freeUDPPortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		p := a.LocalAddr().(*net.UDPAddr).Port
		b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p + 1})
		a.Close()
		if err == nil {
			b.Close()
			return p
		}
	}
	t.Fatal("no free pair of UDP ports")
	return 0
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// buildGamewire builds cmd/gamewire from this tree once per test binary.
// startServe runs `gamewire` (the binary bin) with args until ctx ends; the
// returned stop interrupts it (a graceful shutdown), waits for it and logs
// what it printed. Use it as `defer startServe(t, ctx, bin, args...)()`.
func startServe(t *testing.T, ctx context.Context, bin string, args ...string) (stop func()) {
	t.Helper()
	serve := exec.CommandContext(ctx, bin, args...)
	var serveOut bytes.Buffer
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	serve.WaitDelay = 5 * time.Second
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	return func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
		t.Logf("gamewire serve:\n%s", serveOut.String())
	}
}

func buildGamewire(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build gamewire with")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "gamewire-nc-"); buildErr != nil {
			return
		}
		build := exec.Command(goBin, "build", "-o", filepath.Join(buildDir, "gamewire"), "./cmd/gamewire")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/gamewire: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "gamewire")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// TestNintendoClientsLiteAgainstServeEcho speaks PRUDP Lite with
// NintendoClients' client (the switch profile over a ws:// WebSocket, anynet's
// websocket.py, and over a raw TCP stream) to `gamewire serve --dialect
// nex-lite --echo` on both virtual ports: messages of 5, 1000 and 2617 bytes
// (three fragments) come back unchanged, and again after a hold past two of
// NintendoClients' PINGs. anynet's WebSocket key is secrets.token_urlsafe(),
// not RFC 6455's 16-byte nonce, which gamewire refused with HTTP 400 until it
// accepted any non-empty key.
func TestNintendoClientsLiteAgainstServeEcho(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--dialect", "nex-lite", "--echo",
		"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--access-key", "6f599f81")()
	// TCP has no resends to cover a server still starting: wait for the port.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gamewire serve never listened on %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The group returns only when its parallel subtests have, before the
	// deferred stop of the server.
	t.Run("group", func(t *testing.T) {
		for _, c := range []struct{ transport, vport string }{{"ws", "1"}, {"ws", "2"}, {"tcp", "1"}, {"tcp", "2"}} {
			t.Run(c.transport+"-vport-"+c.vport, func(t *testing.T) {
				t.Parallel()
				if c.transport == "ws" {
					needWebSocket(t, dir)
				}
				cmd := pyCmd(ctx, dir, python, "nc_echo.py", "--transport", c.transport, "--port", strconv.Itoa(port), "--vport", c.vport,
					"--access-key", "6f599f81", "--hold", fmt.Sprint(holdSeconds))
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				t.Logf("NintendoClients Lite client:\n%s", stdout.String())
				if err != nil {
					t.Fatalf("NintendoClients Lite client failed: %v\nstderr:\n%s", err, stderr.String())
				}
				out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
				if n := out.count("echo"); n != 4 {
					t.Errorf("%d echoes came back, want 4", n)
				}
				counters, _ := out.find("counters")
				if pings, acks := field(t, counters, "pings_sent"), field(t, counters, "ping_acks"); pings < 2 || acks != pings {
					t.Errorf("PINGs: %d sent, %d acknowledged by gamewire (want >= 2, all acknowledged)", pings, acks)
				}
			})
		}
	})
}

// lossyProxy relays UDP datagrams between one client and target on loopback,
// dropping every nth datagram in each direction (deterministic, no timing).
type lossyProxy struct {
	conn    *net.UDPConn
	mu      sync.Mutex
	dropped [2]int
}

func startLossyProxy(t *testing.T, target *net.UDPAddr, n int) *lossyProxy {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	return relayLossy(t, front, target, n)
}

// relayLossy starts relaying datagrams from front (already bound) to target.
func relayLossy(t *testing.T, front *net.UDPConn, target *net.UDPAddr, n int) *lossyProxy {
	t.Helper()
	back, err := net.DialUDP("udp", nil, target)
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{conn: front}
	var client *net.UDPAddr
	var clientMu sync.Mutex
	relay := func(dir int, read func([]byte) (int, error), write func([]byte) error) {
		buf := make([]byte, 65536)
		for count := 1; ; count++ {
			k, err := read(buf)
			if err != nil {
				return
			}
			if count%n == 0 {
				p.mu.Lock()
				p.dropped[dir]++
				p.mu.Unlock()
				continue
			}
			write(buf[:k])
		}
	}
	go relay(0, func(b []byte) (int, error) {
		k, from, err := front.ReadFromUDP(b)
		clientMu.Lock()
		client = from
		clientMu.Unlock()
		return k, err
	}, func(b []byte) error { _, err := back.Write(b); return err })
	go relay(1, back.Read, func(b []byte) error {
		clientMu.Lock()
		to := client
		clientMu.Unlock()
		_, err := front.WriteToUDP(b, to)
		return err
	})
	t.Cleanup(func() { front.Close(); back.Close() })
	return p
}

// TestNintendoClientsEchoThroughLossyLink runs NintendoClients' V1 client
// against `gamewire serve --echo` through a link that drops every fifth
// datagram each way. NintendoClients resends after 1 s, twice, then gives up
// (docs/peers.md); gamewire must acknowledge and resend so that every message
// still comes back and neither side drops the connection.
func TestNintendoClientsEchoThroughLossyLink(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	port := freeUDPPortPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--echo", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--access-key", "3d37fbdb")()
	proxy := startLossyProxy(t, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, 5)
	const count = 40
	cmd := pyCmd(ctx, dir, python, "nc_echo.py", "--transport", "udp", "--profile", "default", "--access-key", "3d37fbdb",
		"--port", strconv.Itoa(proxy.conn.LocalAddr().(*net.UDPAddr).Port), "--count", strconv.Itoa(count))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	proxy.mu.Lock()
	dropped := proxy.dropped
	proxy.mu.Unlock()
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	counters, _ := out.find("counters")
	t.Logf("dropped %d datagrams client->server, %d server->client; NintendoClients: %s", dropped[0], dropped[1], counters)
	if err != nil {
		t.Fatalf("NintendoClients client failed: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if n := out.count("echo"); n != 3+count {
		t.Errorf("%d echoes came back, want %d", n, 3+count)
	}
	if dropped[0] == 0 || dropped[1] == 0 {
		t.Errorf("the link dropped %v datagrams: the test did not test loss", dropped)
	}
}

// TestGamewireLoginThroughLossyLinkToNintendoClientsServer is the other
// direction through loss: gamewire's nex.Login to NintendoClients' server, both
// of its connections through links dropping every fifth datagram each way.
// NintendoClients' server gives up on a packet after 1 s and two resends, so
// gamewire must acknowledge promptly and resend its own packets in time.
func TestGamewireLoginThroughLossyLinkToNintendoClientsServer(t *testing.T) {
	dir, python := env(t)
	secureFront, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	authAddr, securePort, stop := ncServer(t, dir, python, "--profile", "default", "--access-key", "3d37fbdb",
		"--tolerate-syn-session-id", "--pid", strconv.Itoa(userPID), "--password", userPassword,
		"--advertise-secure-port", strconv.Itoa(secureFront.LocalAddr().(*net.UDPAddr).Port))
	// The station url names the proxy; the server's own port comes from READY.
	authUDP, err := net.ResolveUDPAddr("udp", authAddr)
	if err != nil {
		t.Fatal(err)
	}
	authProxy := startLossyProxy(t, authUDP, 5)
	secureProxy := relayLossy(t, secureFront, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: securePort}, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	sess, err := nex.Login(ctx, authProxy.conn.LocalAddr().String(), nex.LoginConfig{User: strconv.Itoa(userPID),
		Password: userPassword, Config: prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}})
	if err != nil {
		lines := stop()
		t.Fatalf("gamewire login through loss: %v\nNintendoClients server:\n%s", err, strings.Join(lines, "\n"))
	}
	for i := range 20 {
		res, err := sess.RMC.Call(ctx, rmc.ProtocolHealth, 1, nil)
		if err != nil || !bytes.Equal(res, []byte{1}) {
			t.Fatalf("call %d: Health.PingDaemon = %x, %v; want 01", i, res, err)
		}
	}
	st := sess.Conn.Stats()
	if err := sess.Close(ctx); err != nil {
		t.Logf("graceful close through loss: %v", err)
	}
	lines := stop()
	for _, p := range []*lossyProxy{authProxy, secureProxy} {
		p.mu.Lock()
		t.Logf("link dropped %v datagrams", p.dropped)
		p.mu.Unlock()
	}
	t.Logf("gamewire secure connection: %d retransmits, drops %v", st.Retransmits, st.Drops)
	if n := lines.count("ping-daemon"); n != 20 {
		t.Errorf("NintendoClients answered %d PingDaemon calls, want 20", n)
	}
	for _, l := range lines.beforeStopping() {
		if strings.Contains(l, "timed out") {
			t.Errorf("NintendoClients: %s", l)
		}
	}
	secureProxy.mu.Lock()
	defer secureProxy.mu.Unlock()
	if secureProxy.dropped[0] == 0 || secureProxy.dropped[1] == 0 {
		t.Errorf("the secure link dropped %v datagrams: the test did not test loss", secureProxy.dropped)
	}
}

// TestNintendoClientsCompressedEcho turns zlib compression on at both ends
// (`gamewire serve --echo --compression`, NintendoClients' prudp.compression =
// 1) and echoes messages whose compressed sizes give different ratio bytes.
// 574 bytes 00 01 02 ... compress (Go's zlib) to 287, where the rules differ:
// NintendoClients writes and requires int(574/287 + 1) = 3 and drops any other
// value; gamewire wrote ceil(574/287) = 2 until this test found it, and now
// writes n/c + 1 too (docs/peers.md: implementations round differently).
func TestNintendoClientsCompressedEcho(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	port := freeUDPPortPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--echo", "--compression", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--access-key", "3d37fbdb")()
	cmd := pyCmd(ctx, dir, python, "nc_echo.py", "--transport", "udp", "--profile", "default", "--access-key", "3d37fbdb",
		"--set", "prudp.compression=1", "--port", strconv.Itoa(port), "--sizes", "5,1000,3000,575,574", "--count", "20")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("NintendoClients client:\n%s", stdout.String())
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	if err != nil {
		// NintendoClients' own error message for a ratio mismatch has a
		// formatting bug and surfaces as this TypeError text.
		if l, ok := out.find("warning"); ok && (strings.Contains(l, "compression ratio") || strings.Contains(l, "format string")) &&
			out.count("echo") == 4 {
			knownBug(t, "compression-ratio", "the echo of 574 bytes was refused by NintendoClients: %s", l)
		}
		t.Fatalf("NintendoClients client failed: %v\nstderr:\n%s", err, stderr.String())
	}
	fixed(t, "compression-ratio")
	if n := out.count("echo"); n != 25 {
		t.Errorf("%d echoes came back, want 25", n)
	}
}

// TestNintendoClientsSubstreams negotiates two reliable substreams
// (`gamewire serve --echo --max-substream 1`, NintendoClients'
// prudp.max_substream_id = 1) and echoes messages on both in turn. gamewire
// acknowledges with V1 aggregate ACKs in the new format, which NintendoClients
// only recognises when the header's substream id is 1 (docs/peers.md); a
// misread ACK leaves NintendoClients resending and then dropping the connection.
func TestNintendoClientsSubstreams(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	port := freeUDPPortPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--echo", "--max-substream", "1", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--access-key", "3d37fbdb")()
	cmd := pyCmd(ctx, dir, python, "nc_echo.py", "--transport", "udp", "--profile", "default", "--access-key", "3d37fbdb",
		"--set", "prudp.max_substream_id=1", "--port", strconv.Itoa(port), "--count", "30")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("NintendoClients client:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("NintendoClients client failed: %v\nstderr:\n%s", err, stderr.String())
	}
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	perSubstream := map[string]int{}
	for _, l := range out {
		if f := strings.Fields(l); len(f) == 4 && f[1] == "echo" {
			perSubstream[f[3]]++
		}
	}
	if perSubstream["substream=0"] != 18 || perSubstream["substream=1"] != 15 {
		t.Errorf("echoes per substream %v, want 18 on 0 and 15 on 1", perSubstream)
	}
}

// TestNintendoClientsClientRefused checks that gamewire's refusals reach
// NintendoClients' client as NintendoClients understands them: an unknown user
// gets RendezVous::InvalidUsername from Login, and a wrong password a ticket
// NintendoClients cannot open (the password never travels; only the key derived
// from it opens the ticket).
func TestNintendoClientsClientRefused(t *testing.T) {
	dir, python := env(t)
	addr := startGamewire(t, prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"})
	host, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		name, user, password, want string
	}{
		{"unknown-user", "1800000999", userPassword, "STEP error type=RMCError message='RendezVous::InvalidUsername (0x80030064)'"},
		{"wrong-password", strconv.Itoa(userPID), "not-the-password", "STEP error type=ValueError message='Invalid Kerberos checksum (incorrect password)'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
			defer cancel()
			cmd := pyCmd(ctx, dir, python, "nc_client.py", "--host", host, "--port", port, "--access-key", "3d37fbdb",
				"--user", tc.user, "--password", tc.password, "--timeout", "40")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			t.Logf("NintendoClients client:\n%s", stdout.String())
			if err == nil {
				t.Fatal("NintendoClients logged in")
			}
			out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
			if l, _ := out.find("error"); l != tc.want {
				t.Errorf("got %q, want %q", l, tc.want)
			}
			if _, ok := out.find("secure-connected"); ok {
				t.Error("NintendoClients reached the secure server")
			}
		})
	}
}

// freeTCPPort returns a loopback TCP port that was free a moment ago.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitTCP waits until something accepts TCP connections on the loopback port.
func waitTCP(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listened on TCP port %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNintendoClientsSwitchLoginOverLite logs in with NintendoClients' switch
// profile (NEX 4: AuthenticationNX ValidateAndRequestTicket, the Switch key
// derivation, 8-byte PIDs, structure headers) to `gamewire serve --dialect
// nex-lite`, over a ws:// WebSocket (the profile's own transport, anynet's
// websocket.py) and over a raw TCP stream (nc_client.py --no-tls:
// NintendoClients' backend would otherwise insist on TLS with a certificate it
// trusts). The secure server is announced at 0.0.0.1 (the same address) on
// virtual port 2.
func TestNintendoClientsSwitchLoginOverLite(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	for _, transport := range []string{"ws", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			if transport == "ws" {
				needWebSocket(t, dir)
			}
			switchLoginOverLite(t, dir, python, bin, transport)
		})
	}
}

func switchLoginOverLite(t *testing.T, dir, python, bin, transport string) {
	port := freeTCPPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--dialect", "nex-lite", "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--access-key", "6f599f81", "--data", t.TempDir(), "--verbose")()
	waitTCP(t, port)
	args := []string{"--port", strconv.Itoa(port), "--profile", "switch", "--no-tls", "--nex-version", "40000",
		"--access-key", "6f599f81", "--hold", fmt.Sprint(holdSeconds), "--timeout", "45"}
	if transport == "tcp" {
		args = append(args, "--set", "prudp.transport=1")
	}
	cmd := pyCmd(ctx, dir, python, "nc_client.py", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("NintendoClients client:\n%s", stdout.String())
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	if err != nil {
		// Without structure headers NintendoClients takes the length of the
		// secure station url's string (0x42) for RVConnectionData's version
		// and then reads past the end of the response.
		if l, ok := out.find("error"); ok && strings.HasPrefix(l, "STEP error type=OverflowError") &&
			strings.Contains(stderr.String(), "Struct RVConnectionData version is higher than expected") {
			knownBug(t, "lite-struct-header", "NintendoClients could not read the ValidateAndRequestTicket response: %s", l)
		}
		t.Fatalf("NintendoClients client failed: %v\nstderr:\n%s", err, stderr.String())
	}
	fixed(t, "lite-struct-header")
	for _, s := range []string{"rmc", "rmc-after-hold"} {
		if line, ok := out.find(s); !ok || !strings.Contains(line, "result=True") {
			t.Errorf("%s: Health.PingDaemon did not return true (%q)", s, line)
		}
	}
	counters, _ := out.find("counters")
	if pings, acks := field(t, counters, "pings_sent"), field(t, counters, "ping_acks"); pings < 4 || acks != pings {
		t.Errorf("PINGs: %d sent, %d acknowledged by gamewire (want >= 4, all acknowledged)", pings, acks)
	}
}
