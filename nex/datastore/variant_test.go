package datastore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/gamewire/gamewire/nex/datastore"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// smmConfig is a game's extension of DataStore (SMM's DataStore_SMM): it
// answers the variant's own method 61 and nothing else.
type smmConfig struct {
	datastoresmm.UnimplementedDataStoreSMM
}

func (smmConfig) GetApplicationConfig(ctx context.Context, c *rmc.Call, id uint32) ([]uint32, error) {
	if id != 1 {
		return nil, types.DataStoreNotFound
	}
	return []uint32{10, 20, 30}, nil
}

// TestGameVariantExtendsService: the DataStore service registered for the
// whole protocol and a game's variant registered for its own method only
// share one Mux: the variant's generated client reaches both, the base
// methods answered by the service, method 61 by the variant's handler.
func TestGameVariantExtendsService(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	mux := rmc.NewMux()
	mux.HandleProtocol(ds.DataStoreProtocolID, f.srv)
	datastoresmm.RegisterDataStoreSMMMethods(mux, smmConfig{}, datastoresmm.DataStoreSMMMethodGetApplicationConfig)
	caller := &rmc.InMemory{Handler: mux, Peer: &rmc.Peer{PID: 1001, Settings: types.Settings{StructureHeader: true}}}
	c := datastoresmm.NewDataStoreSMMClient(caller)
	config, err := c.GetApplicationConfig(ctx, 1)
	if err != nil || !slices.Equal(config, []uint32{10, 20, 30}) {
		t.Fatalf("GetApplicationConfig: %v %v", config, err)
	}
	if _, err := c.GetApplicationConfig(ctx, 2); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("GetApplicationConfig(2): %v", err)
	}
	// An inherited method goes to the service: posting and reading back.
	id, err := c.PostMetaBinary(ctx, ds.DataStorePreparePostParam{Name: "course", DataType: 7, MetaBinary: []byte("m"),
		Permission: ds.DataStorePermission{Permission: 0}, DeletePermission: ds.DataStorePermission{Permission: 3},
		PersistenceInitParam: ds.DataStorePersistenceInitParam{PersistenceID: 0xFFFF}})
	if err != nil {
		t.Fatal(err)
	}
	mi, err := c.GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: id, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: 0xFFFF}, ResultOption: 4})
	if err != nil || mi.Name != "course" || string(mi.MetaBinary) != "m" || mi.OwnerID != 1001 {
		t.Fatalf("GetMeta through the variant's client: %+v %v", mi, err)
	}
	// The variant's other own method is not registered: Core::NotImplemented
	// from the service, which does not know it.
	if _, err := c.GetApplicationConfigString(ctx, 1); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("GetApplicationConfigString: %v", err)
	}
}

// ownMethods is a variant's dispatch for TestServeVariant: 61 answers, 62
// fails with the store's ErrNotFound, 63 with another error, 64 with a
// Result; the rest are not the variant's. It records the version it saw.
type ownMethods struct{ version types.Version }

func (o *ownMethods) serve(ctx context.Context, c *rmc.Call, out []byte) ([]byte, bool, error) {
	o.version = c.Peer.Settings.Version
	switch c.Method {
	case 61:
		return append(out, 1, 2, 3, 4), true, nil
	case 62:
		return out, true, fmt.Errorf("course 9: %w", datastore.ErrNotFound)
	case 63:
		return out, true, errors.New("disk on fire")
	case 64:
		return out, true, types.DataStorePermissionDenied
	}
	return out, false, nil
}

// TestServeVariant: ServeVariant refuses an unauthenticated peer before the
// variant sees the call, gives the variant the service's NEX version, maps
// its failures as the service maps its own, and leaves the methods the
// variant does not handle to the service; it allocates nothing of its own.
func TestServeVariant(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	f.srv.NEXVersion = 30500
	own := &ownMethods{}
	h := rmc.HandlerFunc(func(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		return f.srv.ServeVariant(ctx, c, out, own.serve)
	})
	call := func(pid types.PID, method uint32) ([]byte, error) {
		return (&rmc.InMemory{Handler: h, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true}}}).Call(ctx, ds.DataStoreProtocolID, method, nil)
	}
	if _, err := call(0, 61); !errors.Is(err, types.RendezVousNotAuthenticated) || own.version != 0 {
		t.Fatalf("unauthenticated: %v (variant saw version %d)", err, own.version)
	}
	if out, err := call(1001, 61); err != nil || !slices.Equal(out, []byte{1, 2, 3, 4}) || own.version != 30500 {
		t.Fatalf("the variant's method: %x %v (version %d)", out, err, own.version)
	}
	for _, c := range []struct {
		method uint32
		want   error
	}{{62, types.DataStoreNotFound}, {63, types.DataStoreUnknown}, {64, types.DataStorePermissionDenied}} {
		if _, err := call(1001, c.method); !errors.Is(err, c.want) {
			t.Errorf("method %d: %v, want %v", c.method, err, c.want)
		}
	}
	// GetMeta (8) is not the variant's: the service answers it, here with
	// the object it does not have.
	p := ds.DataStoreGetMetaParam{DataID: 12345, PersistenceTarget: ds.DataStorePersistenceTarget{PersistenceID: datastore.NoPersistenceSlot}}
	w := types.NewWriter(nil, types.Settings{StructureHeader: true})
	(&ds.DataStoreGetMetaRequest{Param: p}).Append(&w)
	params, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	in := &rmc.InMemory{Handler: h, Peer: &rmc.Peer{PID: 1001, Settings: types.Settings{StructureHeader: true}}}
	if _, err := in.Call(ctx, ds.DataStoreProtocolID, ds.DataStoreMethodGetMeta, params); !errors.Is(err, types.DataStoreNotFound) {
		t.Fatalf("inherited GetMeta: %v", err)
	}

	c := &rmc.Call{Request: rmc.Request{Protocol: ds.DataStoreProtocolID, Method: 61}, Peer: &rmc.Peer{PID: 1001, Settings: types.Settings{Version: 30500}}}
	buf := make([]byte, 0, 16)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := f.srv.ServeVariant(ctx, c, buf, own.serve); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Fatalf("%v allocations per ServeVariant call", allocs)
	}
}
