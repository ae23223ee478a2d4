package nex

import (
	"context"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestMatchmakingPlayerMethodsEndToEnd: over the secure server with
// matchmaking.Client, the host's UpdateSessionURL shows first in another
// participant's GetSessionURLs; a player the host blocked auto-matchmakes
// into a session of its own while a third joins the host's; the block list
// reads back and empties; notification data is stored, and with no friends
// source wired, a player reads no friends' data.
func TestMatchmakingPlayerMethodsEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := fastFail(prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"})
	_, addr := startMultiplayer(t, cfg)
	host, blocked, third := login(t, ctx, addr, cfg, 2000), login(t, ctx, addr, cfg, 2001), login(t, ctx, addr, cfg, 2002)
	if err := host.mm.Block(ctx, []types.PID{blocked.sess.PID}, false); err != nil {
		t.Fatal(err)
	}
	if l, err := host.mm.BlockList(ctx); err != nil || len(l) != 1 || l[0] != blocked.sess.PID {
		t.Fatalf("block list %v %v", l, err)
	}
	ms, err := host.mm.AutoMatchmake(ctx, session4(), "")
	if err != nil {
		t.Fatal(err)
	}
	const url = "prudps:/address=198.51.100.4;port=50000;natm=1;natf=1;type=3"
	if err := host.mm.UpdateSessionURL(ctx, ms.ID, url); err != nil {
		t.Fatal(err)
	}
	other, err := blocked.mm.AutoMatchmake(ctx, session4(), "")
	if err != nil || other.ID == ms.ID || other.Owner != blocked.sess.PID {
		t.Fatalf("blocked player in session %d owned by %d (host's %d): %v", other.ID, other.Owner, ms.ID, err)
	}
	joined, err := third.mm.AutoMatchmake(ctx, session4(), "")
	if err != nil || joined.ID != ms.ID {
		t.Fatalf("third player in %d, want %d: %v", joined.ID, ms.ID, err)
	}
	urls, err := third.mm.SessionURLs(ctx, ms.ID)
	if err != nil || len(urls) == 0 || urls[0].String() != url {
		t.Fatalf("session urls %v %v", urls, err)
	}
	if err := host.mm.Block(ctx, []types.PID{blocked.sess.PID}, true); err != nil {
		t.Fatal(err)
	}
	if l, err := host.mm.BlockList(ctx); err != nil || len(l) != 0 {
		t.Fatalf("block list after removal %v %v", l, err)
	}
	if err := host.mm.UpdateNotificationData(ctx, 101, 1, 2, "in a room"); err != nil {
		t.Fatal(err)
	}
	if evs, err := third.mm.FriendNotificationData(ctx, []uint32{101}); err != nil || len(evs) != 0 {
		t.Fatalf("friends' data without a friends source: %+v %v", evs, err)
	}
}
