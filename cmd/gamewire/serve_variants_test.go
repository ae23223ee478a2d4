package main

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/hpp"
	sm "github.com/gamewire/gamewire/nex/protocols/datastoresmm"
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
