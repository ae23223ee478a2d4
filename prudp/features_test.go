package prudp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

var allDialects = []Dialect{NEXV1, NEXV0, NEXV0Friends}

const testKey = "6f599f81"

func recvOrFail(t *testing.T, c *Conn) Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := c.Recv(ctx)
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return m
}

func TestSubstreamsAndCompression(t *testing.T) {
	for _, d := range allDialects {
		for _, compress := range []bool{false, true} {
			name := d.String()
			if compress {
				name += "/zlib"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := Config{Dialect: d, AccessKey: testKey, MaxSubstreamID: 3, Compression: compress}
					srv := &Server{Config: cfg}
					_, c, stop := lossyPair(t, lossy.Config{Seed: 3, Loss: 0.05, Delay: time.Millisecond}, srv, &cfg)
					defer stop()
					ctx := context.Background()
					subs := uint8(3)
					if d != NEXV1 {
						subs = 0 // V0 has no substreams
					}
					if err := c.Send(ctx, subs+1, []byte("x")); !errors.Is(err, ErrBadSubstream) {
						t.Fatalf("send on substream %d: %v, want ErrBadSubstream", subs+1, err)
					}
					want := map[uint8][][]byte{}
					for i := range 40 {
						sub := uint8(i) % (subs + 1)
						msg := bytes.Repeat([]byte{byte(i), 'a', 'b'}, 50+i*40) // compressible, some fragmented
						want[sub] = append(want[sub], msg)
						if err := c.Send(ctx, sub, msg); err != nil {
							t.Fatal(err)
						}
					}
					got := map[uint8][][]byte{}
					for range 40 {
						m := recvOrFail(t, c)
						if !m.Reliable || m.Unreliable {
							t.Fatalf("message flags %+v", m)
						}
						got[m.Substream] = append(got[m.Substream], m.Data)
					}
					for sub, msgs := range want {
						if len(got[sub]) != len(msgs) {
							t.Fatalf("substream %d: %d messages, want %d", sub, len(got[sub]), len(msgs))
						}
						for i := range msgs {
							if !bytes.Equal(got[sub][i], msgs[i]) {
								t.Fatalf("substream %d message %d differs", sub, i)
							}
						}
					}
					st := c.Stats()
					if compress && st.BytesOut > 20000 {
						t.Errorf("compression on, yet %d bytes sent", st.BytesOut)
					}
				})
			})
		}
	}
}

func TestLargeFragmentedMessage(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Config{Dialect: d, AccessKey: testKey}
				srv := &Server{Config: cfg}
				_, c, stop := lossyPair(t, lossy.Config{Seed: 4, Loss: 0.1, Duplicate: 0.05, Reorder: 0.1, Delay: 5 * time.Millisecond}, srv, &cfg)
				defer stop()
				msg := make([]byte, 256<<10)
				r := rand.New(rand.NewPCG(1, 2))
				for i := range msg {
					msg[i] = byte(r.Uint32())
				}
				if err := c.Send(context.Background(), 0, msg); err != nil {
					t.Fatal(err)
				}
				if err := c.Send(context.Background(), 0, []byte("after")); err != nil {
					t.Fatal(err)
				}
				m := recvOrFail(t, c)
				if !bytes.Equal(m.Data, msg) {
					t.Fatalf("256 KiB message came back as %d bytes, differing", len(m.Data))
				}
				if m := recvOrFail(t, c); string(m.Data) != "after" {
					t.Fatalf("next message %q", m.Data)
				}
				frags := len(msg)/1264 + 1
				if st := c.Stats(); st.PacketsOut < uint64(frags) {
					t.Fatalf("%d packets sent for %d fragments", st.PacketsOut, frags)
				}
			})
		})
	}
}

