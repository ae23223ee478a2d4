package nex

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// TestConnSettings: structure headers follow the negotiated minor version on V1
// only, the offered one on Lite, and never appear on the dialects without a
// minor version; the PID size follows Kerberos everywhere.
func TestConnSettings(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cfg        prudp.Config
		negotiated uint8
		header     bool
		pidSize    int
	}{
		{"v1 negotiated 0", prudp.Config{}, 0, false, 0},
		{"v1 negotiated 2", prudp.Config{}, 2, false, 0},
		{"v1 negotiated 3", prudp.Config{}, 3, true, 0},
		{"v1 negotiated 4", prudp.Config{}, 4, true, 0},
		{"v1 negotiated 6", prudp.Config{}, 6, true, 0},
		{"v1 offering 2, negotiated 2", prudp.Config{MinorVersion: 2}, 2, false, 0},
		{"v1 8-byte pids", prudp.Config{Kerberos: kerberos.Switch}, 4, true, 8},
		{"lite default, negotiated 0 (nex-go)", prudp.Config{Dialect: prudp.NEXLite}, 0, true, 0},
		{"lite default, negotiated 4", prudp.Config{Dialect: prudp.NEXLite, Kerberos: kerberos.Switch}, 4, true, 8},
		{"lite offering 2", prudp.Config{Dialect: prudp.NEXLite, MinorVersion: 2}, 2, false, 0},
		{"v0", prudp.Config{Dialect: prudp.NEXV0}, 4, false, 0},
		// The engine's Kerberos defaults for these dialects (kerberos.Friends,
		// kerberos.Quazal) spell the 4-byte PIDs out.
		{"v0 friends", prudp.Config{Dialect: prudp.NEXV0Friends}, 4, false, 4},
		{"quazal", prudp.Config{Dialect: prudp.Quazal}, 4, false, 4},
		{"hyperscape", prudp.Config{Dialect: prudp.Hyperscape}, 4, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ConnSettings(tt.cfg, tt.negotiated)
			if got.StructureHeader != tt.header || got.PIDSize != tt.pidSize {
				t.Fatalf("ConnSettings(%v offering %d, negotiated %d) = %+v, want headers %v, PID size %d",
					tt.cfg.Dialect, tt.cfg.MinorVersion, tt.negotiated, got, tt.header, tt.pidSize)
			}
		})
	}
	// DefaultSettings is what a peer offering at least as much gets.
	for _, tt := range []struct {
		cfg    prudp.Config
		header bool
	}{
		{prudp.Config{}, true},
		{prudp.Config{MinorVersion: 2}, false},
		{prudp.Config{MinorVersion: 3}, true},
		{prudp.Config{Dialect: prudp.NEXLite}, true},
		{prudp.Config{Dialect: prudp.NEXV0, MinorVersion: 4}, false},
		{prudp.Config{Dialect: prudp.Quazal}, false},
	} {
		if got := DefaultSettings(tt.cfg); got.StructureHeader != tt.header {
			t.Errorf("DefaultSettings(%v offering %d) = %+v, want headers %v", tt.cfg.Dialect, tt.cfg.MinorVersion, got, tt.header)
		}
	}
}

// rangeProtocol is a game protocol whose method 1 takes a ResultRange (a
// structure) and answers one, recording the settings the server used.
const rangeProtocol = 0x91

type seenSettings struct {
	mu   sync.Mutex
	seen []types.Settings
}

func (s *seenSettings) all() []types.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]types.Settings(nil), s.seen...)
}

func rangeMux(seen *seenSettings) *rmc.Mux {
	mux := rmc.NewMux()
	mux.HandleFunc(rangeProtocol, 1, func(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
		seen.mu.Lock()
		seen.seen = append(seen.seen, c.Peer.Settings)
		seen.mu.Unlock()
		r := c.Reader()
		rr := r.ResultRange("range")
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
		return types.ResultRange{Offset: rr.Offset + 1, Size: rr.Size * 2}.Append(out, c.Peer.Settings)
	})
	return mux
}

