package nex

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// playerAccounts adds players 2000 to 2063 to the test accounts (each key derivation
// costs ~65,000 MD5 rounds, so they are made once).
var playerAccounts = sync.OnceValue(func() *auth.Memory {
	m := new(auth.Memory)
	for _, sp := range auth.SpecialAccounts {
		m.Add(sp.PID, sp.Name, "secret-"+sp.Name)
	}
	for i := range 64 {
		m.Add(types.PID(2000+i), fmt.Sprint(2000+i), "pw")
	}
	return m
})

// player is a logged-in client with the events and server calls it received.
type player struct {
	sess   *Session
	mm     *matchmaking.Client
	events chan notifications.Event
	probes chan types.StationURL
}

func startMultiplayer(t *testing.T, cfg prudp.Config) (*Server, string) {
	t.Helper()
	srv := multiplayerServer(t, cfg)
	return srv, startServer(t, srv)
}

// multiplayerServer is a Server, not started yet, with the test accounts and
// a matchmaking store in a fresh SQLite database.
func multiplayerServer(t *testing.T, cfg prudp.Config) *Server {
	t.Helper()
	store, _, err := accounts.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	mm, err := store.Matchmaking()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mm.Close(); store.Close() })
	return &Server{Config: cfg, Accounts: playerAccounts(), Matchmaking: mm}
}

func login(t *testing.T, ctx context.Context, addr string, cfg prudp.Config, pid int) *player {
	t.Helper()
	return loginVersion(t, ctx, addr, cfg, pid, 0)
}

// loginVersion is login speaking a NEX version (0: derived from the
// connection's settings).
func loginVersion(t *testing.T, ctx context.Context, addr string, cfg prudp.Config, pid int, version types.Version) *player {
	t.Helper()
	p := &player{events: make(chan notifications.Event, 64), probes: make(chan types.StationURL, 8)}
	mux := rmc.NewMux()
	mux.HandleProtocol(notifications.Protocol, &notifications.Handler{F: func(_ context.Context, ev notifications.Event) { p.events <- ev }})
	mux.Handle(nattraversal.Protocol, nattraversal.MethodInitiateProbe, rmc.HandlerFunc(func(_ context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		r := c.Reader()
		u := r.StationURL("urlStationToProbe")
		p.probes <- u
		return out, r.Done()
	}))
	sess, err := Login(ctx, addr, LoginConfig{User: fmt.Sprint(pid), Password: "pw", Config: cfg, Handler: mux, NEXVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSession(t, sess) })
	p.sess = sess
	p.mm = &matchmaking.Client{RMC: sess.RMC, Version: notifications.DefaultVersion(sess.RMC.Settings())}
	return p
}

// next waits for the next event of a type, skipping others.
func (p *player) next(t *testing.T, typ uint32) notifications.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-p.events:
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("PID %d: no notification %d", p.sess.PID, typ)
		}
	}
}

func session4() matchmaking.MatchmakeSession {
	return matchmaking.MatchmakeSession{
		Gathering:         matchmaking.Gathering{MinParticipants: 1, MaxParticipants: 4, Flags: matchmaking.FlagMigrateOwner},
		GameMode:          1,
		Attributes:        []uint32{0, 0, 0, 0, 0, 0},
		OpenParticipation: true,
	}
}

