package nintendoclients

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// startMatchmaking serves gamewire's NEX servers with the SQLite matchmaking
// store, as gamewire serve does, and returns the authentication address.
func startMatchmaking(t *testing.T, cfg prudp.Config) string {
	t.Helper()
	_, addr := startMatchmakingUsers(t, cfg, 1)
	return addr
}

// startMatchmakingVersion is startMatchmaking with serve --nex-version v (0:
// per connection).
func startMatchmakingVersion(t *testing.T, cfg prudp.Config, v types.Version) string {
	t.Helper()
	return startMatchmakingGates(t, cfg, v, types.GatesAuto)
}

// startMatchmakingGates is startMatchmakingVersion with serve --nex-gates g.
func startMatchmakingGates(t *testing.T, cfg prudp.Config, v types.Version, g types.Gates) string {
	t.Helper()
	_, addr := startMatchmakingServer(t, &nex.Server{Config: cfg, NEXVersion: v, NEXGates: g}, 1)
	return addr
}

// startMatchmakingUsers is startMatchmaking with n normal accounts (userPID
// and the PIDs after it, password userPassword); it also returns the server.
func startMatchmakingUsers(t *testing.T, cfg prudp.Config, n int) (*nex.Server, string) {
	t.Helper()
	return startMatchmakingServer(t, &nex.Server{Config: cfg}, n)
}

// startMatchmakingServer completes srv with the accounts and the matchmaking
// store and serves it.
func startMatchmakingServer(t *testing.T, srv *nex.Server, n int) (*nex.Server, string) {
	t.Helper()
	store, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	users := &auth.Memory{}
	users.Add(2, "Quazal Rendez-Vous", "interop-secure-server-password")
	users.Add(100, "guest", "MMQea3n!fsik")
	for i := range n {
		users.Add(types.PID(userPID+i), strconv.Itoa(userPID+i), userPassword)
	}
	t.Cleanup(func() {
		mm.Close()
		store.Close()
	})
	srv.Accounts, srv.Matchmaking = users, mm
	addr, _ := serveNEX(t, srv)
	return srv, addr
}

// TestNintendoClientsMatchmaking runs NintendoClients' generated matchmaking
// and notification classes (MatchmakeExtensionClient, MatchMakingClientExt,
// MatchMakingClient, NotificationServer; NEX 3.5 with structure headers)
// against gamewire's server: NintendoClients auto-matchmakes and gets a new
// session, gamewire's client auto-matchmakes into the same one, NintendoClients
// receives the join notification (3001), lists the participants and their urls,
// and leaves; gamewire's client then hears the leave (3008) and the ownership
// change (4000).
func TestNintendoClientsMatchmaking(t *testing.T) {
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	addr := startMatchmaking(t, cfg)
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	wait, done := ncRun(t, ctx, "--port", port, "--access-key", "3d37fbdb",
		"--nex-version", "30500", "--notifications", "1", "--timeout", "60")
	created := wait("automatchmake")
	gid := field(t, created, "gid")
	if field(t, created, "owner") != 100 || field(t, created, "participants") != 1 || field(t, created, "key_bytes") != 32 ||
		!strings.Contains(created, "type=MatchmakeSession") {
		t.Fatalf("NintendoClients' session: %s", created)
	}

	// gamewire's client joins the same session.
	events := make(chan notifications.Event, 16)
	mux := rmc.NewMux()
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{F: func(_ context.Context, ev notifications.Event) { events <- ev }})
	sess, err := nex.Login(ctx, addr, nex.LoginConfig{User: strconv.Itoa(userPID), Password: userPassword, Config: cfg, Handler: mux})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	mc := &matchmaking.Client{RMC: sess.RMC, Version: types.Version3_5}
	joined, err := mc.AutoMatchmake(ctx, matchmaking.MatchmakeSession{
		Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 4, Flags: matchmaking.FlagMigrateOwner},
		GameMode:  3, Attributes: []uint32{0, 0, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1,
	}, "from gamewire")
	if err != nil || int(joined.ID) != gid || joined.ParticipationCount != 2 || joined.Owner != 100 {
		t.Fatalf("gamewire's AutoMatchmake: %+v %v (NintendoClients' session %d)", joined.Gathering, err, gid)
	}

	ev := wait("notification")
	if field(t, ev, "type") != 3001 || field(t, ev, "source") != userPID || field(t, ev, "param1") != gid ||
		field(t, ev, "param2") != userPID || !strings.Contains(ev, "'from gamewire'") {
		t.Fatalf("NintendoClients' notification: %s", ev)
	}
	parts := wait("participants")
	if !strings.Contains(parts, "pids=100,"+strconv.Itoa(userPID)) {
		t.Fatalf("participants: %s", parts)
	}
	left := wait("left")
	if !strings.Contains(left, "result=True") {
		t.Fatalf("leave: %s", left)
	}
	wait("disconnected")
	out := done()
	// NintendoClients' backend.login does not call Register (games do), so
	// only gamewire's client has a station: one url, public and private being
	// the same address on loopback.
	urls := 0
	for _, l := range out {
		if strings.HasPrefix(l, "STEP url ") {
			if !strings.Contains(l, "PID="+strconv.Itoa(userPID)+";RVCID=") {
				t.Errorf("participant url without the station's PID and RVCID: %s", l)
			}
			urls++
		}
	}
	if urls != 1 {
		t.Fatalf("participant urls: %d, want 1\n%s", urls, strings.Join(out, "\n"))
	}
	// gamewire's client hears NintendoClients leave and becomes the owner.
	seen := map[uint32]notifications.Event{}
	for len(seen) < 2 {
		select {
		case e := <-events:
			seen[e.Type] = e
		case <-ctx.Done():
			t.Fatalf("gamewire's client got %v, want 3008 and 4000", seen)
		}
	}
	if e := seen[notifications.TypeParticipationEnded]; e.Source != 100 || e.StrParam != "bye" {
		t.Fatalf("leave notification %+v", e)
	}
	if e := seen[notifications.TypeOwnershipChanged]; e.Param2 != userPID {
		t.Fatalf("ownership notification %+v", e)
	}
	t.Log(strings.Join(out, "\n"))
}