// TestStructureHeadersPerConnection logs in with V1 clients and servers offering
// different PRUDP minor versions: both ends of each connection encode structures
// as the negotiated version says (headers from 3 on), not as their own
// configuration offers. The Login response carries RVConnectionData, a
// structure, so a login with the ends disagreeing fails; a game call then sends
// and answers a ResultRange, whose bytes show whether the header is there.
func TestStructureHeadersPerConnection(t *testing.T) {
	noHeaders := types.Settings{}
	for _, tt := range []struct {
		name               string
		server, client     prudp.Config
		serverSt, clientSt *types.Settings
		minor              uint8
		header             bool
	}{
		// The server offers 4 (the default) and must answer without headers.
		{name: "client offers 2", client: prudp.Config{MinorVersion: 2}, minor: 2},
		{name: "client offers 3", client: prudp.Config{MinorVersion: 3}, minor: 3, header: true},
		{name: "both offer 4", minor: 4, header: true},
		// The client offers 4 and must speak without headers on both of its
		// connections (authentication and secure).
		{name: "server offers 2", server: prudp.Config{MinorVersion: 2}, minor: 2},
		// Explicit Settings win over the negotiated version.
		{name: "explicit settings", serverSt: &noHeaders, clientSt: &noHeaders, minor: 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			seen := new(seenSettings)
			srv := &Server{Config: tt.server, Settings: tt.serverSt, Mux: rangeMux(seen)}
			addr := startServer(t, srv)
			sess, err := Login(ctx, addr, LoginConfig{User: "1000", Password: "hunter2", Config: tt.client, Settings: tt.clientSt})
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			defer closeSession(t, sess)
			if got := sess.Conn.MinorVersion(); got != tt.minor {
				t.Fatalf("negotiated minor version %d, want %d", got, tt.minor)
			}
			if got := sess.RMC.Settings().StructureHeader; got != tt.header {
				t.Errorf("client's structure headers %v, want %v", got, tt.header)
			}

			params, err := types.ResultRange{Offset: 10, Size: 20}.Append(nil, sess.RMC.Settings())
			if err != nil {
				t.Fatal(err)
			}
			data, err := sess.RMC.Call(ctx, rangeProtocol, 1, params)
			if err != nil {
				t.Fatalf("call with a structure: %v", err)
			}
			// ResultRange is two u32; the header adds version 0 and length 8.
			want := []byte{11, 0, 0, 0, 40, 0, 0, 0}
			if tt.header {
				want = append([]byte{0, 8, 0, 0, 0}, want...)
			}
			if string(data) != string(want) {
				t.Errorf("response % x, want % x", data, want)
			}
			if s := seen.all(); len(s) != 1 || s[0].StructureHeader != tt.header {
				t.Errorf("settings the handler saw: %+v, want headers %v", s, tt.header)
			}
			// The server's peers: the secure connection's (and the authentication
			// connection's, while it lasts) carry the negotiated choice.
			srv.peers.Range(func(k, v any) bool {
				c, p := k.(*prudp.Conn), v.(*rmc.Peer)
				if c.MinorVersion() != tt.minor || p.Settings.StructureHeader != tt.header {
					t.Errorf("server peer %s (%s): minor %d, headers %v; want %d, %v",
						p.Addr, p.Scheme, c.MinorVersion(), p.Settings.StructureHeader, tt.minor, tt.header)
				}
				return true
			})
		})
	}
}

// TestLoginRegistersLocalAddr: the station url Login registers carries the secure
// connection's real local address and port (the socket's, chosen by the system),
// and the secure server records it; on loopback the public url it answers has
// the same address and port, and no NAT.
func TestLoginRegistersLocalAddr(t *testing.T) {
	for _, d := range []prudp.Dialect{prudp.NEXV1, prudp.NEXV0} {
		t.Run(d.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfg := prudp.Config{Dialect: d}
			srv := &Server{Config: cfg}
			addr := startServer(t, srv)
			sess, err := Login(ctx, addr, LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer closeSession(t, sess)
			local := sess.Conn.LocalAddr()
			if local.Addr() != netip.MustParseAddr("127.0.0.1") || local.Port() == 0 {
				t.Fatalf("secure connection's local address %v", local)
			}
			st, ok := srv.Secure().Lookup(sess.ConnectionID)
			if !ok || len(st.URLs) != 1 {
				t.Fatalf("station %+v", st)
			}
			u := st.URLs[0]
			if u.Address() != "127.0.0.1" || u.Port() != local.Port() {
				t.Errorf("registered url %s, want address 127.0.0.1 port %d", u, local.Port())
			}
			if sess.PublicURL.Address() != "127.0.0.1" || sess.PublicURL.Port() != local.Port() {
				t.Errorf("public url %s, want address 127.0.0.1 port %d", sess.PublicURL, local.Port())
			}
			if typ, _ := sess.PublicURL.Uint("type"); typ != 2 {
				t.Errorf("public url %s: type %d, want 2 (public, no NAT)", sess.PublicURL, typ)
			}
		})
	}
}

