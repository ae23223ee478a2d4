package prudp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/wire"
)

// sessionsHeld counts the connection states of a server across its shards
// (read after synctest.Wait, when the shard goroutines are idle).
func sessionsHeld(srv *Server) int {
	srv.mu.Lock()
	ep := srv.ep
	srv.mu.Unlock()
	n := 0
	for _, sh := range ep.shards {
		n += len(sh.sessions) + len(sh.timers)
	}
	return n
}

func TestSpoofedSYNFloodKeepsNoState(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Config{Dialect: d, AccessKey: testKey}
				rc := cfg.resolved()
				c, err := newCodec(&rc)
				if err != nil {
					t.Fatal(err)
				}
				n := lossy.New(lossy.Config{Seed: 20, QueueLen: 1 << 17})
				spc, _ := n.Listen(lossyServerAddr)
				srv := &Server{Config: cfg}
				served := make(chan error, 1)
				go func() { served <- srv.Serve(spc) }()
				defer func() { srv.Close(); <-served }()
				synctest.Wait()

				flood := 100000
				if raceEnabled && d != NEXV1 {
					flood = 20000 // the race detector makes this ~10x slower
				}
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				port := vport(StreamRVSecure, 0xf)
				syn := pkt{typ: typeSyn, flags: flagNeedAck, src: port, dst: vport(StreamRVSecure, 1), supported: 4}
				synBytes, err := c.appendPacket(nil, &syn, keys{})
				if err != nil {
					t.Fatal(err)
				}
				con := pkt{typ: typeConnect, flags: flagReliable | flagNeedAck, seq: 1, src: port, dst: vport(StreamRVSecure, 1), supported: 4}
				// A made-up connection signature: the attacker never saw our SYN-ACK.
				conBytes, err := c.appendPacket(nil, &con, keys{connSig: bytes.Repeat([]byte{0x17}, c.connSigLen())})
				if err != nil {
					t.Fatal(err)
				}
				for i := range flood {
					from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), uint16(1024+i%60000))
					n.Inject(synBytes, from, lossyServerAddr)
					if i%10 == 0 {
						n.Inject(conBytes, from, lossyServerAddr)
					}
					if i%4096 == 0 {
						synctest.Wait() // let the server drain its queue
					}
				}
				synctest.Wait()
				st := srv.Stats()
				if st.SYNsAnswered != uint64(flood) {
					t.Fatalf("answered %d SYNs of %d", st.SYNsAnswered, flood)
				}
				if st.Drops["signature"] != uint64(flood/10) {
					t.Fatalf("spoofed CONNECTs dropped: %d, want %d (%v)", st.Drops["signature"], flood/10, st.Drops)
				}
				if held := sessionsHeld(srv); held != 0 || st.Sessions != 0 {
					t.Fatalf("%d connection states held after the flood", held)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				t.Logf("after %d spoofed SYNs and %d spoofed CONNECTs: heap in use %+d KiB, sessions %d",
					flood, flood/10, (int64(after.HeapInuse)-int64(before.HeapInuse))/1024, st.Sessions)

				// A real client still connects.
				cpc, _ := n.Listen(lossyClientAddr)
				conn, err := DialPacketConn(context.Background(), cpc, lossyServerAddr, &cfg, true)
				if err != nil {
					t.Fatalf("real client after the flood: %v", err)
				}
				defer conn.Abort()
				_ = conn.Send(context.Background(), 0, []byte("still here"))
				if m := recvOrFail(t, conn); string(m.Data) != "still here" {
					t.Fatalf("echo %q", m.Data)
				}
			})
		})
	}
}

// TestCorruptedPacketsNeverDelivered flips a byte in 10% of the datagrams on
// the link: every one must be dropped (bad checksum, bad signature or
// unparseable) and the messages must still arrive intact.
func TestCorruptedPacketsNeverDelivered(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				tampered := 0
				seq := 0
				link := lossy.Config{Seed: 21, Delay: time.Millisecond, Tamper: func(b []byte, from, to netip.AddrPort) []byte {
					mu.Lock()
					defer mu.Unlock()
					seq++
					if seq%10 != 0 || seq < 10 {
						return b
					}
					tampered++
					if d == NEXV1 {
						b[(seq/10)%len(b)] ^= 0x5a // anywhere: the signature covers header, options and payload
					} else if len(b) > 16 {
						// V0: a payload byte of a DATA packet; the HMAC signature catches
						// what the 1-byte checksum might not.
						b[len(b)-2] ^= 0x5a
					} else {
						b[len(b)-1] ^= 0x5a // the checksum itself
					}
					return b
				}}
				cfg := Config{Dialect: d, AccessKey: testKey}
				srv := &Server{Config: cfg}
				_, c, stop := lossyPair(t, link, srv, &cfg)
				defer stop()
				ctx := context.Background()
				for i := range 300 {
					msg := []byte(fmt.Sprintf("message %03d %s", i, bytes.Repeat([]byte{'p'}, i)))
					if err := c.Send(ctx, 0, msg); err != nil {
						t.Fatal(err)
					}
					if m := recvOrFail(t, c); !bytes.Equal(m.Data, msg) {
						t.Fatalf("message %d corrupted: %q", i, m.Data)
					}
				}
				ss, cs := srv.Stats(), c.Stats()
				dropped := ss.Drops["checksum"] + ss.Drops["signature"] + ss.Drops["malformed"] + cs.Drops["signature"]
				mu.Lock()
				defer mu.Unlock()
				t.Logf("tampered %d datagrams; server drops %v; client drops %v", tampered, ss.Drops, cs.Drops)
				if tampered == 0 || dropped == 0 {
					t.Fatalf("tampered %d, dropped %d", tampered, dropped)
				}
			})
		})
	}
}

