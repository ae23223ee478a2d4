package prudp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkReliableMessage measures the per-packet path of one small
// reliable message: encode, encrypt and sign on the client; parse, verify,
// order, decrypt and deliver on the server; the acknowledgement back. No
// socket and no goroutine switch: this is the engine's own cost.
func BenchmarkReliableMessage(b *testing.B) {
	for _, d := range []Dialect{NEXV1, NEXV0} {
		for _, size := range []int{64, 1024} {
			b.Run(fmt.Sprintf("%s/%dB", d, size), func(b *testing.B) {
				p := newManualPair(b, Config{Dialect: d, AccessKey: testKey, MaxWindow: 1 << 14})
				msg := make([]byte, size)
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					_ = p.client.send(p.now, 0, msg)
					p.deliver()
					p.drain()
				}
				if p.client.inflight != 0 {
					b.Fatalf("%d packets unacknowledged", p.client.inflight)
				}
			})
		}
	}
}

// BenchmarkReceivePath measures only the server's side of one reliable DATA
// packet: parse, signature check, ordering, RC4, delivery, and the ack.
func BenchmarkReceivePath(b *testing.B) {
	p := newManualPair(b, Config{AccessKey: testKey, MaxWindow: 1 << 14})
	msg := make([]byte, 64)
	sh := p.sep.shards[0]
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p.sendNow(msg)
		pkt := p.ccap.out[0].b
		p.ccap.out = p.ccap.out[:0]
		b.StartTimer()
		p.sep.handleDatagram(sh, p.now, pkt, p.ccap.addr)
		sh.flushAcks(p.now)
		b.StopTimer()
		p.drain()
		p.deliver() // the ack back to the client
		b.StartTimer()
	}
}

// TestSendPathAllocations pins the allocations of sending one small reliable
// message and processing its acknowledgement: the retransmission copy comes
// from a free list, encoding appends into reused buffers, so none remain.
func TestSendPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts (sync.Pool drops items)")
	}
	p := newManualPair(t, Config{AccessKey: testKey})
	msg := make([]byte, 64)
	// Warm the buffers and free lists.
	for range 10 {
		_ = p.client.send(p.now, 0, msg)
		p.deliver()
		p.drain()
	}
	allocs := testing.AllocsPerRun(200, func() {
		_ = p.client.send(p.now, 0, msg)
		p.deliver()
		p.drain()
	})
	// One allocation remains by design: the delivered message, which the
	// receiver owns.
	if allocs > 1 {
		t.Fatalf("%v allocations per message round, want at most 1 (the delivered copy)", allocs)
	}
}

// TestIdleConnectionMemory establishes 20,000 server connections by hand and
// measures the heap they hold while idle. The budget is 4 KiB each.
func TestIdleConnectionMemory(t *testing.T) {
	n := 20000
	if testing.Short() || raceEnabled {
		n = 2000
	}
	p := newManualPair(t, Config{AccessKey: testKey})
	sh := p.sep.shards[0]
	p.scap.keep = false
	cl := p.cep.codec
	con := pkt{typ: typeConnect, flags: flagReliable | flagNeedAck, seq: 1, src: vport(StreamRVSecure, 0xf), dst: vport(StreamRVSecure, 1), supported: 4}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		from := p.ccap.addr
		from = netip.AddrPortFrom(from.Addr(), uint16(1000+i))
		if i >= 60000 {
			t.Fatal("too many")
		}
		sig := sh.connSig(from)
		con.sessionID = byte(i)
		copy(con.connSig[:], "client-signature")
		b, err := cl.appendPacket(nil, &con, keys{connSig: sig[:cl.connSigLen()]})
		if err != nil {
			t.Fatal(err)
		}
		p.sep.handleDatagram(sh, p.now, b, from)
	}
	// The clients' first DATA frees the kept CONNECT-ACKs in real life; here
	// the connections stay exactly as the handshake left them.
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := len(sh.sessions); got != n+1 {
		t.Fatalf("%d sessions, want %d", got, n+1)
	}
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
	t.Logf("%d idle connections: %.0f bytes of heap each (budget 4096)", n, per)
	if per > 4096 {
		t.Errorf("%.0f bytes per idle connection, budget 4096", per)
	}
	runtime.KeepAlive(p)
	_ = time.Second
}

// BenchmarkBulkLoopback sends 64 KiB reliable messages over one connection
// on real loopback UDP (V1, RC4, signatures) to a server that counts them.
func BenchmarkBulkLoopback(b *testing.B) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	setSocketBuffers(pc)
	chunk := make([]byte, 64<<10)
	var got atomic.Int64
	arrived := make(chan struct{}, 1)
	srv := &Server{Handler: HandlerFunc(func(c *Conn, m Message) {
		got.Add(int64(len(m.Data)))
		select {
		case arrived <- struct{}{}:
		default:
		}
	})}
	go srv.Serve(pc)
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, pc.LocalAddr().String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Abort()
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	var sent int64
	for b.Loop() {
		if err := c.Send(ctx, 0, chunk); err != nil {
			b.Fatal(err)
		}
		sent += int64(len(chunk))
	}
	for got.Load() < sent {
		<-arrived
	}
	b.ReportMetric(float64(c.Stats().Retransmits), "retransmits")
}

// BenchmarkEchoLoopback is one client's request/response over real loopback
// UDP: Send, the server's echo, Recv.
func BenchmarkEchoLoopback(b *testing.B) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	srv := &Server{}
	go srv.Serve(pc)
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, pc.LocalAddr().String(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Abort()
	msg := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Send(ctx, 0, msg); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Recv(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
