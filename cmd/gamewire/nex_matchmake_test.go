package main

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
)

func freeUDPAddr(t *testing.T) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// mmClient logs in through the library and returns a matchmaking client and
// the notifications it receives.
func mmClient(t *testing.T, ctx context.Context, addr, user, password string) (*nex.Session, *matchmaking.Client, chan notifications.Event) {
	t.Helper()
	events := make(chan notifications.Event, 16)
	mux := rmc.NewMux()
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{F: func(_ context.Context, ev notifications.Event) { events <- ev }})
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: defaultAccessKey, Port: 1} // as serve and login default
	for {
		// Each attempt is bounded: a SYN sent before the server binds its
		// socket is retransmitted until the attempt gives up.
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		sess, err := nex.Login(actx, addr, nex.LoginConfig{User: user, Password: password, Config: cfg, Handler: mux})
		acancel()
		if err == nil {
			t.Cleanup(func() { sess.Close(context.Background()) })
			return sess, &matchmaking.Client{RMC: sess.RMC, Version: notifications.DefaultVersion(sess.RMC.Settings())}, events
		}
		if ctx.Err() != nil {
			t.Fatalf("login %s: %v", user, err) // serve output: see the caller
		}
		time.Sleep(50 * time.Millisecond) // the server is still starting
	}
}

func session2() matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 2, Flags: matchmaking.FlagMigrateOwner},
		GameMode: 7, Attributes: []uint32{0, 0, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1}
}

// TestServeHasMatchmaking: plain `gamewire serve` serves matchmaking and
// notifications from its account store's database.
func TestServeHasMatchmaking(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--password", "pw"); err != nil {
		t.Fatalf("accounts add: %v\n%s", err, out)
	}
	addr, secAddr := freeUDPAddr(t), freeUDPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--listen", addr, "--secure-listen", secAddr, "--data", dir)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out)
		}
	}()
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve output:\n%s", out)
		}
	})
	_, a, aEvents := mmClient(t, lctx, addr, "guest", auth.GuestPassword)
	bSess, b, _ := mmClient(t, lctx, addr, "1000", "pw")
	s1, err := a.AutoMatchmake(lctx, session2(), "")
	if err != nil {
		t.Fatalf("AutoMatchmake: %v\n%s", err, out)
	}
	s2, err := b.AutoMatchmake(lctx, session2(), "hello")
	if err != nil || s2.ID != s1.ID || s2.ParticipationCount != 2 {
		t.Fatalf("second AutoMatchmake: %+v %v", s2.Gathering, err)
	}
	select {
	case ev := <-aEvents:
		if ev.Type != notifications.TypeNewParticipant || ev.Source != bSess.PID || ev.StrParam != "hello" {
			t.Fatalf("notification %+v", ev)
		}
	case <-lctx.Done():
		t.Fatal("no notification of the join")
	}
}

// TestNexMatchmakeCLI: `gamewire nex matchmake` against a server built as
// serve builds it prints its session and participants, then the notification
// of a second client joining, and leaves when --for is up.
func TestNexMatchmakeCLI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := serveMatchmaking(t, ctx, 1)

	out := &syncWriter{}
	cliDone := make(chan error, 1)
	go func() {
		cliDone <- runCLIContext(t, ctx, out, "nex", "matchmake", addr, "--user", "guest", "--password", auth.GuestPassword,
			"--game-mode", "7", "--max-participants", "2", "--for", "3s")
	}()
	for !strings.Contains(out.String(), "waiting for notifications") {
		select {
		case err := <-cliDone:
			t.Fatalf("nex matchmake ended early: %v\n%s", err, out)
		case <-ctx.Done():
			t.Fatalf("nex matchmake did not matchmake:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	_, b, _ := mmClient(t, ctx, addr, "1000", "pw")
	if s, err := b.AutoMatchmake(ctx, session2(), "hi"); err != nil || s.ParticipationCount != 2 {
		t.Fatalf("second client: %+v %v", s.Gathering, err)
	}
	if err := <-cliDone; err != nil {
		t.Fatalf("nex matchmake: %v\n%s", err, out)
	}
	for _, want := range []string{"pid 100,", "session 1: owner 100, host 100, 1/2 participants", "participants 1\n  pid 100\n    prudp",
		`notification 3001 (participant joined): source 1000, param1 1, param2 1000, param3 1, "hi"`, "left session 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// serveMatchmaking runs a NEX server built as serve builds it (the SQLite
// account and matchmaking store) on loopback until the test ends, with
// accounts PIDs 1000 and up (password "pw"), and returns its address.
func serveMatchmaking(t *testing.T, ctx context.Context, accountsN int) string {
	t.Helper()
	store, _, err := accounts.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for range accountsN {
		if _, err := store.Add(ctx, accounts.NewAccount{Password: "pw"}); err != nil {
			t.Fatal(err)
		}
	}
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mm.Close() })
	// The test binds both sockets itself (port 0): a port chosen first and
	// bound later can be taken in between by another test's socket, and the
	// server would then never answer.
	var pcs [2]*net.UDPConn
	for i := range pcs {
		if pcs[i], err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	srv := &nex.Server{Config: prudp.Config{Dialect: prudp.NEXV1, AccessKey: defaultAccessKey, Port: 1},
		Accounts: store, Matchmaking: mm}
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(pcs[0], pcs[1]) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-srvDone; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
			t.Errorf("server: %v", err)
		}
	})
	return pcs[0].LocalAddr().String()
}

// TestNexMatchmakeGates: nex matchmake --nex-version 3.4 --nex-gates console
// against serve --nex-version 3.4 --nex-gates console auto-matchmakes (its
// MatchmakeSession with progress_score); NintendoClients' reading, which that
// server refuses, fails with the server's answer; a reading that is none is
// refused before anything is sent.
func TestNexMatchmakeGates(t *testing.T) {
	addr, _, _ := startServeNEX(t, t.TempDir(), "--nex-version", "3.4", "--nex-gates", "console")
	mm := func(gates string) (string, error) {
		return runCLI(t, "nex", "matchmake", "--server", addr, "--user", "guest", "--password", auth.GuestPassword,
			"--nex-version", "3.4", "--nex-gates", gates, "--for", "10ms")
	}
	if out, err := mm("console"); err != nil || !strings.Contains(out, "session 1: owner 100") {
		t.Fatalf("--nex-gates console: %v\n%s", err, out)
	}
	if out, err := mm("nintendoclients"); err == nil || !strings.Contains(err.Error(), "Core::InvalidArgument") {
		t.Errorf("--nex-gates nintendoclients against a console-reading server: %v\n%s", err, out)
	}
	if out, err := mm("wii"); err == nil || !strings.Contains(err.Error(), `--nex-gates: nex gates "wii"`) {
		t.Errorf("--nex-gates wii: %v\n%s", err, out)
	}
}
