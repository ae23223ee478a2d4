package prudp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
)

// upperHandler is an application's InlineHandler (nothing the engine knows):
// it answers inline with the message in upper case, except messages starting
// with "g", which it declines; ServePRUDP answers those (and whatever comes
// after an overrun) from the handler goroutine, in lower case. block makes
// ServeInline of a message "block" sleep, as a handler that waits would.
type upperHandler struct {
	inline, goroutine atomic.Int64
	block             time.Duration
}

func (h *upperHandler) ServeInline(_ *Conn, m Message, dst []byte) ([]byte, bool) {
	if bytes.HasPrefix(m.Data, []byte("g")) {
		return dst, false
	}
	h.inline.Add(1)
	if h.block > 0 && string(m.Data) == "block" {
		time.Sleep(h.block)
	}
	start := len(dst)
	dst = append(dst, m.Data...)
	for i, b := range dst[start:] {
		if 'a' <= b && b <= 'z' {
			dst[start+i] = b - 'a' + 'A'
		}
	}
	return dst, true
}

func (h *upperHandler) ServePRUDP(c *Conn, m Message) {
	h.goroutine.Add(1)
	ctx := context.Background()
	reply := bytes.ToLower(m.Data)
	if m.Reliable {
		_ = c.Send(ctx, m.Substream, reply)
	} else {
		_ = c.SendUnreliable(ctx, reply)
	}
}

// TestInlineHandlerOrderAndFallback: an application's InlineHandler answers
// reliable and unreliable messages inline; a message it declines goes to
// ServePRUDP, and the messages arriving while ServePRUDP still has one go
// there too, so every answer comes back in order through loss and
// reordering.
func TestInlineHandlerOrderAndFallback(t *testing.T) {
	for _, d := range []Dialect{NEXV1, NEXV0, Quazal, Hyperscape} {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &upperHandler{}
				cfg := fuzzConfig(d)
				srv := &Server{Config: cfg, Handler: h}
				_, c, stop := lossyPair(t, lossy.Config{Seed: 9, Loss: 0.05, Reorder: 0.1, Delay: time.Millisecond}, srv, &cfg)
				defer stop()
				ctx := context.Background()
				const n = 60
				for i := range n {
					msg := fmt.Sprintf("msg %d", i)
					if i%7 == 3 {
						msg = fmt.Sprintf("go %d", i) // declined: ServePRUDP
					}
					if err := c.Send(ctx, 0, []byte(msg)); err != nil {
						t.Fatal(err)
					}
				}
				for i := range n {
					want := fmt.Sprintf("MSG %d", i) // or "msg", after a declined one
					if i%7 == 3 {
						want = fmt.Sprintf("go %d", i)
					}
					if m := recvOrFail(t, c); !strings.EqualFold(string(m.Data), want) || (i%7 == 3 && string(m.Data) != want) {
						t.Fatalf("answer %d: %q, want %q", i, m.Data, want)
					}
				}
				if h.inline.Load() == 0 || h.goroutine.Load() == 0 {
					t.Fatalf("inline answers %d, handler goroutine answers %d: want both", h.inline.Load(), h.goroutine.Load())
				}
				// Unreliable: answered inline, unreliably (and so perhaps lost:
				// ask again until an answer comes).
				answered := false
				for range 20 {
					if err := c.SendUnreliable(ctx, []byte("ping")); err != nil {
						t.Fatal(err)
					}
					rctx, cancel := context.WithTimeout(ctx, time.Second)
					m, err := c.Recv(rctx)
					cancel()
					if err == nil {
						if !m.Unreliable || string(m.Data) != "PING" {
							t.Fatalf("answer to an unreliable ping: %+v", m)
						}
						answered = true
						break
					}
				}
				if !answered {
					t.Fatal("no answer to 20 unreliable pings")
				}
				if st := srv.Stats(); st.InlineOverruns != 0 {
					t.Fatalf("%d inline overruns", st.InlineOverruns)
				}
			})
		})
	}
}

// TestInlineOverrunTurnsInlineOff: a ServeInline call over InlineLimit turns
// inline answering off for its connection (its next messages go to
// ServePRUDP), and maxInlineOverruns of them turn it off for the whole
// server, so that a handler that blocks stalls its shard a bounded number of
// times. The calls are counted and logged.
func TestInlineOverrunTurnsInlineOff(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	h := &upperHandler{block: 40 * time.Millisecond}
	logs := new(lockedBuffer)
	srv := &Server{Handler: h, Shards: 1, InlineLimit: 5 * time.Millisecond, Config: Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	defer func() { srv.Close(); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	roundTrip := func(c *Conn, msg, want string) {
		t.Helper()
		if err := c.Send(ctx, 0, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		m, err := c.Recv(ctx)
		if err != nil || string(m.Data) != want {
			t.Fatalf("%q answered %q, %v; want %q", msg, m.Data, err, want)
		}
	}
	var conns []*Conn
	for i := range maxInlineOverruns + 1 {
		c, err := Dial(ctx, pc.LocalAddr().String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Abort()
		conns = append(conns, c)
		if i < maxInlineOverruns {
			roundTrip(c, "fast", "FAST")   // inline
			roundTrip(c, "block", "BLOCK") // inline, over the limit
			roundTrip(c, "fast", "fast")   // this connection: ServePRUDP now
		}
	}
	if st := srv.Stats(); st.InlineOverruns != maxInlineOverruns {
		t.Fatalf("InlineOverruns %d, want %d", st.InlineOverruns, maxInlineOverruns)
	}
	// The server has stopped answering inline: a fresh connection's
	// messages go to ServePRUDP.
	before := h.inline.Load()
	roundTrip(conns[maxInlineOverruns], "fast", "fast")
	if h.inline.Load() != before {
		t.Fatal("ServeInline still called after the server turned inline answering off")
	}
	if n := strings.Count(logs.String(), "ServeInline overran"); n != maxInlineOverruns {
		t.Fatalf("%d overrun warnings logged, want %d:\n%s", n, maxInlineOverruns, logs.String())
	}
}

// TestInlineEchoAllocs: answering inline allocates nothing on the server in
// steady state: the request's buffer and the reply's are recycled.
func TestInlineEchoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, d := range []Dialect{NEXV1, NEXV0, Quazal, Hyperscape, NEXLite} {
		t.Run(d.String(), func(t *testing.T) {
			cfg := fuzzConfig(d)
			p := newManualPair(t, cfg)
			h := &upperHandler{}
			p.server.conn.handler, p.server.conn.inline = h, h
			msg := bytes.Repeat([]byte("a"), 64)
			round := func() {
				_ = p.client.send(p.now, 0, msg)
				p.deliver() // request in, answered inline
				p.deliver() // answer to the client's inbox
				p.client.conn.inbox = p.client.conn.inbox[:0]
				p.client.conn.inboxBytes.Store(0)
			}
			for range 20 {
				round()
			}
			clientAllocs := testing.AllocsPerRun(200, func() {
				_ = p.client.send(p.now, 0, msg)
				p.deliver()
				p.deliver()
				p.client.conn.inbox = p.client.conn.inbox[:0]
				p.client.conn.inboxBytes.Store(0)
			})
			// One allocation remains by design: the answer delivered to the
			// client's inbox, which the client owns (it takes a recycled
			// buffer while the client's shard has one, then allocates).
			if clientAllocs > 1 {
				t.Fatalf("%v allocations per inline round trip, want at most 1 (the client's delivered copy)", clientAllocs)
			}
			if h.inline.Load() < 200 {
				t.Fatalf("%d inline answers", h.inline.Load())
			}
		})
	}
}

// lockedBuffer collects logs written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
