package prudp

import (
	"context"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
)

// attackBuffers makes the established client connection c send, signed and
// accepted by the server, what issue 18's memory attack sends: skip one
// sequence id and then fill the reorder window with early packets of
// payload bytes each (never deliverable); and, before that, the in-order
// fragments of a message whose last fragment never comes, all from
// sequence id from on (relative to the connection's next one).
func attackBuffers(t *testing.T, c *Conn, from uint16, unfinished, early, payload int) {
	t.Helper()
	sh := c.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := c.s
	if s == nil || s.state >= stateLinger {
		return // closed by the server
	}
	now := time.Now()
	st := &s.streams[0]
	seq := st.sendSeq + from
	body := make([]byte, payload)
	for i := range unfinished {
		p := pkt{typ: typeData, flags: flagReliable | flagNeedAck | flagHasSize, seq: seq, fragment: uint32(i%255) + 1, payload: body}
		if _, err := s.write(now, &p); err != nil {
			t.Fatal(err)
		}
		seq++
		sh.flushWrites()
	}
	seq++ // the hole
	for range early {
		p := pkt{typ: typeData, flags: flagReliable | flagNeedAck | flagHasSize, seq: seq, fragment: 1, payload: body}
		if _, err := s.write(now, &p); err != nil {
			t.Fatal(err)
		}
		seq++
		sh.flushWrites()
	}
}

// TestBufferBudget reproduces issue 18's memory attack on an echo server:
// 24 connections each send a message whose last fragment never comes and
// fill their reorder buffer behind a missing sequence id (about 1 MB + 2 MB
// each, 72 MB in all without bounds). The server holds at most
// MaxReorderBytes and MaxUnfinishedBytes per connection and MaxBuffer in
// all; the connections holding the most are closed to make room, or when
// still refused after BudgetGrace; a legitimate client keeps its echoes
// throughout.
func TestBufferBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			budget   = 4 << 20
			attacks  = 24
			payload  = 4000 // issue 18: datagrams of ~4 KB
			fragment = 1300
		)
		n := lossy.New(lossy.Config{Seed: 18, QueueLen: 1 << 12})
		spc, _ := n.Listen(lossyServerAddr)
		srv := &Server{Config: Config{AccessKey: testKey, MaxBuffer: budget, MaxUnfinishedBytes: 512 << 10}}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		defer func() { srv.Close(); <-served }()

		dial := func(i int) *Conn {
			addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 1, byte(i)}), uint16(40000+i))
			pc, _ := n.Listen(addr)
			c, err := DialPacketConn(context.Background(), pc, lossyServerAddr, &Config{AccessKey: testKey}, true)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		legit := dial(250)
		defer legit.Abort()
		echo := func(what string) {
			t.Helper()
			msg := []byte(what)
			if err := legit.Send(context.Background(), 0, msg); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if m := recvOrFail(t, legit); string(m.Data) != what {
				t.Fatalf("echo %q, want %q", m.Data, what)
			}
		}
		echo("before")

		conns := make([]*Conn, attacks)
		for i := range conns {
			conns[i] = dial(i + 1)
		}
		synctest.Wait()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, c := range conns {
			attackBuffers(t, c, 0, 800, 511, payload)
			synctest.Wait()
		}
		echo("during")
		st := srv.Stats()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		grew := int64(after.HeapInuse) - int64(before.HeapInuse)
		t.Logf("after %d attacking connections: buffered %d bytes (budget %d), heap in use %+d KiB, drops %v",
			attacks, st.Buffered, budget, grew/1024, st.ConnDrops)
		if st.Buffered > budget {
			t.Fatalf("buffered %d bytes, over the budget %d", st.Buffered, budget)
		}
		if grew > 3*budget {
			t.Fatalf("heap grew %d KiB for a budget of %d KiB", grew/1024, budget/1024)
		}
		for _, reason := range []string{"budget", "reorder_bytes", "unfinished_bytes"} {
			if st.ConnDrops[reason] == 0 {
				t.Errorf("no %q drops: %v", reason, st.ConnDrops)
			}
		}
		for i, c := range conns {
			if h := heldBy(srv, c); h > 512<<10+512<<10+2*payload {
				t.Errorf("attacker %d: server holds %d bytes for it", i, h)
			}
		}

		// The attackers go on: those still over their share once the grace
		// period has passed are closed, and their bytes freed.
		time.Sleep(2 * time.Second)
		for _, c := range conns {
			attackBuffers(t, c, 0, 800, 511, payload) // a retransmitting attacker
			synctest.Wait()
		}
		echo("after")
		st = srv.Stats()
		t.Logf("second round: buffered %d, closed over budget %d, ended %v", st.Buffered, st.BudgetClosed, st.Ended)
		if st.BudgetClosed == 0 || st.Ended["over_budget"] != st.BudgetClosed {
			t.Fatalf("BudgetClosed %d, Ended %v", st.BudgetClosed, st.Ended)
		}
		if st.Buffered > budget {
			t.Fatalf("still %d bytes buffered after closing the heaviest, budget %d", st.Buffered, budget)
		}
		for _, c := range conns {
			c.Abort()
		}
		// The legitimate client's last echo is charged until its
		// acknowledgement (delayed by AckDelay) comes.
		time.Sleep(time.Second)
		synctest.Wait()
		if b := srv.Stats().Buffered; b != 0 {
			t.Fatalf("%d bytes still charged with every attacker gone", b)
		}
	})
}

// heldBy returns what the server holds for the client connection c (read
// after synctest.Wait).
func heldBy(srv *Server, c *Conn) int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	local := c.LocalAddr().String()
	for sc := range srv.conns {
		if sc.RemoteAddr().String() == local {
			return sc.s.reorderBytes + sc.s.unfinishedBytes
		}
	}
	return -1
}

