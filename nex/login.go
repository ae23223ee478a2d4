package nex

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	secgen "github.com/gamewire/gamewire/nex/protocols/secure"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// Errors of the login flow, wrapped with detail.
var (
	// ErrUnknownUser: the authentication server has no such user
	// (RendezVous::InvalidUsername).
	ErrUnknownUser = errors.New("nex: unknown user")
	// ErrWrongPassword: the ticket does not open with the password's key (its
	// HMAC does not verify). The server never sees the password, so this is
	// where a wrong one shows.
	ErrWrongPassword = errors.New("nex: wrong password")
	// ErrLoginRefused: the server refused the login with another result code.
	ErrLoginRefused = errors.New("nex: login refused")
	// ErrSecureRefused: the secure server did not accept the ticket (expired,
	// issued for another PID or another server key) or did not answer.
	ErrSecureRefused = errors.New("nex: secure server refused the connection")
)

// closeAuthTimeout bounds the graceful close of the authentication connection.
const closeAuthTimeout = time.Second

// LoginConfig configures Login.
type LoginConfig struct {
	// User and Password are the credentials. The password only derives the key
	// that opens the ticket; it is never sent.
	User, Password string
	// Key, when set, is the user's Kerberos key, used instead of deriving one
	// from Password (for tools that keep keys rather than passwords).
	Key []byte
	// Config configures both PRUDP connections (dialect, access key, timers).
	// Its zero fields take the engine's defaults for the dialect
	// (prudp.Config.Resolved), which Login reads too (Kerberos sizes, the
	// stream type of the registered url). Ticket and PID are set by Login for
	// the secure connection.
	Config prudp.Config
	// Settings overrides the NEX encoding settings of both connections; nil
	// derives them per connection as the server does (ConnSettings with the
	// minor version each connection negotiated: a server offering less than 3
	// is spoken to without structure headers even if Config offers 4).
	Settings *types.Settings
	// NEXVersion is the NEX version the client speaks (types.Settings.Version);
	// 0 keeps what Settings says or derives it from the connection.
	NEXVersion types.Version
	// Gates is the reading of the disputed version gates (types.Settings.Gates,
	// docs/nex.md "Disputed gates"); GatesAuto keeps what Settings says.
	Gates types.Gates
	// Derivation is how the password becomes a key; default auth.DeriveNEX.
	Derivation auth.KeyDerivation
	// Options are the Ticket Granting protocol revisions (NEX 4, crossplay).
	Options auth.Options
	// AuthInfo, when set, logs in with LoginEx carrying it (the token and
	// versions NEX 3+ clients send). A server doing token authentication then
	// answers with the key that opens the ticket, and Password is not needed.
	AuthInfo *auth.AuthenticationInfo
	// LoginData, when set, registers on the secure server with RegisterEx
	// carrying it (the Wii U's NintendoLoginData, the 3DS's
	// AccountExtraInfo: the token again) instead of Register.
	LoginData *secure.LoginData
	// LocalURL is the station url registered on the secure server; default a
	// prudp url with the secure connection's local address and port
	// (prudp.Conn.LocalAddr: the socket's own, the port the system chose). Where
	// the connection has no UDP address (PRUDP Lite over a stream) or the socket
	// is bound to a wildcard address, the address is the one the system would
	// use to reach the server, and the port is 0 when unknown.
	LocalURL *types.StationURL
	// Dial opens a PRUDP connection; default prudp.Dial (UDP). Other transports
	// plug in here, e.g. PRUDP Lite: a stream from lite.DialStream wrapped with
	// lite.NewClient and handed to prudp.DialPacketConn.
	Dial func(ctx context.Context, addr string, cfg *prudp.Config) (*prudp.Conn, error)
	// Handler answers requests the secure server sends (notifications); nil
	// answers Core::NotImplemented.
	Handler rmc.Handler
	// Logger receives the flow's steps; nil logs nothing. The password and the
	// keys are never logged.
	Logger *slog.Logger
}

