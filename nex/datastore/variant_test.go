package datastore_test

import (
	"context"
	"errors"
	"slices"
	"testing"

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