// TestMatchmakingEndToEnd: four clients auto-matchmake into one session over
// the secure server; joins, leaves, a disconnect and an ownership change reach
// the others as notifications; NAT properties show in the urls the others get;
// probe requests are relayed; bad input gets the pages' result codes.
func TestMatchmakingEndToEnd(t *testing.T) {
	for _, d := range []prudp.Dialect{prudp.NEXV1, prudp.NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cfg := fastFail(prudp.Config{Dialect: d, AccessKey: "6f599f81"})
			srv, addr := startMultiplayer(t, cfg)
			var ps []*player
			for i := range 4 {
				ps = append(ps, login(t, ctx, addr, cfg, 2000+i))
			}
			var gid uint32
			for i, p := range ps {
				ms, err := p.mm.AutoMatchmake(ctx, session4(), fmt.Sprintf("hi from %d", i))
				if err != nil {
					t.Fatalf("player %d: AutoMatchmake: %v", i, err)
				}
				if i == 0 {
					gid = ms.ID
				} else if ms.ID != gid {
					t.Fatalf("player %d in session %d, want %d", i, ms.ID, gid)
				}
				if ms.ParticipationCount != uint32(i+1) || ms.Owner != ps[0].sess.PID || len(ms.SessionKey) == 0 && p.mm.Version >= types.Version3 {
					t.Fatalf("player %d: session %+v", i, ms.Gathering)
				}
			}
			// Everyone already in hears of each later join, in order.
			for i := 1; i < 4; i++ {
				for j := 0; j < i; j++ {
					ev := ps[j].next(t, notifications.TypeNewParticipant)
					if ev.Param1 != uint64(gid) || types.PID(ev.Param2) != ps[i].sess.PID || ev.StrParam != fmt.Sprintf("hi from %d", i) {
						t.Fatalf("player %d: join event %+v", j, ev)
					}
				}
			}
			// Full: a fifth client gets a session of its own... after the NAT part.
			if err := callNAT(ctx, ps[1], nattraversal.MethodReportNATProperties, func(w *types.Writer) { w.U32(1); w.U32(2); w.U32(15) }); err != nil {
				t.Fatal(err)
			}
			urls, err := ps[0].mm.ParticipantURLs(ctx, gid)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, u := range urls {
				if u.PID() == ps[1].sess.PID {
					found = true
					if m, _ := u.Uint("natm"); m != 1 {
						t.Errorf("url %s: natm, want 1", u)
					}
					if f, _ := u.Uint("natf"); f != 2 {
						t.Errorf("url %s: natf, want 2", u)
					}
					if c, _ := u.Uint("RVCID"); uint32(c) != ps[1].sess.ConnectionID {
						t.Errorf("url %s: RVCID, want %d", u, ps[1].sess.ConnectionID)
					}
				}
			}
			if !found || len(urls) != 4 { // one per player: public and private are the same on loopback
				t.Fatalf("participant urls %v", urls)
			}
			// A probe request reaches its target as InitiateProbe.
			target := ps[2].sess.PublicURL
			target.SetUint("PID", uint64(ps[2].sess.PID))
			if err := callNAT(ctx, ps[0], nattraversal.MethodRequestProbeInitiationExt, func(w *types.Writer) {
				types.WriteList(w, []types.StationURL{target}, (*types.Writer).StationURL)
				w.StationURL(ps[0].sess.PublicURL)
			}); err != nil {
				t.Fatal(err)
			}
			select {
			case u := <-ps[2].probes:
				if u.String() != ps[0].sess.PublicURL.String() {
					t.Fatalf("probe of %s, want %s", u, ps[0].sess.PublicURL)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("InitiateProbe not relayed")
			}

			// Player 3 leaves: the others hear 3008.
			if err := ps[3].mm.EndParticipation(ctx, gid, "bye"); err != nil {
				t.Fatal(err)
			}
			for j := 0; j < 3; j++ {
				if ev := ps[j].next(t, notifications.TypeParticipationEnded); types.PID(ev.Param2) != ps[3].sess.PID || ev.StrParam != "bye" {
					t.Fatalf("leave event %+v", ev)
				}
			}
			// Player 2's connection ends: the others hear 3007.
			ps[2].sess.RMC.Close()
			ps[2].sess.Conn.Abort()
			srv.SecureServer() // the server notices by its idle timeout at worst
			for j := 0; j < 2; j++ {
				ev := waitEvent(t, ps[j], notifications.TypeParticipantDisconnected, 45*time.Second)
				if types.PID(ev.Param2) != ps[2].sess.PID {
					t.Fatalf("disconnect event %+v", ev)
				}
			}
			// The owner leaves: ownership moves to player 1 (4000).
			if err := ps[0].mm.EndParticipation(ctx, gid, ""); err != nil {
				t.Fatal(err)
			}
			if ev := ps[1].next(t, notifications.TypeOwnershipChanged); types.PID(ev.Param2) != ps[1].sess.PID || ev.Source != ps[0].sess.PID {
				t.Fatalf("ownership event %+v", ev)
			}
			pids, err := ps[1].mm.Participants(ctx, gid)
			if err != nil || len(pids) != 1 || pids[0] != ps[1].sess.PID {
				t.Fatalf("participants %v %v", pids, err)
			}

			// Bad input: the pages' result codes, and the connection stays.
			if _, err := ps[0].mm.JoinMatchmakeSession(ctx, gid+1000, ""); !errors.Is(err, matchmaking.ResultSessionVoid) {
				t.Fatalf("join unknown: %v", err)
			}
			if err := ps[0].mm.EndParticipation(ctx, gid, ""); !errors.Is(err, matchmaking.ResultNotParticipatedGathering) {
				t.Fatalf("leave twice: %v", err)
			}
			if err := ps[0].mm.SetParticipation(ctx, gid, false); !errors.Is(err, matchmaking.ResultPermissionDenied) {
				t.Fatalf("close someone else's session: %v", err)
			}
			big := session4()
			big.Attributes = make([]uint32, 7)
			if _, err := ps[0].mm.AutoMatchmake(ctx, big, ""); !errors.Is(err, types.CoreInvalidArgument) {
				t.Fatalf("7 attributes: %v", err)
			}
			crit := []matchmaking.SearchCriteria{{GameMode: "2,1"}}
			if _, err := ps[0].mm.AutoMatchmakeWithCriteria(ctx, crit, session4(), ""); !errors.Is(err, types.CoreInvalidArgument) {
				t.Fatalf("reversed range: %v", err)
			}
			if err := ps[1].mm.SetParticipation(ctx, gid, false); err != nil {
				t.Fatal(err)
			}
			if _, err := ps[0].mm.JoinMatchmakeSession(ctx, gid, ""); !errors.Is(err, matchmaking.ResultSessionClosed) {
				t.Fatalf("join closed: %v", err)
			}
			if _, err := ps[0].mm.RMC.Call(ctx, matchmaking.ProtocolMatchmakeExtension, matchmaking.MethodJoinMatchmakeSession, []byte{1, 2}); !errors.Is(err, types.CoreInvalidArgument) {
				t.Fatalf("truncated parameters: %v", err)
			}
			if _, err := ps[0].mm.Find(ctx, gid); err != nil {
				t.Fatalf("connection unusable after bad input: %v", err)
			}
		})
	}
}

