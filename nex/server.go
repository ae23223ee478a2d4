package nex

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/health"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/messagedelivery"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/nex/utility"
	"github.com/gamewire/gamewire/prudp"
)

// Default addresses of Server.
const (
	DefaultAddr = "127.0.0.1:60000"
)

// Server is a NEX game server: an authentication server and a secure server on two
// UDP ports. Fields configure it before Serve; zero values take the defaults
// written beside them, except Accounts, which is required.
type Server struct {
	// Addr is the authentication server's UDP address; default DefaultAddr.
	Addr string
	// SecureAddr is the secure server's UDP address; default the authentication
	// server's host with its port + 1.
	SecureAddr string
	// SecureHost is the address written in the secure server's station url (what
	// clients dial); default the host SecureAddr is bound to (a wildcard
	// address is replaced by 127.0.0.1, so set this when serving other machines).
	SecureHost string
	// SharedAddress advertises the secure server as 0.0.0.1 port 1, NEX 4's way
	// of saying "at the authentication server's address" (authentication.md), for
	// transports that carry both servers on one address (PRUDP Lite's listener,
	// with SecurePort telling them apart). Clients then dial the address they
	// reached the authentication server at.
	SharedAddress bool
	// Config configures the PRUDP connections of both servers (dialect, access
	// key, timers); see prudp.Config. Its zero fields take the engine's defaults
	// for the dialect (prudp.Config.Resolved), which the server reads too: the
	// stream type in the secure station url, Config.Kerberos for the PID and
	// session key sizes of tickets. Config.Port is the authentication server's
	// virtual port.
	Config prudp.Config
	// SecurePort is the secure server's virtual port (the "sid" of its station
	// url); default Config.Port. Transports that carry both servers on one
	// address (PRUDP Lite's listener) need them on different ports, as Switch
	// servers use 1 and 2.
	SecurePort uint8
	// Settings overrides the NEX encoding settings of every connection; nil
	// derives them per connection (ConnSettings): PIDs as wide as
	// Config.Kerberos.PIDSize, structure headers when the PRUDP minor version the
	// connection negotiated is 3 or more (NEX V1 clients offering 3 or more, Lite
	// always by default, never V0, Quazal or Hyperscape).
	Settings *types.Settings
	// NEXVersion is the NEX library version the game's clients speak (30400 is
	// 3.4.0; serve --nex-version, --game). It goes into every connection's
	// settings (types.Settings.Version), the one place every service and every
	// generated codec reads it; 0 keeps what Settings says, or derives it per
	// connection (types.Settings.NEXVersion).
	NEXVersion types.Version
	// NEXGates is the reading of the disputed version gates (types.Gates;
	// docs/nex.md "Disputed gates"; serve --nex-gates): GatesAuto (the default)
	// starts a connection in the consoles' reading (NintendoClients' when it
	// negotiated structure headers below NEX 3.5, which no console does) and
	// lets the generated servers switch it per connection when a request parses
	// only the other way; GatesConsole and GatesNintendoClients fix the reading.
	NEXGates types.Gates
	// Accounts holds users and the special accounts (Quazal Rendez-Vous, PID 2,
	// must exist: its key opens tickets on the secure server).
	Accounts auth.Accounts
	// Auth configures the ticket-granting service (build name, NEX 4 options, key
	// derivation, ...). Its Accounts, SecureURL and Logger are filled in by Serve
	// when empty.
	Auth auth.Server
	// Health configures the Health protocol (a database ping, ...).
	Health health.Server
	// CheckRegister, when set, decides the secure server's Register and
	// RegisterEx by the login data's token (secure.Server.CheckLogin).
	CheckRegister func(ctx context.Context, pid types.PID, login *secure.LoginData) error
	// Ranking and DataStore, when set, serve protocols 112 and 115 on the
	// secure server (their Logger defaults to Logger).
	Ranking   *ranking.Server
	DataStore *datastore.Server
	// Friends, when set, serves Friends_V1 (101) and Friends_V2 (102), the
	// 3DS and Wii U friends server: its Hub, Node and (RoleSecure) Mail are
	// filled in from the server's, and its notifications go through the hub.
	Friends *friends.Server
	// FriendLists are the friend lists matchmaking's friend-only sessions
	// (MatchmakeSystemType 2) are checked against; default Friends.Store
	// when Friends is set, else none (every session open to all).
	FriendLists friends.Friends
	// Mux carries the game's protocols for the secure server; Secure Connection
	// and Health are added to it. Default: a new empty Mux.
	Mux *rmc.Mux
	// Matchmaking keeps gatherings and matchmake sessions (accounts.Store's
	// Matchmaking is the SQLite one); with it the secure server also serves
	// Match Making, Match Making Ext, Matchmake Extension and NAT Traversal,
	// and sends notifications (multiplayer.go). Nil serves none of them.
	Matchmaking matchmaking.Store
	// MatchmakingHooks put a game's policy into matchmaking's flow
	// (matchmaking.Hooks: may a player join a session, after a session is
	// created); the zero value changes nothing.
	MatchmakingHooks matchmaking.Hooks
	// Messages keeps the messages players deliver to each other; with it the
	// secure server serves MessageDelivery (27) and hands delivered messages to
	// recipients online (nex/messagedelivery). Nil serves none.
	Messages messagedelivery.Store
	// Utility, when set, serves Utility (110): unique ids and the game's
	// settings (nex/utility), unless Variants puts Storage Manager there.
	Utility *utility.Server
	// StorageManager, when set and Variants names VariantStorageManager,
	// serves Storage Manager on 110 instead of Utility (nex/storagemanager).
	StorageManager *storagemanager.Server
	// Variants names the game's protocol variants (nex/games Game.Variants:
	// "Storage Manager", "Ranking (legacy)", "Shop (Nintendo Badge Arcade)",
	// ...); the secure server serves these in place of the generic protocol of
	// the same id (services.go). Nil serves the generic protocols.
	Variants []string
	// NATMatchmaking is how auto-matchmaking weighs the NAT mapping and
	// filtering players report through NAT Traversal (matchmaking.NATOrder,
	// docs/nex.md "NAT-aware matchmaking"); the zero value prefers the
	// sessions whose owner can reach the joiner, and never refuses a match.
	NATMatchmaking matchmaking.NATOrder
	// GameServerID is the game's server id (a title's, nex/games), which NAT
	// Traversal's GetRelaySignatureKey answers; 0 when not known.
	GameServerID uint32
	// Node names this secure server in Matchmaking and in Nodes, for servers
	// sharing one database; default "local" (RoleSecure: the address and port
	// of its station url).
	Node string
	// Role selects the servers this process runs; default RoleAll (roles.go).
	Role Role
	// Nodes is the registry of secure nodes: RoleSecure announces itself there,
	// RoleAuth picks a node for each login from it. Required by both.
	Nodes nodes.Registry
	// Exchange carries, between secure nodes, the notifications and NAT
	// probe requests for players connected to another node, and the station
	// urls of every node's players (docs/nex.md "Across nodes"); default
	// Nodes, when it implements nodes.Exchange (accounts.Store and
	// pgstore.Store do). Used by RoleSecure only.
	Exchange nodes.Exchange
	// NodeCapacity is the most connections this secure node announces it takes
	// (0: no limit).
	NodeCapacity int
	// HeartbeatInterval is how often a secure node renews its record; default
	// DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// NodeTimeout is how old a node's heartbeat may be for the authentication
	// server to send logins to it; default 3 x HeartbeatInterval.
	NodeTimeout time.Duration
	// Logger receives both servers' logs; default none.
	Logger *slog.Logger

	multiplayer

	secure     secure.Server
	authSrv    *prudp.Server
	secureSrv  *prudp.Server
	settings   types.Settings // Settings, or DefaultSettings(Config) for the PID size
	perConn    bool           // Settings is nil: each connection's come from ConnSettings
	streamType uint8          // the engine's stream type for Config
	mu         sync.Mutex
	closed     bool            // Shutdown or Close was called (guarded by mu)
	ready      chan struct{}   // closed once Serve has set up (guarded by mu)
	isReady    bool            // ready is closed (guarded by mu)
	peers      sync.Map        // *prudp.Conn -> *rmc.Peer
	ctx        context.Context // handlers' context, cancelled when Serve returns
}

