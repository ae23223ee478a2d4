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

// TestPrivateSessionEndToEnd: over the secure server and the RMC client, in the
// client's own NEX version (revision-0 search criteria, which carry no exclude
// flags), a player cannot enter a session with a system password by
// auto-matchmaking with criteria or by joining it, does not get its session
// key by finding it, and cannot take ownership of a session it is in.
func TestPrivateSessionEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := fastFail(prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"})
	_, addr := startMultiplayer(t, cfg)
	owner, intruder := login(t, ctx, addr, cfg, 2000), login(t, ctx, addr, cfg, 2001)
	ext := matchmaking.ProtocolMatchmakeExtension

	gid, key, err := owner.mm.CreateMatchmakeSession(ctx, session4(), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	w := types.NewWriter(nil, owner.sess.RMC.Settings())
	w.U32(gid)
	if _, err := owner.sess.RMC.Call(ctx, ext, matchmaking.MethodGenerateMatchmakeSessionSystemPassword, w.B); err != nil {
		t.Fatal(err)
	}
	crit := []matchmaking.SearchCriteria{{GameMode: "1", VacantOnly: true, ExcludeLocked: true}}
	ms, err := intruder.mm.AutoMatchmakeWithCriteria(ctx, crit, session4(), "")
	if err != nil || ms.ID == gid || ms.ParticipationCount != 1 {
		t.Fatalf("auto-matchmake with criteria beside a system-passworded session: session %d (%d players) %v; want its own", ms.ID, ms.ParticipationCount, err)
	}
	if _, err := intruder.mm.JoinMatchmakeSession(ctx, gid, ""); !errors.Is(err, matchmaking.ResultSystemPasswordUnmatch) {
		t.Fatalf("join without the system password: %v", err)
	}
	if found, err := intruder.mm.Find(ctx, gid); err != nil || len(found.SessionKey) != 0 {
		t.Fatalf("a non-participant found the session key %x (%v)", found.SessionKey, err)
	}
	if found, err := owner.mm.Find(ctx, gid); err != nil || string(found.SessionKey) != string(key) {
		t.Fatalf("the owner's find: key %x (%v), want %x", found.SessionKey, err, key)
	}

	// The owner joins the intruder's open session: the owner of that one may
	// migrate it; the joiner may not take it.
	if _, err := owner.mm.JoinMatchmakeSession(ctx, ms.ID, ""); err != nil {
		t.Fatal(err)
	}
	w = types.NewWriter(nil, owner.sess.RMC.Settings())
	w.U32(ms.ID)
	w.Bool(true)
	if _, err := owner.sess.RMC.Call(ctx, matchmaking.ProtocolMatchMaking, matchmaking.MethodUpdateSessionHost, w.B); !errors.Is(err, matchmaking.ResultPermissionDenied) {
		t.Fatalf("UpdateSessionHost(isMigrateOwner) by a participant: %v, want PermissionDenied", err)
	}
	if found, err := intruder.mm.Find(ctx, ms.ID); err != nil || found.Owner != intruder.sess.PID {
		t.Fatalf("owner after the refused migration: %d (%v), want %d", found.Owner, err, intruder.sess.PID)
	}
}