func TestUnreliableData(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Config{Dialect: d, AccessKey: testKey}
				srv := &Server{Config: cfg}
				_, c, stop := lossyPair(t, lossy.Config{Seed: 5}, srv, &cfg)
				defer stop()
				ctx := context.Background()
				for i := range 10 {
					if err := c.SendUnreliable(ctx, []byte{'u', byte(i)}); err != nil {
						t.Fatal(err)
					}
				}
				for i := range 10 {
					m := recvOrFail(t, c)
					if !m.Unreliable || m.Reliable || !bytes.Equal(m.Data, []byte{'u', byte(i)}) {
						t.Fatalf("unreliable message %d: %+v", i, m)
					}
				}
				if err := c.SendUnreliable(ctx, make([]byte, 5000)); !errors.Is(err, ErrMessageTooLarge) {
					t.Fatalf("oversized unreliable send: %v", err)
				}
			})
		})
	}
}

// issue returns a client ticket for the secure server's key.
func issue(t *testing.T, serverKey []byte, issued time.Time, s kerberos.Settings) *kerberos.Ticket {
	t.Helper()
	userKey := kerberos.DeriveKey("password", 1000)
	sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{SourcePID: 1000, TargetPID: 2, SourceKey: userKey[:], TargetKey: serverKey, Issued: issued}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := kerberos.OpenTicket(sealed, userKey[:], s)
	if err != nil {
		t.Fatal(err)
	}
	return &tk
}

func TestSecureConnection(t *testing.T) {
	serverKey := kerberos.DeriveKey("secure-server-password", 2)
	for _, d := range allDialects {
		oldTicket := kerberos.NEX3DS
		oldTicket.Internal = kerberos.InternalOld
		for _, ks := range []kerberos.Settings{kerberos.NEX3DS, kerberos.Friends, kerberos.Switch, oldTicket} {
			t.Run(fmt.Sprintf("%s/pid%d-key%d-internal%d", d, ks.PIDSize, ks.SessionKeySize, ks.Internal), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var pid uint64
					var mu sync.Mutex
					srv := &Server{Config: Config{Dialect: d, AccessKey: testKey, Kerberos: ks}, ServerKey: serverKey[:],
						ConnState: func(c *Conn, st ConnState) {
							mu.Lock()
							pid = c.PID()
							mu.Unlock()
						}}
					cfg := Config{Dialect: d, AccessKey: testKey, Kerberos: ks, Ticket: issue(t, serverKey[:], time.Now(), ks), PID: 1000}
					_, c, stop := lossyPair(t, lossy.Config{Seed: 6, Loss: 0.1, Delay: time.Millisecond}, srv, &cfg)
					defer stop()
					if err := c.Send(context.Background(), 0, []byte("secret")); err != nil {
						t.Fatal(err)
					}
					if m := recvOrFail(t, c); string(m.Data) != "secret" {
						t.Fatalf("echo %q", m.Data)
					}
					mu.Lock()
					defer mu.Unlock()
					if pid != 1000 {
						t.Fatalf("server saw PID %d, want 1000", pid)
					}
				})
			})
		}
	}
}

func TestSecureConnectionRefused(t *testing.T) {
	serverKey := kerberos.DeriveKey("secure-server-password", 2)
	otherKey := kerberos.DeriveKey("another-server", 2)
	cases := map[string]func(t *testing.T) *Config{
		"expired ticket": func(t *testing.T) *Config {
			return &Config{Ticket: issue(t, serverKey[:], time.Now().Add(-3*time.Minute), kerberos.NEX3DS), PID: 1000}
		},
		"ticket for another server": func(t *testing.T) *Config {
			return &Config{Ticket: issue(t, otherKey[:], time.Now(), kerberos.NEX3DS), PID: 1000}
		},
		"wrong PID": func(t *testing.T) *Config {
			return &Config{Ticket: issue(t, serverKey[:], time.Now(), kerberos.NEX3DS), PID: 1001}
		},
		"no ticket": func(t *testing.T) *Config { return &Config{} },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := lossy.New(lossy.Config{Seed: 9})
				spc, _ := n.Listen(lossyServerAddr)
				cpc, _ := n.Listen(lossyClientAddr)
				srv := &Server{ServerKey: serverKey[:]}
				served := make(chan error, 1)
				go func() { served <- srv.Serve(spc) }()
				defer func() { srv.Close(); <-served }()
				cfg := mk(t)
				cfg.InitialRTO = 100 * time.Millisecond
				cfg.MaxRetransmits = 3
				c, err := DialPacketConn(context.Background(), cpc, lossyServerAddr, cfg, true)
				if err == nil {
					c.Abort()
					t.Fatal("secure CONNECT accepted")
				}
				if !errors.Is(err, ErrHandshake) {
					t.Fatalf("err = %v, want ErrHandshake", err)
				}
				if got := srv.Stats().Drops["handshake"]; got == 0 {
					t.Fatalf("refusals not counted: %+v", srv.Stats().Drops)
				}
				if srv.Stats().Sessions != 0 {
					t.Fatal("state kept for a refused CONNECT")
				}
			})
		})
	}
}