// Session is a logged-in client: its secure connection and what the servers said.
type Session struct {
	PID          types.PID
	BuildName    string           // the authentication server's strReturnMsg
	SecureURL    types.StationURL // where the secure server is
	PublicURL    types.StationURL // the client's url as the secure server sees it
	ConnectionID uint32           // the Rendez-Vous connection id from Register
	// Conn is the secure PRUDP connection; RMC calls game protocols over it.
	Conn *prudp.Conn
	RMC  *rmc.Client
}

// Close ends the session: the RMC client, then the secure connection gracefully.
func (s *Session) Close(ctx context.Context) error {
	s.RMC.Close()
	return s.Conn.Close(ctx)
}

// ConnTransport adapts a PRUDP connection to rmc.Transport: messages on reliable
// substream 0.
type ConnTransport struct{ Conn *prudp.Conn }

// Send sends msg reliably on substream 0.
func (t ConnTransport) Send(ctx context.Context, msg []byte) error { return t.Conn.Send(ctx, 0, msg) }

// Recv returns the next reliable message.
func (t ConnTransport) Recv(ctx context.Context) ([]byte, error) {
	for {
		m, err := t.Conn.Recv(ctx)
		if err != nil {
			return nil, err
		}
		if m.Reliable {
			return m.Data, nil
		}
	}
}

// settings are the encoding settings of a connection the flow opened: Settings
// when set, else those its negotiated minor version gives (ConnSettings). conn
// nil gives what Config alone says (DefaultSettings), for the PID size needed
// before any connection exists.
func (c *LoginConfig) settings(conn *prudp.Conn) types.Settings {
	var st types.Settings
	switch {
	case c.Settings != nil:
		st = *c.Settings
	case conn == nil:
		st = DefaultSettings(c.Config)
	default:
		st = ConnSettings(c.Config, conn.MinorVersion())
	}
	if c.NEXVersion != 0 {
		st.Version = c.NEXVersion
	}
	if c.Gates != types.GatesAuto {
		st.Gates = c.Gates
	}
	return st
}

func (c *LoginConfig) logf(ctx context.Context, msg string, attrs ...slog.Attr) {
	if c.Logger != nil {
		c.Logger.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
	}
}

