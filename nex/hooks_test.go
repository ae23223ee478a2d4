package nex

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestMatchmakingHooksThroughServer: Server.MatchmakingHooks reach the
// matchmaking service Serve builds. Over real connections, Created sees the
// session player 2000 creates and MayJoin keeps player 2001 out of it with the
// hook's code while player 2002 joins.
func TestMatchmakingHooksThroughServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	srv := multiplayerServer(t, cfg)
	createdBy := make(chan types.PID, 4)
	srv.MatchmakingHooks = matchmaking.Hooks{
		MayJoin: func(_ context.Context, pid types.PID, ms *matchmaking.MatchmakeSession) error {
			if pid == 2001 {
				return fmt.Errorf("%w: not 2001 in %d", types.RendezVousNotFriend, ms.ID)
			}
			return nil
		},
		Created: func(_ context.Context, c *rmc.Call, ms matchmaking.MatchmakeSession) { createdBy <- ms.Owner },
	}
	addr := startServer(t, srv)
	owner, refused, allowed := login(t, ctx, addr, cfg, 2000), login(t, ctx, addr, cfg, 2001), login(t, ctx, addr, cfg, 2002)
	gid, _, err := owner.mm.CreateMatchmakeSession(ctx, session4(), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-createdBy; got != 2000 {
		t.Errorf("Created saw a session of %d", got)
	}
	if _, err := refused.mm.JoinMatchmakeSession(ctx, gid, ""); !errors.Is(err, types.RendezVousNotFriend) {
		t.Errorf("MayJoin refusing 2001: %v", err)
	}
	if _, err := allowed.mm.JoinMatchmakeSession(ctx, gid, ""); err != nil {
		t.Errorf("MayJoin letting 2002 in: %v", err)
	}
	if len(createdBy) != 0 {
		t.Errorf("Created ran for a join")
	}
}