func TestGracefulDisconnect(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ended := make(chan error, 1)
				var mu sync.Mutex
				received := 0
				srv := &Server{Config: Config{Dialect: d, AccessKey: testKey},
					Handler: HandlerFunc(func(c *Conn, m Message) { mu.Lock(); received++; mu.Unlock() }),
					ConnState: func(c *Conn, st ConnState) {
						if st == StateClosed {
							ended <- c.Err()
						}
					}}
				cfg := Config{Dialect: d, AccessKey: testKey}
				n, c, stop := lossyPair(t, lossy.Config{Seed: 10, Loss: 0.2, Delay: 2 * time.Millisecond}, srv, &cfg)
				defer stop()
				for i := range 50 {
					if err := c.Send(context.Background(), 0, []byte{byte(i)}); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Close(context.Background()); err != nil {
					t.Fatalf("close: %v", err)
				}
				if !errors.Is(c.Err(), ErrClosed) {
					t.Fatalf("client err %v", c.Err())
				}
				if err := <-ended; !errors.Is(err, ErrPeerClosed) {
					t.Fatalf("server saw %v, want ErrPeerClosed", err)
				}
				synctest.Wait()
				mu.Lock()
				if received != 50 {
					t.Errorf("server handled %d of 50 messages sent before Close", received)
				}
				mu.Unlock()
				time.Sleep(10 * time.Second) // past the linger time
				synctest.Wait()
				if s := srv.Stats().Sessions; s != 0 {
					t.Errorf("%d sessions left after disconnect", s)
				}
				_ = n
			})
		})
	}
}

func TestServerInitiatedDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{Handler: HandlerFunc(func(c *Conn, m Message) {
			_ = c.Send(context.Background(), 0, m.Data)
			if string(m.Data) == "bye" {
				go c.Close(context.Background())
			}
		})}
		var cfg Config
		_, c, stop := lossyPair(t, lossy.Config{Seed: 11, Loss: 0.1, Delay: time.Millisecond}, srv, &cfg)
		defer stop()
		for _, s := range []string{"a", "b", "bye"} {
			if err := c.Send(context.Background(), 0, []byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []string{"a", "b", "bye"} {
			if m := recvOrFail(t, c); string(m.Data) != s {
				t.Fatalf("got %q want %q", m.Data, s)
			}
		}
		if _, err := c.Recv(context.Background()); !errors.Is(err, ErrPeerClosed) {
			t.Fatalf("after the server's DISCONNECT: %v, want ErrPeerClosed", err)
		}
	})
}

func TestForcedDisconnect(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ended := make(chan error, 1)
				srv := &Server{Config: Config{Dialect: d, AccessKey: testKey}, ConnState: func(c *Conn, st ConnState) {
					if st == StateClosed {
						ended <- c.Err()
					}
				}}
				cfg := Config{Dialect: d, AccessKey: testKey}
				_, c, stop := lossyPair(t, lossy.Config{Seed: 12, Delay: time.Millisecond}, srv, &cfg)
				defer stop()
				c.Abort()
				if !errors.Is(c.Err(), ErrClosed) {
					t.Fatalf("client err %v", c.Err())
				}
				if err := <-ended; !errors.Is(err, ErrPeerReset) {
					t.Fatalf("server saw %v, want ErrPeerReset", err)
				}
				if err := c.Send(context.Background(), 0, []byte("x")); err == nil {
					t.Fatal("send after Abort succeeded")
				}
			})
		})
	}
}