// Login logs in to the NEX server whose authentication server is at addr: Login,
// RequestTicket when the ticket is not for the secure server, a secure connection
// with the ticket, and Register. ctx bounds the whole flow.
func Login(ctx context.Context, addr string, cfg LoginConfig) (*Session, error) {
	ks := cfg.Config.Resolved().Kerberos
	ks.PIDSize = cfg.settings(nil).PIDSize

	// 1. Authentication server: Login.
	authCfg := cfg.Config
	authCfg.Ticket, authCfg.PID = nil, 0
	dial := cfg.Dial
	if dial == nil {
		dial = prudp.Dial
	}
	ac, err := dial(ctx, addr, &authCfg)
	if err != nil {
		return nil, fmt.Errorf("nex: connect to the authentication server %s: %w", addr, err)
	}
	defer ac.Abort()
	st := cfg.settings(ac)
	arc := rmc.NewClient(ConnTransport{ac}, rmc.ClientConfig{Settings: st, Logger: cfg.Logger})
	defer arc.Close()
	ta := &auth.Client{RMC: arc, Options: cfg.Options}
	var lr auth.LoginResponse
	if cfg.AuthInfo != nil {
		var h types.AnyDataHolder
		if h, err = cfg.AuthInfo.Holder(st); err != nil {
			return nil, fmt.Errorf("nex: AuthenticationInfo: %w", err)
		}
		lr, err = ta.LoginEx(ctx, cfg.User, h)
	} else {
		lr, err = ta.Login(ctx, cfg.User)
	}
	switch {
	case errors.Is(err, types.RendezVousInvalidUsername):
		return nil, fmt.Errorf("%w %q on %s", ErrUnknownUser, cfg.User, addr)
	case err != nil && lr.Result.IsError():
		return nil, fmt.Errorf("%w: %w", ErrLoginRefused, err)
	case err != nil:
		return nil, err
	}
	cfg.logf(ctx, "nex login: authenticated", slog.Uint64("pid", uint64(lr.PID)), slog.String("server", lr.BuildName))

	// 2. Open the ticket with the password's key (or the server's source key).
	key, err := sourceKey(cfg, lr.PID, lr.SourceKey)
	if err != nil {
		return nil, err
	}
	ticket, err := kerberos.OpenTicket(lr.Ticket, key, ks)
	if errors.Is(err, kerberos.ErrBadHMAC) {
		return nil, fmt.Errorf("%w for %q: the ticket from %s does not open with its key", ErrWrongPassword, cfg.User, addr)
	} else if err != nil {
		return nil, fmt.Errorf("nex: ticket from %s: %w", addr, err)
	}

	// 3. A ticket for the secure server, if this one is for someone else.
	secureURL := lr.Connection.MainStation
	target := secureURL.PID()
	if target == 0 {
		target = auth.PIDQuazalRendezVous
	}
	if types.PID(ticket.TargetPID) != target {
		cfg.logf(ctx, "nex login: ticket names another target, requesting one for the secure server",
			slog.Uint64("ticket_target", ticket.TargetPID), slog.Uint64("secure_pid", uint64(target)))
		tr, err := ta.RequestTicket(ctx, lr.PID, target)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrLoginRefused, err)
		}
		if key, err = sourceKey(cfg, lr.PID, tr.SourceKey); err != nil {
			return nil, err
		}
		if ticket, err = kerberos.OpenTicket(tr.Ticket, key, ks); err != nil {
			return nil, fmt.Errorf("nex: ticket for the secure server: %w", err)
		}
	}
	arc.Close()
	// Leave the authentication server politely while connecting to the secure
	// one, and do not let a lost acknowledgement of the DISCONNECT hold up the
	// login: after a second the connection is dropped with a forced disconnect.
	// Login returns only once this is done.
	authClosed := make(chan struct{})
	go func() {
		defer close(authClosed)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeAuthTimeout)
		defer cancel()
		_ = ac.Close(cctx)
	}()
	defer func() { <-authClosed }()

	// 4. Secure server: connect with the ticket.
	secAddr, err := secureAddr(secureURL, addr)
	if err != nil {
		return nil, err
	}
	secCfg := cfg.Config
	secCfg.Ticket = &ticket
	secCfg.PID = uint64(lr.PID)
	secCfg.Kerberos = ks
	if sid, ok := secureURL.Uint("sid"); ok && sid <= 15 {
		secCfg.Port = uint8(sid)
	}
	if stream, ok := secureURL.Uint("stream"); ok && stream <= 15 {
		secCfg.StreamType = uint8(stream)
	}
	sc, err := dial(ctx, secAddr, &secCfg)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %w", ErrSecureRefused, secAddr, err)
	}
	// The secure connection negotiated its own minor version, possibly not the
	// authentication connection's (another server, another offer).
	st = cfg.settings(sc)
	rc := rmc.NewClient(ConnTransport{sc}, rmc.ClientConfig{Settings: st, Handler: cfg.Handler, Logger: cfg.Logger})
	sess := &Session{PID: lr.PID, BuildName: lr.BuildName, SecureURL: secureURL, Conn: sc, RMC: rc}

	// 5. Register the local station url.
	local := localURL(cfg, sc.LocalAddr(), secAddr)
	reg := secgen.NewSecureConnectionClient(rc)
	var res types.Result
	if cfg.LoginData != nil {
		var h types.AnyDataHolder
		if h, err = cfg.LoginData.Holder(st); err == nil {
			res, sess.ConnectionID, sess.PublicURL, err = reg.RegisterEx(ctx, []types.StationURL{local}, types.AnyData{Raw: h})
		}
	} else {
		res, sess.ConnectionID, sess.PublicURL, err = reg.Register(ctx, []types.StationURL{local})
	}
	if err == nil && res.IsError() {
		err = fmt.Errorf("the server refused Register: %w", res)
	}
	if err != nil {
		sess.RMC.Close()
		sc.Abort()
		return nil, fmt.Errorf("nex: register on the secure server %s: %w", secAddr, err)
	}
	cfg.logf(ctx, "nex login: registered", slog.Uint64("cid", uint64(sess.ConnectionID)), slog.String("public", sess.PublicURL.String()))
	return sess, nil
}

