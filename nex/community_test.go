package nex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestCommunityEndToEnd: over the secure server, one client creates a
// password-protected community; another finds it by its owner, is refused with
// the wrong password, joins with the right one and then finds it among its own.
// On the SQLite store (V1 and V0) and on PostgreSQL (V1).
func TestCommunityEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     prudp.Dialect
		start func(t *testing.T, cfg prudp.Config) string
	}{
		{prudp.NEXV1.String(), prudp.NEXV1, func(t *testing.T, cfg prudp.Config) string { _, addr := startMultiplayer(t, cfg); return addr }},
		{prudp.NEXV0.String(), prudp.NEXV0, func(t *testing.T, cfg prudp.Config) string { _, addr := startMultiplayer(t, cfg); return addr }},
		{prudp.NEXV1.String() + "-postgres", prudp.NEXV1, startOnPostgres},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fastFail(prudp.Config{Dialect: tc.d, AccessKey: "6f599f81"})
			addr := tc.start(t, cfg)
			// The time limit starts once the server runs: starting PostgreSQL
			// on a loaded machine may take a good part of it.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
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

// startOnPostgres serves the players' accounts with matchmaking on a fresh
// PostgreSQL database (skipped without PostgreSQL, internal/pgtest).
func startOnPostgres(t *testing.T, cfg prudp.Config) string {
	t.Helper()
	store, err := pgstore.Open(context.Background(), pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return startServer(t, &Server{Config: cfg, Accounts: playerAccounts(), Matchmaking: store.Matchmaking()})
}