// Secure returns the Secure Connection handler, to inspect registered stations.
func (s *Server) Secure() *secure.Server { return &s.secure }

// SecureAddrDefault returns the default secure address for an authentication
// address: the same host, port + 1.
func SecureAddrDefault(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("nex: authentication address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p >= 65535 {
		return "", fmt.Errorf("nex: authentication address %q: bad port", addr)
	}
	if p == 0 {
		return net.JoinHostPort(host, "0"), nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+1)), nil
}

func (s *Server) init() error {
	if s.Accounts == nil {
		return errors.New("nex: Server.Accounts is required")
	}
	if s.Addr == "" {
		s.Addr = DefaultAddr
	}
	if s.SecureAddr == "" {
		a, err := SecureAddrDefault(s.Addr)
		if err != nil {
			return err
		}
		s.SecureAddr = a
	}
	// Tickets and the secure CONNECT use the dialect's Kerberos sizes: fill
	// them in before anything reads them.
	s.Config.Kerberos = s.Config.Resolved().Kerberos
	if s.Settings != nil {
		s.settings, s.perConn = *s.Settings, false
		// Tickets, the secure CONNECT and RMC must agree on the PID width.
		s.Config.Kerberos.PIDSize = s.settings.PIDSize
	} else {
		s.settings, s.perConn = DefaultSettings(s.Config), true
	}
	if s.Mux == nil {
		s.Mux = rmc.NewMux()
	}
	s.streamType = s.Config.Resolved().StreamType
	return nil
}