func waitEvent(t *testing.T, p *player, typ uint32, d time.Duration) notifications.Event {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev := <-p.events:
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("PID %d: no notification %d within %v", p.sess.PID, typ, d)
		}
	}
}

func callNAT(ctx context.Context, p *player, method uint32, params func(w *types.Writer)) error {
	w := types.NewWriter(nil, p.sess.RMC.Settings())
	params(&w)
	b, err := w.Bytes()
	if err != nil {
		return err
	}
	_, err = p.sess.RMC.Call(ctx, nattraversal.Protocol, method, b)
	return err
}

// TestAutoMatchmakeConcurrentClients: 64 clients logged in over PRUDP
// auto-matchmake at once into sessions of at most 8: exactly 8 sessions, all
// full, and every client hears of the joins after its own.
func TestAutoMatchmakeConcurrentClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	_, addr := startMultiplayer(t, cfg)
	const clients, size = 64, 8
	ps := make([]*player, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps[i] = login(t, ctx, addr, cfg, 2000+i)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	tmpl := session4()
	tmpl.MaxParticipants = size
	joined := make([]matchmaking.MatchmakeSession, clients)
	errs := make([]error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			joined[i], errs[i] = ps[i].mm.AutoMatchmake(ctx, tmpl, "")
		}()
	}
	wg.Wait()
	members := map[uint32][]int{}
	for i := range clients {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		if joined[i].ParticipationCount > size {
			t.Fatalf("client %d: session %d has %d participants", i, joined[i].ID, joined[i].ParticipationCount)
		}
		members[joined[i].ID] = append(members[joined[i].ID], i)
	}
	if len(members) != clients/size {
		t.Fatalf("%d sessions, want %d", len(members), clients/size)
	}
	for gid, m := range members {
		pids, err := ps[m[0]].mm.Participants(ctx, gid)
		if err != nil || len(m) != size || len(pids) != size {
			t.Fatalf("session %d: %d clients joined, participants %v (%v)", gid, len(m), pids, err)
		}
		// The one whose join came first (count 1) hears of the 7 others.
		for _, i := range m {
			if joined[i].ParticipationCount == 1 {
				for range size - 1 {
					if ev := ps[i].next(t, notifications.TypeNewParticipant); uint32(ev.Param1) != gid {
						t.Fatalf("event for session %d in session %d", ev.Param1, gid)
					}
				}
			}
		}
	}
}