func TestVanishedPeerDetectedAndFreed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ended := make(chan error, 1)
		srv := &Server{Config: Config{IdleTimeout: 20 * time.Second}, ConnState: func(c *Conn, st ConnState) {
			if st == StateClosed {
				ended <- c.Err()
			}
		}}
		n := lossy.New(lossy.Config{Seed: 13})
		spc, _ := n.Listen(lossyServerAddr)
		cpc, _ := n.Listen(lossyClientAddr)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		defer func() { srv.Close(); <-served }()
		c, err := DialPacketConn(context.Background(), cpc, lossyServerAddr, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if srv.Stats().Sessions != 1 {
			t.Fatal("no server session")
		}
		// The client's machine vanishes: its socket is gone without a DISCONNECT.
		cpc.Close()
		start := time.Now()
		if err := <-ended; !errors.Is(err, ErrPeerDead) {
			t.Fatalf("server saw %v, want ErrPeerDead", err)
		}
		if waited := time.Since(start); waited < 20*time.Second || waited > 25*time.Second {
			t.Errorf("detected after %v, want the 20 s idle timeout", waited)
		}
		if srv.Stats().Sessions != 0 || srv.Conns() != 0 {
			t.Fatalf("state not freed: %+v", srv.Stats())
		}
		// The client, whose packets now vanish, fails on its own.
		_ = c.Send(context.Background(), 0, []byte("anyone?"))
		<-c.Done()
		if err := c.Err(); !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrPeerDead) {
			t.Fatalf("client err %v", err)
		}
	})
}

func TestRetransmissionLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{}
		n := lossy.New(lossy.Config{Seed: 14})
		spc, _ := n.Listen(lossyServerAddr)
		cpc, _ := n.Listen(lossyClientAddr)
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		c, err := DialPacketConn(context.Background(), cpc, lossyServerAddr, &Config{MaxRetransmits: 4}, true)
		if err != nil {
			t.Fatal(err)
		}
		srv.Close() // forced: the client gets an unreliable DISCONNECT...
		<-served
		synctest.Wait()
		if err := c.Err(); !errors.Is(err, ErrPeerReset) {
			t.Fatalf("after the server's forced disconnect: %v", err)
		}
		// ...and a new client to a server that is gone times out in the handshake.
		cpc2, _ := n.Listen(netip.MustParseAddrPort("127.0.0.1:50001"))
		_, err = DialPacketConn(context.Background(), cpc2, lossyServerAddr, &Config{MaxRetransmits: 3}, true)
		if !errors.Is(err, ErrHandshake) {
			t.Fatalf("dial to nobody: %v", err)
		}
	})
}

// TestIdleConnectionKeptAlive: a connection idle for several minutes stays
// up (PINGs every KeepAlive), then carries data again.
func TestIdleConnectionKeptAlive(t *testing.T) {
	for _, d := range allDialects {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Config{Dialect: d, AccessKey: testKey}
				srv := &Server{Config: cfg}
				_, c, stop := lossyPair(t, lossy.Config{Seed: 30, Loss: 0.1, Delay: 10 * time.Millisecond}, srv, &cfg)
				defer stop()
				before := c.Stats().PacketsOut
				time.Sleep(5 * time.Minute)
				if err := c.Err(); err != nil {
					t.Fatalf("idle connection ended: %v", err)
				}
				if pings := c.Stats().PacketsOut - before; pings < 30 {
					t.Fatalf("%d packets in 5 idle minutes, want keepalive PINGs every 5 s", pings)
				}
				if err := c.Send(context.Background(), 0, []byte("awake")); err != nil {
					t.Fatal(err)
				}
				if m := recvOrFail(t, c); string(m.Data) != "awake" {
					t.Fatalf("echo %q", m.Data)
				}
			})
		})
	}
}

