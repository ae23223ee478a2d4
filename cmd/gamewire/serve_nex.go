package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/internal/httplimit"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/games/badgearcade"
	"github.com/gamewire/gamewire/nex/games/smm"
	"github.com/gamewire/gamewire/nex/games/ssb4"
	"github.com/gamewire/gamewire/nex/games/tkcd"
	"github.com/gamewire/gamewire/nex/hpp"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/storagemanager"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/nex/utility"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/gamewire/gamewire/prudp/metrics"
)

// serveNEXOptions are serve's NEX server flags (the default service).
type serveNEXOptions struct {
	secureListen string
	data         string
	store        string
	dsListen     string
	dsURL        string
	dsBlobs      string
	role         string
	secureHost   string
	nodeID       string
	heartbeat    time.Duration
	quota        serveQuotaOptions   // serve_quota.go
	friends      serveFriendsOptions // serve_friends.go
	// secureAddr and dsAddr are where the secure server and the DataStore
	// endpoint listen: the flags, or the defaults derived from the
	// addresses this role listens on (addresses).
	secureAddr, dsAddr string
	nexVersion         string
	nexGates           string
	natMatchmaking     string
	// gameConfig is --game-config: a JSON file of --game's variant settings.
	gameConfig string
}

// register adds serve's NEX server flags and their help to cmd.
func (n *serveNEXOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&n.secureListen, "secure-listen", "", "secure server UDP address (default: the --listen port + 1)")
	f.StringVar(&n.store, "store", "", "keep accounts, nodes, matchmaking, rankings and DataStore metadata in this PostgreSQL database (postgres://...) instead of SQLite in --data; DataStore bodies stay in --data")
	f.StringVar(&n.data, "data", "", "account store directory (default $XDG_DATA_HOME/gamewire or ~/.local/share/gamewire)")
	f.StringVar(&n.dsListen, "datastore-listen", "", "DataStore body endpoint, HTTP (default: the secure server's host, its port + 1: the --listen port + 2, or the --secure-listen port + 1)")
	f.StringVar(&n.dsURL, "datastore-url", "", "DataStore body endpoint's URL as clients reach it (default http://HOST:PORT, HOST from --public-host, else --secure-host, else the --datastore-listen host (127.0.0.1 for a wildcard))")
	f.StringVar(&n.dsBlobs, "datastore-blobs", "", "where DataStore bodies are kept: empty for the data directory's datastore/ folder, or an S3-compatible bucket s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT&region=us-east-1&path-style=true[&public-endpoint=URL clients reach] (credentials from GAMEWIRE_S3_ACCESS_KEY and GAMEWIRE_S3_SECRET_KEY, else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; docs/deploy.md)")
	f.StringVar(&n.role, "role", "all", "which NEX servers to run: all, auth (spreads logins over the secure nodes registered in the store) or secure (one node; registers itself)")
	f.StringVar(&n.secureHost, "secure-host", "", "address written in the secure server's station url, what clients dial (default: the --secure-listen host; set it when listening on 0.0.0.0)")
	f.StringVar(&n.nodeID, "node-id", "", "this secure node's name in the store (default: its station url's address:port)")
	f.DurationVar(&n.heartbeat, "heartbeat", nex.DefaultHeartbeatInterval, "how often a secure node renews its record; a node silent for 3 heartbeats gets no logins")
	n.quota.register(f)
	registerNEXGates(f, &n.nexGates, "the consoles', NintendoClients' for connections with structure headers below NEX 3.5, and learned per connection when a request parses only that way")
	f.StringVar(&n.natMatchmaking, "nat-matchmaking", "", "how auto-matchmaking weighs the NAT mapping and filtering players report: off, prefer (sessions whose owner can reach the joiner first; never refuses a match) or strict (also leaves out the unreachable ones), ',all' to judge every participant (default: --game's, else prefer)")
	n.friends.register(f)
	f.StringVar(&n.gameConfig, "game-config", "", "JSON file of --game's variant settings (Super Smash Bros. 4: nex/games/ssb4.Config, e.g. {\"application_config\": {\"0\": [\"1000000\", ...]}, \"replays_per_hour\": 60}; Super Mario Maker: nex/games/smm.Config; Pokémon X/Y: {\"max_targets\": 256, \"active_window_seconds\": 3600, ...}; docs/games.md)")
	f.StringVar(&n.nexVersion, "nex-version", "", "NEX library version the game's clients speak, for every service (3.4, 3.5.1 or 30400; default --game's, else per connection: 4.0 with 8-byte PIDs, 3.5 with structure headers, else 3.4)")
	cmd.Long += `

The secure server also serves Ranking (112) and DataStore (115), their state in the
account store's database. DataStore bodies travel over HTTP: serve runs that endpoint
itself (--datastore-listen, default the --listen host with port + 2; --datastore-url
when clients reach it under another address) and keeps bodies in the data
directory's datastore/ folder, or in an S3-compatible bucket with --datastore-blobs
(clients then upload and download with presigned URLs, straight to the bucket; what
several secure nodes on other machines need). Try them with gamewire nex ranking and
gamewire nex datastore.

Several processes can run one game (docs/deploy.md): --role auth runs only the
authentication server and hands each login the least-loaded live secure node
registered in the store; --role secure runs one secure node, which registers its
station url and load there every --heartbeat and withdraws when it stops. Nodes on
several machines share one PostgreSQL database: --store postgres://...`
}

