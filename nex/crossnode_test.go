package nex

import (
	"context"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/pgtest"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/pgstore"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// expect reads p's next notification, whatever its type, and checks it: the
// notifications of one gathering must come in commit order.
func (p *player) expect(t *testing.T, typ uint32, gid uint32, who types.PID) notifications.Event {
	t.Helper()
	select {
	case ev := <-p.events:
		if ev.Type != typ || uint32(ev.Param1) != gid || types.PID(ev.Param2) != who && typ != notifications.TypeOwnershipChanged {
			t.Fatalf("PID %d: notification %+v, want type %d about %d in gathering %d", p.sess.PID, ev, typ, who, gid)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatalf("PID %d: no notification %d about %d", p.sess.PID, typ, who)
	}
	return notifications.Event{}
}

// TestAcrossNodes: an authentication server and two secure nodes share one
// SQLite store and an Exchange (mailbox and station directory: the SQLite
// store's, or PostgreSQL's); player A lands
// on node 1, player B on node 2. They auto-matchmake into one session, see
// each other's station urls, reach each other with NAT probe requests, and
// each hears of the other's joins, leaves, ownership change and disconnect in
// commit order.
func TestAcrossNodes(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { acrossNodes(t, nil) })
	// The same with the mailbox and the station directory on PostgreSQL
	// (woken by LISTEN/NOTIFY); accounts and matchmaking stay on SQLite.
	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.Start(t)
		pg, err := pgstore.Open(context.Background(), srv.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		acrossNodes(t, pg)
	})
}

// sharedStore opens the SQLite store the secure nodes of a cross-node test
// share, in a temporary directory, with its matchmaking store and an account
// (password "pw") for each pid; both close when the test ends.
func sharedStore(t *testing.T, ctx context.Context, pids ...types.PID) (*accounts.Store, *accounts.MatchmakeStore) {
	t.Helper()
	store, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mm.Close() })
	for _, pid := range pids {
		if _, err := store.Add(ctx, accounts.NewAccount{PID: pid, Password: "pw"}); err != nil {
			t.Fatal(err)
		}
	}
	return store, mm
}