// DefaultSettings derives the NEX encoding settings from a PRUDP configuration
// alone: 4- or 8-byte PIDs as Kerberos says, structure headers when the minor
// version this side offers is 3 or more (the engine offers minor version 4 on
// V1 and Lite and has none on V0, Quazal and Hyperscape). It is what a
// connection gets when its peer offers at least as much, and what ConnSettings
// returns before a connection exists. Server and Login no longer use it for
// their connections: they call ConnSettings with each connection's negotiated
// minor version.
func DefaultSettings(c prudp.Config) types.Settings {
	return ConnSettings(c, offeredMinor(c))
}

// ConnSettings derives the NEX encoding settings of one connection from its PRUDP
// configuration and the minor version it negotiated (prudp.Conn.MinorVersion, the
// lower of both ends' offers: "Supported Functions" in NintendoClients wiki "PRUDP Protocol", where
// minor version 3 introduces the structure version header). PIDs are as wide as
// Kerberos.PIDSize of c resolved (prudp.Config.Resolved: the dialect's default
// when c leaves it zero). Structure headers:
//
//   - NEX V1: when the negotiated minor version is 3 or more, as NintendoClients
//     decides (RMCClient turns nex.struct_header on from minor version 3). A client
//     offering 2 to a server offering 4 is answered without headers.
//   - PRUDP Lite: when the minor version this side offers is 3 or more (the default
//     4), whatever was negotiated. Lite carries only Switch traffic (NEX 4, whose
//     structures always have headers: NintendoClients' switch profile sets
//     nex.struct_header = 1 outright), and nex-go answers minor version 0 on Lite
//     while taking structure headers from a server setting of its own
//     (ByteStreamSettings.UseStructureHeader), so the negotiated value says
//     nothing there.
//   - NEX V0, V0 Friends, Quazal, Hyperscape: never; these dialects negotiate no
//     minor version.
func ConnSettings(c prudp.Config, negotiated uint8) types.Settings {
	r := c.Resolved()
	minor := 0
	switch c.Dialect {
	case prudp.NEXV1:
		minor = int(negotiated)
	case prudp.NEXLite:
		minor = int(r.MinorVersion)
	}
	return types.SettingsForMinorVersion(minor, r.Kerberos.PIDSize)
}

// offeredMinor is the minor version a configuration offers in its SYN: the
// engine's resolved one (4 by default on V1 and Lite, none on the other
// dialects).
func offeredMinor(c prudp.Config) uint8 { return c.Resolved().MinorVersion }