// TestMaxConns: a server at its connection cap answers no further CONNECT
// (counted as "conn_limit"), and accepts again once a connection ended.
func TestMaxConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := lossy.New(lossy.Config{Seed: 3})
		spc, _ := n.Listen(lossyServerAddr)
		srv := &Server{Config: Config{AccessKey: testKey, MaxConns: 3, InitialRTO: 100 * time.Millisecond}}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		defer func() { srv.Close(); <-served }()
		dial := func(i int) (*Conn, error) {
			pc, _ := n.Listen(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 2, byte(i)}), 4000))
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			return DialPacketConn(ctx, pc, lossyServerAddr, &Config{AccessKey: testKey, InitialRTO: 100 * time.Millisecond}, true)
		}
		var conns []*Conn
		for i := range 3 {
			c, err := dial(i)
			if err != nil {
				t.Fatalf("connection %d of 3: %v", i, err)
			}
			conns = append(conns, c)
		}
		if _, err := dial(3); err == nil {
			t.Fatal("a fourth connection was accepted with MaxConns 3")
		}
		if d := srv.Stats().Drops["conn_limit"]; d == 0 {
			t.Fatalf("no conn_limit drops: %v", srv.Stats().Drops)
		}
		if err := conns[0].Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second) // the closed connection's state lingers, then goes
		c, err := dial(4)
		if err != nil {
			t.Fatalf("after one connection ended: %v", err)
		}
		c.Abort()
		for _, c := range conns[1:] {
			c.Abort()
		}
	})
}

// TestQueueBudget: what the server queues to send counts in the budget too.
// 16 connections each send 400 one-packet messages of 1,000 bytes to the
// echo server and acknowledge nothing it sends back (400 KB of echoes each
// to queue, 6.4 MB in all, against a budget of 1 MiB). The echoes queued
// stay within twice the budget (a connection over its share of a spent
// budget gets no more: "inline_reply_queue" drops, and the heaviest of its
// shard is closed to make room; one within its share still gets its
// answers queued); a
// legitimate client keeps its echoes; nothing stays charged once the
// attackers are gone.
func TestQueueBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			budget  = 1 << 20
			attacks = 16
			msgs    = 400
			size    = 1000
		)
		var deaf sync.Map // addresses the server's packets no longer reach
		n := lossy.New(lossy.Config{Seed: 18, QueueLen: 1 << 12, Tamper: func(b []byte, from, to netip.AddrPort) []byte {
			if _, ok := deaf.Load(to); ok {
				return b[:0]
			}
			return b
		}})
		spc, _ := n.Listen(lossyServerAddr)
		srv := &Server{Config: Config{AccessKey: testKey, MaxBuffer: budget}}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		defer func() { srv.Close(); <-served }()

		dial := func(i int) (*Conn, netip.AddrPort) {
			addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 1, byte(i)}), uint16(40000+i))
			pc, _ := n.Listen(addr)
			c, err := DialPacketConn(context.Background(), pc, lossyServerAddr, &Config{AccessKey: testKey}, true)
			if err != nil {
				t.Fatal(err)
			}
			return c, addr
		}
		legit, _ := dial(250)
		defer legit.Abort()
		echo := func(what string) {
			t.Helper()
			if err := legit.Send(context.Background(), 0, []byte(what)); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if m := recvOrFail(t, legit); string(m.Data) != what {
				t.Fatalf("echo %q, want %q", m.Data, what)
			}
		}
		echo("before")

		conns := make([]*Conn, attacks)
		for i := range conns {
			var addr netip.AddrPort
			conns[i], addr = dial(i + 1)
			defer conns[i].Abort()
			deaf.Store(addr, true)
		}
		synctest.Wait()
		body := make([]byte, size)
		for _, c := range conns {
			c.sh.mu.Lock()
			s := c.s
			now := time.Now()
			seq := s.streams[0].sendSeq
			for range msgs {
				p := pkt{typ: typeData, flags: flagReliable | flagNeedAck | flagHasSize, seq: seq, payload: body}
				if _, err := s.write(now, &p); err != nil {
					t.Fatal(err)
				}
				seq++
				c.sh.flushWrites()
			}
			c.sh.mu.Unlock()
			synctest.Wait()
		}
		echo("during")
		st := srv.Stats()
		var queued int
		srv.mu.Lock()
		for sc := range srv.conns {
			queued += sc.budgetHeld()
		}
		srv.mu.Unlock()
		t.Logf("%d connections sent %d KB to echo: queued %d bytes, buffered %d (budget %d), closed over budget %d, drops %v",
			attacks, attacks*msgs*size/1000, queued, st.Buffered, budget, st.BudgetClosed, st.ConnDrops)
		// A connection within its share may still queue its answers (its
		// peer would otherwise lose them): over a spent budget by at most
		// an equal share each, twice the budget in all.
		if limit := int64(2*budget + (attacks+1)*size); st.Buffered > limit || int64(queued) > limit {
			t.Fatalf("queued %d, buffered %d: over twice the budget %d", queued, st.Buffered, budget)
		}
		if st.ConnDrops["inline_reply_queue"] == 0 || st.BudgetClosed == 0 {
			t.Errorf("no echo refused or no connection closed: %v, %d closed", st.ConnDrops, st.BudgetClosed)
		}

		for _, c := range conns {
			c.Abort()
		}
		// The server gives the deaf connections up after its retransmissions.
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		echo("after")
		time.Sleep(time.Second)
		synctest.Wait()
		if b := srv.Stats().Buffered; b != 0 {
			t.Fatalf("%d bytes still charged with every attacker gone", b)
		}
	})
}