// TestLocalURL covers the fallbacks of the registered url: a socket bound to a
// wildcard address, a connection without a UDP address (Lite), and an address
// that cannot be routed.
func TestLocalURL(t *testing.T) {
	fixed, _ := types.ParseStationURLString("prudp:/address=192.0.2.7;port=5555")
	for _, tt := range []struct {
		name    string
		cfg     LoginConfig
		local   string // "" for the zero AddrPort
		secAddr string
		addr    string
		port    uint16
	}{
		{name: "socket address", local: "127.0.0.1:40000", secAddr: "127.0.0.1:60001", addr: "127.0.0.1", port: 40000},
		{name: "ipv4-mapped socket address", local: "[::ffff:127.0.0.1]:40000", secAddr: "127.0.0.1:60001", addr: "127.0.0.1", port: 40000},
		{name: "wildcard socket", local: "0.0.0.0:40001", secAddr: "127.0.0.1:60001", addr: "127.0.0.1", port: 40001},
		{name: "ipv6 wildcard socket", local: "[::]:40002", secAddr: "127.0.0.1:60001", addr: "127.0.0.1", port: 40002},
		{name: "lite over websocket", secAddr: "ws://127.0.0.1:8080/", addr: "127.0.0.1", port: 0},
		{name: "lite url without port", secAddr: "tls://127.0.0.1", addr: "127.0.0.1", port: 0},
		{name: "unroutable", secAddr: "not an address", addr: "0.0.0.0", port: 0},
		{name: "configured", cfg: LoginConfig{LocalURL: &fixed}, local: "127.0.0.1:40000", secAddr: "127.0.0.1:1",
			addr: "192.0.2.7", port: 5555},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var local netip.AddrPort
			if tt.local != "" {
				local = netip.MustParseAddrPort(tt.local)
			}
			u := localURL(tt.cfg, local, tt.secAddr)
			if u.Address() != tt.addr || u.Port() != tt.port {
				t.Fatalf("localURL(%v, %q) = %s, want address %s port %d", local, tt.secAddr, u, tt.addr, tt.port)
			}
			if tt.cfg.LocalURL == nil {
				if sid, _ := u.Uint("sid"); u.Scheme != "prudp" || sid != 15 {
					t.Errorf("url %s: want scheme prudp and sid 15", u)
				}
				if _, ok := u.Get("port"); !ok {
					t.Errorf("url %s has no port", u)
				}
			}
		})
	}
}

// TestLoginOverLite logs in over PRUDP Lite (WebSocket on loopback, both servers
// on one listener as Switch servers are): structures carry headers whatever minor
// version the peers negotiate, and the registered url, having no UDP port to
// name, says port 0 at the address that reaches the server.
func TestLoginOverLite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := lite.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := prudp.Config{Dialect: prudp.NEXLite, Port: 1, Kerberos: kerberos.Switch}
	seen := new(seenSettings)
	srv := &Server{Config: cfg, Accounts: testAccounts(), SharedAddress: true, SecurePort: 2, Mux: rangeMux(seen)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l.Port(1), l.Port(2)) }()
	defer func() {
		srv.Close()
		<-done
	}()
	sess, err := Login(ctx, "ws://"+l.Addr().String()+"/", LoginConfig{User: "1000", Password: "hunter2", Config: cfg,
		Dial: func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
			return lite.Dial(ctx, url, c, nil)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession(t, sess)
	// A Lite client's socket is a stream, not a UDP socket: no local UDP address.
	if la := sess.Conn.LocalAddr(); la.IsValid() {
		t.Fatalf("Lite connection's LocalAddr %v, want the zero AddrPort", la)
	}
	st, ok := srv.Secure().Lookup(sess.ConnectionID)
	if !ok || len(st.URLs) != 1 {
		t.Fatalf("station %+v", st)
	}
	if u := st.URLs[0]; u.Address() != "127.0.0.1" || u.Port() != 0 {
		t.Errorf("registered url %s, want address 127.0.0.1 port 0", u)
	}
	if !sess.RMC.Settings().StructureHeader || sess.RMC.Settings().PIDSize != 8 {
		t.Errorf("client settings %+v, want 8-byte PIDs and structure headers", sess.RMC.Settings())
	}
	params, _ := types.ResultRange{Offset: 1, Size: 2}.Append(nil, sess.RMC.Settings())
	data, err := sess.RMC.Call(ctx, rangeProtocol, 1, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 13 || data[1] != 8 || binary.LittleEndian.Uint32(data[5:]) != 2 || binary.LittleEndian.Uint32(data[9:]) != 4 {
		t.Errorf("response % x, want a ResultRange{2, 4} with its header", data)
	}
	if s := seen.all(); len(s) != 1 || !s[0].StructureHeader {
		t.Errorf("settings the handler saw: %+v", s)
	}
}
