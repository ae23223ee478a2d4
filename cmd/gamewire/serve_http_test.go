package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/ranking"
)

// startGamewireLimited is startGamewire under `ulimit -n nofile` (soft and
// hard: the Go runtime cannot raise it back).
func startGamewireLimited(t *testing.T, nofile int, args ...string) *gamewireProcess {
	t.Helper()
	sh := fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, nofile)
	return startGamewireCmd(t, exec.Command("/bin/sh", append([]string{"-c", sh, os.Args[0]}, args...)...), args)
}

// TestServeDataStoreUnderDescriptorLimit: `gamewire serve` runs as a child
// process limited to 256 descriptors. 300 slow clients hold its DataStore
// endpoint (150 send half a request line and stop, 100 stay idle on a
// keep-alive connection after a request, 50 start an upload body and stop);
// a legitimate upload (gamewire nex datastore put) succeeds all the same,
// 40 more requests are answered, and every slow connection has been closed
// by the server: evicted at the connection cap, long before its 30 s header
// or idle timeout. Without the cap the server runs out of descriptors
// (EMFILE) and the upload waits for those timeouts, past the client's 20 s.
func TestServeDataStoreUnderDescriptorLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	addr, secure, ds := freeUDPAddr(t), freeUDPAddr(t), freeTCPAddr(t)
	p := startGamewireLimited(t, 256, "serve", "--listen", addr, "--secure-listen", secure, "--datastore-listen", ds, "--data", dir,
		"--http-header-timeout", "30s", "--http-idle-timeout", "30s")
	p.waitFor(t, "NEX services")
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(limits)) {
		if strings.HasPrefix(line, "Max open files") && !strings.Contains(line, " 256 ") {
			t.Fatalf("the server runs with %s", line)
		}
	}

	var slow []net.Conn
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	for i := range 300 {
		c, err := net.Dial("tcp", ds)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		slow = append(slow, c)
		switch {
		case i%6 < 3: // 150
			io.WriteString(c, "POST /upload/")
		case i%6 < 5: // 100
			io.WriteString(c, "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
		default: // 50
			io.WriteString(c, "POST /upload/0123 HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000\r\n\r\n--b\r\n")
		}
	}

	file := filepath.Join(t.TempDir(), "level.bin")
	body := strings.Repeat("level ", 10000)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	put := nexDataStoreOptions{loginOptions: guestLogin(), server: addr, permission: "everyone", period: 90}
	cmd, out := clientCmd()
	if err := runNEXDataStorePut(cmd, &put, file); err != nil {
		t.Fatalf("put beside 300 slow clients: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("data id 1 (%d bytes)", len(body))) {
		t.Fatalf("put:\n%s", out)
	}

	// The endpoint still answers: 40 more clients, each a request, kept
	// open. The connection cap (32 under 256 descriptors) has evicted every
	// slow connection by then: they waited longest without a request in a
	// handler. (Their 30 s timeouts are not what closes them: the 60 s
	// bound only stops a broken test.)
	for i := range 40 {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("http://" + ds + "/nothing")
		if err != nil {
			t.Fatalf("client %d after the put: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("client %d after the put: %s", i, resp.Status)
		}
	}
	var wg sync.WaitGroup
	for i, c := range slow {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("slow client %d still connected after 60 s", i)
			}
		})
	}
	wg.Wait()
}

