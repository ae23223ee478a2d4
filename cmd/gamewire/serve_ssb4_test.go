package main

import (
	"bytes"
	"context"
	"errors"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sb "github.com/gamewire/gamewire/nex/protocols/datastoressb4"
	"github.com/gamewire/gamewire/nex/types"
)

// TestServeSSB4: serve --game "Super Smash Bros." --game-config FILE serves
// DataStore_SSB4 over PRUDP to two logged-in players: the application
// configuration is the file's, a profile posted by one is read by the
// other, and a replay one posts (PreparePostReplay, the body over HTTP,
// CompletePostReplay) is the other's next replay to watch. A --game-config
// with an unknown setting, or for a game without a configurable variant,
// stops serve at start.
func TestServeSSB4(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if out, err := runAccountsCLI(t, "", "accounts", "add", "--data", dir, "--password", "pw"); err != nil {
		t.Fatalf("accounts add: %v\n%s", err, out)
	}
	cfgFile := filepath.Join(t.TempDir(), "ssb4.json")
	if err := os.WriteFile(cfgFile, []byte(`{"application_config": {"3": ["7", "8"]}, "replays_per_hour": 5}`), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, out, _ := startServeNEX(t, dir, "--game", "Super Smash Bros.", "--game-config", cfgFile)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve output:\n%s", out)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := func(user, password string) (sb.DataStoreSSB4Client, types.PID) {
		o := guestLogin()
		o.game, o.user, o.password = "Super Smash Bros.", user, password
		sess, err := o.login(ctx, addr)
		if err != nil {
			t.Fatalf("login %s: %v", user, err)
		}
		t.Cleanup(func() { sess.Close(context.Background()) })
		return sb.NewDataStoreSSB4Client(sess.RMC), sess.PID
	}
	a, aPID := client("guest", auth.GuestPassword)
	b, _ := client("1000", "pw")

	if cfg, err := a.GetApplicationConfig(ctx, 3); err != nil || !slices.Equal(cfg, []string{"7", "8"}) {
		t.Fatalf("GetApplicationConfig(3): %v %v", cfg, err)
	}
	if err := a.PostProfile(ctx, sb.DataStorePostProfileParam{Profile: []byte("mii")}); err != nil {
		t.Fatal(err)
	}
	if ps, err := b.GetProfiles(ctx, []types.PID{aPID}); err != nil || len(ps) != 1 || ps[0].PID != aPID || string(ps[0].Profile) != "mii" {
		t.Fatalf("GetProfiles: %+v %v", ps, err)
	}

	m := sb.DataStorePreparePostReplayParam{Size: 4, Mode: 1, Players: []sb.DataStoreReplayPlayer{{Fighter: 3, PrincipalID: uint32(aPID)}},
		Winners: []uint32{uint32(aPID)}, ExtraData: []string{}}
	if req, _, err := a.CheckPostReplay(ctx, m); err != nil || !req {
		t.Fatalf("CheckPostReplay: %v %v", req, err)
	}
	_, info, err := a.PreparePostReplay(ctx, m)
	if err != nil {
		t.Fatalf("PreparePostReplay: %v", err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, kv := range info.Form {
		mw.WriteField(kv.Key, kv.Value)
	}
	fw, _ := mw.CreateFormFile("file", "replay")
	fw.Write([]byte("fght"))
	mw.Close()
	resp, err := http.Post(info.URL, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("replay upload: %s", resp.Status)
	}
	if _, err := b.GetNextReplay(ctx); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("GetNextReplay before the upload completed: %v", err)
	}
	if err := a.CompletePostReplay(ctx, sb.DataStoreCompletePostReplayParam{ReplayID: info.DataID,
		CompleteParam: ds.DataStoreCompletePostParam{DataID: info.DataID, Success: true}, PrepareParam: m}); err != nil {
		t.Fatalf("CompletePostReplay: %v", err)
	}
	next, err := b.GetNextReplay(ctx)
	if err != nil || next.ReplayID != info.DataID || next.Size != 4 || len(next.Players) != 1 || next.Players[0].Fighter != 3 {
		t.Fatalf("GetNextReplay: %+v %v", next, err)
	}

	for _, c := range []struct {
		game, config, want string
	}{
		{"Super Smash Bros. for Nintendo 3DS", `{"no_such_setting": 1}`, "unknown field"},
		{"Super Smash Bros.", `{"replay_period": 400}`, "replay_period"},
		{"Splatoon", `{}`, "no configurable variant"},
	} {
		f := filepath.Join(t.TempDir(), "bad.json")
		os.WriteFile(f, []byte(c.config), 0o600)
		serr := runCLIContext(t, context.Background(), &syncWriter{}, "serve", "--listen", freeUDPAddr(t), "--secure-listen", freeUDPAddr(t),
			"--datastore-listen", freeTCPAddr(t), "--data", t.TempDir(), "--game", c.game, "--game-config", f)
		if serr == nil || !strings.Contains(serr.Error(), "--game") || !strings.Contains(serr.Error(), c.want) {
			t.Fatalf("serve --game %q --game-config %s: %v, want an error naming %q", c.game, c.config, serr, c.want)
		}
	}
}
