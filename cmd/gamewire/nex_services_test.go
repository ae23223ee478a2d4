package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/s3test"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/spf13/cobra"
)

// startServeNEX runs `gamewire serve` with its data in dir (and the flags in
// extra) until the test ends (or stop is called), and returns the
// authentication address.
func startServeNEX(t *testing.T, dir string, extra ...string) (addr string, out *syncWriter, stop func()) {
	t.Helper()
	addr, secure, ds := freeUDPAddr(t), freeUDPAddr(t), freeTCPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, append([]string{"serve", "--listen", addr, "--secure-listen", secure, "--datastore-listen", ds, "--data", dir}, extra...)...)
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out)
		}
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "NEX services"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", out)
		}
	}
	_, dsPort, _ := net.SplitHostPort(ds)
	if !regexp.MustCompile(`HTTP endpoint on http://[^ ]+:` + dsPort + `,`).MatchString(out.String()) {
		t.Fatalf("banner lacks the DataStore address %s:\n%s", ds, out)
	}
	return addr, out, stop
}

// clientCmd is a command to run a nex client function with.
func clientCmd() (*cobra.Command, *bytes.Buffer) {
	var out bytes.Buffer
	c := &cobra.Command{}
	c.SetContext(context.Background())
	c.SetOut(&out)
	c.SetErr(&out)
	return c, &out
}

func guestLogin() loginOptions {
	return loginOptions{prudpFlags: prudpFlags{dialect: "nex-v1", accessKey: defaultAccessKey, vport: 1},
		user: "guest", password: "MMQea3n!fsik", timeout: 20 * time.Second}
}