// runNEX runs the NEX authentication and secure servers (docs/nex.md): on
// two UDP ports, or, when l is not nil, on virtual ports 1 and 2 of a PRUDP Lite
// listener as Switch servers do (8-byte PIDs, the Switch key derivation, the secure
// server advertised at the authentication server's address). where names l's URL.
func (o *serveOptions) runNEX(cmd *cobra.Command, cfg prudp.Config, l *lite.Listener, where string) error {
	role, err := nex.ParseRole(o.nex.role)
	if err != nil {
		return fmt.Errorf("serve: --role: %w", err)
	}
	if role != nex.RoleAll && l != nil {
		return fmt.Errorf("serve: --role %s: PRUDP Lite carries both servers on one listener; run --role all", role)
	}
	if o.nex.heartbeat <= 0 {
		return fmt.Errorf("serve: --heartbeat %v: must be positive", o.nex.heartbeat)
	}
	// The quota and HTTP limit flags, checked before the store is opened.
	if _, err := o.nex.quota.quota(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if _, err := o.http.limits(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if _, err := o.natMatchmaking(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := o.addresses(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	friendSource, err := o.nex.friends.open(o.game)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if friendSource != nil {
		defer friendSource.Close()
	}
	if err := o.bindMetrics(); err != nil {
		return err
	}
	defer o.closeMetrics()
	if role == nex.RoleAll {
		// Two PRUDP servers (authentication, secure) share the process's
		// --max-buffer.
		cfg.MaxBuffer = max(cfg.MaxBuffer/2, 1)
	}
	// Accounts, nodes, matchmaking, rankings and DataStore metadata live in one
	// database: SQLite in --data, or PostgreSQL with --store (docs/deploy.md).
	store, err := openBackend(cmd.Context(), o.nex.data, o.nex.store)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer store.Close()
	created := store.Created
	srv := &nex.Server{Addr: o.listen, SecureAddr: o.nex.secureListen, Config: cfg, Accounts: namesOrPIDs{store.Accounts}, Logger: cfg.Logger,
		SecureHost: cmp.Or(o.nex.secureHost, o.publicHost), Matchmaking: store.Matchmaking, Messages: store.Messages, FriendLists: store.Friends, Role: role, Nodes: store.Nodes, Node: o.nex.nodeID, HeartbeatInterval: o.nex.heartbeat}
	srv.Health.PingDatabase = store.Ping
	if friendSource != nil {
		srv.FriendLists = friendSource
	}
	nexVersion, versionFrom, err := o.nexVersion()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv.NEXVersion = nexVersion
	if srv.NEXGates, err = parseNEXGates(o.nex.nexGates); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if srv.NATMatchmaking, err = o.natMatchmaking(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	dsURL := ""
	if role != nex.RoleAuth {
		var stopDS func()
		if dsURL, stopDS, err = o.serveNEXServices(cmd, srv, store, cfg); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		defer stopDS()
	}
	collectors := map[string]prometheus.Collector{}
	if l != nil {
		srv.Config.Kerberos = kerberos.Switch
		srv.Auth.Derivation = auth.DeriveSwitch
		srv.SharedAddress, srv.SecurePort = true, 2
		srv.Config.Port = 1
		collectors["lite"] = metrics.Lite(l)
	} else {
		srv.SecureAddr = o.nex.secureAddr
	}
	stopAccounts, accountLine, err := o.setupCredentials(cmd, srv, store, l != nil)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer stopAccounts()
	// Bind before the banner: it names the addresses actually served, and a
	// busy port fails before anything claims to be serving.
	var authPC, securePC prudp.PacketConn
	switch {
	case l != nil:
		authPC, securePC = l.Port(1), l.Port(2)
	case role == nex.RoleAuth:
		pc, err := listenUDP("authentication server (--listen)", srv.Addr)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		authPC = pc
	case role == nex.RoleSecure:
		pc, err := listenUDP("secure server (--secure-listen, default the --listen port + 1)", srv.SecureAddr)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		securePC = pc
	default:
		a, b, err := listenUDPPair(srv.Addr, srv.SecureAddr)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		authPC, securePC = a, b
	}
	// The guest password is shown while guest still has it, not only on the
	// start that created the store: a first start that failed (a busy port)
	// has created it already.
	var notes []string
	if created {
		notes = append(notes, "created")
	}
	if g, err := store.Accounts.Find(cmd.Context(), "guest"); err == nil && g.PID == auth.PIDGuest &&
		g.KeyNEX == auth.NewAccount(g.PID, g.Name, auth.GuestPassword).KeyNEX {
		notes = append(notes, "guest password "+auth.GuestPassword)
	}
	note := ""
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	if l != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "NEX %s: authentication server on %s virtual port 1, secure server on virtual port 2, access key %q, accounts in %s%s\n",
			cfg.Dialect, where, cfg.AccessKey, store.Where, note)
	} else {
		switch role {
		case nex.RoleAuth:
			fmt.Fprintf(cmd.ErrOrStderr(), "NEX %s: authentication server on %s (role auth: logins go to the secure nodes registered in %s), access key %q%s\n",
				cfg.Dialect, authPC.LocalAddr(), store.Where, cfg.AccessKey, note)
		case nex.RoleSecure:
			fmt.Fprintf(cmd.ErrOrStderr(), "NEX %s: secure server on %s (role secure: registered in %s every %v), access key %q%s\n",
				cfg.Dialect, securePC.LocalAddr(), store.Where, o.nex.heartbeat, cfg.AccessKey, note)
		default:
			fmt.Fprintf(cmd.ErrOrStderr(), "NEX %s: authentication server on %s, secure server on %s, access key %q, accounts in %s%s\n",
				cfg.Dialect, authPC.LocalAddr(), securePC.LocalAddr(), cfg.AccessKey, store.Where, note)
		}
	}
	if l == nil && role != nex.RoleAuth && srv.SecureHost == "" && wildcard(srv.SecureAddr) {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: the secure server listens on %s, a wildcard address: clients are told 127.0.0.1, which reaches only this machine; set --public-host (or --secure-host) to what clients reach\n", srv.SecureAddr)
	}
	if role == nex.RoleAuth {
		if ns, err := store.Nodes.Nodes(cmd.Context()); err == nil && !anyLive(ns, 3*o.nex.heartbeat) {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: no secure node is registered in %s: logins fail (RendezVous::MaxConnectionsReached) until a `gamewire serve --role secure` on the same store heartbeats\n", store.Where)
		}
	}
	if g := gameLine(o.game); g != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "game: %s\n", g)
	}
	fmt.Fprintln(cmd.ErrOrStderr(), accountLine)
	if nexVersion != 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "NEX version: %s (%s), for every service\n", desc.VersionString(nexVersion), versionFrom)
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "NEX version: per connection (4.0 with 8-byte PIDs, 3.5 with structure headers, else 3.4); set --nex-version or --game\n")
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "NEX 3.4 disputed gates: %s\n", srv.NEXGates)
	if role != nex.RoleAuth {
		bodies := store.Bodies
		if o.nex.dsBlobs != "" {
			bodies = o.nex.dsBlobs
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "NEX services: Ranking (112), DataStore (115) with its HTTP endpoint on %s, bodies in %s\n",
			dsURL, bodies)
		fmt.Fprintf(cmd.ErrOrStderr(), "matchmaking: NAT-aware auto-matchmaking %s (--nat-matchmaking off|prefer|strict[,all])\n", srv.NATMatchmaking)
		if srv.Friends != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "friends server: Friends_V1 (101, 3DS) and Friends_V2 (102, Wii U), NintendoNotification (100) to online friends\n")
		}
		if friendSource != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "friend lists: from %s (matchmaking, ranking, DataStore)\n", friendSource)
		}
		if g, err := games.Find(o.game); o.game != "" && err == nil && g.HasVariant(games.VariantSubscription) {
			fmt.Fprintf(cmd.ErrOrStderr(), "game protocols: Subscription (117) and Rating (118) methods 1-2 (docs/games.md)\n")
		}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(authPC, securePC) }()
	if o.metrics != "" {
		if err := waitServing(srv); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		if a := srv.AuthServer(); a != nil {
			collectors["authentication"] = metrics.Server(a)
		}
		if b := srv.SecureServer(); b != nil {
			collectors["secure"] = metrics.Server(b)
			collectors["matchmaking"] = natCollector{srv.MatchmakingServer()}
		}
		stop, err := o.serveMetrics(cmd, collectors)
		if err != nil {
			srv.Close()
			<-done
			return err
		}
		defer stop()
	}
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-cmd.Context().Done():
	}
	// nex.Server.Shutdown stops only the PRUDP servers Serve has created: a
	// Ctrl-C right after the banner, while Serve still sets up, would be lost
	// and serve would never return. Wait for them (or for Serve to end).
	if err := waitServing(srv); err != nil {
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, prudp.ErrServerClosed) {
				return fmt.Errorf("serve: %w", err)
			}
			return nil
		default:
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	err = <-done
	fmt.Fprintf(cmd.ErrOrStderr(), "stopped: %s\n", o.shutdownSummary(srv))
	if err != nil && !errors.Is(err, prudp.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// anyLive reports whether a node of ns heartbeat within maxAge.
func anyLive(ns []nodes.Node, maxAge time.Duration) bool {
	for _, n := range ns {
		if time.Since(n.Heartbeat) < maxAge {
			return true
		}
	}
	return false
}

// shutdownSummary is serve's last line: what each server served, and the
// operator log's counts (logins, and each class of warning).
func (o *serveOptions) shutdownSummary(srv *nex.Server) string {
	var parts []string
	for _, s := range []struct {
		name string
		srv  *prudp.Server
	}{{"authentication server", srv.AuthServer()}, {"secure server", srv.SecureServer()}} {
		if s.srv == nil {
			continue
		}
		st := s.srv.Stats()
		parts = append(parts, fmt.Sprintf("%s %d connections, %d messages in, %d out, drops %s",
			s.name, st.Accepted, st.MessagesIn, st.MessagesOut, formatDrops(st.Drops, st.ConnDrops)))
	}
	if s := o.ops.summary(); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// waitServing waits (5 s at most) until the PRUDP servers of srv's role exist,
// which happens as soon as ListenAndServe has bound their sockets.
func waitServing(srv *nex.Server) error {
	select {
	case <-srv.Ready():
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("the NEX servers did not start within 5s")
	}
}

// nexVersion is the NEX version every service speaks: --nex-version, else
// --game's (0 when neither says), and where it came from.
func (o *serveOptions) nexVersion() (types.Version, string, error) {
	if o.nex.nexVersion != "" {
		v, err := parseNEXVersion(o.nex.nexVersion)
		if err != nil {
			return 0, "", err
		}
		return v, "--nex-version", nil
	}
	if v := gameNEXVersion(o.game); v != 0 {
		return types.Version(v), "--game " + o.game, nil
	}
	return 0, "", nil
}

// natMatchmaking is how auto-matchmaking weighs NAT: --nat-matchmaking,
// else --game's, else the default (prefer).
func (o *serveOptions) natMatchmaking() (matchmaking.NATOrder, error) {
	if o.nex.natMatchmaking != "" {
		ord, err := matchmaking.ParseNATOrder(o.nex.natMatchmaking)
		if err != nil {
			return ord, fmt.Errorf("--nat-matchmaking: %w", err)
		}
		return ord, nil
	}
	if g, err := games.Find(o.game); o.game != "" && err == nil && g.NATMatchmaking != "" {
		ord, err := matchmaking.ParseNATOrder(g.NATMatchmaking)
		if err != nil {
			return ord, fmt.Errorf("--game %s: %w", o.game, err)
		}
		return ord, nil
	}
	return matchmaking.NATOrder{}, nil
}

// serveNEXServices gives srv the Ranking and DataStore services on store and
// starts the DataStore body endpoint (HTTP). It returns the endpoint's URL
// and a function that stops it.
func (o *serveOptions) serveNEXServices(cmd *cobra.Command, srv *nex.Server, store *backend, cfg prudp.Config) (string, func(), error) {
	nexVersion := int(srv.NEXVersion)
	if g, err := games.Find(o.game); o.game != "" && err == nil {
		srv.GameServerID = g.ServerID // GetRelaySignatureKey names the game
		srv.Variants = g.Variants     // the game's protocol variants
	}
	srv.Utility = &utility.Server{Store: store.UniqueIDs}
	srv.StorageManager = &storagemanager.Server{Store: store.Slots}
	if g, err := games.Find(o.game); o.game != "" && err == nil && g.ServerID == games.FriendsServerID {
		// The friends server (--game friends): Friends_V1 and Friends_V2
		// on the same store.
		srv.Friends = &friends.Server{Store: store.Friends, Logger: cfg.Logger, Names: func(ctx context.Context, name string) (types.PID, error) {
			a, err := store.Accounts.Find(ctx, name)
			return a.PID, err
		}}
	}
	q, err := o.nex.quota.quota()
	if err != nil {
		return "", nil, err
	}
	lim, err := o.http.limits()
	if err != nil {
		return "", nil, err
	}
	store.SetQuota(q)
	srv.Ranking = &ranking.Server{Store: store.Ranking, Logger: cfg.Logger, NEXVersion: nexVersion, Quota: q, Friends: srv.FriendLists}
	ln, err := net.Listen("tcp", o.nex.dsAddr)
	if err != nil {
		return "", nil, fmt.Errorf("DataStore endpoint (--datastore-listen, default the secure server's port + 1): %w", err)
	}
	url := o.nex.dsURL
	if url == "" {
		url = "http://" + announce(cmp.Or(o.publicHost, o.nex.secureHost), ln.Addr().String())
	}
	blobs, err := datastore.OpenBlobs(o.nex.dsBlobs, store.Bodies)
	if err != nil {
		ln.Close()
		return "", nil, fmt.Errorf("--datastore-blobs: %w", err)
	}
	if c, ok := blobs.(interface{ Check(context.Context) error }); ok {
		ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
		err := c.Check(ctx)
		cancel()
		if err != nil {
			ln.Close()
			return "", nil, fmt.Errorf("--datastore-blobs: %w", err)
		}
	}
	srv.DataStore = &datastore.Server{Store: store.DataStore, BaseURL: url, Logger: cfg.Logger, NEXVersion: nexVersion, Blobs: blobs,
		MaxUploads: o.nex.quota.uploads, MaxPlayerUploads: o.nex.quota.playerUploads, Friends: srv.FriendLists}
	if err := o.serveGameProtocols(srv, store); err != nil {
		ln.Close()
		return "", nil, err
	}
	if err := o.serveGameVariants(srv, store); err != nil {
		ln.Close()
		return "", nil, err
	}
	// The first sweep, before the endpoint serves, removes what a killed
	// process left (temporary upload files, posts whose window closed).
	stopSweep := sweepEvery(cmd.Context(), srv.DataStore, o.nex.quota.sweep, cfg.Logger)
	// The same listener answers HPP (NEX over HTTP) at /hpp/ with the secure
	// server's handlers, under the same limits.
	if srv.Mux == nil {
		srv.Mux = rmc.NewMux()
	}
	httpMux := http.NewServeMux()
	httpMux.Handle(hpp.Path, &hpp.Handler{RMC: srv.Mux, Ready: srv.Ready(), Accounts: srv.Accounts, AccessKey: cfg.AccessKey, Logger: cfg.Logger,
		Settings: types.Settings{StructureHeader: srv.NEXVersion == 0 || srv.NEXVersion >= 30500, Version: srv.NEXVersion}})
	httpMux.Handle("/", srv.DataStore.HTTPHandler())
	hs := &httplimit.Server{Handler: httpMux, Limits: lim, Logger: cfg.Logger}
	go func() { _ = hs.Serve(ln) }()
	return url, func() {
		stopSweep()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// addresses checks serve's listening addresses and derives the defaults:
// the secure server's from --listen (port + 1), the DataStore endpoint's from
// the secure server's (port + 1), so that each role's defaults follow the
// addresses that role listens on (a second --role secure node given its own
// --secure-listen gets its own DataStore port). Every error names the flag
// the user set.
func (o *serveOptions) addresses() error {
	if err := checkAddr("--listen", o.listen); err != nil {
		return err
	}
	n := &o.nex
	n.secureAddr = n.secureListen
	if n.secureAddr == "" {
		a, err := nextPort(o.listen, 1, "--listen (the secure server's default address is its port + 1; set --secure-listen)")
		if err != nil {
			return err
		}
		n.secureAddr = a
	} else if err := checkAddr("--secure-listen", n.secureAddr); err != nil {
		return err
	}
	n.dsAddr = n.dsListen
	if n.dsAddr == "" {
		from := "--secure-listen"
		if n.secureListen == "" {
			from = "--listen"
		}
		a, err := nextPort(n.secureAddr, 1, from+" (the DataStore endpoint's default is the secure server's port + 1; set --datastore-listen)")
		if err != nil {
			return err
		}
		n.dsAddr = a
	} else if err := checkAddr("--datastore-listen", n.dsAddr); err != nil {
		return err
	}
	return nil
}

// listenUDPPair binds the authentication and secure servers' UDP addresses.
func listenUDPPair(authAddr, secureAddr string) (authPC, securePC *net.UDPConn, err error) {
	if authPC, err = listenUDP("authentication server (--listen)", authAddr); err != nil {
		return nil, nil, err
	}
	if securePC, err = listenUDP("secure server (--secure-listen, default the --listen port + 1)", secureAddr); err != nil {
		authPC.Close()
		return nil, nil, err
	}
	return authPC, securePC, nil
}

func listenUDP(what, addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, addr, err)
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return pc, nil
}

// namesOrPIDs names accounts as every gamewire command does: by name, or by
// the PID written in decimal (the stores' Find, what accounts passwd takes).
// NEX clients log in with a user name, and consoles send the PID in decimal
// (docs/nex.md), so `login --user 1000` finds account 1000 even when it was
// given another name; a name always wins over a PID.
type namesOrPIDs struct{ accountFinder }

// accountFinder is an account store that also finds accounts by name or PID
// (accounts.Store, pgstore.Store).
type accountFinder interface {
	auth.Accounts
	Find(ctx context.Context, nameOrPID string) (auth.Account, error)
}

// AccountByName implements auth.Accounts.
func (s namesOrPIDs) AccountByName(ctx context.Context, name string) (auth.Account, error) {
	return s.Find(ctx, name)
}

// serveGameVariants registers --game's protocol variants built on the
// services (nex/games/...): on the DataStore service, Super Mario Maker's
// DataStore_SMM and Super Smash Bros. 4's DataStore_SSB4; Team Kirby Clash
// Deluxe's ServiceItem; Badge Arcade's Shop, SecureConnection
// GetMaintenanceStatus and DataStore GetMetaByOwnerId; each with the settings
// of --game-config.
func (o *serveOptions) serveGameVariants(srv *nex.Server, store *backend) error {
	g, err := games.Find(o.game)
	if o.game == "" || err != nil {
		if o.nex.gameConfig != "" {
			return fmt.Errorf("--game-config needs --game naming a game with a configurable variant")
		}
		return nil
	}
	var register func(mux *rmc.Mux) error
	switch {
	case g.Name == smm.GameName:
		s := &smm.Server{DataStore: srv.DataStore, Store: store.SMM}
		if err := o.readGameConfig(&s.Config); err != nil {
			return err
		}
		register = func(mux *rmc.Mux) error { return smm.Register(mux, s) }
	case g.HasVariant(ssb4.Variant):
		s := &ssb4.Server{DataStore: srv.DataStore, Store: store.SSB4}
		if err := o.readGameConfig(&s.Config); err != nil {
			return err
		}
		register = func(mux *rmc.Mux) error { return ssb4.Register(mux, s) }
	case g.Name == tkcd.GameName:
		s := &tkcd.Server{Store: store.TKCD, Hub: srv.Hub(), Logger: srv.Logger}
		if err := o.readGameConfig(&s.Config); err != nil {
			return err
		}
		register = func(mux *rmc.Mux) error { return tkcd.Register(mux, s) }
	case g.Name == badgearcade.GameName:
		s := &badgearcade.Server{Store: store.BadgeArcade, DataStore: srv.DataStore}
		if err := o.readGameConfig(&s.Config); err != nil {
			return err
		}
		register = func(mux *rmc.Mux) error { return badgearcade.Register(mux, s) }
	default:
		if o.nex.gameConfig != "" && !g.HasVariant(games.VariantSubscription) { // serveGameProtocols reads it
			return fmt.Errorf("--game-config: %s has no configurable variant", g.Name)
		}
		return nil
	}
	if srv.Mux == nil {
		srv.Mux = rmc.NewMux()
	}
	if err := register(srv.Mux); err != nil {
		return fmt.Errorf("--game %s: %w", o.game, err)
	}
	return nil
}

// readGameConfig decodes --game-config into cfg (unknown fields refused);
// without the flag cfg stays as it is.
func (o *serveOptions) readGameConfig(cfg any) error {
	if o.nex.gameConfig == "" {
		return nil
	}
	f, err := os.Open(o.nex.gameConfig)
	if err != nil {
		return fmt.Errorf("--game-config: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("--game-config %s: %w", o.nex.gameConfig, err)
	}
	return nil
}
