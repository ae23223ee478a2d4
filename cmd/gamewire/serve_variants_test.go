package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/hpp"
	sm "github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	ratingproto "github.com/gamewire/gamewire/nex/protocols/rating"
	"github.com/gamewire/gamewire/nex/protocols/securebadgearcade"
	"github.com/gamewire/gamewire/nex/protocols/serviceitemtkcd"
	"github.com/gamewire/gamewire/nex/protocols/shopbadgearcade"
	subproto "github.com/gamewire/gamewire/nex/protocols/subscription"
	"github.com/gamewire/gamewire/nex/types"
)

// TestServeGameVariantOverHPP: serve --game "Super Mario Maker" answers
// DataStore_SMM's GetApplicationConfig (its default table 0), reached over
// HPP on serve's HTTP listener as the guest account; without --game the
// same call is Core::NotImplemented, and a request signed with another
// access key is refused.
func TestServeGameVariantOverHPP(t *testing.T) {
	ctx := context.Background()
	key := auth.NewAccount(100, "", "MMQea3n!fsik").KeyNEX
	call := func(endpoint, accessKey string) ([]uint32, error) {
		c := sm.NewDataStoreSMMClient(&hpp.Client{URL: endpoint + hpp.Path, AccessKey: accessKey, PID: 100, Key: key[:],
			Set: types.Settings{StructureHeader: true}})
		return c.GetApplicationConfig(ctx, 0)
	}
	endpoint := func(out *syncWriter) string {
		m := regexp.MustCompile(`HTTP endpoint on (http://[^ ,]+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no DataStore endpoint in the banner:\n%s", out)
		}
		return m[1]
	}

	_, out, stop := startServeNEX(t, t.TempDir(), "--game", "Super Mario Maker")
	ep := endpoint(out)
	cfg, err := call(ep, "9f2b4678")
	if err != nil || len(cfg) != 40 || cfg[10] != 100 {
		t.Fatalf("GetApplicationConfig(0) with --game: %v %v", cfg, err)
	}
	if _, err := call(ep, defaultAccessKey); err == nil {
		t.Fatal("a request signed with another access key was answered")
	}
	stop()

	_, out, _ = startServeNEX(t, t.TempDir())
	if _, err := call(endpoint(out), defaultAccessKey); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("GetApplicationConfig without --game: %v", err)
	}
}

// TestServeKirbyAndBadgeArcade: serve --game "Team Kirby Clash Deluxe"
// answers ServiceItem's GetSupportId (the same id twice, from the store) and
// serve --game "Badge Arcade" Shop's GetRivToken (200, an extended protocol
// id) and GetMaintenanceStatus beside SecureConnection, over HPP as the guest.
func TestServeKirbyAndBadgeArcade(t *testing.T) {
	ctx := context.Background()
	key := auth.NewAccount(100, "", "MMQea3n!fsik").KeyNEX
	caller := func(out *syncWriter, accessKey string) *hpp.Client {
		m := regexp.MustCompile(`HTTP endpoint on (http://[^ ,]+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no HTTP endpoint in the banner:\n%s", out)
		}
		return &hpp.Client{URL: m[1] + hpp.Path, AccessKey: accessKey, PID: 100, Key: key[:], Set: types.Settings{StructureHeader: true}}
	}

	dir := t.TempDir()
	conf := filepath.Join(dir, "shop.json")
	if err := os.WriteFile(conf, []byte(`{"catalog": [{"ItemCode": "APPLE10", "Limitation": {"LimitationType": 1, "LimitationValue": 10}}],
		"law_messages": {"": "Terms"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, stop := startServeNEX(t, dir, "--game", "Team Kirby Clash Deluxe", "--game-config", conf)
	si := serviceitemtkcd.NewServiceItemTKCDClient(caller(out, "e0c85605"))
	id, err := si.ListServiceItemRequest(ctx, serviceitemtkcd.ServiceItemListServiceItemParam{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := si.ListServiceItemResponse(ctx, id); err != nil || len(res.NullableCatalog) != 1 || res.NullableCatalog[0].TotalSize != 1 ||
		res.NullableCatalog[0].ListItems[0].ItemCode != "APPLE10" || res.NullableCatalog[0].ListItems[0].Limitation.LimitationValue != 10 {
		t.Fatalf("the configured catalogue: %+v %v", res, err)
	}
	a, err := si.GetSupportId(ctx, serviceitemtkcd.ServiceItemGetSupportIdParam{})
	if err != nil || len(a) != tkcd.SupportIDDigits {
		t.Fatalf("GetSupportId: %q %v", a, err)
	}
	if b, err := si.GetSupportId(ctx, serviceitemtkcd.ServiceItemGetSupportIdParam{}); err != nil || b != a {
		t.Fatalf("GetSupportId again: %q %v, want %q", b, err, a)
	}
	stop()

	_, out, _ = startServeNEX(t, t.TempDir(), "--game", "Badge Arcade")
	c := caller(out, "82d5962d")
	if tok, err := shopbadgearcade.NewShopBadgeArcadeClient(c).GetRivToken(ctx, "PLAYS5", nil); err != nil || tok != "" {
		t.Fatalf("GetRivToken: %q %v", tok, err)
	}
	if st, _, ok, err := securebadgearcade.NewSecureConnectionBadgeArcadeClient(c).GetMaintenanceStatus(ctx); err != nil || st != 0xFFFF || !ok {
		t.Fatalf("GetMaintenanceStatus: %#x %v %v", st, ok, err)
	}
}

// TestServePokemon: serve --game "pokemon x/y" answers Subscription and
// Rating (here over HPP, as the guest account, at the game's NEX 3.3): a
// privacy level is kept, data published is read back, a token is issued and
// taken back. Without --game the protocols are not served.
func TestServePokemon(t *testing.T) {
	ctx := context.Background()
	key := auth.NewAccount(100, "", "MMQea3n!fsik").KeyNEX
	caller := func(endpoint, accessKey string) *hpp.Client {
		return &hpp.Client{URL: endpoint + hpp.Path, AccessKey: accessKey, PID: 100, Key: key[:], Set: types.Settings{Version: 30300}}
	}
	endpoint := func(out *syncWriter) string {
		m := regexp.MustCompile(`HTTP endpoint on (http://[^ ,]+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no HTTP endpoint in the banner:\n%s", out)
		}
		return m[1]
	}
	_, out, stop := startServeNEX(t, t.TempDir(), "--game", "pokemon x/y")
	if !strings.Contains(out.String(), "Subscription (117)") {
		t.Errorf("banner without Subscription:\n%s", out)
	}
	c := caller(endpoint(out), "876138df")
	sc, rc := subproto.SubscriptionClient{C: c}, ratingproto.RatingClient{C: c}
	if err := sc.SetPrivacyLevel(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if l, err := sc.GetPrivacyLevel(ctx); err != nil || l != 2 {
		t.Fatalf("privacy level %d, %v", l, err)
	}
	if err := sc.CreateMySubscriptionData(ctx, 0, subproto.SubscriptionData{Content: []byte("pss")}, false); err != nil {
		t.Fatal(err)
	}
	if ds, err := sc.GetSubscriptionData(ctx, []types.PID{100}); err != nil || len(ds) != 1 || string(ds[0].Content) != "pss" || ds[0].PrincipalID != 100 {
		t.Fatalf("data %+v, %v", ds, err)
	}
	tok, err := rc.UnknownMethod0x1(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.UnknownMethod0x2(ctx, tok); err != nil {
		t.Fatal(err)
	}
	stop()

	// --game-config sets the limits: one target.
	cfgFile := filepath.Join(t.TempDir(), "pokemon.json")
	if err := os.WriteFile(cfgFile, []byte(`{"max_targets": 1, "default_privacy_level": 0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, stop = startServeNEX(t, t.TempDir(), "--game", "pokemon x/y", "--game-config", cfgFile)
	sc = subproto.SubscriptionClient{C: caller(endpoint(out), "876138df")}
	if err := sc.AddTarget(ctx, []types.PID{1000, 1001}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("two targets with max_targets 1: %v", err)
	}
	if l, err := sc.GetPrivacyLevel(ctx); err != nil || l != 0 {
		t.Fatalf("configured default privacy level %d, %v", l, err)
	}
	stop()
	for _, c := range []struct{ config, want string }{
		{`{"max_data_size": 70000}`, "max_data_size"},
		{`{"active_window_seconds": -2}`, "active_window_seconds"},
		{`{"replays_per_hour": 1}`, "unknown field"},
	} {
		f := filepath.Join(t.TempDir(), "bad.json")
		if err := os.WriteFile(f, []byte(c.config), 0o600); err != nil {
			t.Fatal(err)
		}
		serr := runCLIContext(t, context.Background(), &syncWriter{}, "serve", "--listen", freeUDPAddr(t), "--secure-listen", freeUDPAddr(t),
			"--datastore-listen", freeTCPAddr(t), "--data", t.TempDir(), "--game", "pokemon x/y", "--game-config", f)
		if serr == nil || !strings.Contains(serr.Error(), "--game-config") || !strings.Contains(serr.Error(), c.want) {
			t.Fatalf("--game-config %s: %v, want an error naming %q", c.config, serr, c.want)
		}
	}

	_, out, _ = startServeNEX(t, t.TempDir())
	if _, err := (subproto.SubscriptionClient{C: caller(endpoint(out), defaultAccessKey)}).GetPrivacyLevel(ctx); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("GetPrivacyLevel without --game: %v", err)
	}
}
