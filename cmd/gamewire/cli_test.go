package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
)

// startServeCLI runs `gamewire serve` with args until the test ends and
// returns the authentication server's address from its banner.
func startServeCLI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() { done <- runCLIContext(t, ctx, out, append([]string{"serve"}, args...)...) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v\n%s", err, out)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("serve did not stop within 15 s of its context's end (a stop right after the banner was lost)\n%s", out)
		}
	})
	banner := regexp.MustCompile(`authentication server on (127\.0\.0\.1:\d+), secure server on (127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := banner.FindStringSubmatch(out.String()); m != nil {
			if strings.HasSuffix(m[1], ":0") || strings.HasSuffix(m[2], ":0") {
				t.Errorf("the banner names the requested ports, not the bound ones: %s", m[0])
			}
			return m[1]
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve ended before its banner: %v\n%s", err, out)
		default:
		}
	}
	t.Fatalf("no banner from serve:\n%s", out)
	return ""
}

// TestServeBannerAfterBind: serve prints where it serves only once both
// sockets are bound: on a busy port it fails naming the server and the flag,
// without a banner claiming to serve; with port 0 the banner names the
// ports the system chose.
func TestServeBannerAfterBind(t *testing.T) {
	busy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"authentication", []string{"--listen", busy.LocalAddr().String()}, "authentication server (--listen)"},
		{"secure", []string{"--listen", "127.0.0.1:0", "--secure-listen", busy.LocalAddr().String()}, "secure server (--secure-listen"},
	} {
		out, err := runCLI(t, append([]string{"serve", "--data", data}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("%s port busy: %v; want an error naming %q and the busy address", c.name, err, c.want)
		}
		if strings.Contains(out, "server on") {
			t.Errorf("%s port busy: a banner was printed before the failure:\n%s", c.name, out)
		}
	}
	startServeCLI(t, "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:0")
}

// TestServeStopsRightAfterBanner: a Ctrl-C (the context's end) right after
// the banner, while the NEX servers may still be setting up, stops serve.
func TestServeStopsRightAfterBanner(t *testing.T) {
	data := t.TempDir()
	for i := range 10 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			startServeCLI(t, "--data", data, "--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:0")
		})
	}
}

// TestServeAcceptsPIDAsUser: an account is named by its name or by its PID in
// decimal, as `accounts passwd` takes it: logging in to `gamewire serve` as
// "1000" finds the account named alice with PID 1000.
func TestServeAcceptsPIDAsUser(t *testing.T) {
	data := t.TempDir()
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--data", data, "--pid", "1000", "--name", "alice", "--password", "alice-Pa55"); err != nil {
		t.Fatalf("accounts add: %v\n%s", err, out)
	}
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--data", data, "--pid", "1001", "--name", "1000", "--password", "other-Pa55"); err != nil {
		t.Fatalf("accounts add: %v\n%s", err, out)
	}
	addr := startServeCLI(t, "--data", data, "--listen", "127.0.0.1:0", "--secure-listen", "127.0.0.1:0")
	login := func(user, password string) (*nex.Session, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return nex.Login(ctx, addr, nex.LoginConfig{User: user, Password: password,
			Config: prudp.Config{Dialect: prudp.NEXV1, AccessKey: defaultAccessKey}})
	}
	for _, c := range []struct {
		user, password string
		pid            uint64
	}{
		{"alice", "alice-Pa55", 1000},
		{"ALICE", "alice-Pa55", 1000},
		{"1001", "other-Pa55", 1001}, // a PID
		{"1000", "other-Pa55", 1001}, // a name wins over a PID
	} {
		sess, err := login(c.user, c.password)
		if err != nil {
			t.Errorf("login as %q: %v", c.user, err)
			continue
		}
		if uint64(sess.PID) != c.pid {
			t.Errorf("login as %q: PID %d, want %d", c.user, sess.PID, c.pid)
		}
		sess.Close(context.Background())
	}
	if _, err := login("1002", "x"); !errors.Is(err, nex.ErrUnknownUser) {
		t.Errorf("login as an unknown PID: %v, want ErrUnknownUser", err)
	}
}

// TestLoginPasswordMissing: login without --password says so instead of
// trying an empty password (which reads as "wrong password").
func TestLoginPasswordMissing(t *testing.T) {
	t.Parallel()
	_, err := runCLI(t, "login", "127.0.0.1:9", "--user", "guest")
	if err == nil || !strings.Contains(err.Error(), "--password is missing") {
		t.Errorf("login without --password: %v", err)
	}
}

// TestConnectProbeFlagsRefused: --size below the 8-byte sequence number and a
// negative --count are refused before dialling, over UDP and Lite alike.
func TestConnectProbeFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"127.0.0.1:9", "--size", "4"}, "--size 4: messages are at least 8 bytes"},
		{[]string{"127.0.0.1:9", "--size", "7"}, "--size 7: messages are at least 8 bytes"},
		{[]string{"ws://127.0.0.1:9/", "--dialect", "nex-lite", "--size", "0"}, "--size 0: messages are at least 8 bytes"},
		{[]string{"127.0.0.1:9", "--count", "-1"}, "--count -1"},
	} {
		_, err := runCLI(t, append([]string{"connect"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("connect %v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestHandshakeTimeoutExplained: a handshake the server silently drops (wrong
// access key, dialect or virtual port) ends with an error that says what was
// tried and what to check, not only "context deadline exceeded", for connect
// (UDP and Lite) and login.
func TestHandshakeTimeoutExplained(t *testing.T) {
	addr := startEcho(t, prudpFlags{dialect: "nex-v1", accessKey: defaultAccessKey, vport: 1})
	l, err := lite.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	liteSrv := &prudp.Server{Config: prudp.Config{Dialect: prudp.NEXLite, AccessKey: defaultAccessKey, Port: 1}, Handler: prudp.EchoHandler}
	go liteSrv.Serve(l.Port(1))
	defer liteSrv.Close()
	url := "ws://" + l.Addr().String() + "/"
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"connect-access-key", []string{"connect", addr, "--access-key", "12345678"},
			[]string{"connect: no answer to the PRUDP handshake from " + addr + " within 1s", `--dialect nex-v1, --access-key "12345678", --vport 1`, "no firewall"}},
		{"connect-vport", []string{"connect", addr, "--vport", "5"}, []string{"--vport 5)", "dialect, access key or virtual port"}},
		{"connect-dialect", []string{"connect", addr, "--dialect", "nex-v0"}, []string{"--dialect nex-v0,"}},
		{"connect-lite", []string{"connect", url, "--dialect", "nex-lite", "--access-key", "12345678"},
			[]string{"from " + url + " within 1s", "--dialect nex-lite", "its stream was accepted"}},
		{"login", []string{"login", addr, "--user", "guest", "--password", "x", "--access-key", "12345678"},
			[]string{"login: no answer to the PRUDP handshake from " + addr, `--access-key "12345678"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCLI(t, append(c.args, "--timeout", "1s")...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nlacks %q", err, w)
				}
			}
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, prudp.ErrHandshake) {
				t.Errorf("the cause is no longer wrapped: %v", err)
			}
		})
	}
	// The secure server's silence after a ticket was issued says so.
	secure := fmt.Errorf("%w at 127.0.0.1:60001: %w", nex.ErrSecureRefused, fmt.Errorf("%w: %w", prudp.ErrHandshake, context.DeadlineExceeded))
	if got := explainSecure(secure, time.Second).Error(); !strings.Contains(got, "cannot open") || !strings.Contains(got, "within 1s") {
		t.Errorf("secure timeout: %s", got)
	}
	if other := errors.New("nex: wrong password"); explainSecure(other, time.Second) != other || explainHandshake(other, "x", prudp.Config{}, time.Second) != other {
		t.Error("other errors are not passed through unchanged")
	}
}

