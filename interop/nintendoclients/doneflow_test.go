package nintendoclients

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/tcpdumptest"
)

// TestDoneWhenFlow is issue 16's done-when as one run: `gamewire serve` with
// its defaults (NEX V1, the default access key, the SQLite store, Ranking and
// DataStore with the HTTP body endpoint at the --listen port + 2), two
// accounts made with `gamewire accounts add` as an operator makes them, and
// two NintendoClients clients in one Python process (nc_doneflow.py) driving
// NintendoClients' own classes:
//
//   - both log in (backend.connect + login); a asks for the relay server
//     (NATTraversalClient.get_relay_signature_key: none, and the server's time);
//   - a auto-matchmakes into a new session and b into the same one; a hears
//     b's join (3001); a ends its participation and b hears a's leave (3008)
//     and that b now owns the session (4000); a auto-matchmakes again into the
//     same session and b hears a's join; b ends its participation and a hears
//     b's leave. So each client sees the other's join and leave, through
//     NintendoClients' NotificationServer;
//   - both upload a score (Ranking.UploadScore) and GetRanking shows both in
//     order, the self ranking a's own;
//   - a posts a DataStore object (PreparePostObject, the HTTP upload with the
//     form fields handed out, CompletePostObject) and a and b both read the
//     same bytes back (PrepareGetObject, the HTTP download).
//
// The only serve flags are what a shared test machine needs: --data (a
// directory under the test's temporary one instead of the user's
// ~/.local/share/gamewire; accounts add creates it) and
// --listen (a free loopback port instead of 60000, so parallel runs do not
// collide; the secure server and the DataStore endpoint follow at +1 and +2 as
// by default).
func TestDoneWhenFlow(t *testing.T) {
	dir, python := env(t)
	for _, f := range []string{"nintendo/nex/matchmaking.py", "nintendo/nex/ranking.py", "nintendo/nex/datastore.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%v: add NintendoClients' %s to the copy (docs/interop.md)", err, f)
		}
	}
	bin := buildGamewire(t)
	// A directory gamewire creates itself, as on an operator's first run.
	data := filepath.Join(t.TempDir(), "gamewire")
	a := addAccount(t, bin, data, "Done-when-a-1")
	b := addAccount(t, bin, data, "Done-when-b-2")
	if a == b {
		t.Fatalf("gamewire accounts add gave both accounts PID %d", a)
	}
	port := freeServePorts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--data", data, "--listen", fmt.Sprintf("127.0.0.1:%d", port))()
	// serve opens the DataStore endpoint just before it binds its UDP ports,
	// and NintendoClients resends its SYN for 2 s more.
	waitTCP(t, port+2)
	// GAMEWIRE_SAVE_CAPTURES=DIR: tcpdump records the run's PRUDP traffic (the
	// HTTP bodies are left out) into DIR/nintendoclients-doneflow.pcap, the
	// dissector's done-when capture (dissect/testdata/captures/README.md).
	var td *tcpdumptest.Session
	saveDir := os.Getenv("GAMEWIRE_SAVE_CAPTURES")
	if saveDir != "" {
		td = tcpdumptest.Start(t, fmt.Sprintf("udp port %d or udp port %d", port, port+1))
	}

	cmd := pyCmd(ctx, dir, python, "nc_doneflow.py", "--port", strconv.Itoa(port),
		"--user-a", strconv.Itoa(a), "--password-a", "Done-when-a-1",
		"--user-b", strconv.Itoa(b), "--password-b", "Done-when-b-2", "--timeout", "60")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err := cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("nc_doneflow.py: %v\nstderr:\n%s", err, stderr.String())
	}
	if td != nil {
		path := filepath.Join(saveDir, "nintendoclients-doneflow.pcap")
		if err := os.WriteFile(path, td.Stop(t), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("capture: %s (accounts %d %q and %d %q)", path, a, "Done-when-a-1", b, "Done-when-b-2")
	}
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	want := func(name string, n int) []string {
		t.Helper()
		var lines []string
		for _, l := range out {
			if f := strings.Fields(l); len(f) >= 2 && f[1] == name {
				lines = append(lines, l)
			}
		}
		if len(lines) != n {
			t.Fatalf("%d %q steps, want %d:\n%s", len(lines), name, n, stdout.String())
		}
		return lines
	}

	if l := want("a-login", 1)[0]; field(t, l, "pid") != a {
		t.Errorf("a logged in as %s, want PID %d", l, a)
	}
	if l := want("b-login", 1)[0]; field(t, l, "pid") != b {
		t.Errorf("b logged in as %s, want PID %d", l, b)
	}

	// NAT Traversal: no relay server, and the server's clock in UTC (to the
	// second, taken between the run's start and end).
	if l := want("a-relay-signature-key", 1)[0]; field(t, l, "mode") != 0 || !strings.Contains(l, "address=''") ||
		field(t, l, "port") != 0 || field(t, l, "address_type") != 0 || field(t, l, "game_server_id") != 0 ||
		int64(field(t, l, "utc")) < started.Unix()-1 || int64(field(t, l, "utc")) > time.Now().Unix() {
		t.Errorf("GetRelaySignatureKey: %s (run started %d)", l, started.Unix())
	}

	// Matchmaking: one gathering throughout, the owner moving as people leave.
	// In call order: a creates, b joins, a rejoins what is now b's session.
	aAM, bAM := want("a-automatchmake", 2), want("b-automatchmake", 1)
	am := []string{aAM[0], bAM[0], aAM[1]}
	gid := field(t, am[0], "gid")
	for i, w := range []struct{ owner, participants int }{{a, 1}, {a, 2}, {b, 2}} {
		l := am[i]
		if field(t, l, "gid") != gid || field(t, l, "owner") != w.owner || field(t, l, "participants") != w.participants ||
			!strings.Contains(l, "type=MatchmakeSession") {
			t.Errorf("auto-matchmake %d: %s, want gathering %d owned by %d with %d participants", i, l, gid, w.owner, w.participants)
		}
	}
	seen := map[string]string{}
	for _, l := range append(want("a-saw", 2), want("b-saw", 3)...) {
		seen[strings.Fields(l)[1]+" "+strconv.Itoa(field(t, l, "type"))] = l
	}
	for _, n := range []struct {
		key         string
		source      int
		param1      int
		param2      int
		textContain string
	}{
		{"a-saw 3001", b, gid, b, "'hello from b'"},
		{"a-saw 3008", b, gid, b, "'bye from b'"},
		{"b-saw 3008", a, gid, a, "'bye from a'"},
		{"b-saw 4000", a, gid, b, ""},
		{"b-saw 3001", a, gid, a, "'back from a'"},
	} {
		l, ok := seen[n.key]
		if !ok || field(t, l, "source") != n.source || field(t, l, "param1") != n.param1 || field(t, l, "param2") != n.param2 ||
			!strings.Contains(l, "text="+n.textContain) {
			t.Errorf("%s: got %q, want source %d param1 %d param2 %d text %s", n.key, l, n.source, n.param1, n.param2, n.textContain)
		}
	}
	for _, l := range append(want("a-left", 1), want("b-left", 1)...) {
		if !strings.Contains(l, "result=True") || field(t, l, "gid") != gid {
			t.Errorf("EndParticipation: %s", l)
		}
	}

	// Ranking: both scores, highest first; a's self ranking is its own.
	entries := want("b-ranking-entry", 2)
	for i, w := range []struct{ rank, pid, score int }{{1, a, 5000}, {2, b, 4000}} {
		l := entries[i]
		if field(t, l, "rank") != w.rank || field(t, l, "pid") != w.pid || field(t, l, "score") != w.score || field(t, l, "category") != 16 {
			t.Errorf("ranking entry %d: %s, want rank %d pid %d score %d category 16", i, l, w.rank, w.pid, w.score)
		}
	}
	if l := want("b-ranking-total", 1)[0]; field(t, l, "total") != 2 {
		t.Errorf("ranking total: %s", l)
	}
	if l := want("a-ranking-self", 1)[0]; field(t, l, "rank") != 1 || field(t, l, "pid") != a || field(t, l, "score") != 5000 {
		t.Errorf("a's self ranking: %s", l)
	}

	// DataStore: the body posted is the body both read back.
	posted := want("a-prepare-post", 1)[0]
	id := field(t, posted, "data_id")
	if field(t, posted, "fields") == 0 {
		t.Errorf("PreparePostObject handed out no form fields: %s", posted)
	}
	up := want("a-upload", 1)[0]
	if field(t, up, "status") != 204 {
		t.Errorf("HTTP upload: %s", up)
	}
	sum := regexp.MustCompile(`sha1=([0-9a-f]{40})`).FindStringSubmatch(up)
	if sum == nil {
		t.Fatalf("no sha1 in %q", up)
	}
	if l := want("a-complete-post", 1)[0]; field(t, l, "data_id") != id {
		t.Errorf("CompletePostObject: %s", l)
	}
	for _, l := range append(want("a-download", 1), want("b-download", 1)...) {
		if field(t, l, "data_id") != id || field(t, l, "size") != field(t, up, "size") || !strings.Contains(l, "sha1="+sum[1]) ||
			!strings.Contains(l, "equal=True") {
			t.Errorf("download: %s, want object %d, %d bytes, sha1 %s", l, id, field(t, up, "size"), sum[1])
		}
	}
	want("disconnected", 1)

	// NintendoClients' only complaint is gamewire's default RankingRankData:
	// revision 1 (with updateTime) to a NEX 3.5 client, which structure
	// headers let it skip (docs/nex.md, Ranking).
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if l != "" && !strings.Contains(l, "Struct RankingRankData") {
			t.Errorf("NintendoClients logged: %s", l)
		}
	}
}

// addAccount runs `gamewire accounts add --data data --password-stdin` and
// returns the PID it printed.
func addAccount(t *testing.T, bin, data, password string) int {
	t.Helper()
	cmd := exec.Command(bin, "accounts", "add", "--data", data, "--password-stdin")
	cmd.Stdin = strings.NewReader(password + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gamewire accounts add: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`account PID (\d+) `).FindSubmatch(out)
	if m == nil {
		t.Fatalf("gamewire accounts add printed no PID:\n%s", out)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	return pid
}

// freeServePorts returns a loopback port p such that UDP p and p+1 (serve's
// authentication and secure servers) and TCP p+2 (its DataStore endpoint)
// were free a moment ago.
func freeServePorts(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := freeUDPPortPair(t)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+2))
		if err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no free UDP pair with a free TCP port after it")
	return 0
}