// Serve runs the servers of s.Role on the given sockets until Shutdown or Close,
// and returns the first error (prudp.ErrServerClosed after a shutdown). It
// closes the sockets. RoleAll needs both sockets; RoleAuth only authPC and
// RoleSecure only securePC (the other may be nil).
func (s *Server) Serve(authPC, securePC prudp.PacketConn) error {
	closeAll := func() {
		if authPC != nil {
			authPC.Close()
		}
		if securePC != nil {
			securePC.Close()
		}
	}
	if err := s.init(); err != nil {
		closeAll()
		return err
	}
	if err := s.checkRole(authPC, securePC); err != nil {
		closeAll()
		return err
	}
	if s.Role == RoleAuth {
		securePC = nil
	}
	if s.Role == RoleSecure {
		authPC = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secureKey, err := s.secureKey(ctx)
	if err != nil {
		closeAll()
		return err
	}

	var url types.StationURL
	port := s.securePort()
	if securePC != nil {
		if url, err = s.stationURL(securePC, port); err != nil {
			closeAll()
			return err
		}
		if s.Role == RoleSecure {
			if err := s.checkNodeID(ctx, url); err != nil {
				closeAll()
				return err
			}
		}
		if s.Role == RoleSecure && s.Node == "" {
			// Matchmaking records participants by node: nodes sharing a store
			// need names of their own.
			s.Node = s.nodeID(url)
		}
	}

	ts := s.Auth
	if ts.Accounts == nil {
		ts.Accounts = s.Accounts
	}
	if ts.SecureURL.IsZero() {
		ts.SecureURL = url
	}
	if s.Role == RoleAuth && ts.SecureURLFor == nil {
		ts.SecureURLFor = s.pickNode
	}
	if ts.Logger == nil {
		ts.Logger = s.Logger
	}
	ts.Kerberos.SessionKeySize = s.Config.Kerberos.SessionKeySize
	ts.Kerberos.Internal = s.Config.Kerberos.Internal
	authMux := rmc.NewMux()
	authMux.HandleProtocol(rmc.ProtocolTicketGranting, &ts)

	s.secure.Logger = s.Logger
	s.secure.CheckLogin = s.CheckRegister
	if s.Health.Logger == nil {
		s.Health.Logger = s.Logger
	}
	s.Mux.HandleProtocol(rmc.ProtocolSecureConnection, &s.secure)
	s.Mux.HandleProtocol(rmc.ProtocolHealth, &s.Health)
	// PingDaemon answers true without looking at anything: answered inline.
	s.Mux.Handle(rmc.ProtocolHealth, health.MethodPingDaemon, rmc.NonBlocking(&s.Health))
	if securePC != nil {
		if err := s.startMultiplayer(ctx); err != nil {
			closeAll()
			return err
		}
	}
	s.startTitleServices()
	if s.Ranking != nil {
		s.Ranking.Logger = cmp.Or(s.Ranking.Logger, s.Logger)
		s.Mux.HandleProtocol(ranking.ProtocolID, s.Ranking)
	}
	if s.DataStore != nil {
		s.DataStore.Logger = cmp.Or(s.DataStore.Logger, s.Logger)
		s.Mux.HandleProtocol(datastore.ProtocolID, s.DataStore)
	}
	if s.Friends != nil && securePC != nil {
		if err := s.startFriends(ctx); err != nil {
			closeAll()
			return err
		}
	}

	s.mu.Lock()
	if s.closed {
		// Shutdown or Close came while Serve was setting up: honour it, as
		// net/http does, instead of serving on.
		s.mu.Unlock()
		closeAll()
		return prudp.ErrServerClosed
	}
	s.ctx = ctx
	type served struct {
		srv *prudp.Server
		pc  prudp.PacketConn
	}
	var run []served
	if authPC != nil {
		s.authSrv = &prudp.Server{Config: s.Config, Handler: s.handler(authMux, "prudp"), ConnState: s.connState}
		s.authSrv.Config.Logger = s.Logger
		run = append(run, served{s.authSrv, authPC})
	}
	if securePC != nil {
		s.secureSrv = &prudp.Server{Config: s.Config, Handler: s.handler(s.Mux, "prudps"), ConnState: s.connState,
			ServerKey: secureKey}
		s.secureSrv.Config.Port = port
		s.secureSrv.Config.Logger = s.Logger
		run = append(run, served{s.secureSrv, securePC})
	}
	secureSrv := s.secureSrv
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	if !s.isReady {
		s.isReady = true
		close(s.ready)
	}
	s.mu.Unlock()

	errs := make(chan error, len(run))
	for _, r := range run {
		go func() { errs <- r.srv.Serve(r.pc) }()
	}
	if s.Role == RoleSecure {
		hctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { s.heartbeat(hctx, secureSrv, url); close(done) }()
		defer func() { stop(); <-done }()
	}
	err = <-errs
	// One server stopped: stop the other too.
	for _, r := range run {
		r.srv.Close()
	}
	for range len(run) - 1 {
		<-errs
	}
	return err
}

// stationURL is the secure server's url, what the authentication server hands
// to clients.
func (s *Server) stationURL(securePC prudp.PacketConn, port uint8) (types.StationURL, error) {
	host := s.SecureHost
	la := securePC.LocalAddr()
	ap, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return types.StationURL{}, fmt.Errorf("nex: secure socket address %v: %w", la, err)
	}
	if host == "" {
		ip := ap.Addr().Unmap()
		if ip.IsUnspecified() {
			ip = netip.MustParseAddr("127.0.0.1")
		}
		host = ip.String()
	}
	stream := s.streamType
	urlPort := strconv.Itoa(int(ap.Port()))
	if s.SharedAddress {
		host, urlPort = "0.0.0.1", "1"
	}
	return types.NewStationURL("prudps",
		types.URLParam{Key: "address", Value: host},
		types.URLParam{Key: "port", Value: urlPort},
		types.URLParam{Key: "CID", Value: "1"},
		types.URLParam{Key: "PID", Value: strconv.FormatUint(uint64(s.securePID()), 10)},
		types.URLParam{Key: "sid", Value: strconv.Itoa(int(port))},
		types.URLParam{Key: "stream", Value: strconv.Itoa(int(stream))},
		types.URLParam{Key: "type", Value: "2"}), nil
}

