package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/hpp"
	sm "github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	"github.com/gamewire/gamewire/nex/protocols/securebadgearcade"
	"github.com/gamewire/gamewire/nex/protocols/serviceitemtkcd"
	"github.com/gamewire/gamewire/nex/protocols/shopbadgearcade"
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
		c := sm.DataStoreSMMClient{C: &hpp.Client{URL: endpoint + hpp.Path, AccessKey: accessKey, PID: 100, Key: key[:],
			Set: types.Settings{StructureHeader: true}}}
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
	si := serviceitemtkcd.ServiceItemTKCDClient{C: caller(out, "e0c85605")}
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
	if tok, err := (shopbadgearcade.ShopBadgeArcadeClient{C: c}).GetRivToken(ctx, "PLAYS5", nil); err != nil || tok != "" {
		t.Fatalf("GetRivToken: %q %v", tok, err)
	}
	if st, _, ok, err := (securebadgearcade.SecureConnectionBadgeArcadeClient{C: c}).GetMaintenanceStatus(ctx); err != nil || st != 0xFFFF || !ok {
		t.Fatalf("GetMaintenanceStatus: %#x %v %v", st, ok, err)
	}
}