// sourceKey is the key that opens a ticket: the server's pSourceKey when it sent a
// non-empty hex one (NEX 4), else the password's.
func sourceKey(cfg LoginConfig, pid types.PID, serverKey string) ([]byte, error) {
	if serverKey != "" {
		k, err := hex.DecodeString(serverKey)
		if err != nil {
			return nil, fmt.Errorf("nex: the server's pSourceKey %q is not hex: %w", serverKey, err)
		}
		return k, nil
	}
	if cfg.Key != nil {
		return cfg.Key, nil
	}
	var k [16]byte
	if cfg.Derivation == auth.DeriveSwitch {
		k = kerberos.DeriveKeySwitch(cfg.Password, uint64(pid))
	} else {
		k = kerberos.DeriveKey(cfg.Password, uint64(pid))
	}
	return k[:], nil
}

// secureAddr is where the secure server listens: its station url's address and
// port, or the authentication server's address when the url says 0.0.0.1 (NEX 4's
// "same address" convention, authentication.md).
func secureAddr(u types.StationURL, authAddr string) (string, error) {
	a := u.Address()
	if a == "0.0.0.1" || a == "" {
		return authAddr, nil
	}
	if u.Port() == 0 {
		return "", fmt.Errorf("nex: the secure server's url %q has no port", u)
	}
	return net.JoinHostPort(a, strconv.Itoa(int(u.Port()))), nil
}

// localURL is the url registered on the secure server: LoginConfig.LocalURL, or a
// prudp url with the secure connection's local address local (its socket's
// address and the port the system chose, what a peer would send to). When local
// is not a UDP address (the zero AddrPort: PRUDP Lite, whose packets travel in a
// TCP or WebSocket stream) the port is 0, as no UDP port receives anything; when
// its address is missing or a wildcard, the address is the one the system would
// use to reach secAddr (a route lookup: no packet is sent), or 0.0.0.0 when even
// that fails.
func localURL(cfg LoginConfig, local netip.AddrPort, secAddr string) types.StationURL {
	if cfg.LocalURL != nil {
		return *cfg.LocalURL
	}
	var port uint16
	var ip netip.Addr
	if local.IsValid() {
		port = local.Port()
		if a := local.Addr().Unmap(); !a.IsUnspecified() {
			ip = a
		}
	}
	if !ip.IsValid() {
		ip = routeAddr(secAddr)
	}
	addr := "0.0.0.0"
	if ip.IsValid() {
		addr = ip.WithZone("").String()
	}
	stream := cfg.Config.Resolved().StreamType
	return types.NewStationURL("prudp",
		types.URLParam{Key: "address", Value: addr}, types.URLParam{Key: "port", Value: strconv.Itoa(int(port))},
		types.URLParam{Key: "natf", Value: "0"}, types.URLParam{Key: "natm", Value: "0"},
		types.URLParam{Key: "pmp", Value: "0"}, types.URLParam{Key: "upnp", Value: "0"},
		types.URLParam{Key: "sid", Value: "15"}, types.URLParam{Key: "stream", Value: strconv.Itoa(int(stream))},
		types.URLParam{Key: "type", Value: "2"})
}

// routeAddr is the local address the system would use to reach addr, a host:port
// or a URL (ws://host:port/ and the like, what Lite dials), found by connecting
// a UDP socket, which sends nothing. The zero Addr when it cannot be found.
func routeAddr(addr string) netip.Addr {
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Hostname() == "" {
			return netip.Addr{}
		}
		port := u.Port()
		if port == "" {
			port = "443" // any port: only the route to the host matters
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	c, err := net.Dial("udp", addr)
	if err != nil {
		return netip.Addr{}
	}
	defer c.Close()
	if ua, ok := c.LocalAddr().(*net.UDPAddr); ok {
		return ua.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}