// TestNintendoClientsPrivateSession: gamewire's client creates a session and
// gives it a system password; NintendoClients (NEX 3.5, whose search criteria
// carry no password exclusion) auto-matchmakes with criteria naming its game
// mode and gets a session of its own, not that one, and finding that one by id
// gets no session key.
func TestNintendoClientsPrivateSession(t *testing.T) {
	dir, python := env(t)
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	addr := startMatchmaking(t, cfg)
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sess, err := nex.Login(ctx, addr, nex.LoginConfig{User: strconv.Itoa(userPID), Password: userPassword, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	mc := &matchmaking.Client{RMC: sess.RMC, Version: types.Version3_5}
	gid, _, err := mc.CreateMatchmakeSession(ctx, matchmaking.MatchmakeSession{
		Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 4, Flags: matchmaking.FlagMigrateOwner},
		GameMode:  3, Attributes: []uint32{0, 0, 0, 0, 0, 0}, OpenParticipation: true, MatchmakeSystemType: 1,
	}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	w := types.NewWriter(nil, sess.RMC.Settings())
	w.U32(gid)
	if _, err := sess.RMC.Call(ctx, matchmaking.ProtocolMatchmakeExtension, matchmaking.MethodGenerateMatchmakeSessionSystemPassword, w.B); err != nil {
		t.Fatal(err)
	}

	out, err := pyCmd(ctx, dir, python, "nc_matchmake.py", "--port", port, "--access-key", "3d37fbdb",
		"--nex-version", "30500", "--criteria", "--find", strconv.Itoa(int(gid)), "--timeout", "60").CombinedOutput()
	if err != nil {
		t.Fatalf("nc_matchmake.py: %v\n%s", err, out)
	}
	var joined, found string
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "STEP automatchmake "):
			joined = l
		case strings.HasPrefix(l, "STEP found "):
			found = l
		}
	}
	if joined == "" || found == "" {
		t.Fatalf("NintendoClients' steps:\n%s", out)
	}
	if field(t, joined, "gid") == int(gid) || field(t, joined, "participants") != 1 {
		t.Fatalf("NintendoClients' criteria auto-matchmake entered the system-passworded session %d: %s", gid, joined)
	}
	if field(t, found, "gid") != int(gid) || field(t, found, "owner") != userPID || field(t, found, "key_bytes") != 0 {
		t.Fatalf("NintendoClients found the session as: %s (want owner %d and no session key)", found, userPID)
	}
	t.Log(string(out))
}