// twoNodes runs two secure nodes (RoleSecure) and an authentication server
// sharing one account and matchmaking store, and logs in players 3000 and
// 3001, one on each node; both auto-matchmake into one session.
func twoNodes(t *testing.T, ctx context.Context) (regs []*crashable, nodeAddrs []string, ps []*player, gid uint32) {
	t.Helper()
	store, mm := sharedStore(t, ctx, 3000, 3001)
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	const beat = 100 * time.Millisecond
	regs = []*crashable{{Registry: store}, {Registry: store}}
	for _, r := range regs {
		// One connection each: the second login must go to the other node.
		nodeAddrs = append(nodeAddrs, startRole(t, &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: r,
			Exchange: store, HeartbeatInterval: beat, Matchmaking: mm, NodeCapacity: 1}))
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
	ps = []*player{login(t, ctx, addr, cfg, 3000)}
	// Let the first node's heartbeat report its connection (a heartbeat
	// announces the live count, which a pick made before it may not include
	// yet), so the second login goes to the other node.
	time.Sleep(3 * beat)
	ps = append(ps, login(t, ctx, addr, cfg, 3001))
	if ps[0].sess.SecureURL.String() == ps[1].sess.SecureURL.String() {
		t.Fatalf("both players on %s", ps[0].sess.SecureURL)
	}
	a, err := ps[0].mm.AutoMatchmake(ctx, session4(), "")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := ps[1].mm.AutoMatchmake(ctx, session4(), "across"); err != nil || b.ID != a.ID {
		t.Fatalf("second player in %d (%v), want %d", b.ID, err, a.ID)
	}
	return regs, nodeAddrs, ps, a.ID
}

// TestReapStoppedNode: two secure nodes share one store; a player on each is
// in the same session. The second node stops heartbeating (a crash): the first
// node removes that player after twice the node timeout, and its own player
// hears the disconnect (3007).
func TestReapStoppedNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	regs, nodeAddrs, ps, gid := twoNodes(t, ctx)
	// Crash the node of player 1 (the one at the port its session went to).
	port, _ := ps[1].sess.SecureURL.Get("port")
	crashed := false
	for i, a := range nodeAddrs {
		if strings.HasSuffix(a, ":"+port) {
			regs[i].crashed.Store(true)
			crashed = true
		}
	}
	if !crashed {
		t.Fatalf("no node at port %s in %v", port, nodeAddrs)
	}
	ev := waitEvent(t, ps[0], notifications.TypeParticipantDisconnected, 20*time.Second)
	if types.PID(ev.Param2) != 3001 || uint32(ev.Param1) != gid {
		t.Fatalf("event %+v", ev)
	}
	if pids, err := ps[0].mm.Participants(ctx, gid); err != nil || len(pids) != 1 || pids[0] != 3000 {
		t.Fatalf("participants after the reap: %v %v", pids, err)
	}
}

// TestNoReapAfterStoreOutage: two secure nodes with a player each in one
// session; the store refuses both nodes' heartbeats for five node timeouts (a
// database restart). When it takes them again, neither node takes the other's
// old heartbeat for a crash: nobody is removed from the session or told so.
func TestNoReapAfterStoreOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	regs, _, ps, gid := twoNodes(t, ctx)
	const nodeTimeout = 3 * 100 * time.Millisecond // twoNodes' heartbeat is 100 ms
	for _, r := range regs {
		r.crashed.Store(true)
	}
	time.Sleep(5 * nodeTimeout)
	for _, r := range regs {
		r.crashed.Store(false)
	}
	// The reaping window (2 node timeouts) and two checks more.
	deadline := time.After(4 * nodeTimeout)
	for {
		select {
		case ev := <-ps[0].events:
			if ev.Type == notifications.TypeParticipantDisconnected {
				t.Fatalf("player 3000 told %+v after the outage", ev)
			}
			continue
		case ev := <-ps[1].events:
			if ev.Type == notifications.TypeParticipantDisconnected {
				t.Fatalf("player 3001 told %+v after the outage", ev)
			}
			continue
		case <-deadline:
		}
		break
	}
	if pids, err := ps[0].mm.Participants(ctx, gid); err != nil || len(pids) != 2 {
		t.Fatalf("participants after the outage: %v %v, want both", pids, err)
	}
}

// TestCrossNodeNotifications: players connected to different secure nodes
// sharing a store hear of each other's joins and leaves (relayed through the
// store's mailbox).
func TestCrossNodeNotifications(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _, ps, gid := twoNodes(t, ctx)
	ev := waitEvent(t, ps[0], notifications.TypeNewParticipant, 10*time.Second)
	if types.PID(ev.Param2) != 3001 || uint32(ev.Param1) != gid || ev.StrParam != "across" {
		t.Fatalf("join event %+v", ev)
	}
	if err := ps[1].mm.EndParticipation(ctx, gid, "later"); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, ps[0], notifications.TypeParticipationEnded, 10*time.Second); types.PID(ev.Source) != 3001 || ev.StrParam != "later" {
		t.Fatalf("leave event %+v", ev)
	}
}
