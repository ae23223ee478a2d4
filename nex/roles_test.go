package nex

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// crashable is a registry a node stops talking to when crashed, as a node that
// dies does: no more heartbeats, no withdrawal.
type crashable struct {
	nodes.Registry
	crashed atomic.Bool
}

func (c *crashable) Announce(ctx context.Context, n nodes.Node) error {
	if c.crashed.Load() {
		return errors.New("crashed")
	}
	return c.Registry.Announce(ctx, n)
}

func (c *crashable) Withdraw(ctx context.Context, id string) error {
	if c.crashed.Load() {
		return errors.New("crashed")
	}
	return c.Registry.Withdraw(ctx, id)
}

// startRole runs srv (RoleAuth or RoleSecure) on one loopback socket and returns
// its address.
func startRole(t *testing.T, srv *Server) string {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if srv.Role == RoleAuth {
		go func() { done <- srv.Serve(pc, nil) }()
	} else {
		go func() { done <- srv.Serve(nil, pc) }()
	}
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
			t.Errorf("Serve (%v): %v", srv.Role, err)
		}
	})
	return pc.LocalAddr().String()
}

// TestRolesSpreadLogins: one authentication server and three secure nodes
// sharing one store. Logins spread evenly over the nodes; a node that stops
// heartbeating is out of rotation within the node timeout; a node shut down
// cleanly withdraws at once; with no node left, logins are refused.
func TestRolesSpreadLogins(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	const beat = 100 * time.Millisecond
	regs := make([]*crashable, 3)
	secure := make([]*Server, 3)
	for i := range secure {
		regs[i] = &crashable{Registry: store}
		secure[i] = &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: regs[i], HeartbeatInterval: beat}
		startRole(t, secure[i])
	}
	authSrv := &Server{Role: RoleAuth, Config: cfg, Accounts: store, Nodes: store, HeartbeatInterval: beat}
	addr := startRole(t, authSrv)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ns, err := store.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d nodes registered after 10 s, want 3", len(ns))
		}
		time.Sleep(20 * time.Millisecond)
	}

	login := func() (*Session, error) {
		return Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: fastFail(cfg)})
	}
	var mu sync.Mutex
	var sessions []*Session
	defer func() {
		for _, s := range sessions {
			closeSession(t, s)
		}
	}()
	count := func(n int) map[string]int {
		t.Helper()
		got := map[string]int{}
		for i := 0; i < n; i++ {
			s, err := login()
			if err != nil {
				t.Fatalf("login %d: %v", i, err)
			}
			mu.Lock()
			sessions = append(sessions, s)
			mu.Unlock()
			port, _ := s.SecureURL.Get("port")
			got[port]++
			// The session works on the node the authentication server chose.
			if _, err := s.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil); err != nil {
				t.Fatalf("PingDaemon on the node at port %s: %v", port, err)
			}
		}
		return got
	}
	got := count(30)
	if len(got) != 3 {
		t.Fatalf("30 logins went to %v, want all three nodes", got)
	}
	for port, n := range got {
		if n < 9 || n > 11 {
			t.Fatalf("30 logins over 3 nodes: %v (node %s has %d, want 10 within 10%%)", got, port, n)
		}
	}

	// Node 0 dies: no heartbeat, no withdrawal. Within the node timeout it
	// gets no more logins.
	deadPort := func(i int) string {
		p, _ := secure[i].SecureServer().LocalAddr().(*net.UDPAddr)
		return strconv.Itoa(p.Port)
	}
	regs[0].crashed.Store(true)
	time.Sleep(3*beat + 2*beat)
	got = count(10)
	if got[deadPort(0)] != 0 {
		t.Fatalf("logins after node 0 stopped heartbeating: %v; its port %s still gets some", got, deadPort(0))
	}

	// Node 1 shuts down cleanly: withdrawn at once.
	secure[1].Close()
	time.Sleep(50 * time.Millisecond)
	got = count(6)
	if got[deadPort(1)] != 0 || got[deadPort(2)] != 6 {
		t.Fatalf("logins after node 1 shut down: %v, want all 6 on node 2 (port %s)", got, deadPort(2))
	}

	// The last node goes: logins are refused with MaxConnectionsReached.
	regs[2].crashed.Store(true)
	time.Sleep(3*beat + 2*beat)
	if _, err := login(); !errors.Is(err, types.RendezVousMaxConnectionsReached) {
		t.Fatalf("login with no live node: %v, want RendezVous::MaxConnectionsReached", err)
	}
}

// TestDuplicateNodeIDRefused: a secure node given the id of a live node at
// another address does not start (ErrNodeIDTaken, naming the other node);
// the same id at the same address (a restart after a crash) takes the
// record over; once the first node withdrew, its id is free.
func TestDuplicateNodeIDRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}
	first := &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: store, Node: "node1", HeartbeatInterval: time.Minute}
	pc1, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done1 := make(chan error, 1)
	go func() { done1 <- first.Serve(nil, pc1) }()
	waitNodes(ctx, t, store, "node1 registers", func(ns []nodes.Node) bool { return len(ns) == 1 })
	pc2, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	second := &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: store, Node: "node1", HeartbeatInterval: time.Minute}
	err = second.Serve(nil, pc2)
	if !errors.Is(err, ErrNodeIDTaken) || !strings.Contains(err.Error(), pc1.LocalAddr().(*net.UDPAddr).AddrPort().String()[len("127.0.0.1:"):]) {
		t.Fatalf("a second node1 at another address: %v, want ErrNodeIDTaken naming the first", err)
	}
	ns, _ := store.Nodes(ctx)
	if len(ns) != 1 || !strings.Contains(ns[0].URL, "port="+strconv.Itoa(pc1.LocalAddr().(*net.UDPAddr).Port)) {
		t.Fatalf("the registry after the refusal: %+v", ns)
	}
	first.Close()
	if err := <-done1; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
		t.Fatal(err)
	}
	// node1 withdrew: its id is free for a node at another address.
	pc3, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	third := &Server{Role: RoleSecure, Config: cfg, Accounts: store, Nodes: store, Node: "node1", HeartbeatInterval: time.Minute}
	done3 := make(chan error, 1)
	go func() { done3 <- third.Serve(nil, pc3) }()
	waitNodes(ctx, t, store, "node1 at its new address registers", func(ns []nodes.Node) bool {
		return len(ns) == 1 && strings.Contains(ns[0].URL, "port="+strconv.Itoa(pc3.LocalAddr().(*net.UDPAddr).Port))
	})
	third.Close()
	<-done3
}

// waitNodes waits until the registry's nodes satisfy ok (until ctx ends: a
// failure then).
func waitNodes(ctx context.Context, t *testing.T, reg nodes.Registry, what string, ok func([]nodes.Node) bool) {
	t.Helper()
	for {
		ns, err := reg.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok(ns) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: the registry holds %+v", what, ns)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
