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
	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/internal/gametest"
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
	sc := sba.SecureConnectionBadgeArcadeClient{C: p.Session.RMC}
	st, at, ok, err := sc.GetMaintenanceStatus(ctx)
	if err != nil || st != 0xFFFF || at != 0 || !ok {
		t.Fatalf("GetMaintenanceStatus: %#x %d %v %v, want the default", st, at, ok, err)
	}
	// nex/secure still answers the rest of SecureConnection.
	if ok, urls, err := (secure.SecureConnectionClient{C: p.Session.RMC}).RequestUrls(ctx, p.Session.ConnectionID, p.Session.PID); err != nil || !ok || len(urls) == 0 {
		t.Fatalf("RequestUrls: %v %v %v", ok, urls, err)
	}
	shop := sh.ShopBadgeArcadeClient{C: p.Session.RMC}
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
	shop := sh.ShopBadgeArcadeClient{C: caller(mux, 2000)}
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
	if err := (sh.ShopBadgeArcadeClient{C: caller(mux, 0)}).PostPlayLog(ctx, sh.ShopPostPlayLogParam{}); !errors.Is(err, types.CoreAccessDenied) {
		t.Fatalf("unauthenticated: %v", err)
	}
	st2, at, ok, err := (sba.SecureConnectionBadgeArcadeClient{C: caller(mux, 2000)}).GetMaintenanceStatus(ctx)
	if err != nil || st2 != 1 || at != 1800000000 || ok {
		t.Fatalf("configured maintenance: %d %d %v %v", st2, at, ok, err)
	}
}