// ncRun runs nc_matchmake.py with args and returns a function waiting for its
// STEP line named name, and one waiting for the script's end, which returns
// every line it printed, those of its log (standard error) last, prefixed
// "stderr: ".
func ncRun(t *testing.T, ctx context.Context, args ...string) (wait func(name string) string, done func() []string) {
	t.Helper()
	dir, python := env(t)
	cmd := pyCmd(ctx, dir, python, "nc_matchmake.py", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var out steps
	wait = func(name string) string {
		t.Helper()
		for l := range lines {
			out = append(out, l)
			if f := strings.Fields(l); len(f) >= 2 && f[1] == name {
				return l
			}
			if strings.HasPrefix(l, "STEP error") {
				break
			}
		}
		t.Fatalf("NintendoClients never printed %q:\n%s\n%s", name, strings.Join(out, "\n"), stderr.String())
		return ""
	}
	done = func() []string {
		t.Helper()
		for l := range lines {
			out = append(out, l)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("nc_matchmake.py: %v\n%s\n%s", err, strings.Join(out, "\n"), stderr.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if l != "" {
				out = append(out, "stderr: "+l)
			}
		}
		return out
	}
	return wait, done
}

// TestNintendoClientsMatchmaking34: gamewire serve --nex-version 30400 serves
// NintendoClients' NEX 3.4 matchmaking clients (MatchmakeExtensionClient,
// MatchMakingClientExt, MatchMakingClient, NotificationServer at nex.version
// 30400), which leave MatchmakeSession.progress_score,
// MatchmakeSessionSearchCriteria.vacant_participants and
// NotificationEvent.param3 out at 3.4, beside gamewire's own client: with
// structure headers (PRUDP minor version 4, NintendoClients' default), which no
// NEX 3.4 console has, every connection reads NintendoClients' way; without
// them (minor version 2, as NEX 3.4 games connect) gamewire's client sends and
// reads the consoles' bytes (progress_score and param3 present) and the server
// learns NintendoClients' reading per connection from its first request that
// parses only that way (docs/nex.md "Disputed gates").
//
// NintendoClients creates a session, gamewire's client joins it, NintendoClients
// hears the join (3001), finds the session, lists its participants and leaves;
// gamewire's client hears the leave (3008) and becomes the owner (4000). Then
// NintendoClients auto-matchmakes with criteria into that session, and joins it
// by id.
//
// Without structure headers nothing tells NintendoClients from a console until
// a request carries a disputed structure, so that run leaves the join by id
// (whose request carries none) to TestNintendoClientsMatchmaking34Fixed.
func TestNintendoClientsMatchmaking34(t *testing.T) {
	for _, minor := range []string{"4", "2"} {
		t.Run("minor"+minor, func(t *testing.T) { testNintendoClientsMatchmaking34(t, minor) })
	}
}

// TestNintendoClientsMatchmaking34Fixed: with the reading fixed (serve
// --nex-gates nintendoclients), two NintendoClients NEX 3.4 clients without
// structure headers meet: one creates a session, the other joins it by id (no
// request of its carries a disputed structure) and finds it, the first hears
// the join.
func TestNintendoClientsMatchmaking34Fixed(t *testing.T) {
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	addr := startMatchmakingGates(t, cfg, types.Version3_4, types.GatesNintendoClients)
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--port", port, "--access-key", "3d37fbdb", "--nex-version", "30400", "--minor-version", "2", "--timeout", "60"}
	waitA, doneA := ncRun(t, ctx, append(base, "--create", "--notifications", "1")...)
	gid := field(t, waitA("created"), "gid")
	waitB, doneB := ncRun(t, ctx, append(base, "--join", strconv.Itoa(gid), "--user", strconv.Itoa(userPID), "--password", userPassword)...)
	if got := waitB("automatchmake"); field(t, got, "gid") != gid || field(t, got, "participants") != 2 || field(t, got, "owner") != 100 {
		t.Fatalf("NintendoClients' join: %s", got)
	}
	if ev := waitA("notification"); field(t, ev, "type") != 3001 || field(t, ev, "source") != userPID {
		t.Fatalf("NintendoClients' notification: %s", ev)
	}
	waitA("left")
	doneA()
	waitB("left")
	doneB()
}

func testNintendoClientsMatchmaking34(t *testing.T, minor string) {
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	addr := startMatchmakingVersion(t, cfg, types.Version3_4)
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	nc := func(args ...string) (func(string) string, func() []string) {
		return ncRun(t, ctx, append([]string{"--port", port, "--access-key", "3d37fbdb", "--nex-version", "30400",
			"--minor-version", minor, "--timeout", "60"}, args...)...)
	}

	// gamewire's client, NEX 3.4 in the consoles' reading.
	events := make(chan notifications.Event, 16)
	mux := rmc.NewMux()
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{F: func(_ context.Context, ev notifications.Event) { events <- ev }})
	lcfg := cfg
	if minor == "2" {
		lcfg.MinorVersion = 2
	}
	sess, err := nex.Login(ctx, addr, nex.LoginConfig{User: strconv.Itoa(userPID), Password: userPassword, Config: lcfg, Handler: mux,
		NEXVersion: types.Version3_4})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	mc := &matchmaking.Client{RMC: sess.RMC, Version: types.Version3_4}

	// NintendoClients creates; gamewire joins.
	wait, done := nc("--create", "--notifications", "1")
	created := wait("created")
	gid := field(t, created, "gid")
	if field(t, created, "key_bytes") != 32 {
		t.Fatalf("NintendoClients' CreateMatchmakeSession: %s", created)
	}
	if found := wait("automatchmake"); field(t, found, "gid") != gid || field(t, found, "owner") != 100 ||
		!strings.Contains(found, "type=MatchmakeSession") {
		t.Fatalf("NintendoClients' FindMatchmakeSessionByGatheringIdDetail: %s", found)
	}
	key, err := mc.JoinMatchmakeSession(ctx, uint32(gid), "from gamewire")
	if err != nil || len(key) != 32 {
		t.Fatalf("gamewire's JoinMatchmakeSession: %x %v", key, err)
	}
	ev := wait("notification")
	if field(t, ev, "type") != 3001 || field(t, ev, "source") != userPID || field(t, ev, "param1") != gid ||
		!strings.Contains(ev, "'from gamewire'") {
		t.Fatalf("NintendoClients' notification: %s", ev)
	}
	if parts := wait("participants"); !strings.Contains(parts, "pids=100,"+strconv.Itoa(userPID)) {
		t.Fatalf("participants: %s", parts)
	}
	if left := wait("left"); !strings.Contains(left, "result=True") {
		t.Fatalf("leave: %s", left)
	}
	done()
	seen := map[uint32]notifications.Event{}
	for len(seen) < 2 {
		select {
		case e := <-events:
			seen[e.Type] = e
		case <-ctx.Done():
			t.Fatalf("gamewire's client got %v, want 3008 and 4000", seen)
		}
	}
	if e := seen[notifications.TypeParticipationEnded]; e.Source != 100 || e.StrParam != "bye" {
		t.Fatalf("leave notification %+v", e)
	}
	if e := seen[notifications.TypeOwnershipChanged]; e.Param2 != userPID {
		t.Fatalf("ownership notification %+v", e)
	}
	// The session as gamewire's client reads it (progress_score on the wire).
	ms, err := mc.Find(ctx, uint32(gid))
	if err != nil || ms.Owner != userPID || ms.ParticipationCount != 1 {
		t.Fatalf("gamewire's Find: %+v %v", ms.Gathering, err)
	}

	// NintendoClients auto-matchmakes with criteria into it, then joins it by id.
	runs := [][]string{{"--criteria"}}
	if minor != "2" {
		runs = append(runs, []string{"--join", strconv.Itoa(gid)})
	}
	for _, args := range runs {
		wait, done := nc(args...)
		got := wait("automatchmake")
		if field(t, got, "gid") != gid || field(t, got, "participants") != 2 || field(t, got, "owner") != userPID {
			t.Fatalf("NintendoClients %v: %s (gamewire's session %d)", args, got, gid)
		}
		wait("left")
		done()
	}
}
