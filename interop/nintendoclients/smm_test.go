package nintendoclients

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/hpp"
	sm "github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	"github.com/gamewire/gamewire/nex/types"
)

// TestNintendoClientsSMM is issue 22's game variant served end to end and
// issue 27's "a course record is stored and read back": `gamewire serve
// --game "Super Mario Maker"` (the binary, the title's access key and NEX
// version from the games table) and NintendoClients' own DataStoreClientSMM
// (nintendo/nex/datastore_smm.py, nc_smm.py) for two users: courses posted
// through the inherited DataStore method and read back, the default
// application configuration (61, 74), a course record from three clears
// (first clear kept, best time replaced only by a better one) read back, and
// stars (custom ranking 48) read back with places and meta binaries (50).
// Then HPP (NEX over HTTP) on serve's HTTP listener: the course record read
// back by gamewire's HPP client, signed with b's password key.
func TestNintendoClientsSMM(t *testing.T) {
	dir, python := env(t)
	if _, err := os.Stat(filepath.Join(dir, "nintendo/nex/datastore_smm.py")); err != nil {
		t.Fatalf("%v: add NintendoClients' nintendo/nex/datastore_smm.py to the copy (docs/interop.md)", err)
	}
	g, err := games.Find("Super Mario Maker")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildGamewire(t)
	data := filepath.Join(t.TempDir(), "gamewire")
	a := addAccount(t, bin, data, "Maker-a-1")
	b := addAccount(t, bin, data, "Player-b-2")
	port := freeServePorts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--data", data, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--game", "Super Mario Maker")()
	waitTCP(t, port+2)

	cmd := pyCmd(ctx, dir, python, "nc_smm.py", "--port", strconv.Itoa(port), "--access-key", g.AccessKey,
		"--nex-version", strconv.Itoa(g.NEXVersion),
		"--user-a", strconv.Itoa(a), "--password-a", "Maker-a-1", "--user-b", strconv.Itoa(b), "--password-b", "Player-b-2",
		"--timeout", "60")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("nc_smm.py: %v\nstderr:\n%s", err, stderr.String())
	}
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	courses, _ := out.find("courses")
	ca, cb := field(t, courses, "a"), field(t, courses, "b")
	for name, want := range map[string]string{
		"logged-in":                   fmt.Sprintf("a=%d b=%d", a, b),
		"application-config-0":        "count=40 uploads=100",
		"application-config-1":        "values=2",
		"application-config-string-0": "count=0",
		"course-record":               fmt.Sprintf("data_id=%d first_pid=%d best_pid=%d best_score=4200 created=True", ca, b, a),
		"course-record-none":          "error=DataStore::NotFound",
		"custom-ranking":              fmt.Sprintf("entries=%d:2:1:course-castle;%d:1:2:course-airship;0:0:0: results=success,success,DataStore::NotFound", ca, cb),
		"get-meta":                    fmt.Sprintf("name=castle owner=%d meta=course-castle", a),
		"disconnected":                "",
	} {
		line, ok := out.find(name)
		if !ok || !strings.Contains(line, want) {
			t.Errorf("%s: got %q, want %q", name, line, want)
		}
	}
	if strings.Contains(stderr.String(), "WARNING") {
		t.Errorf("NintendoClients warned:\n%s", stderr.String())
	}

	// HPP on serve's HTTP listener reaches the same handlers, the variant's
	// included: the course record read back over HTTP, signed as b.
	key := auth.NewAccount(types.PID(b), "", "Player-b-2").KeyNEX
	hc := sm.NewDataStoreSMMClient(&hpp.Client{URL: fmt.Sprintf("http://127.0.0.1:%d%s", port+2, hpp.Path), AccessKey: g.AccessKey,
		PID: types.PID(b), Key: key[:], Set: types.Settings{StructureHeader: true, Version: types.Version(g.NEXVersion)}})
	rec, err := hc.GetCourseRecord(ctx, sm.DataStoreGetCourseRecordParam{DataID: uint64(ca)})
	if err != nil || rec.BestScore != 4200 || rec.BestPID != uint32(a) || rec.FirstPID != uint32(b) {
		t.Errorf("GetCourseRecord over HPP: %+v %v", rec, err)
	}
}