// TestReceiveQueueBounded: an application that stops reading makes the
// engine stop accepting data (unacknowledged, so the peer backs off); the
// inbox never grows far past the bound, and reading resumes the flow with
// nothing lost.
func TestReceiveQueueBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{}
		cfg := Config{MaxRecvQueue: 64 << 10, MaxRetransmits: 30, MaxWindow: 16}
		_, c, stop := lossyPair(t, lossy.Config{Seed: 31, Delay: time.Millisecond}, srv, &cfg)
		defer stop()
		ctx := context.Background()
		msg := make([]byte, 1000)
		const count = 500 // 500 KB echoed back while nobody reads
		for i := range count {
			msg[0], msg[1] = byte(i), byte(i>>8)
			if err := c.Send(ctx, 0, msg); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		// Packets already accepted into the reorder buffer are delivered when
		// the gap before them fills, so the bound is MaxRecvQueue plus one
		// send window.
		if held := c.inboxBytes.Load(); held > 64<<10+16*1300 {
			t.Fatalf("inbox holds %d bytes, bound 64 KiB + 16 packets", held)
		}
		if c.Stats().Drops["recv_queue"] == 0 {
			t.Fatal("no data refused while the inbox was full")
		}
		for i := range count {
			m := recvOrFail(t, c)
			if int(m.Data[0])|int(m.Data[1])<<8 != i {
				t.Fatalf("message %d out of order", i)
			}
		}
	})
}

// TestServerShutdown: Shutdown disconnects every client gracefully, then
// Serve returns ErrServerClosed.
func TestServerShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := lossy.New(lossy.Config{Seed: 40, Loss: 0.1, Delay: time.Millisecond})
		spc, _ := n.Listen(lossyServerAddr)
		srv := &Server{}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		var conns []*Conn
		for i := range 5 {
			cpc, _ := n.Listen(netip.AddrPortFrom(lossyClientAddr.Addr(), uint16(50000+i)))
			c, err := DialPacketConn(context.Background(), cpc, lossyServerAddr, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		if srv.Conns() != 5 {
			t.Fatalf("%d connections", srv.Conns())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Fatalf("Serve returned %v", err)
		}
		for i, c := range conns {
			if _, err := c.Recv(context.Background()); !errors.Is(err, ErrPeerClosed) {
				t.Fatalf("client %d: %v, want ErrPeerClosed", i, err)
			}
		}
		if st := srv.Stats(); st.Ended["closed"] != 5 {
			t.Fatalf("ended %v", st.Ended)
		}
		time.Sleep(10 * time.Second) // the clients linger, then free their sockets
		synctest.Wait()
	})
}

// TestEchoProbe is what `gamewire connect` runs: every echo checked, RTT
// statistics filled in, and a server that does not echo is reported.
func TestEchoProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{}
		var cfg Config
		_, c, stop := lossyPair(t, lossy.Config{Seed: 50, Loss: 0.05, Delay: 3 * time.Millisecond}, srv, &cfg)
		defer stop()
		rep, err := EchoProbe(context.Background(), c, 0, 50, 300)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sent != 50 || rep.Received != 50 || len(rep.RTTs) != 50 {
			t.Fatalf("report %+v", rep)
		}
		if rep.Min < 6*time.Millisecond || rep.P50 < rep.Min || rep.Max < rep.P99 || rep.Mean <= 0 {
			t.Fatalf("RTT statistics %v", rep)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		srv := &Server{Handler: HandlerFunc(func(c *Conn, m Message) {})} // swallows everything
		var cfg Config
		_, c, stop := lossyPair(t, lossy.Config{Seed: 51}, srv, &cfg)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rep, err := EchoProbe(ctx, c, 0, 3, 64)
		if err == nil || rep.Received != 0 {
			t.Fatalf("no echo, yet err %v report %+v", err, rep)
		}
	})
}