// TestServeHTTPLimitFlags: serve's --http-* flags hold on each HTTP listener
// it runs (the DataStore endpoint and --metrics): at --http-max-conns a new
// connection evicts a silent one, a silent connection is closed at
// --http-header-timeout and an idle one at --http-idle-timeout, and the
// endpoint still answers; bad limit and quota values are refused with the
// flag named.
func TestServeHTTPLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http-max-conns", "0"}, "--http-max-conns 0: must be positive"},
		{[]string{"--http-idle-timeout", "0s"}, "--http-idle-timeout 0s: must be positive"},
		{[]string{"--quota-objects", "-1"}, "--quota-objects -1: 0 (no limit) or more"},
		{[]string{"--sweep-interval", "0s"}, "--sweep-interval 0s: must be positive"},
	} {
		err := runCLIContext(t, context.Background(), &syncWriter{}, append([]string{"serve", "--listen", freeUDPAddr(t),
			"--datastore-listen", freeTCPAddr(t), "--data", t.TempDir()}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}

	metrics := freeTCPAddr(t)
	_, out, _ := startServeNEX(t, t.TempDir(), "--metrics", metrics, "--http-max-conns", "2",
		"--http-header-timeout", "2s", "--http-idle-timeout", "200ms")
	ds := out.String()
	ds = ds[strings.Index(ds, "HTTP endpoint on http://")+len("HTTP endpoint on http://"):]
	ds = ds[:strings.IndexAny(ds, ", \n")]
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "metrics on"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no metrics listener:\n%s", out)
		}
	}
	for _, addr := range []string{ds, metrics} {
		var conns []net.Conn
		for range 3 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			conns = append(conns, c)
		}
		// One request left idle on its keep-alive connection.
		idle, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		io.WriteString(idle, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		resp.Body.Close()
		for i, c := range append(conns, idle) {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("%s: connection %d still open after 30 s", addr, i)
			}
		}
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %s", resp.Status)
	}
}

// TestServeQuotaFlags: serve's --quota-* flags reach every store a player
// can grow, over the real protocols: a second matchmake session and a
// second community of one player's are refused with RendezVous'
// codes, a score in a second category and a second common data entry with
// Ranking::RegistrationError, and a second DataStore object with
// DataStore::OverCapacity.
func TestServeQuotaFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr, out, _ := startServeNEX(t, t.TempDir(), "--quota-gatherings", "1", "--quota-communities", "1",
		"--quota-ranking-categories", "1", "--quota-common-data", "1", "--quota-objects", "1")
	sess, mm, _ := mmClient(t, ctx, addr, "guest", "MMQea3n!fsik")
	if _, _, err := mm.CreateMatchmakeSession(ctx, session2(), "", 1); err != nil {
		t.Fatalf("first session: %v\n%s", err, out)
	}
	if _, _, err := mm.CreateMatchmakeSession(ctx, session2(), "", 1); !errors.Is(err, quota.ResultLimitExceeded) {
		t.Fatalf("second session: %v, want RendezVous::LimitExceeded", err)
	}
	g := matchmaking.PersistentGathering{Gathering: matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 8},
		CommunityType: 1, Attributes: []uint32{0, 0, 0, 0, 0, 0}}
	if _, err := mm.CreateCommunity(ctx, g, "club"); err != nil {
		t.Fatalf("first community: %v", err)
	}
	if _, err := mm.CreateCommunity(ctx, g, "club"); !errors.Is(err, quota.ResultPersistentGatheringCreationMax) {
		t.Fatalf("second community: %v, want RendezVous::PersistentGatheringCreationMax", err)
	}
	rk := &ranking.Client{C: sess.RMC}
	if err := rk.UploadScore(ctx, ranking.ScoreData{Category: 1, Score: 5}, 0); err != nil {
		t.Fatal(err)
	}
	if err := rk.UploadScore(ctx, ranking.ScoreData{Category: 2, Score: 5}, 0); !errors.Is(err, quota.ResultRankingRegistrationError) {
		t.Fatalf("a second category: %v, want Ranking::RegistrationError", err)
	}
	if err := rk.UploadCommonData(ctx, []byte("mii"), 1); err != nil {
		t.Fatal(err)
	}
	if err := rk.UploadCommonData(ctx, []byte("mii"), 2); !errors.Is(err, quota.ResultRankingRegistrationError) {
		t.Fatalf("a second common data entry: %v, want Ranking::RegistrationError", err)
	}
	ds := &datastore.Client{C: sess.RMC}
	p := datastore.PreparePostParam{Name: "meta", Permission: datastore.Permission{Permission: datastore.PermissionEveryone},
		PersistenceSlotID: datastore.NoPersistenceSlot}
	if _, err := ds.PostMetaBinary(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.PostMetaBinary(ctx, p); !errors.Is(err, quota.ResultDataStoreOverCapacity) {
		t.Fatalf("a second object: %v, want DataStore::OverCapacity", err)
	}
}
