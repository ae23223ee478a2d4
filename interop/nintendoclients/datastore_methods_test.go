package nintendoclients

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestNintendoClientsDataStoreMethods runs NintendoClients' generated
// DataStoreClient (nintendo/nex/datastore.py, NEX 3.5) through the DataStore
// methods beyond the core object API against gamewire's server
// (nc_datastore_methods.py lists them): notifications (the URL fetched, a
// notification for an object another user posted for the guest, in both
// list variants), rating logs and locks, resets, perpetuation, the batched
// and posting variants. Every answer is checked for its content, and
// NintendoClients must read each response to its end without a warning.
//
// At NEX 3.5 (structure headers) and at NEX 3.4 (none; the version set once,
// nex.Server.NEXVersion, as serve --nex-version does).
func TestNintendoClientsDataStoreMethods(t *testing.T) {
	for _, v := range []int{30500, 30400} {
		t.Run(strconv.Itoa(v), func(t *testing.T) { testDataStoreMethods(t, v) })
	}
}

func testDataStoreMethods(t *testing.T, version int) {
	dir, python := env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data := t.TempDir()
	store, _, err := accounts.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ds := &datastore.Server{Store: store.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(data, "datastore")}, NEXVersion: version}
	hs := httptest.NewServer(ds.HTTPHandler())
	defer hs.Close()
	ds.BaseURL = hs.URL

	// Another user (PID 200, through gamewire's own client) posts an object
	// for the guest (PID 100) with notification on post, and one with a body.
	other := &datastore.Client{C: &rmc.InMemory{Handler: ds, Peer: &rmc.Peer{PID: 200, Settings: types.Settings{StructureHeader: true}}}}
	forGuest := datastore.PreparePostParam{Name: "for-guest", DataType: 5, Flag: datastore.DataFlagUseNotificationOnPost,
		Permission:        datastore.Permission{Permission: datastore.PermissionRecipients, RecipientIDs: []types.PID{100}},
		PersistenceSlotID: datastore.NoPersistenceSlot}
	notified, err := other.PostMetaBinary(ctx, forGuest)
	if err != nil {
		t.Fatal(err)
	}
	withBody := datastore.PreparePostParam{Name: "with-body", DataType: 5, PersistenceSlotID: datastore.NoPersistenceSlot}
	bodyID, err := other.Put(ctx, withBody, []byte("twelve bytes"))
	if err != nil {
		t.Fatal(err)
	}

	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "3d37fbdb"}
	srv := &nex.Server{Config: cfg, Accounts: store, DataStore: ds, NEXVersion: types.Version(version)}
	addr, stop := serveNEX(t, srv)
	defer stop()
	host, port, _ := net.SplitHostPort(addr)
	cmd := pyCmd(ctx, dir, python, "nc_datastore_methods.py", "--host", host, "--port", port, "--access-key", "3d37fbdb",
		"--timeout", "50", "--nex-version", strconv.Itoa(version), "--body-id", strconv.FormatUint(bodyID, 10))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("NintendoClients:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("NintendoClients DataStore driver failed: %v\nstderr:\n%s", err, stderr.String())
	}
	out := steps(strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	n := strconv.FormatUint(notified, 10)
	for name, want := range map[string]string{
		"notifications":              "count=1 data_ids=" + n + " has_next=False",
		"notifications-v1":           "count=1 data_ids=" + n,
		"rate-objects":               "totals=13,14 results=success,success",
		"rate-locked":                "error=DataStore::OperationNotAllowed",
		"rate-modifiable":            "total=11 count=1",
		"rating-with-log":            "total=13 is_rated=True pid=100 value=3",
		"get-ratings":                "slots=2,0 results=success,DataStore::NotFound",
		"reset":                      "results=success total=10 count=0",
		"persistence-infos":          "results=success,DataStore::NotFound",
		"get-or-meta-binary":         "url='' owner=100 meta=meta-rated",
		"get-or-meta-binary-missing": "error=DataStore::NotFound",
		"password-infos":             "nonzero=True results=success,DataStore::PermissionDenied",
		"change-metas":               "results=success,DataStore::PermissionDenied",
		"change-metas-v1":            "results=success name=renamed-v1",
		"post-with-data-id":          "results=success,DataStore::OperationNotAllowed",
		"rate-with-posting":          "total=15 name=posted",
		"rates-with-posting":         "totals=16,12 results=success,success",
		"object-infos":               "size=12 downloaded=12 results=success,DataStore::OperationNotAllowed",
		"disconnected":               "",
	} {
		line, ok := out.find(name)
		if !ok || !strings.Contains(line, want) {
			t.Errorf("%s: got %q, want %q", name, line, want)
		}
	}
	// The polled URL names the guest's newest notification: the one listed.
	nl, _ := out.find("notifications")
	first := nl[strings.Index(nl, "first_id=")+len("first_id="):]
	if line, _ := out.find("notification-url"); !strings.HasPrefix(line, "STEP notification-url body="+first+",100,") || first == "0" {
		t.Errorf("notification-url: %q, want notification %s of PID 100", line, first)
	}
	if strings.Contains(stderr.String(), "WARNING") {
		t.Errorf("NintendoClients warned:\n%s", stderr.String())
	}
}
