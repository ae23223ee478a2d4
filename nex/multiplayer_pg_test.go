package nex

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// TestNodesOnPostgres: an authentication server and two secure nodes, each
// with its own pgstore handle (its own connection pool, as on three machines)
// on one PostgreSQL database. A player on each node auto-matchmakes into one
// session; the join and the leave reach the other node's player through the
// nodes' mailbox on that database; when one node stops heartbeating, the other reaps its player
// and tells its own (3007).
func TestNodesOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := pgtest.Start(t)
	dsn := srv.NewDatabase(t)
	open := func() *pgstore.Store {
		s, err := pgstore.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	auth, n1, n2 := open(), open(), open()
	for _, pid := range []types.PID{3000, 3001, 3002} {
		if _, err := auth.Add(ctx, accounts.NewAccount{PID: pid, Password: "pw"}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	const beat = 100 * time.Millisecond
	regs := []*crashable{{Registry: n1}, {Registry: n2}}
	var nodeAddrs []string
	for i, s := range []*pgstore.Store{n1, n2} {
		// One connection each: the second login must go to the other node.
		nodeAddrs = append(nodeAddrs, startRole(t, &Server{Role: RoleSecure, Config: cfg, Accounts: s, Nodes: regs[i],
			Exchange: s, HeartbeatInterval: beat, Matchmaking: s.Matchmaking(), NodeCapacity: 1}))
	}
	addr := startRole(t, &Server{Role: RoleAuth, Config: cfg, Accounts: auth, Nodes: auth, HeartbeatInterval: beat})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ns, _ := auth.Nodes(ctx); len(ns) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the secure nodes did not register")
		}
	}
	ps := []*player{login(t, ctx, addr, cfg, 3000)}
	time.Sleep(3 * beat) // the first node's heartbeat reports its connection
	ps = append(ps, login(t, ctx, addr, cfg, 3001))
	if ps[0].sess.SecureURL.String() == ps[1].sess.SecureURL.String() {
		t.Fatalf("both players on %s", ps[0].sess.SecureURL)
	}
	a, err := ps[0].mm.AutoMatchmake(ctx, session4(), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ps[1].mm.AutoMatchmake(ctx, session4(), "across")
	if err != nil || b.ID != a.ID {
		t.Fatalf("second player in %d (%v), want %d", b.ID, err, a.ID)
	}
	gid := a.ID
	if ev := waitEvent(t, ps[0], notifications.TypeNewParticipant, 10*time.Second); types.PID(ev.Param2) != 3001 || uint32(ev.Param1) != gid || ev.StrParam != "across" {
		t.Fatalf("join event %+v", ev)
	}
	if err := ps[1].mm.EndParticipation(ctx, gid, "later"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, ps[0], notifications.TypeParticipationEnded, 10*time.Second); types.PID(ev.Source) != 3001 || ev.StrParam != "later" {
		t.Fatalf("leave event %+v", ev)
	}

	// Back in, then the second node crashes: the first reaps its player.
	if b, err := ps[1].mm.AutoMatchmake(ctx, session4(), "again"); err != nil || b.ID != gid {
		t.Fatalf("rejoin: %d %v, want %d", b.ID, err, gid)
	}
	port, _ := ps[1].sess.SecureURL.Get("port")
	crashed := false
	for i, na := range nodeAddrs {
		if strings.HasSuffix(na, ":"+port) {
			regs[i].crashed.Store(true)
			crashed = true
		}
	}
	if !crashed {
		t.Fatalf("no node at port %s in %v", port, nodeAddrs)
	}
	for {
		ev := waitEvent(t, ps[0], notifications.TypeParticipantDisconnected, 20*time.Second)
		if types.PID(ev.Param2) == 3001 && uint32(ev.Param1) == gid {
			break
		}
	}
	if pids, err := ps[0].mm.Participants(ctx, gid); err != nil || len(pids) != 1 || pids[0] != 3000 {
		t.Fatalf("participants after the reap: %v %v", pids, err)
	}
}
