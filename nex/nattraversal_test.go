package nex

import (
	"context"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/prudp"
)

// TestGetRelaySignatureKey calls NAT Traversal's GetRelaySignatureKey with
// gamewire's client over PRUDP (V1 and V0): no relay server (mode 0, no
// address, port 0, address type 0), the server's UTC time and the game server
// id the Server was given.
func TestGetRelaySignatureKey(t *testing.T) {
	for _, d := range []prudp.Dialect{prudp.NEXV1, prudp.NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := fastFail(prudp.Config{Dialect: d, AccessKey: "6f599f81"})
			srv := multiplayerServer(t, cfg)
			srv.GameServerID = 0x1018DB00
			addr := startServer(t, srv)
			p := login(t, ctx, addr, cfg, 2000)
			before := time.Now().UTC().Truncate(time.Second)
			k, err := (&nattraversal.Client{RMC: p.sess.RMC}).GetRelaySignatureKey(ctx)
			after := time.Now().UTC()
			if err != nil {
				t.Fatal(err)
			}
			if k.RelayMode != 0 || k.Address != "" || k.Port != 0 || k.RelayAddressType != 0 || k.GameServerID != 0x1018DB00 {
				t.Fatalf("GetRelaySignatureKey: %+v", k)
			}
			if at := k.CurrentUTCTime.Time(); at.Before(before) || at.After(after) {
				t.Fatalf("currentUTCTime %v, want between %v and %v", k.CurrentUTCTime, before, after)
			}
		})
	}
}
