package nex

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
)

// TestLoginEveryDialectEngineDefaults logs in over every dialect Server
// supports with only the dialect and the access key set in prudp.Config:
// the server and Login must take the engine's defaults for that dialect
// (stream type, Kerberos sizes, minor version), not guess their own. The
// secure station url names the engine's stream type, and an RMC call works
// on the secure connection. (Hyperscape connections are keyed by their ECDH
// exchange, not by a Kerberos ticket: no NEX login there.)
func TestLoginEveryDialectEngineDefaults(t *testing.T) {
	for _, d := range []prudp.Dialect{prudp.NEXV1, prudp.NEXV0, prudp.NEXV0Friends, prudp.NEXLite, prudp.Quazal} {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfg := prudp.Config{Dialect: d, AccessKey: "6f599f81"}
			srv := &Server{Config: cfg}
			lc := LoginConfig{User: "1000", Password: "hunter2", Config: cfg}
			var addr string
			if d == prudp.NEXLite {
				// Both servers on one stream listener, told apart by their
				// virtual ports, as Switch servers are.
				l, err := lite.Listen("127.0.0.1:0", nil)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				srv.Accounts, srv.SharedAddress, srv.SecurePort = testAccounts(), true, 2
				done := make(chan error, 1)
				go func() { done <- srv.Serve(l.Port(1), l.Port(2)) }()
				defer func() {
					srv.Close()
					<-done
				}()
				addr = "ws://" + l.Addr().String() + "/"
				lc.Dial = func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
					return lite.Dial(ctx, url, c, nil)
				}
			} else {
				addr = startServer(t, srv)
			}
			sess, err := Login(ctx, addr, lc)
			if err != nil {
				t.Fatal(err)
			}
			defer closeSession(t, sess)
			want := cfg.Resolved().StreamType
			if got, _ := sess.SecureURL.Uint("stream"); got != uint64(want) {
				t.Errorf("secure url %s: stream %d, want the engine's default %d", sess.SecureURL, got, want)
			}
			data, err := sess.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil)
			if err != nil || len(data) != 1 || data[0] != 1 {
				t.Fatalf("PingDaemon: %x %v", data, err)
			}
			st, ok := srv.Secure().Lookup(sess.ConnectionID)
			if !ok || st.PID != 1000 || len(st.URLs) != 1 {
				t.Fatalf("station %+v", st)
			}
			if got, _ := st.URLs[0].Get("stream"); got != strconv.Itoa(int(want)) {
				t.Errorf("registered url %s: stream %q, want %d", st.URLs[0], got, want)
			}
		})
	}
}
