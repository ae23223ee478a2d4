package lite

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

const testAccessKey = "6f599f81"

// liteServers runs an authentication server on virtual port 1 and a secure
// one (Kerberos key serverKey) on port 2 of one listener.
type liteServers struct {
	l            *Listener
	auth, secure *prudp.Server
	serverKey    [16]byte
	client       *tls.Config
	logs         *syncBuffer
}

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startServers(t *testing.T, secure bool, cfg Config, tweak ...func(auth, secure *prudp.Server)) *liteServers {
	t.Helper()
	s := &liteServers{logs: &syncBuffer{}, serverKey: kerberos.DeriveKey("secure-server-password", 2)}
	logger := slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s.l, s.client = testListener(t, secure, cfg)
	s.auth = &prudp.Server{Config: prudp.Config{Dialect: prudp.NEXLite, AccessKey: testAccessKey, Port: 1, Logger: logger}, Shards: 2}
	s.secure = &prudp.Server{Config: prudp.Config{Dialect: prudp.NEXLite, AccessKey: testAccessKey, Port: 2, Logger: logger,
		Kerberos: kerberos.Switch}, ServerKey: s.serverKey[:], Shards: 2}
	for _, f := range tweak {
		f(s.auth, s.secure)
	}
	for _, srv := range []*prudp.Server{s.auth, s.secure} {
		port := uint8(1)
		if srv == s.secure {
			port = 2
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(s.l.Port(port)) }()
		t.Cleanup(func() {
			srv.Close()
			if err := <-done; !errors.Is(err, prudp.ErrServerClosed) {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	return s
}

func (s *liteServers) dial(t *testing.T, ctx context.Context, scheme string, pcfg prudp.Config) (*prudp.Conn, error) {
	t.Helper()
	pcfg.Dialect = prudp.NEXLite
	if pcfg.AccessKey == "" {
		pcfg.AccessKey = testAccessKey
	}
	return Dial(ctx, testURL(s.l, scheme), &pcfg, &Config{TLS: s.client})
}

// ticket issues a Switch ticket for PID 1000 to the secure server.
func (s *liteServers) ticket(t *testing.T) *kerberos.Ticket {
	t.Helper()
	userKey := kerberos.DeriveKeySwitch("password", 1000)
	sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{SourcePID: 1000, TargetPID: 2, SourceKey: userKey[:],
		TargetKey: s.serverKey[:], Issued: time.Now()}, kerberos.Switch, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := kerberos.OpenTicket(sealed, userKey[:], kerberos.Switch)
	if err != nil {
		t.Fatal(err)
	}
	return &tk
}

func echo(t *testing.T, ctx context.Context, c *prudp.Conn, msg []byte) {
	t.Helper()
	if err := c.Send(ctx, 0, msg); err != nil {
		t.Fatalf("send: %v", err)
	}
	m, err := c.Recv(ctx)
	if err != nil {
		t.Fatalf("recv: %v (stats %+v)", err, c.Stats())
	}
	if !bytes.Equal(m.Data, msg) {
		t.Fatalf("echo of %d bytes came back as %d different bytes", len(msg), len(m.Data))
	}
}

// TestLiteHandshakeBothPorts: over ws, wss, tcp and tls, one client connects
// to the authentication server (port 1) and, with a Kerberos ticket, to the
// secure server (port 2) of the same listener; both CONNECTs carry a Lite
// signature the server verified; messages echo; the graceful close works.
func TestLiteHandshakeBothPorts(t *testing.T) {
	for _, scheme := range []string{"ws", "wss", "tcp", "tls"} {
		t.Run(scheme, func(t *testing.T) {
			s := startServers(t, scheme == "wss" || scheme == "tls", Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			auth, err := s.dial(t, ctx, scheme, prudp.Config{Port: 1})
			if err != nil {
				t.Fatal(err)
			}
			sec, err := s.dial(t, ctx, scheme, prudp.Config{Port: 2, Ticket: s.ticket(t), PID: 1000, Kerberos: kerberos.Switch})
			if err != nil {
				t.Fatal(err)
			}
			for i, size := range []int{1, 64, 1300, 1301, 5000} {
				msg := bytes.Repeat([]byte{byte(i + 1)}, size)
				echo(t, ctx, auth, msg)
				echo(t, ctx, sec, msg)
			}
			if sec.PID() != 0 {
				t.Errorf("client PID() = %d", sec.PID())
			}
			if s.auth.Stats().Accepted != 1 || s.secure.Stats().Accepted != 1 {
				t.Errorf("accepted: auth %d, secure %d", s.auth.Stats().Accepted, s.secure.Stats().Accepted)
			}
			for _, c := range []*prudp.Conn{auth, sec} {
				if err := c.Close(ctx); err != nil {
					t.Errorf("close: %v", err)
				}
			}
			if st := s.l.Stats(); st.Accepted[scheme] != 2 {
				t.Errorf("streams: %+v", st.Accepted)
			}
			if d := s.auth.Stats().Drops["lite_signature"] + s.secure.Stats().Drops["lite_signature"]; d != 0 {
				t.Errorf("%d CONNECTs refused for their Lite signature", d)
			}
			if rt := s.auth.Stats().Retransmits + s.secure.Stats().Retransmits; rt != 0 {
				t.Errorf("%d retransmissions over a stream", rt)
			}
		})
	}
}

// TestLiteBadSignatureRefused: a client with the wrong access key signs its
// CONNECT wrongly; the server refuses it before creating any state, says so
// in its log and counts it, and the client's handshake fails.
func TestLiteBadSignatureRefused(t *testing.T) {
	for _, scheme := range []string{"ws", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			s := startServers(t, scheme == "wss", Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			c, err := s.dial(t, ctx, scheme, prudp.Config{Port: 1, AccessKey: "wrong-key"})
			if err == nil {
				c.Abort()
				t.Fatal("a CONNECT signed with the wrong access key was accepted")
			}
			if !errors.Is(err, prudp.ErrHandshake) {
				t.Errorf("dial: %v, want ErrHandshake", err)
			}
			if n := s.auth.Stats().Drops["lite_signature"]; n < 1 {
				t.Errorf("lite_signature drops: %d (all %v)", n, s.auth.Stats().Drops)
			}
			if s.auth.Conns() != 0 || s.auth.Stats().Accepted != 0 {
				t.Errorf("a connection exists after a refused CONNECT")
			}
			if !strings.Contains(s.logs.String(), "bad Lite signature") {
				t.Errorf("log says nothing of the Lite signature:\n%s", s.logs)
			}
			// The right key still connects on the same listener.
			ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel2()
			good, err := s.dial(t, ctx2, scheme, prudp.Config{Port: 1})
			if err != nil {
				t.Fatal(err)
			}
			echo(t, ctx2, good, []byte("after a refusal"))
			good.Close(ctx2)
		})
	}
}

// TestLiteFragmented256K: a 256 KiB message (202 fragments) each way over ws and wss.
func TestLiteFragmented256K(t *testing.T) {
	for _, scheme := range []string{"ws", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			s := startServers(t, scheme == "wss", Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := s.dial(t, ctx, scheme, prudp.Config{Port: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			msg := make([]byte, 256<<10)
			for i := range msg {
				msg[i] = byte(i * 7 >> 3)
			}
			for range 3 {
				echo(t, ctx, c, msg)
			}
			if st := c.Stats(); st.Retransmits != 0 {
				t.Errorf("%d retransmissions over %s", st.Retransmits, scheme)
			}
		})
	}
}

// TestLiteManyClients: 32 clients at once, half over ws and half over wss
// (two listeners), each on both virtual ports, 20 messages each.
func TestLiteManyClients(t *testing.T) {
	plain := startServers(t, false, Config{})
	secure := startServers(t, true, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	const clients = 32
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, scheme := plain, "ws"
			if i%2 == 1 {
				s, scheme = secure, "wss"
			}
			port := uint8(1 + i%2)
			pcfg := prudp.Config{Dialect: prudp.NEXLite, AccessKey: testAccessKey, Port: port}
			if port == 2 {
				pcfg.Ticket, pcfg.PID, pcfg.Kerberos = s.ticket(t), 1000, kerberos.Switch
			}
			c, err := Dial(ctx, testURL(s.l, scheme), &pcfg, &Config{TLS: s.client})
			if err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
				return
			}
			defer c.Close(ctx)
			for j := range 20 {
				msg := []byte(fmt.Sprintf("client %d message %d %s", i, j, strings.Repeat("x", j*100)))
				if err := c.Send(ctx, 0, msg); err != nil {
					errs <- err
					return
				}
				m, err := c.Recv(ctx)
				if err != nil || !bytes.Equal(m.Data, msg) {
					errs <- fmt.Errorf("client %d message %d: %q, %v", i, j, m.Data, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := plain.auth.Stats().Accepted + plain.secure.Stats().Accepted + secure.auth.Stats().Accepted + secure.secure.Stats().Accepted
	if total != clients {
		t.Errorf("%d connections accepted, want %d", total, clients)
	}
}

// pausableConn is a stream whose reads can be held (a peer that stops reading).
type pausableConn struct {
	net.Conn
	mu     sync.Mutex
	paused chan struct{} // non-nil while paused
	delay  time.Duration // per read, for a slow but steady reader
}

func (c *pausableConn) pause() {
	c.mu.Lock()
	c.paused = make(chan struct{})
	c.mu.Unlock()
}

func (c *pausableConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	p, d := c.paused, c.delay
	c.mu.Unlock()
	if p != nil {
		<-p
	}
	if d > 0 {
		time.Sleep(d)
		b = b[:min(len(b), 2048)]
	}
	return c.Conn.Read(b)
}

func (c *pausableConn) Close() error {
	c.mu.Lock()
	if c.paused != nil {
		select {
		case <-c.paused:
		default:
			close(c.paused)
		}
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

func dialPausable(t *testing.T, ctx context.Context, s *liteServers, scheme string, delay time.Duration) (*prudp.Conn, *pausableConn) {
	t.Helper()
	raw, err := DialStream(ctx, testURL(s.l, scheme), &Config{TLS: s.client})
	if err != nil {
		t.Fatal(err)
	}
	pc := &pausableConn{Conn: raw, delay: delay}
	v, raddr := NewClient(pc, nil)
	c, err := prudp.DialPacketConn(ctx, v, raddr, &prudp.Config{Dialect: prudp.NEXLite, AccessKey: testAccessKey, Port: 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	return c, pc
}

// TestLiteSlowReader: a client that reads slowly still gets 256 KiB
// messages (the engine's send window and the bounded queues push back;
// nothing is dropped). For a client that stops reading altogether the server
// never buffers more than a send window in the transport: of 2 MiB it is
// asked to send, only about a window reaches the stream, and the server
// frees the connection by its dead-peer detection (short timers here).
func TestLiteSlowReader(t *testing.T) {
	for _, scheme := range []string{"ws", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			ended := make(chan error, 4)
			big := bytes.Repeat([]byte("slow"), 64<<10)
			s := startServers(t, scheme == "wss", Config{}, func(auth, _ *prudp.Server) {
				auth.Config.InitialRTO, auth.Config.MinRTO, auth.Config.MaxRetransmits = 200*time.Millisecond, 200*time.Millisecond, 2
				auth.ConnState = func(c *prudp.Conn, st prudp.ConnState) {
					if st == prudp.StateClosed {
						ended <- c.Err()
					}
				}
				// "flood" asks for eight 256 KiB messages; anything else is echoed.
				auth.Handler = prudp.HandlerFunc(func(c *prudp.Conn, m prudp.Message) {
					ctx := context.Background()
					if string(m.Data) != "flood" {
						_ = c.Send(ctx, 0, m.Data)
						return
					}
					for range 8 {
						if c.Send(ctx, 0, big) != nil {
							return
						}
					}
				})
			})
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()

			slow, _ := dialPausable(t, ctx, s, scheme, time.Millisecond)
			for range 2 {
				echo(t, ctx, slow, big)
			}
			slow.Close(ctx)
			if err := <-ended; !errors.Is(err, prudp.ErrPeerClosed) {
				t.Fatalf("slow reader's connection ended with %v", err)
			}
			if st := s.l.Stats(); st.Closed[reasonSlowReader] != 0 || len(st.Drops) != 0 {
				t.Fatalf("a slow but steady reader lost data: %+v", st)
			}

			stuck, pc := dialPausable(t, ctx, s, scheme, 0)
			defer stuck.Abort()
			echo(t, ctx, stuck, []byte("hello"))
			before := s.l.Stats().BytesOut
			pc.pause()
			if err := stuck.Send(ctx, 0, []byte("flood")); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ended:
				if !errors.Is(err, prudp.ErrTimeout) && !errors.Is(err, prudp.ErrPeerDead) {
					t.Errorf("stuck reader's connection ended with %v, want a timeout", err)
				}
			case <-ctx.Done():
				t.Fatal("the server kept the stuck reader's connection")
			}
			sent := s.l.Stats().BytesOut - before
			if sent > 512<<10 {
				t.Errorf("the server wrote %d bytes to a peer that read nothing (more than a send window)", sent)
			}
			t.Logf("%d of %d bytes reached the stuck reader's stream", sent, 8*len(big))
		})
	}
}

// TestLiteCloseMidMessage: a client's socket goes away in the middle of a
// 256 KiB message; the server's connection ends at once (a forced
// DISCONNECT from the transport), not after its idle timeout, and the
// partial message is never delivered.
func TestLiteCloseMidMessage(t *testing.T) {
	for _, scheme := range []string{"ws", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			ended := make(chan error, 1)
			s := startServers(t, scheme == "wss", Config{}, func(auth, _ *prudp.Server) {
				auth.Handler = prudp.HandlerFunc(func(c *prudp.Conn, m prudp.Message) {
					t.Errorf("a message of %d bytes was delivered", len(m.Data))
				})
				auth.ConnState = func(c *prudp.Conn, st prudp.ConnState) {
					if st == prudp.StateClosed {
						ended <- c.Err()
					}
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			raw, err := DialStream(ctx, testURL(s.l, scheme), &Config{TLS: s.client})
			if err != nil {
				t.Fatal(err)
			}
			cut := &cutConn{Conn: raw, after: 100 << 10}
			v, raddr := NewClient(cut, nil)
			c, err := prudp.DialPacketConn(ctx, v, raddr, &prudp.Config{Dialect: prudp.NEXLite, AccessKey: testAccessKey, Port: 1}, true)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Abort()
			c.Send(ctx, 0, make([]byte, 256<<10))
			select {
			case err := <-ended:
				if !errors.Is(err, prudp.ErrPeerReset) {
					t.Errorf("server connection ended with %v, want ErrPeerReset", err)
				}
			case <-ctx.Done():
				t.Fatal("the server did not notice the closed stream")
			}
			if s.auth.Conns() != 0 {
				t.Errorf("%d connections left", s.auth.Conns())
			}
		})
	}
}

// cutConn closes the stream in the middle of the write that crosses after bytes.
type cutConn struct {
	net.Conn
	mu      sync.Mutex
	written int
	after   int
}

func (c *cutConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written+len(b) > c.after && c.written < c.after {
		n, _ := c.Conn.Write(b[:len(b)/2]) // half a message, then the socket goes away
		if a, ok := c.Conn.(aborter); ok {
			a.abort()
		} else {
			c.Conn.Close()
		}
		c.written += n
		return n, net.ErrClosed
	}
	c.written += len(b)
	return c.Conn.Write(b)
}
