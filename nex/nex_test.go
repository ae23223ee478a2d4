package nex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// testAccounts derives the keys once (each derivation is ~65,000 MD5 rounds).
var testAccounts = sync.OnceValue(func() *auth.Memory {
	m := new(auth.Memory)
	for _, sp := range auth.SpecialAccounts {
		pw := "secret-" + sp.Name
		if sp.PID == auth.PIDGuest {
			pw = auth.GuestPassword
		}
		m.Add(sp.PID, sp.Name, pw)
	}
	m.Add(1000, "1000", "hunter2")
	return m
})

// startServer runs a NEX server on two loopback ports and returns the
// authentication address.
func startServer(t testing.TB, srv *Server) string {
	t.Helper()
	if srv.Accounts == nil {
		srv.Accounts = testAccounts()
	}
	logs := new(syncBuffer)
	if srv.Logger == nil {
		srv.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, b, err := loopbackPair()
	if err != nil {
		t.Fatal(err)
	}
	addr := a.LocalAddr().String()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(a, b) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
			if a, b := srv.AuthServer(), srv.SecureServer(); a != nil && b != nil {
				t.Logf("authentication server stats: %+v", a.Stats())
				t.Logf("secure server stats: %+v", b.Stats())
			}
		}
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return addr
}

// loopbackPair binds two UDP sockets on 127.0.0.1 with ports the system picks.
func loopbackPair() (*net.UDPConn, *net.UDPConn, error) {
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, nil, err
	}
	b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

// syncBuffer collects server logs, shown when a test fails.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// closeSession closes gracefully, bounded: whether the DISCONNECT is acknowledged
// is the engine's business (tested there), not what these tests check.
func closeSession(t *testing.T, s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Logf("Close: %v", err)
	}
}

// fastFail makes refused handshakes fail quickly; nothing asserts on timing.
func fastFail(c prudp.Config) prudp.Config {
	c.InitialRTO = 50 * time.Millisecond
	c.MaxRetransmits = 2
	return c
}

func TestLoginEndToEnd(t *testing.T) {
	for _, d := range []prudp.Dialect{prudp.NEXV1, prudp.NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfg := prudp.Config{Dialect: d, AccessKey: "6f599f81"}
			srv := &Server{Config: cfg}
			addr := startServer(t, srv)

			sess, err := Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			if sess.PID != auth.PIDGuest || sess.ConnectionID != 1 || sess.BuildName != auth.DefaultBuildName {
				t.Fatalf("session %+v", sess)
			}
			if sess.SecureURL.Scheme != "prudps" || sess.SecureURL.PID() != 2 || sess.SecureURL.Address() != "127.0.0.1" {
				t.Fatalf("secure url %s", sess.SecureURL)
			}
			if sess.PublicURL.Address() != "127.0.0.1" || sess.PublicURL.PID() != 100 {
				t.Fatalf("public url %s", sess.PublicURL)
			}
			// The secure server recorded the station under the ticket's PID.
			st, ok := srv.Secure().Lookup(sess.ConnectionID)
			if !ok || st.PID != 100 || st.Public.String() != sess.PublicURL.String() {
				t.Fatalf("station %+v", st)
			}
			// RMC calls work on the secure connection (Health is registered there).
			data, err := sess.RMC.Call(ctx, rmc.ProtocolHealth, health.MethodPingDaemon, nil)
			if err != nil || len(data) != 1 || data[0] != 1 {
				t.Fatalf("PingDaemon: %x %v", data, err)
			}
			// Ticket Granting is not served on the secure server.
			if _, err := sess.RMC.Call(ctx, rmc.ProtocolTicketGranting, auth.MethodGetPID, []byte{1, 0, 0}); !errors.Is(err, types.CoreNotImplemented) {
				t.Fatalf("protocol 10 on the secure server: %v", err)
			}
			// A graceful close's result is the engine's business (tested there);
			// what matters here is that the server forgets the station.
			closeSession(t, sess)
			// The station is forgotten once the connection ends (at worst when the
			// engine's idle timeout, 30 s, notices a vanished client).
			deadline := time.After(45 * time.Second)
			for len(srv.Secure().Stations()) != 0 {
				select {
				case <-deadline:
					t.Fatal("station not forgotten after disconnect")
				case <-time.After(10 * time.Millisecond):
				}
			}
		})
	}
}

func TestLoginFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := prudp.Config{}
	addr := startServer(t, &Server{Config: cfg})

	_, err := Login(ctx, addr, LoginConfig{User: "guest", Password: "not the password", Config: cfg})
	if !errors.Is(err, ErrWrongPassword) || !strings.Contains(err.Error(), `"guest"`) {
		t.Fatalf("wrong password: %v", err)
	}
	_, err = Login(ctx, addr, LoginConfig{User: "nobody", Password: "x", Config: cfg})
	if !errors.Is(err, ErrUnknownUser) {
		t.Fatalf("unknown user: %v", err)
	}

	// A server whose clock is 10 minutes behind issues tickets the secure server
	// (with the real clock) finds expired.
	old := &Server{Config: cfg, Auth: auth.Server{Now: func() time.Time { return time.Now().Add(-10 * time.Minute) }}}
	oldAddr := startServer(t, old)
	_, err = Login(ctx, oldAddr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: fastFail(cfg)})
	if !errors.Is(err, ErrSecureRefused) {
		t.Fatalf("expired ticket: %v", err)
	}
	if n := len(old.Secure().Stations()); n != 0 {
		t.Fatalf("%d stations registered with an expired ticket", n)
	}
}

func TestTicketForAnotherPID(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := prudp.Config{}
	srv := &Server{Config: cfg}
	addr := startServer(t, srv)

	// Log in as guest by hand and open the ticket...
	ac, err := prudp.Dial(ctx, addr, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Abort()
	rc := rmc.NewClient(ConnTransport{ac}, rmc.ClientConfig{Settings: DefaultSettings(cfg)})
	defer rc.Close()
	lr, err := (&auth.Client{RMC: rc}).Login(ctx, "guest")
	if err != nil {
		t.Fatal(err)
	}
	key := kerberos.DeriveKey(auth.GuestPassword, 100)
	ticket, err := kerberos.OpenTicket(lr.Ticket, key[:], kerberos.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	// ...then present it to the secure server claiming to be PID 1000.
	secAddr, err := secureAddr(lr.Connection.MainStation, addr)
	if err != nil {
		t.Fatal(err)
	}
	sc := fastFail(cfg)
	sc.Ticket, sc.PID = &ticket, 1000
	if c, err := prudp.Dial(ctx, secAddr, &sc); err == nil {
		c.Abort()
		t.Fatal("secure server accepted a ticket issued to another PID")
	}
	// The same ticket with the right PID is accepted.
	sc.PID = 100
	c, err := prudp.Dial(ctx, secAddr, &sc)
	if err != nil {
		t.Fatalf("the rightful owner was refused: %v", err)
	}
	c.Abort()
}

func TestLoginRequestsTicketForSecureServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := prudp.Config{}
	// This server names Quazal Authentication as the target of Login tickets, so
	// the client must ask RequestTicket for one to the secure server.
	addr := startServer(t, &Server{Config: cfg, Auth: auth.Server{LoginTarget: auth.PIDQuazalAuthentication}})
	sess, err := Login(ctx, addr, LoginConfig{User: "1000", Password: "hunter2", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession(t, sess)
	if sess.PID != 1000 || sess.ConnectionID == 0 {
		t.Fatalf("%+v", sess)
	}
}

// TestLoginSwitchSettings runs the flow with Switch's choices: 8-byte PIDs,
// structure headers, the Switch key derivation and the Switch special account of
// Quazal Rendez-Vous (kerberos.md).
func TestLoginSwitchSettings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const rv, user = 257049437023956657, 1405107338776927100
	accts := new(auth.Memory)
	accts.Add(rv, "Quazal Rendez-Vous", "5MYiXWwtBuI6JzhU")
	accts.Add(user, "switch-user", "pw")
	st := types.Settings{PIDSize: 8, StructureHeader: true}
	cfg := prudp.Config{}
	srv := &Server{Config: cfg, Settings: &st, Accounts: accts,
		Auth: auth.Server{SecurePID: rv, Derivation: auth.DeriveSwitch}}
	addr := startServer(t, srv)
	sess, err := Login(ctx, addr, LoginConfig{User: "Switch-User", Password: "pw", Config: cfg, Settings: &st, Derivation: auth.DeriveSwitch})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession(t, sess)
	if sess.PID != user || sess.SecureURL.PID() != rv || sess.PublicURL.PID() != user {
		t.Fatalf("%+v", sess)
	}
	if st, ok := srv.Secure().Lookup(sess.ConnectionID); !ok || st.PID != user {
		t.Fatalf("station %+v", st)
	}
}

// TestLoginDialHookAndSecurePort runs the secure server on virtual port 2 (as
// Switch servers do) and dials through LoginConfig.Dial, the hook other
// transports (PRUDP Lite) use.
func TestLoginDialHookAndSecurePort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := prudp.Config{Port: 1}
	srv := &Server{Config: cfg, SecurePort: 2}
	addr := startServer(t, srv)
	var dialed []string
	dial := func(ctx context.Context, a string, c *prudp.Config) (*prudp.Conn, error) {
		dialed = append(dialed, fmt.Sprintf("%s vport %d secure %v", a, c.Port, c.Ticket != nil))
		return prudp.Dial(ctx, a, c)
	}
	sess, err := Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession(t, sess)
	if sid, _ := sess.SecureURL.Uint("sid"); sid != 2 {
		t.Fatalf("secure url %s", sess.SecureURL)
	}
	if len(dialed) != 2 || !strings.HasSuffix(dialed[0], "vport 1 secure false") || !strings.HasSuffix(dialed[1], "vport 2 secure true") {
		t.Fatalf("dials: %q", dialed)
	}
}

// TestLoginWithToken is token authentication end to end: no password, the server
// vouches for the token and sends the key that opens the ticket.
func TestLoginWithToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := prudp.Config{}
	accts := testAccounts()
	srv := &Server{Config: cfg, Auth: auth.Server{Options: auth.Options{NEX4: true},
		ValidateToken: func(ctx context.Context, user string, info auth.AuthenticationInfo) (auth.Account, error) {
			if info.Token != "id-token-of-1000" {
				return auth.Account{}, errors.New("unknown token")
			}
			return accts.AccountByName(ctx, user)
		}}}
	addr := startServer(t, srv)
	info := &auth.AuthenticationInfo{Token: "id-token-of-1000", NGSVersion: 4, HasV3Fields: true, TokenType: 2}
	sess, err := Login(ctx, addr, LoginConfig{User: "1000", AuthInfo: info, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	closeSession(t, sess)
	if sess.PID != 1000 {
		t.Fatalf("%+v", sess)
	}
	info.Token = "forged"
	if _, err := Login(ctx, addr, LoginConfig{User: "1000", AuthInfo: info, Config: cfg}); !errors.Is(err, ErrLoginRefused) ||
		!errors.Is(err, types.AuthenticationValidationFailed) {
		t.Fatalf("forged token: %v", err)
	}
}

func TestSecureAddr(t *testing.T) {
	for _, tt := range []struct{ url, auth, want string }{
		{"prudps:/address=10.0.0.5;port=60001;PID=2", "10.0.0.5:60000", "10.0.0.5:60001"},
		{"prudps:/address=0.0.0.1;port=1;PID=2;sid=2", "game.example:443", "game.example:443"}, // NEX 4 shared address
		{"prudps:/address=::1;port=7", "x:1", "[::1]:7"},
	} {
		u, err := types.ParseStationURLString(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := secureAddr(u, tt.auth); err != nil || got != tt.want {
			t.Errorf("%s via %s: %q %v, want %q", tt.url, tt.auth, got, err, tt.want)
		}
	}
	u, _ := types.ParseStationURLString("prudps:/address=10.0.0.5;PID=2")
	if _, err := secureAddr(u, "a:1"); err == nil {
		t.Error("url without port accepted")
	}
}

// TestGameProtocol adds a game's protocol to the secure server's Mux without
// touching the core, and calls it after logging in: the handler sees the PID the
// ticket proved.
func TestGameProtocol(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mux := rmc.NewMux()
	const protocol = 0x90 // an extended protocol id
	mux.HandleFunc(protocol, 7, func(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		r := c.Reader()
		msg := r.String("message")
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
		w := types.NewWriter(out, c.Peer.Settings)
		w.PID(c.Peer.PID)
		w.String(strings.ToUpper(msg))
		return w.Bytes()
	})
	cfg := prudp.Config{}
	addr := startServer(t, &Server{Config: cfg, Mux: mux})
	sess, err := Login(ctx, addr, LoginConfig{User: "1000", Password: "hunter2", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession(t, sess)
	params, _ := types.AppendString(nil, "hello")
	data, err := sess.RMC.Call(ctx, protocol, 7, params)
	if err != nil {
		t.Fatal(err)
	}
	r := types.NewReader(data, sess.RMC.Settings())
	if pid, s := r.PID("pid"), r.String("s"); r.Done() != nil || pid != 1000 || s != "HELLO" {
		t.Fatalf("got %d %q (%v)", pid, s, r.Err())
	}
	if _, err := sess.RMC.Call(ctx, protocol, 7, []byte{1}); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("bad parameters: %v", err)
	}
	if _, err := sess.RMC.Call(ctx, protocol, 8, nil); !errors.Is(err, types.CoreNotImplemented) {
		t.Fatalf("unregistered method: %v", err)
	}
}
