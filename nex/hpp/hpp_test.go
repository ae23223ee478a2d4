package hpp_test

import (
	"bytes"
	"context"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/hpp"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

const accessKey = "9f2b4678"

// newServer serves the DataStore service over HPP, with one account.
func newServer(t *testing.T) (*httptest.Server, auth.Account) {
	t.Helper()
	dir := t.TempDir()
	st, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, err := st.Add(context.Background(), accounts.NewAccount{Name: "rumble", Password: "Rumble-pw-1"})
	if err != nil {
		t.Fatal(err)
	}
	mux := rmc.NewMux()
	mux.HandleProtocol(ds.DataStoreProtocolID, &datastore.Server{Store: st.DataStore(), Blobs: datastore.DirBlobs{Dir: filepath.Join(dir, "b")}, BaseURL: "http://127.0.0.1:1"})
	h := &hpp.Handler{RMC: mux, Accounts: st, AccessKey: accessKey, Settings: types.Settings{StructureHeader: true}}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs, acct
}

// TestHPPAnswersNEXCalls: the generated DataStore client over HPP posts an
// object and reads it back (the caller's PID from the signed pid header), and
// a failing call comes back as its Result.
func TestHPPAnswersNEXCalls(t *testing.T) {
	ctx := context.Background()
	hs, acct := newServer(t)
	c := ds.DataStoreClient{C: &hpp.Client{URL: hs.URL + hpp.Path, AccessKey: accessKey, PID: acct.PID, Key: acct.KeyNEX[:],
		Set: types.Settings{StructureHeader: true}}}
	id, err := c.PostMetaBinary(ctx, ds.DataStorePreparePostParam{Name: "over-http", DataType: 3, MetaBinary: []byte("m"),
		DeletePermission: ds.DataStorePermission{Permission: 3}, PersistenceInitParam: ds.DataStorePersistenceInitParam{PersistenceID: 0xFFFF}})
	if err != nil {
		t.Fatal(err)
	}
	mi, err := c.GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: id, ResultOption: 4, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: 0xFFFF}})
	if err != nil || mi.Name != "over-http" || mi.OwnerID != acct.PID || string(mi.MetaBinary) != "m" {
		t.Fatalf("GetMeta over HPP: %+v %v", mi, err)
	}
	if _, err := c.GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: id + 100, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: 0xFFFF}}); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("GetMeta of a missing object over HPP: %v", err)
	}
}

// TestHPPRefuses: wrong signatures, an unknown PID, another method than
// POST, a body that is not a multipart form and one over the limit are
// refused before any handler runs.
func TestHPPRefuses(t *testing.T) {
	ctx := context.Background()
	hs, acct := newServer(t)
	call := func(cl *hpp.Client) error {
		_, err := ds.DataStoreClient{C: cl}.GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: 1})
		return err
	}
	good := hpp.Client{URL: hs.URL + hpp.Path, AccessKey: accessKey, PID: acct.PID, Key: acct.KeyNEX[:], Set: types.Settings{StructureHeader: true}}
	for name, cl := range map[string]hpp.Client{
		"signature1": func() hpp.Client { c := good; c.AccessKey = "00000000"; return c }(),
		"signature2": func() hpp.Client { c := good; c.Key = make([]byte, 16); return c }(),
		"no account": func() hpp.Client { c := good; c.PID = 999999; return c }(),
	} {
		if err := call(&cl); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("%s: %v, want 401", name, err)
		}
	}
	if err := call(&good); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("the good client: %v", err)
	}
	resp, err := http.Get(hs.URL + hpp.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %s", resp.Status)
	}
	resp, err = http.Post(hs.URL+hpp.Path, "application/octet-stream", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("not multipart: %s", resp.Status)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "file")
	fw.Write(make([]byte, hpp.DefaultMaxRequestBytes+1))
	mw.Close()
	resp, err = http.Post(hs.URL+hpp.Path, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("oversized: %s", resp.Status)
	}
}

// TestHPPWaitsForReady: with Ready set, a call is held until Ready closes and
// then answered (not Core::NotImplemented from a Mux still being filled); a
// request that ends while waiting is answered 503.
func TestHPPWaitsForReady(t *testing.T) {
	ctx := context.Background()
	hs, acct := newServer(t)
	h := hs.Config.Handler.(*hpp.Handler)
	ready := make(chan struct{})
	mux := h.RMC
	h.RMC, h.Ready = rmc.NewMux(), ready // nothing registered until ready

	gone, cancel := context.WithCancel(ctx)
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, hpp.Path, nil).WithContext(gone))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("a request ended while the server starts: %d %q, want 503", rec.Code, rec.Body)
	}

	c := ds.DataStoreClient{C: &hpp.Client{URL: hs.URL + hpp.Path, AccessKey: accessKey, PID: acct.PID, Key: acct.KeyNEX[:],
		Set: types.Settings{StructureHeader: true}}}
	errc := make(chan error, 1)
	go func() {
		_, err := c.GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: 1, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: 0xFFFF}})
		errc <- err
	}()
	h.RMC = mux // the services registered (as nex.Server.Serve does) before Ready closes
	close(ready)
	if err := <-errc; !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("a call held until ready: %v, want DataStore::NotFound from the registered service", err)
	}
}