// TestForgedDataNeverDelivered sends a well-formed DATA packet with the right
// addresses, ports, session id and next sequence id, but signed without the
// secret the real peer has: it must be dropped and counted.
func TestForgedDataNeverDelivered(t *testing.T) {
	serverKey := kerberos.DeriveKey("secure", 2)
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			if d == NEXV0Friends {
				// The friends mode signs DATA with an HMAC of the payload under
				// MD5(access key) only (NintendoClients wiki "PRUDP Protocol", "Packet signature"): no
				// session key or connection signature enters it, so anyone who knows
				// the (published) access key can sign. Nothing to verify beyond that.
				t.Skip("friends-mode DATA signatures carry no per-connection secret")
			}
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var got [][]byte
				srv := &Server{Config: Config{Dialect: d, AccessKey: testKey}, ServerKey: serverKey[:],
					Handler: HandlerFunc(func(c *Conn, m Message) {
						mu.Lock()
						got = append(got, m.Data)
						mu.Unlock()
					})}
				cfg := Config{Dialect: d, AccessKey: testKey, Ticket: issue(t, serverKey[:], time.Now(), kerberos.NEX3DS), PID: 1000}
				n, c, stop := lossyPair(t, lossy.Config{Seed: 22}, srv, &cfg)
				defer stop()
				if err := c.Send(context.Background(), 0, []byte("legit")); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				// Read the server session's public facts as an on-path attacker would see them.
				var s *session
				for _, sh := range srv.ep.shards {
					for _, v := range sh.sessions {
						s = v
					}
				}
				forged := pkt{typ: typeData, flags: flagReliable | flagNeedAck, src: s.remotePort, dst: s.localPort,
					sessionID: s.remoteSID, seq: 3, payload: []byte("forged!")}
				wrongKey := bytes.Repeat([]byte{0x42}, 32)
				b, err := s.codec.appendPacket(nil, &forged, keys{sessionKey: wrongKey, connSig: s.sigIn})
				if err != nil {
					t.Fatal(err)
				}
				n.Inject(b, lossyClientAddr, lossyServerAddr)
				synctest.Wait()
				if err := c.Send(context.Background(), 0, []byte("legit again")); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(got) != 2 || string(got[0]) != "legit" || string(got[1]) != "legit again" {
					t.Fatalf("handler saw %q", got)
				}
				if st := srv.Stats(); st.Drops["signature"] != 1 {
					t.Fatalf("forged packet not counted: %+v", st.Drops)
				}
			})
		})
	}
}

func TestOversizedReassemblyRefusedWithoutAllocating(t *testing.T) {
	const limit = 64 << 10
	r := reassembler{max: limit}
	frag := make([]byte, 1300)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var refused error
	// A peer announcing nothing but sending 800 fragments (about 1 MiB).
	for i := 1; i <= 800; i++ {
		id := uint8(i % 256)
		if id == 0 {
			id = 1
		}
		if _, err := r.add(uint32(id), frag); err != nil {
			if refused != nil {
				t.Fatalf("second error %v", err)
			}
			refused = err
		}
	}
	runtime.ReadMemStats(&after)
	if !errors.Is(refused, ErrMessageTooLarge) {
		t.Fatalf("refusal = %v, want ErrMessageTooLarge", refused)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 4*limit {
		t.Fatalf("allocated %d bytes for a refused message (limit %d)", grown, limit)
	}
	if r.pending() != 0 {
		t.Fatalf("%d bytes still held", r.pending())
	}
	// The rest of the refused message is skipped without allocating.
	allocs := testing.AllocsPerRun(100, func() { _, _ = r.add(5, frag) })
	if allocs != 0 {
		t.Fatalf("skipping allocates %v times", allocs)
	}
	if msg, err := r.add(0, []byte("tail")); msg != nil || err != nil {
		t.Fatalf("end of the refused message: %q %v", msg, err)
	}
	// The next message is accepted.
	if msg, err := r.add(0, []byte("next")); string(msg) != "next" || err != nil {
		t.Fatalf("next message: %q %v", msg, err)
	}
}

func TestOversizedMessageDroppedConnectionSurvives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{Config: Config{MaxMessageSize: 64 << 10}}
		cfg := Config{}
		_, c, stop := lossyPair(t, lossy.Config{Seed: 23, Delay: time.Millisecond}, srv, &cfg)
		defer stop()
		ctx := context.Background()
		if err := c.Send(ctx, 0, make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(ctx, 0, []byte("small")); err != nil {
			t.Fatal(err)
		}
		if m := recvOrFail(t, c); string(m.Data) != "small" {
			t.Fatalf("got %d bytes, want the small message", len(m.Data))
		}
		if st := srv.Stats(); st.ConnDrops["reassembly"] != 1 {
			t.Fatalf("reassembly refusals: %+v", st.ConnDrops)
		}
	})
}

func TestConnSigMatchesWire(t *testing.T) {
	ep := &endpoint{}
	ep.secret[0] = 7
	sh := &shard{ep: ep}
	for _, a := range []string{"127.0.0.1:5000", "[::1]:6000", "[::ffff:10.0.0.1]:7"} {
		addr := netip.MustParseAddrPort(a)
		if got, want := sh.connSig(addr), wire.ConnectionSignature(ep.secret[:], addr); got != want {
			t.Errorf("%s: %x, wire says %x", a, got, want)
		}
	}
}
