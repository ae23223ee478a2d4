package nintendoclients

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestNintendoClientsRankingAndDataStore runs NintendoClients' generated
// RankingClient and DataStoreClient (nintendo/nex/ranking.py, datastore.py,
// NEX 3.5 settings) against gamewire's Ranking and DataStore on a V1 server
// with an SQLite store: a score uploaded and read back with its groups and
// param, common data, an unknown category refused with Ranking::NotFound, an
// object posted (prepare, HTTP upload with the handed-out form fields,
// complete), its meta read, its body fetched from the download URL, and a
// missing object refused with DataStore::NotFound.
//
// Five settings, the server's version set once (nex.Server.NEXVersion, as
// serve --nex-version does) and NintendoClients configured for the same: NEX
// 3.4 (no structure headers), 3.5, 3.6 and 3.9 (RankingRankData revision 1
// with updateTime, nintendo-wiki's gate, which NintendoClients skips before
// NEX 4) and 4.0 (which reads it). Before the Ranking service moved to the
// generated code the last case ran gamewire's default (no version: revision 1
// whenever structure headers are on) against the NEX 4.0 client; an
// unconfigured server is now NEX 3.5 for every service (docs/nex.md).
func TestNintendoClientsRankingAndDataStore(t *testing.T) {
	for _, tc := range []struct {
		name           string
		server, client int
	}{{"nex-3.5", 30500, 30500}, {"nex-3.4", 30400, 30400}, {"nex-3.6", 30600, 30600}, {"nex-3.9", 30900, 30900},
		{"nex-4.0", 40000, 40000}} {
		t.Run(tc.name, func(t *testing.T) { testRankingAndDataStore(t, tc.server, tc.client) })
	}
}

func testRankingAndDataStore(t *testing.T, serverVersion, clientVersion int) {
	dir, python := env(t)
	for _, f := range []string{"nintendo/nex/ranking.py", "nintendo/nex/datastore.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%v: add NintendoClients' %s to the copy (docs/interop.md)", err, f)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data := t.TempDir()
	store, _, err := accounts.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ds := &datastore.Server{Store: store.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(data, "datastore")}, NEXVersion: serverVersion}
	hs := httptest.NewServer(ds.HTTPHandler())
	defer hs.Close()
	ds.BaseURL = hs.URL
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	srv := &nex.Server{Config: cfg, Accounts: store, Ranking: &ranking.Server{Store: store.Ranking(), NEXVersion: serverVersion}, DataStore: ds,
		NEXVersion: types.Version(serverVersion)}
	addr, stop := serveNEX(t, srv)
	defer stop()
	host, port, _ := net.SplitHostPort(addr)
	cmd := pyCmd(ctx, dir, python, "nc_services.py", "--host", host, "--port", port, "--access-key", "3d37fbdb", "--timeout", "50",
		"--nex-version", strconv.Itoa(clientVersion))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("NintendoClients services driver failed: %v\nstderr:\n%s", err, stderr.String())
	}
	checkServicesSteps(t, &stdout, &stderr, "100")
}

// checkServicesSteps checks nc_services.py's steps for a player of PID pid:
// the score and common data read back, the unknown category and the missing
// object refused, the DataStore object posted and read back whole, and no
// NintendoClients warning.
func checkServicesSteps(t *testing.T, stdout, stderr *bytes.Buffer, pid string) {
	t.Helper()
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	for name, want := range map[string]string{
		"ranking-entry":            "rank=1 pid=" + pid + " score=4321 param=99 groups=1,2 category=7",
		"ranking-total":            "total=1",
		"ranking-common-data":      "data=mii-data",
		"ranking-unknown-category": "error=Ranking::NotFound",
		"datastore-upload":         "status=204",
		"datastore-meta":           "owner=" + pid + " size=111 name=nc-object data_type=5 tags=nc meta_binary=meta",
		"datastore-download":       "size=111",
		"datastore-missing":        "error=DataStore::NotFound",
	} {
		line, ok := out.find(name)
		if !ok || !strings.Contains(line, want) {
			t.Errorf("%s: got %q, want %q", name, line, want)
		}
	}
	if line, _ := out.find("datastore-download"); !strings.Contains(line, "equal=True") {
		t.Errorf("downloaded body differs: %q", line)
	}
	if strings.Contains(stderr.String(), "WARNING") {
		t.Errorf("NintendoClients warned:\n%s", stderr.String())
	}
}

// TestNintendoClientsRankingServeNEX34 is issue 22's done-when for Ranking:
// the `gamewire serve --nex-version 30400` binary (its defaults otherwise:
// NEX V1, the SQLite store, Ranking and DataStore) serves NintendoClients'
// RankingClient configured for NEX 3.4 (no structure headers) as it serves
// 3.5-3.9 ones: a score uploaded and read back with its rank, groups and
// param, common data, an unknown category refused (nc_services.py, whose
// DataStore steps run too).
func TestNintendoClientsRankingServeNEX34(t *testing.T) {
	dir, python := env(t)
	bin := buildGamewire(t)
	port := freeServePorts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer startServe(t, ctx, bin, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--access-key", "3d37fbdb", "--nex-version", "30400")()
	waitTCP(t, port+2)
	cmd := pyCmd(ctx, dir, python, "nc_services.py", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--access-key", "3d37fbdb",
		"--timeout", "50", "--nex-version", "30400")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("NintendoClients services driver failed: %v\nstderr:\n%s", err, stderr.String())
	}
	// serve's guest account, PID 100.
	checkServicesSteps(t, &stdout, &stderr, "100")
}