// TestHelpMatchesBehaviour: what the help offers is what the commands do.
func TestHelpMatchesBehaviour(t *testing.T) {
	t.Parallel()
	// login refuses Hyperscape, so its help does not offer it.
	loginCmd, serveCmd := findCmd(t, "login"), findCmd(t, "serve")
	loginHelp := loginCmd.Long + loginCmd.Flags().Lookup("dialect").Usage
	if strings.Contains(strings.ToLower(loginHelp), "hyperscape") {
		t.Errorf("login's help offers hyperscape:\n%s", loginHelp)
	}
	if _, err := runCLI(t, "login", "127.0.0.1:9", "--dialect", "hyperscape", "--user", "u", "--password", "p"); err == nil {
		t.Error("login --dialect hyperscape was not refused")
	}
	// serve runs the NEX servers over Quazal with or without --echo, and
	// Hyperscape only with --echo; its help says both.
	if !strings.Contains(serveCmd.Long, "gamewire serve --dialect quazal") || strings.Contains(serveCmd.Long, "--echo --dialect quazal") {
		t.Errorf("serve's help shows quazal only with --echo:\n%s", serveCmd.Long)
	}
	if u := serveCmd.Flags().Lookup("dialect").Usage; !strings.Contains(u, "hyperscape (with --echo)") {
		t.Errorf("serve --dialect: %q", u)
	}
	dir := t.TempDir()
	if out, err := runCLI(t, "keygen", "hyperscape", "--out", dir); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	_, err := runCLI(t, "serve", "--dialect", "hyperscape", "--cert-key", dir+"/key.pem", "--listen", "127.0.0.1:0", "--data", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "add --echo") {
		t.Errorf("serve --dialect hyperscape without --echo: %v", err)
	}
}