// ListenAndServe binds the addresses s.Role needs (Addr, SecureAddr or both)
// and serves.
func (s *Server) ListenAndServe() error {
	if err := s.init(); err != nil {
		return err
	}
	var a, b *net.UDPConn
	var err error
	if s.Role != RoleSecure {
		if a, err = listen(s.Addr); err != nil {
			return err
		}
	}
	if s.Role != RoleAuth {
		if b, err = listen(s.SecureAddr); err != nil {
			if a != nil {
				a.Close()
			}
			return err
		}
	}
	var ap, bp prudp.PacketConn
	if a != nil {
		ap = a
	}
	if b != nil {
		bp = b
	}
	return s.Serve(ap, bp)
}

func listen(addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("nex: address %q: %w", addr, err)
	}
	c, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("nex: listen %s: %w", addr, err)
	}
	return c, nil
}

// Shutdown disconnects every client of both servers gracefully (see
// prudp.Server.Shutdown) and stops them.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.both(func(srv *prudp.Server) error { return srv.Shutdown(ctx) })
}

// Close stops both servers at once.
func (s *Server) Close() error { return s.both((*prudp.Server).Close) }

// both calls f on the authentication and the secure server (those Serve started)
// and joins their errors. It marks s closed first, so a Serve still setting up
// returns prudp.ErrServerClosed instead of starting them.
func (s *Server) both(f func(*prudp.Server) error) error {
	s.mu.Lock()
	s.closed = true
	a, b := s.authSrv, s.secureSrv
	s.mu.Unlock()
	var errs []error
	for _, srv := range []*prudp.Server{a, b} {
		if srv != nil {
			errs = append(errs, f(srv))
		}
	}
	return errors.Join(errs...)
}

// Ready returns a channel closed once Serve has registered every service on
// Mux and created its PRUDP servers. Whoever answers calls on Mux besides
// those servers (HPP on an HTTP listener, in-process dispatch) waits on it:
// before, a call may find its protocol not yet registered and be answered
// Core::NotImplemented.
func (s *Server) Ready() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil {
		s.ready = make(chan struct{})
	}
	return s.ready
}

// AuthServer and SecureServer return the PRUDP servers once Serve runs (for their
// addresses, stats and metrics).
func (s *Server) AuthServer() *prudp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authSrv
}

// SecureServer returns the secure PRUDP server once Serve runs.
func (s *Server) SecureServer() *prudp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.secureSrv
}

func (s *Server) securePort() uint8 {
	switch {
	case s.SecurePort != 0:
		return s.SecurePort
	case s.Config.Port != 0:
		return s.Config.Port
	}
	return 1
}

func (s *Server) securePID() types.PID {
	if s.Auth.SecurePID != 0 {
		return s.Auth.SecurePID
	}
	return auth.PIDQuazalRendezVous
}

// secureKey is the key of the secure server's account, which opens tickets.
func (s *Server) secureKey(ctx context.Context) ([]byte, error) {
	a, err := s.Accounts.AccountByPID(ctx, s.securePID())
	if err != nil {
		return nil, fmt.Errorf("nex: the secure server's account (PID %d) is needed to open tickets: %w", s.securePID(), err)
	}
	return append([]byte(nil), a.Key(s.Auth.Derivation)...), nil
}

func (s *Server) connState(c *prudp.Conn, state prudp.ConnState) {
	if state == prudp.StateClosed {
		if p, ok := s.peers.LoadAndDelete(c); ok {
			s.connClosed(p.(*rmc.Peer))
			s.secure.Forget(p.(*rmc.Peer))
			s.stationsForgotten(p.(*rmc.Peer))
		}
	}
}

