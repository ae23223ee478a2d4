package badgearcade_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/internal/gametest"
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	dba "github.com/gamewire/gamewire/nex/protocols/datastorebadgearcade"
	"github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	"github.com/gamewire/gamewire/nex/protocols/secure"
	sba "github.com/gamewire/gamewire/nex/protocols/securebadgearcade"
	sh "github.com/gamewire/gamewire/nex/protocols/shopbadgearcade"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

var logged = time.Date(2026, 11, 27, 12, 30, 5, 0, time.UTC)

// TestBadgeArcadeOverPRUDP serves Badge Arcade on a real secure server (3DS
// PRUDP, NEX 3.7.16): GetMaintenanceStatus is answered beside nex/secure's
// SecureConnection (whose other methods still answer), Shop (200) travels
// with an extended protocol id, and a play log is stored for the caller.
func TestBadgeArcadeOverPRUDP(t *testing.T) {
	ctx := context.Background()
	var srv *badgearcade.Server
	gs := gametest.Start(t, prudp.Config{Dialect: prudp.NEXV0, AccessKey: "82d5962d"}, 30716, func(n *nex.Server, store *accounts.Store) error {
		srv = &badgearcade.Server{Store: store.BadgeArcade(), Now: func() time.Time { return logged.Add(123 * time.Millisecond) },
			Config: badgearcade.Config{RivTokens: map[string]string{"PLAYS5": "token-5"}}}
		return badgearcade.Register(n.Mux, srv)
	})
	p := gs.Login(t, 2000)
	sc := sba.NewSecureConnectionBadgeArcadeClient(p.Session.RMC)
	st, at, ok, err := sc.GetMaintenanceStatus(ctx)
	if err != nil || st != 0xFFFF || at != 0 || !ok {
		t.Fatalf("GetMaintenanceStatus: %#x %d %v %v, want the default", st, at, ok, err)
	}
	// nex/secure still answers the rest of SecureConnection.
	if ok, urls, err := (secure.SecureConnectionClient{C: p.Session.RMC}).RequestUrls(ctx, p.Session.ConnectionID, p.Session.PID); err != nil || !ok || len(urls) == 0 {
		t.Fatalf("RequestUrls: %v %v %v", ok, urls, err)
	}
	shop := sh.NewShopBadgeArcadeClient(p.Session.RMC)
	if tok, err := shop.GetRivToken(ctx, "PLAYS5", []byte{1, 2, 3}); err != nil || tok != "token-5" {
		t.Fatalf("GetRivToken configured: %q %v", tok, err)
	}
	if tok, err := shop.GetRivToken(ctx, "OTHER", nil); err != nil || tok != "" {
		t.Fatalf("GetRivToken: %q %v, want none", tok, err)
	}
	entry := sh.ShopPostPlayLogParam{Unknown1: []uint32{3, 0, 42}, Timestamp: types.MakeDateTime(2026, 11, 27, 12, 30, 0), Unknown2: "catcher"}
	if err := shop.PostPlayLog(ctx, entry); err != nil {
		t.Fatal(err)
	}
	logs, err := gs.Store.BadgeArcade().PlayLogs(ctx, 2000, 10)
	if err != nil || len(logs) != 1 {
		t.Fatalf("stored play logs: %v %v", logs, err)
	}
	if l := logs[0]; !slices.Equal(l.Unknown1, entry.Unknown1) || l.Timestamp != entry.Timestamp || l.Unknown2 != "catcher" || !l.Received.Equal(logged) {
		t.Fatalf("stored %+v", l)
	}
}

func inMemory(t *testing.T, cfg badgearcade.Config) (*rmc.Mux, *accounts.Store) {
	t.Helper()
	st, _, err := accounts.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mux := rmc.NewMux()
	if err := badgearcade.Register(mux, &badgearcade.Server{Store: st.BadgeArcade(), Config: cfg}); err != nil {
		t.Fatal(err)
	}
	return mux, st
}

func caller(mux *rmc.Mux, pid types.PID) *rmc.InMemory {
	return &rmc.InMemory{Handler: mux, Peer: &rmc.Peer{PID: pid, Settings: types.Settings{StructureHeader: true, Version: 30716}}}
}