// acrossNodes runs TestAcrossNodes with ex as the nodes' Exchange (nil: the
// SQLite store's).
func acrossNodes(t *testing.T, ex nodes.Exchange) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	store, mm := sharedStore(t, ctx, 3100, 3101)
	if ex == nil {
		ex = store
	}
	cfg := fastFail(prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"})
	const beat = 100 * time.Millisecond
	var secure []*Server
	for range 2 {
		// One connection each: the second login must go to the other node.
		srv := &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat,
			Matchmaking: mm, NodeCapacity: 1, Exchange: ex}
		startRole(t, srv)
		secure = append(secure, srv)
	}
	addr := startRole(t, &Server{Role: RoleAuth, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ns, _ := store.Nodes(ctx); len(ns) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the secure nodes did not register")
		}
	}
	a := login(t, ctx, addr, cfg, 3100)
	time.Sleep(3 * beat) // node 1's heartbeat reports its connection: B goes to node 2
	b := login(t, ctx, addr, cfg, 3101)
	if a.sess.SecureURL.String() == b.sess.SecureURL.String() {
		t.Fatalf("both players on %s", a.sess.SecureURL)
	}
	for _, srv := range secure {
		if srv.Hub().Online(3100) && srv.Hub().Online(3101) {
			t.Fatalf("node %s has both players", srv.Node)
		}
	}

	// Both auto-matchmake into one session; A hears of B's join.
	msA, err := a.mm.AutoMatchmake(ctx, session4(), "from A")
	if err != nil {
		t.Fatal(err)
	}
	gid := msA.ID
	msB, err := b.mm.AutoMatchmake(ctx, session4(), "across")
	if err != nil || msB.ID != gid {
		t.Fatalf("B in session %d (%v), want %d", msB.ID, err, gid)
	}
	start := time.Now()
	if ev := a.expect(t, notifications.TypeNewParticipant, gid, 3101); ev.StrParam != "across" {
		t.Fatalf("join event %+v", ev)
	}
	t.Logf("B's join reached A on the other node %v after B's call returned", time.Since(start))

	// Each sees the other's station urls (registered on the other node).
	for _, c := range []struct {
		p     *player
		other *player
	}{{a, b}, {b, a}} {
		urls, err := c.p.mm.ParticipantURLs(ctx, gid)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, u := range urls {
			if u.PID() == c.other.sess.PID {
				found = true
				if cid, _ := u.Uint("RVCID"); uint32(cid) != c.other.sess.ConnectionID {
					t.Errorf("url %s: RVCID, want %d", u, c.other.sess.ConnectionID)
				}
			}
		}
		if !found || len(urls) != 2 {
			t.Fatalf("PID %d: participant urls %v, want one for each player", c.p.sess.PID, urls)
		}
	}

	// A's probe request reaches B on the other node as InitiateProbe.
	target := b.sess.PublicURL
	target.SetUint("PID", uint64(b.sess.PID))
	if err := callNAT(ctx, a, nattraversal.MethodRequestProbeInitiationExt, func(w *types.Writer) {
		types.WriteList(w, []types.StationURL{target}, (*types.Writer).StationURL)
		w.StationURL(a.sess.PublicURL)
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-b.probes:
		if u.String() != a.sess.PublicURL.String() {
			t.Fatalf("probe of %s, want %s", u, a.sess.PublicURL)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("InitiateProbe not relayed to the other node")
	}

	// B leaves and comes back (node 2 then had nobody in the session: it
	// must not wait for changes it never saw); A hears both, in order.
	if err := b.mm.EndParticipation(ctx, gid, "brb"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.mm.AutoMatchmake(ctx, session4(), "back"); err != nil {
		t.Fatal(err)
	}
	if ev := a.expect(t, notifications.TypeParticipationEnded, gid, 3101); ev.StrParam != "brb" {
		t.Fatalf("leave event %+v", ev)
	}
	a.expect(t, notifications.TypeNewParticipant, gid, 3101)

	// The owner (A) leaves: B hears of it and of the ownership change; then A
	// joins again and B hears that.
	if err := a.mm.EndParticipation(ctx, gid, "owner out"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.mm.AutoMatchmake(ctx, session4(), "owner back"); err != nil {
		t.Fatal(err)
	}
	b.expect(t, notifications.TypeParticipationEnded, gid, 3100)
	if ev := b.expect(t, notifications.TypeOwnershipChanged, gid, 0); types.PID(ev.Param2) != 3101 || ev.Source != 3100 {
		t.Fatalf("ownership event %+v", ev)
	}
	b.expect(t, notifications.TypeNewParticipant, gid, 3100)

	// B's connection ends (no goodbye): A hears 3007 once node 2 notices.
	b.sess.RMC.Close()
	b.sess.Conn.Abort()
	ev := waitEvent(t, a, notifications.TypeParticipantDisconnected, 45*time.Second)
	if types.PID(ev.Param2) != 3101 || uint32(ev.Param1) != gid {
		t.Fatalf("disconnect event %+v", ev)
	}
	// Node 2 forgot B's urls when the connection ended.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		recs, err := ex.StationsOf(ctx, 3101)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's station urls still recorded after its connection ended: %+v", recs)
		}
	}
}

// TestAcrossNodesRestart: a secure node that starts under the name of one
// that was running (a restart after a crash: the old one's heartbeats
// stopped, so its name is free, ErrNodeIDTaken otherwise) makes that node's
// players leave; the players of the other nodes hear it (3007) through their
// node's mailbox.
func TestAcrossNodesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, mm := sharedStore(t, ctx, 3200, 3201)
	cfg := fastFail(prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"})
	const beat = 100 * time.Millisecond
	regs := map[string]*crashable{}
	node := func(name string) *Server {
		regs[name] = &crashable{Registry: store}
		srv := &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: regs[name], Exchange: store, HeartbeatInterval: beat,
			Matchmaking: mm, NodeCapacity: 1, Node: name}
		startRole(t, srv)
		return srv
	}
	node("n1")
	node("n2")
	addr := startRole(t, &Server{Role: RoleAuth, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ns, _ := store.Nodes(ctx); len(ns) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the secure nodes did not register")
		}
	}
	a := login(t, ctx, addr, cfg, 3200)
	time.Sleep(3 * beat)
	b := login(t, ctx, addr, cfg, 3201)
	msA, err := a.mm.AutoMatchmake(ctx, session4(), "")
	if err != nil {
		t.Fatal(err)
	}
	if msB, err := b.mm.AutoMatchmake(ctx, session4(), ""); err != nil || msB.ID != msA.ID {
		t.Fatalf("B in session %d (%v), want %d", msB.ID, err, msA.ID)
	}
	// Which node did A land on? The restart is of the other one.
	other := "n2"
	if recs, err := store.StationsOf(ctx, 3200); err != nil || len(recs) != 1 {
		t.Fatalf("A's station records %+v, %v", recs, err)
	} else if recs[0].Node == "n2" {
		other = "n1"
	}
	a.expect(t, notifications.TypeNewParticipant, msA.ID, 3201)
	// B's node crashes (its heartbeats stop; its process is left running
	// here, cut off from the store) and "restarts" once its record lapsed:
	// B's participation ends.
	regs[other].crashed.Store(true)
	waitNodes(ctx, t, store, other+"'s record lapses", func(ns []nodes.Node) bool {
		for _, n := range ns {
			if n.ID == other && time.Since(n.Heartbeat) < 3*beat {
				return false
			}
		}
		return true
	})
	node(other)
	ev := a.expect(t, notifications.TypeParticipantDisconnected, msA.ID, 3201)
	if ev.Source != 3201 {
		t.Fatalf("disconnect event %+v", ev)
	}
}