// TestNEXServicesCLI: serve, then gamewire nex ranking upload/get and nex
// datastore put/get as a user runs them; after a restart of serve the score
// and the object are still there.
func TestNEXServicesCLI(t *testing.T) {
	dir := t.TempDir()
	addr, _, stop := startServeNEX(t, dir)

	upload := nexRankingOptions{loginOptions: guestLogin(), server: addr, category: 5, score: 4321,
		order: "desc", update: "best", groups: "1,2", param: 9}
	cmd, out := clientCmd()
	if err := runNEXRanking(cmd, &upload, true); err != nil {
		t.Fatalf("upload: %v\n%s", err, out)
	}
	get := nexRankingOptions{loginOptions: guestLogin(), server: addr, category: 5, mode: "global", length: 10, groupIndex: 255}
	cmd, out = clientCmd()
	if err := runNEXRanking(cmd, &get, false); err != nil {
		t.Fatalf("get: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "1 entries in all") || !strings.Contains(out.String(), "score 4321") || !strings.Contains(out.String(), "groups [1 2]") {
		t.Fatalf("ranking get:\n%s", out)
	}
	// A category nobody uploaded to.
	get.category = 6
	cmd, _ = clientCmd()
	if err := runNEXRanking(cmd, &get, false); err == nil || !strings.Contains(err.Error(), "Ranking::NotFound") {
		t.Fatalf("unknown category: %v", err)
	}

	file := filepath.Join(t.TempDir(), "level.bin")
	if err := os.WriteFile(file, []byte("a level body"), 0o600); err != nil {
		t.Fatal(err)
	}
	put := nexDataStoreOptions{loginOptions: guestLogin(), server: addr, tags: []string{"x"}, permission: "everyone", period: 90}
	cmd, out = clientCmd()
	if err := runNEXDataStorePut(cmd, &put, file); err != nil {
		t.Fatalf("put: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "data id 1 (12 bytes)") {
		t.Fatalf("put:\n%s", out)
	}
	got := filepath.Join(t.TempDir(), "got.bin")
	dsGet := nexDataStoreOptions{loginOptions: guestLogin(), server: addr, out: got}
	cmd, out = clientCmd()
	if err := runNEXDataStoreGet(cmd, &dsGet, "1"); err != nil {
		t.Fatalf("get: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(got); string(b) != "a level body" {
		t.Fatalf("got %q\n%s", b, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "datastore", "1", "1")); err != nil {
		t.Fatalf("body not in the data directory: %v", err)
	}

	// Restart: the score and the object survive.
	stop()
	addr, _, _ = startServeNEX(t, dir)
	get = nexRankingOptions{loginOptions: guestLogin(), server: addr, category: 5, mode: "self", length: 1, groupIndex: 255}
	cmd, out = clientCmd()
	if err := runNEXRanking(cmd, &get, false); err != nil || !strings.Contains(out.String(), "score 4321") {
		t.Fatalf("after restart, ranking: %v\n%s", err, out)
	}
	dsGet = nexDataStoreOptions{loginOptions: guestLogin(), server: addr}
	cmd, out = clientCmd()
	if err := runNEXDataStoreGet(cmd, &dsGet, "1"); err != nil || !strings.Contains(out.String(), "a level body") {
		t.Fatalf("after restart, datastore: %v\n%s", err, out)
	}
}

// TestGamePresetCLI: gamewire games lists the table; serve --game takes the
// game's access key and names the game in its banner, and a client with
// --game of the same game logs in with it.
func TestGamePresetCLI(t *testing.T) {
	out, err := runCLI(t, "games", "splatoon")
	if err != nil || !strings.Contains(out, "Splatoon  ") || !strings.Contains(out, "6f599f81") || !strings.Contains(out, "3.8.15") ||
		!strings.Contains(out, "Splatoon 2") || !strings.Contains(out, "nex-lite") {
		t.Fatalf("games splatoon: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "games", "no such game at all"); err == nil {
		t.Fatal("games with a filter matching nothing succeeded")
	}
	addr, srvOut, _ := startServeNEX(t, t.TempDir(), "--game", "Splatoon")
	if !strings.Contains(srvOut.String(), `access key "6f599f81"`) || !strings.Contains(srvOut.String(), "game: Splatoon, wiiu, server id 10162B00, NEX 3.8.15") {
		t.Fatalf("banner:\n%s", srvOut)
	}
	o := guestLogin()
	o.game = "splatoon"
	upload := nexRankingOptions{loginOptions: o, server: addr, category: 1, score: 1, order: "desc", update: "best"}
	cmd, cout := clientCmd()
	if err := runNEXRanking(cmd, &upload, true); err != nil {
		t.Fatalf("upload with --game: %v\n%s", err, cout)
	}
	// NAT Traversal's GetRelaySignatureKey names the game's server id.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := o.login(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	k, err := (&nattraversal.Client{RMC: sess.RMC}).GetRelaySignatureKey(ctx)
	sess.Close(ctx)
	if err != nil || k.GameServerID != 0x10162B00 {
		t.Fatalf("GetRelaySignatureKey with --game Splatoon: %+v, %v", k, err)
	}
	// The default key (Terraria's) is refused by a Splatoon server.
	upload.game = ""
	upload.timeout = 2 * time.Second
	cmd, _ = clientCmd()
	if err := runNEXRanking(cmd, &upload, true); err == nil {
		t.Fatal("login with another game's access key succeeded")
	}
}

// TestServeDataStoreS3CLI: serve --datastore-blobs s3://... keeps DataStore
// bodies in an S3 bucket (a real S3-compatible server, internal/s3test):
// nex datastore put and get move the body with presigned URLs and nothing
// lands in the data directory; a bucket that cannot be reached stops serve
// at start with the flag named.
func TestServeDataStoreS3CLI(t *testing.T) {
	s3 := s3test.Start(t)
	bucket := s3.NewBucket(t)
	t.Setenv("GAMEWIRE_S3_ACCESS_KEY", s3.AccessKey)
	t.Setenv("GAMEWIRE_S3_SECRET_KEY", s3.SecretKey)
	dir := t.TempDir()
	addr, out, _ := startServeNEX(t, dir, "--datastore-blobs", s3.Spec(bucket))
	if !strings.Contains(out.String(), "bodies in s3://"+bucket) {
		t.Fatalf("banner does not name the bucket:\n%s", out)
	}
	file := filepath.Join(t.TempDir(), "level.bin")
	if err := os.WriteFile(file, []byte("a body in a bucket"), 0o600); err != nil {
		t.Fatal(err)
	}
	put := nexDataStoreOptions{loginOptions: guestLogin(), server: addr, permission: "everyone"}
	cmd, cout := clientCmd()
	if err := runNEXDataStorePut(cmd, &put, file); err != nil {
		t.Fatalf("put: %v\n%s", err, cout)
	}
	got := filepath.Join(t.TempDir(), "got.bin")
	get := nexDataStoreOptions{loginOptions: guestLogin(), server: addr, out: got}
	cmd, cout = clientCmd()
	if err := runNEXDataStoreGet(cmd, &get, "1"); err != nil {
		t.Fatalf("get: %v\n%s", err, cout)
	}
	if b, _ := os.ReadFile(got); string(b) != "a body in a bucket" {
		t.Fatalf("got %q\n%s", b, cout)
	}
	if _, err := os.Stat(filepath.Join(dir, "datastore", "1")); err == nil {
		t.Fatal("with --datastore-blobs the body was also kept in the data directory")
	}

	// A bucket that does not exist: serve refuses to start.
	err := runCLIContext(t, context.Background(), &syncWriter{}, "serve", "--listen", freeUDPAddr(t), "--secure-listen", freeUDPAddr(t),
		"--datastore-listen", freeTCPAddr(t), "--data", t.TempDir(), "--datastore-blobs", s3.Spec("no-such-bucket"))
	if err == nil || !strings.Contains(err.Error(), "--datastore-blobs") {
		t.Fatalf("serve with a missing bucket: %v", err)
	}
}