// TestPlayLogLimits: entries beyond the limits are refused and not stored;
// a player keeps the newest PlayLogsPerPlayer; the maintenance status is
// the operator's when set.
func TestPlayLogLimits(t *testing.T) {
	ctx := context.Background()
	mux, st := inMemory(t, badgearcade.Config{PlayLogsPerPlayer: 2, Maintenance: &badgearcade.Maintenance{Status: 1, Time: 1800000000}})
	shop := sh.NewShopBadgeArcadeClient(caller(mux, 2000))
	for _, bad := range []sh.ShopPostPlayLogParam{
		{Unknown1: make([]uint32, badgearcade.MaxPlayLogValues+1)},
		{Unknown2: strings.Repeat("x", badgearcade.MaxPlayLogString+1)},
	} {
		if err := shop.PostPlayLog(ctx, bad); !errors.Is(err, types.CoreInvalidArgument) {
			t.Fatalf("oversized play log: %v", err)
		}
	}
	for i := range 3 {
		if err := shop.PostPlayLog(ctx, sh.ShopPostPlayLogParam{Unknown1: []uint32{uint32(i)}, Unknown2: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	logs, err := st.BadgeArcade().PlayLogs(ctx, 2000, 10)
	if err != nil || len(logs) != 2 || logs[0].Unknown1[0] != 2 || logs[1].Unknown1[0] != 1 {
		t.Fatalf("kept %+v %v, want the newest 2", logs, err)
	}
	if err := sh.NewShopBadgeArcadeClient(caller(mux, 0)).PostPlayLog(ctx, sh.ShopPostPlayLogParam{}); !errors.Is(err, types.CoreAccessDenied) {
		t.Fatalf("unauthenticated: %v", err)
	}
	st2, at, ok, err := sba.NewSecureConnectionBadgeArcadeClient(caller(mux, 2000)).GetMaintenanceStatus(ctx)
	if err != nil || st2 != 1 || at != 1800000000 || ok {
		t.Fatalf("configured maintenance: %d %d %v %v", st2, at, ok, err)
	}
}

// TestGetMetaByOwnerId: Badge Arcade's 115.45 pages through the objects of
// the owners (and data types) the caller may read, posted through the
// generic DataStore on the same Mux, with has_next; the generic DataStore
// keeps answering the rest of 115.
func TestGetMetaByOwnerId(t *testing.T) {
	ctx := context.Background()
	st, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dsrv := &datastore.Server{Store: st.DataStore(), BaseURL: "http://127.0.0.1:1", Blobs: datastore.DirBlobs{Dir: t.TempDir()}}
	mux := rmc.NewMux()
	mux.HandleProtocol(ds.DataStoreProtocolID, dsrv)
	if err := badgearcade.Register(mux, &badgearcade.Server{Store: st.BadgeArcade(), DataStore: dsrv}); err != nil {
		t.Fatal(err)
	}
	post := func(pid types.PID, name string, dataType uint16, perm uint8) uint64 {
		p := ds.DataStorePreparePostParam{Name: name, DataType: dataType, MetaBinary: []byte(name),
			Permission: ds.DataStorePermission{Permission: perm}, DeletePermission: ds.DataStorePermission{Permission: datastore.PermissionOwner},
			PersistenceInitParam: ds.DataStorePersistenceInitParam{PersistenceID: datastore.NoPersistenceSlot}}
		id, err := (ds.DataStoreClient{C: caller(mux, pid)}).PostMetaBinary(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := post(2000, "free play 1", 100, datastore.PermissionEveryone)
	b := post(2000, "free play 2", 100, datastore.PermissionEveryone)
	post(2000, "other type", 101, datastore.PermissionEveryone)
	post(2000, "private", 100, datastore.PermissionOwner)
	post(2001, "someone else's", 100, datastore.PermissionEveryone)

	get := func(pid types.PID, p datastoresmm.DataStoreGetMetaByOwnerIdParam) ([]ds.DataStoreMetaInfo, bool) {
		t.Helper()
		metas, more, err := dba.NewDataStoreBadgeArcadeClient(caller(mux, pid)).GetMetaByOwnerId(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return metas, more
	}
	metas, more := get(2001, datastoresmm.DataStoreGetMetaByOwnerIdParam{OwnerIDs: []uint32{2000}, DataTypes: []uint16{100},
		ResultOption: datastore.ResultMetaBinary, ResultRange: common.ResultRange{Size: 1}})
	if len(metas) != 1 || !more || metas[0].DataID != a || string(metas[0].MetaBinary) != "free play 1" {
		t.Fatalf("first page: %+v %v", metas, more)
	}
	metas, more = get(2001, datastoresmm.DataStoreGetMetaByOwnerIdParam{OwnerIDs: []uint32{2000}, DataTypes: []uint16{100},
		ResultRange: common.ResultRange{Offset: 1, Size: 10}})
	if len(metas) != 1 || more || metas[0].DataID != b || len(metas[0].MetaBinary) != 0 {
		t.Fatalf("second page: %+v %v", metas, more)
	}
	if metas, _ := get(2000, datastoresmm.DataStoreGetMetaByOwnerIdParam{OwnerIDs: []uint32{2000}, ResultRange: common.ResultRange{Size: 10}}); len(metas) != 4 {
		t.Fatalf("the owner, any data type: %d objects, want 4", len(metas))
	}
	if metas, more := get(2000, datastoresmm.DataStoreGetMetaByOwnerIdParam{ResultRange: common.ResultRange{Size: 10}}); len(metas) != 0 || more {
		t.Fatalf("no owners: %+v %v", metas, more)
	}
	// The generic DataStore still answers the rest of 115.
	if _, err := (ds.DataStoreClient{C: caller(mux, 2001)}).GetMeta(ctx, ds.DataStoreGetMetaParam{DataID: a, ResultOption: datastore.ResultMetaBinary}); err != nil {
		t.Fatalf("GetMeta: %v", err)
	}
}