// peer returns the rmc.Peer of a connection, creating it on first use.
func (s *Server) peer(c *prudp.Conn, scheme string) *rmc.Peer {
	if p, ok := s.peers.Load(c); ok {
		return p.(*rmc.Peer)
	}
	stream := s.streamType
	port := s.Config.Port
	if scheme == "prudps" {
		port = s.securePort()
	}
	// The minor version is negotiated per connection (the lower of both offers),
	// so structure headers are decided per connection unless Settings says.
	st := s.settings
	if s.perConn {
		st = ConnSettings(s.Config, c.MinorVersion())
	}
	if s.NEXVersion != 0 {
		st.Version = s.NEXVersion
	}
	if s.NEXGates == types.GatesAuto {
		// Structure headers came with NEX 3.5: a connection below 3.5 that
		// negotiated them is no console's but NintendoClients' (which turns
		// them on from PRUDP minor version 3 whatever its nex.version), so
		// it starts in that reading (docs/nex.md "Disputed gates").
		nc := st.NintendoClientsGates()
		st.Learned = new(types.GateReading)
		st.Learned.Set(nc)
	} else {
		st.Gates = s.NEXGates
	}
	p := &rmc.Peer{Addr: c.RemoteAddr(), PID: types.PID(c.PID()), Settings: st, Scheme: scheme,
		StreamType: stream, Port: port, Conn: c}
	actual, loaded := s.peers.LoadOrStore(c, p)
	if !loaded && scheme == "prudps" {
		s.hub.Add(p)
	}
	return actual.(*rmc.Peer)
}

// outPool recycles response buffers: prudp.Conn.Send copies what it is given.
var outPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// handler answers the RMC requests arriving on a PRUDP server's connections:
// calls whose handler declared itself non-blocking (rmc.NonBlockingHandler)
// on the connection's own goroutine (prudp.InlineHandler), the others on
// the connection's handler goroutine.
func (s *Server) handler(mux *rmc.Mux, scheme string) prudp.Handler {
	return &rmcHandler{s: s, mux: mux, scheme: scheme}
}

// rmcHandler dispatches a PRUDP server's messages to an rmc.Mux.
type rmcHandler struct {
	s      *Server
	mux    *rmc.Mux
	scheme string
}

// ServeInline answers a call inline when its handler is non-blocking, and
// declines everything else (ServePRUDP then takes it).
func (h *rmcHandler) ServeInline(c *prudp.Conn, m prudp.Message, dst []byte) ([]byte, bool) {
	if !m.Reliable {
		return dst, false
	}
	req, _, err := rmc.ParseRequest(m.Data)
	if err != nil || !h.mux.NonBlocking(req.Protocol, req.Method) {
		return dst, false
	}
	s := h.s
	out, err := rmc.Dispatch(s.ctx, h.mux, s.peer(c, h.scheme), m.Data, dst, s.Logger)
	if err != nil {
		return dst, false // ServePRUDP logs it
	}
	return out, true
}

// ServePRUDP answers a call on the connection's handler goroutine.
func (h *rmcHandler) ServePRUDP(c *prudp.Conn, m prudp.Message) {
	s := h.s
	if !m.Reliable {
		// RMC travels on reliable substreams only.
		if s.Logger != nil {
			s.Logger.LogAttrs(context.Background(), slog.LevelDebug, "nex: ignoring an unreliable message",
				slog.String("peer", c.RemoteAddr().String()), slog.Int("bytes", len(m.Data)))
		}
		return
	}
	ctx := s.ctx // set before the servers start, never changed
	if !rmc.IsRequest(m.Data) {
		// A client's answer to a call the server made (InitiateProbe, a
		// notification): nothing waits for it.
		return
	}
	bp := outPool.Get().(*[]byte)
	out, after, err := rmc.DispatchThen(ctx, h.mux, s.peer(c, h.scheme), m.Data, (*bp)[:0], s.Logger)
	if err != nil {
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: dropping a message that is not an RMC request",
				slog.String("peer", c.RemoteAddr().String()), slog.String("error", err.Error()))
		}
	} else if len(out) > 0 {
		if err := c.Send(ctx, m.Substream, out); err != nil && s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex: response not sent",
				slog.String("peer", c.RemoteAddr().String()), slog.String("error", err.Error()))
		}
	}
	*bp = out
	outPool.Put(bp)
	if after != nil {
		after() // what the handler asked to follow its response (rmc.Call.AfterResponse)
	}
}
