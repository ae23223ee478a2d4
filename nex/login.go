package nex

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
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
	// Ticket and PID are set by Login for the secure connection.
	Config prudp.Config
	// Settings overrides the NEX encoding settings; nil derives them as the
	// server does (DefaultSettings).
	Settings *types.Settings
	// Derivation is how the password becomes a key; default auth.DeriveNEX.
	Derivation auth.KeyDerivation
	// Options are the Ticket Granting protocol revisions (NEX 4, crossplay).
	Options auth.Options
	// AuthInfo, when set, logs in with LoginEx carrying it (the token and
	// versions NEX 3+ clients send). A server doing token authentication then
	// answers with the key that opens the ticket, and Password is not needed.
	AuthInfo *auth.AuthenticationInfo
	// LocalURL is the station url registered on the secure server; default a
	// prudp url with the local address the system would use to reach the server.
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

func (c *LoginConfig) settings() types.Settings {
	if c.Settings != nil {
		return *c.Settings
	}
	return DefaultSettings(c.Config)
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
	st := cfg.settings()
	ks := cfg.Config.Kerberos
	ks.PIDSize = st.PIDSize

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
	secureURL := lr.Connection.RegularURL
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
	rc := rmc.NewClient(ConnTransport{sc}, rmc.ClientConfig{Settings: st, Handler: cfg.Handler, Logger: cfg.Logger})
	sess := &Session{PID: lr.PID, BuildName: lr.BuildName, SecureURL: secureURL, Conn: sc, RMC: rc}

	// 5. Register the local station url.
	local := localURL(cfg, secAddr)
	w := types.NewWriter(nil, st)
	types.WriteList(&w, []types.StationURL{local}, (*types.Writer).StationURL)
	params, err := w.Bytes()
	if err == nil {
		var data []byte
		data, err = rc.Call(ctx, rmc.ProtocolSecureConnection, secure.MethodRegister, params)
		if err == nil {
			r := types.NewReader(data, st)
			res := r.Result("%retval%")
			sess.ConnectionID = r.U32("pidConnectionID")
			sess.PublicURL = r.StationURL("urlPublic")
			if err = r.Done(); err == nil && res.IsError() {
				err = fmt.Errorf("the server refused Register: %w", res)
			}
		}
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

// localURL is the url registered on the secure server.
func localURL(cfg LoginConfig, secAddr string) types.StationURL {
	if cfg.LocalURL != nil {
		return *cfg.LocalURL
	}
	// The local address the system would use to reach the server (no packet is
	// sent). The port is unknown here: the PRUDP connection owns its socket.
	// TODO: use the connection's local address once prudp.Conn exposes it.
	addr := "0.0.0.0"
	if c, err := net.Dial("udp", secAddr); err == nil {
		if ua, ok := c.LocalAddr().(*net.UDPAddr); ok {
			addr = netip.AddrPortFrom(ua.AddrPort().Addr().Unmap(), 0).Addr().String()
		}
		c.Close()
	}
	stream := cfg.Config.StreamType
	if stream == 0 {
		stream = prudp.StreamRVSecure
	}
	return types.NewStationURL("prudp",
		types.URLParam{Key: "address", Value: addr}, types.URLParam{Key: "port", Value: "0"},
		types.URLParam{Key: "natf", Value: "0"}, types.URLParam{Key: "natm", Value: "0"},
		types.URLParam{Key: "pmp", Value: "0"}, types.URLParam{Key: "upnp", Value: "0"},
		types.URLParam{Key: "sid", Value: "15"}, types.URLParam{Key: "stream", Value: strconv.Itoa(int(stream))},
		types.URLParam{Key: "type", Value: "2"})
}
