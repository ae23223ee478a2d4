package nex

import (
	"context"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// sleepProtocol is a game protocol whose handler takes 30 ms, three times
// the engine's inline limit.
const sleepProtocol = 0x92

func sleepy(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	time.Sleep(30 * time.Millisecond)
	return types.AppendBool(out, true), nil
}

// TestRMCNonBlockingAnsweredInline: a call whose handler declared itself
// non-blocking (rmc.NonBlocking) is answered on the connection's own
// goroutine (prudp.InlineHandler), any other on the handler goroutine. The
// engine's overrun accounting shows which: a slow handler declared
// non-blocking overruns the inline limit, the same handler undeclared does
// not.
func TestRMCNonBlockingAnsweredInline(t *testing.T) {
	for _, declared := range []bool{false, true} {
		t.Run(map[bool]string{false: "blocking", true: "declared non-blocking"}[declared], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			mux := rmc.NewMux()
			var h rmc.Handler = rmc.HandlerFunc(sleepy)
			if declared {
				h = rmc.NonBlocking(h)
			}
			mux.HandleProtocol(sleepProtocol, h)
			cfg := prudp.Config{AccessKey: "6f599f81"}
			srv := &Server{Config: cfg, Mux: mux}
			addr := startServer(t, srv)
			sess, err := Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer closeSession(t, sess)
			// Health PingDaemon is declared non-blocking by the server itself.
			if data, err := sess.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil); err != nil || len(data) != 1 || data[0] != 1 {
				t.Fatalf("PingDaemon: %x %v", data, err)
			}
			if data, err := sess.RMC.Call(ctx, sleepProtocol, 1, nil); err != nil || len(data) != 1 || data[0] != 1 {
				t.Fatalf("sleepy call: %x %v", data, err)
			}
			want := uint64(0)
			if declared {
				want = 1
			}
			if got := srv.SecureServer().Stats().InlineOverruns; got != want {
				t.Fatalf("inline overruns %d, want %d", got, want)
			}
		})
	}
}

// TestInlineRMCAllocs: answering an RMC call inline (Health PingDaemon, what
// nexbench measures) allocates nothing in nex's part of the server: request
// parsing, the Mux, Dispatch, the handler, the response into the engine's
// buffer. The engine's part allocates nothing either (prudp
// TestInlineEchoAllocs).
func TestInlineRMCAllocs(t *testing.T) {
	srv := &Server{Accounts: testAccounts()}
	if err := srv.init(); err != nil {
		t.Fatal(err)
	}
	srv.ctx = context.Background()
	srv.Mux.HandleProtocol(rmc.ProtocolHealth, &srv.Health)
	srv.Mux.Handle(rmc.ProtocolHealth, health.MethodPingDaemon, rmc.NonBlocking(&srv.Health))
	h := srv.handler(srv.Mux, "prudps").(prudp.InlineHandler)
	conn := new(prudp.Conn)
	req := rmc.Request{Protocol: rmc.ProtocolHealth, CallID: 7, Method: health.MethodPingDaemon}
	msg, err := req.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 64)
	m := prudp.Message{Reliable: true, Data: msg}
	if reply, ok := h.ServeInline(conn, m, dst); !ok || len(reply) == 0 {
		t.Fatalf("PingDaemon not answered inline: %x %v", reply, ok)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok := h.ServeInline(conn, m, dst); !ok {
			t.Fatal("declined")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per inline RMC call", allocs)
	}
}
