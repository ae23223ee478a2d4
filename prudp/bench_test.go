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

	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/wire"
)

// BenchmarkReliableMessage measures the per-packet path of one small
// reliable message: encode, encrypt and sign on the client; parse, verify,
// order, decrypt and deliver on the server; the acknowledgement back. No
// socket and no goroutine switch: this is the engine's own cost.
func BenchmarkReliableMessage(b *testing.B) {
	for _, d := range []Dialect{NEXV1, NEXV0, Quazal, Hyperscape} {
		for _, size := range []int{64, 1024} {
			b.Run(fmt.Sprintf("%s/%dB", d, size), func(b *testing.B) {
				cfg := fuzzConfig(d)
				cfg.MaxSubstreamID, cfg.MaxWindow = 0, 1<<14
				p := newManualPair(b, cfg)
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
	for _, d := range []Dialect{NEXV1, NEXV0, Quazal, Hyperscape} {
		t.Run(d.String(), func(t *testing.T) {
			cfg := fuzzConfig(d)
			cfg.MaxSubstreamID = 0
			p := newManualPair(t, cfg)
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
		})
	}
}

// TestIdleConnectionMemory establishes 20,000 server connections by hand and
// measures the heap they hold while idle. The budget is 4 KiB each.
func TestIdleConnectionMemory(t *testing.T) {
	for _, d := range []Dialect{NEXV1, Quazal, Hyperscape} {
		t.Run(d.String(), func(t *testing.T) { testIdleConnectionMemory(t, d) })
	}
}

func testIdleConnectionMemory(t *testing.T, d Dialect) {
	n := 20000
	if testing.Short() || raceEnabled {
		n = 2000
	}
	if d == Hyperscape {
		n /= 4 // an ECDH exchange and an ECDSA signature per connection
	}
	cfg := fuzzConfig(d)
	cfg.MaxSubstreamID = 0
	p := newManualPair(t, cfg)
	sh := p.sep.shards[0]
	p.scap.keep = false
	cl := p.cep.codec
	port := p.client.remotePort
	con := pkt{typ: typeConnect, flags: flagReliable | flagNeedAck, seq: 1, src: port | 0xf, dst: port, supported: 4}
	if d == Hyperscape {
		hc, err := hyperscape.NewClient(cfg.CertPub)
		if err != nil {
			t.Fatal(err)
		}
		h := wire.HyperscapeConnect{PublicKey: hc.PublicKey()}
		con.payload, _ = h.Append(nil, false)
	}
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
		if d == Hyperscape {
			// The USER stage completes a Hyperscape handshake.
			user := pkt{typ: typeUser, flags: flagReliable | flagNeedAck, seq: 2, src: con.src, dst: con.dst, sessionID: con.sessionID}
			b, err := cl.appendPacket(nil, &user, keys{connSig: sig[:4]})
			if err != nil {
				t.Fatal(err)
			}
			p.sep.handleDatagram(sh, p.now, b, from)
			sh.flushAcks(p.now)
		}
	}
	// The clients' first DATA frees the kept CONNECT-ACKs in real life; here
	// the connections stay exactly as the handshake left them.
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := len(sh.sessions); got != n+1 {
		t.Fatalf("%d sessions, want %d", got, n+1)
	}
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
	t.Logf("%s: %d idle connections: %.0f bytes of heap each (budget 4096)", d, n, per)
	if per > 4096 {
		t.Errorf("%.0f bytes per idle connection, budget 4096", per)
	}
	runtime.KeepAlive(p)
	_ = time.Second
}

// BenchmarkBulkLoopback sends 64 KiB reliable messages over one connection
// on real loopback UDP (V1, RC4, signatures) to a server that counts them.
func BenchmarkBulkLoopback(b *testing.B) {
	// Without RC4 (signatures stay) is what prudpbench compares with kcp-go.
	for _, cfg := range []Config{{}, {NoEncryption: true}} {
		name := "rc4"
		if cfg.NoEncryption {
			name = "no-encryption"
		}
		b.Run(name, func(b *testing.B) { benchBulkLoopback(b, cfg) })
	}
}

func benchBulkLoopback(b *testing.B, cfg Config) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	setSocketBuffers(pc)
	chunk := make([]byte, 64<<10)
	var got atomic.Int64
	arrived := make(chan struct{}, 1)
	srv := &Server{Config: cfg, Handler: HandlerFunc(func(c *Conn, m Message) {
		got.Add(int64(len(m.Data)))
		select {
		case arrived <- struct{}{}:
		default:
		}
	})}
	go srv.Serve(pc)
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, pc.LocalAddr().String(), &cfg)
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
	b.ReportMetric(float64(c.sh.ep.segmentedWrites.Load())/float64(b.N), "segwrites/op")
	b.ReportMetric(float64(srv.ep.coalescedReads.Load())/float64(b.N), "groreads/op")
	st := c.Stats()
	b.ReportMetric(float64(st.PacketsOut)/float64(b.N), "pktsout/op")
	b.ReportMetric(float64(st.PacketsIn)/float64(b.N), "pktsin/op")
	b.ReportMetric(float64(st.Window), "window")
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
