package nex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestCommunityEndToEnd: over the secure server, one client creates a
// password-protected community; another finds it by its owner, is refused with
// the wrong password, joins with the right one and then finds it among its own.
func TestCommunityEndToEnd(t *testing.T) {
	for _, d := range []prudp.Dialect{prudp.NEXV1, prudp.NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cfg := fastFail(prudp.Config{Dialect: d, AccessKey: "6f599f81"})
			_, addr := startMultiplayer(t, cfg)
			owner, other := login(t, ctx, addr, cfg, 2000), login(t, ctx, addr, cfg, 2001)
			g := matchmaking.PersistentGathering{
				Gathering:     matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 16, Description: "weekend club"},
				CommunityType: 1, Password: "letmein", Attributes: []uint32{1, 0, 0, 0, 0, 0},
			}
			gid, err := owner.mm.CreateCommunity(ctx, g, "welcome")
			if err != nil {
				t.Fatalf("CreateCommunity: %v", err)
			}
			rr := types.ResultRange{Size: 10}
			found, err := other.mm.FindCommunityByOwner(ctx, owner.sess.PID, rr)
			if err != nil || len(found) != 1 || found[0].ID != gid || found[0].Description != "weekend club" ||
				found[0].Password != "" || found[0].ParticipationCount != 1 {
				t.Fatalf("FindCommunityByOwner: %+v, %v", found, err)
			}
			if err := other.mm.JoinCommunity(ctx, gid, "hi", "guess"); !errors.Is(err, matchmaking.ResultInvalidGatheringPassword) {
				t.Fatalf("JoinCommunity with a wrong password: %v", err)
			}
			if err := other.mm.JoinCommunity(ctx, gid, "hi", "letmein"); err != nil {
				t.Fatalf("JoinCommunity: %v", err)
			}
			mine, err := other.mm.FindCommunityByParticipant(ctx, other.sess.PID, rr)
			if err != nil || len(mine) != 1 || mine[0].ID != gid || mine[0].ParticipationCount != 2 {
				t.Fatalf("FindCommunityByParticipant: %+v, %v", mine, err)
			}
			simple, err := owner.mm.GetSimpleCommunity(ctx, []uint32{gid})
			if err != nil || len(simple) != 1 || simple[0].GID != gid {
				t.Fatalf("GetSimpleCommunity: %+v, %v", simple, err)
			}
			byID, err := owner.mm.FindCommunityByGatheringID(ctx, []uint32{gid})
			if err != nil || len(byID) != 1 || byID[0].Password != "letmein" || byID[0].Owner != owner.sess.PID {
				t.Fatalf("FindCommunityByGatheringId as the owner: %+v, %v", byID, err)
			}
		})
	}
}
