package main

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/internal/httplimit"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/nasc"
	"github.com/gamewire/gamewire/nex/nnas"
	"github.com/gamewire/gamewire/nex/types"
)

// serveAccountOptions are serve's flags for what consoles present before and
// at a NEX login (docs/accounts.md): the token policy, the keys tokens are
// checked with, and the account services (NNAS, NASC) on their own HTTP
// listener.
type serveAccountOptions struct {
	token          string
	tokenSecret    string
	pretendoKey    string
	gameServerID   string
	switchJWKS     string
	switchTitle    string
	switchIssuer   string
	switchAudience string
	listen         string
	selfRegister   bool
	nexHost        string
	maxConns       int
}

func (a *serveAccountOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.token, "token", "", "token policy at login: required, optional or off (default: required for NEX 2 and NEX 4+ games but the friends server, optional otherwise; docs/accounts.md)")
	f.StringVar(&a.tokenSecret, "token-secret", "", "secret (64 hex digits) gamewire's tokens are authenticated with (default: one made and kept in the store, shared by every process on it)")
	f.StringVar(&a.pretendoKey, "pretendo-token-key", "", "also accept tokens of a Pretendo account server made with this game server key (64 hex digits)")
	f.StringVar(&a.gameServerID, "game-server-id", "", "this server's game server id (8 hex digits; default --game's): tokens for other games are refused, the account services hand out this server only")
	f.StringVar(&a.switchJWKS, "switch-jwks", "", "Switch logins: the key set (JSON Web Key Set file, or http(s) URL) BaaS ID tokens are verified with (gamewire keygen switch-issuer writes one)")
	f.StringVar(&a.switchTitle, "switch-title-id", "", "Switch logins: the title id (16 hex digits) ID tokens must name (nintendo.ai)")
	f.StringVar(&a.switchIssuer, "switch-issuer", "", "Switch logins: the iss ID tokens must carry (default: any)")
	f.StringVar(&a.switchAudience, "switch-audience", credentials.DefaultAudience, "Switch logins: the aud ID tokens must carry")
	f.StringVar(&a.listen, "account-listen", "", "serve the account services consoles log in through (NNAS /v1/api/ for the Wii U, NASC /ac for the 3DS) on this TCP address (e.g. 127.0.0.1:8080); off when empty")
	f.BoolVar(&a.selfRegister, "self-register", false, "let consoles create accounts: NNAS POST people, NASC first contacts (passwd)")
	f.StringVar(&a.nexHost, "nex-host", "", "the authentication server's IPv4 address as consoles reach it, handed out in NNAS nex_token and NASC locator (default: the --listen host, 127.0.0.1 for a wildcard)")
	f.IntVar(&a.maxConns, "account-max-conns", 256, "most connections the account services hold at once")
	cmd.Long += `

Consoles and emulators (docs/accounts.md): the token a console presents at login
(LoginEx, ValidateAndRequestTicketWith*, RegisterEx) is checked as --token says
(default required for NEX 2 and 4+ games but the friends server, optional otherwise), refusals answered
with Authentication::ValidationFailed, TokenExpired, PrincipalIdUnmatched or
RendezVous::AccountDisabled. --account-listen serves the account services consoles
get the server's address and their token from: NNAS (Wii U, Cemu; NNIDs from
gamewire accounts nnid) and NASC (3DS, Azahar), HTTPS with --tls-cert/--tls-key.
Switch logins carry BaaS ID tokens, checked against --switch-jwks.

  gamewire serve --game splatoon --listen 0.0.0.0:60000 --nex-host 192.168.1.10 \
                 --account-listen 0.0.0.0:443 --tls-cert cert.pem --tls-key key.pem`
}

// gameServerIDOf is --game-server-id, or --game's id, or 0 (any).
func (a *serveAccountOptions) gameServerIDOf(game string) (uint32, error) {
	if a.gameServerID != "" {
		v, err := strconv.ParseUint(a.gameServerID, 16, 32)
		if err != nil {
			return 0, fmt.Errorf("--game-server-id %q: want 8 hex digits", a.gameServerID)
		}
		return uint32(v), nil
	}
	if game != "" {
		if g, err := games.Find(game); err == nil {
			return g.ServerID, nil
		}
	}
	return 0, nil
}

// setupCredentials gives srv its token checks and starts the account
// services when --account-listen is set. It returns a function that stops
// them and a line for the banner.
func (o *serveOptions) setupCredentials(cmd *cobra.Command, srv *nex.Server, store *backend, lite bool) (stop func(), banner string, err error) {
	a := &o.account
	ctx := cmd.Context()
	policy := credentials.DefaultPolicy(gameNEXVersion(o.game))
	if g, err := games.Find(o.game); o.game != "" && err == nil && g.ServerID == games.FriendsServerID {
		// The friends server, NEX 2.0, takes a plain Login on its password:
		// NintendoClients' examples/3ds/friends.py and examples/wiiu/friends.py
		// log in to it without AuthenticationInfo (docs/nex.md "Friends").
		policy = credentials.PolicyOptional
	}
	if a.token != "" {
		if policy, err = credentials.ParsePolicy(a.token); err != nil {
			return nil, "", fmt.Errorf("--token: %w", err)
		}
	}
	gsid, err := a.gameServerIDOf(o.game)
	if err != nil {
		return nil, "", err
	}
	var secret []byte
	if a.tokenSecret != "" {
		if secret, err = hex.DecodeString(a.tokenSecret); err != nil || len(secret) < 16 {
			return nil, "", fmt.Errorf("--token-secret: want at least 32 hex digits")
		}
	} else if secret, err = store.Credentials.TokenSecret(ctx); err != nil {
		return nil, "", err
	}
	keys, err := credentials.NewKeys(secret)
	if err != nil {
		return nil, "", err
	}
	checker := &credentials.Checker{Policy: policy, Keys: keys, GameServerID: gsid,
		Disabled: func(ctx context.Context, pid types.PID) (bool, error) {
			n, _, err := store.Credentials.NNIDByPID(ctx, pid)
			if errors.Is(err, credentials.ErrNoNNID) {
				return false, nil
			}
			return err == nil && n.AccessLevel < 0, err
		}}
	if a.pretendoKey != "" {
		if checker.Pretendo, err = credentials.ParsePretendoKey(a.pretendoKey); err != nil {
			return nil, "", fmt.Errorf("--pretendo-token-key: %w", err)
		}
	}
	if a.switchJWKS != "" {
		v, err := credentials.NewIDTokenVerifier(ctx, a.switchJWKS)
		if err != nil {
			return nil, "", fmt.Errorf("--switch-jwks: %w", err)
		}
		v.Issuer, v.Audience = a.switchIssuer, a.switchAudience
		if a.switchTitle != "" {
			if v.TitleID, err = strconv.ParseUint(a.switchTitle, 16, 64); err != nil {
				return nil, "", fmt.Errorf("--switch-title-id %q: want 16 hex digits", a.switchTitle)
			}
		}
		checker.Switch = v
		// Switch users have no NEX password: the ID token authenticates them
		// and the ticket is sealed with a key handed back in pSourceKey
		// (NEX 4's ValidateAndRequestTicketWithCustomData / WithParam).
		srv.Auth.Options.NEX4 = true
		srv.Auth.ValidateToken = checker.ValidateSwitch(srv.Accounts)
	} else if a.switchTitle != "" || a.switchIssuer != "" {
		return nil, "", errors.New("--switch-title-id and --switch-issuer need --switch-jwks")
	}
	srv.Auth.CheckToken = checker.CheckAuth
	srv.CheckRegister = checker.CheckRegister
	banner = fmt.Sprintf("tokens: %s", policy)
	if gsid != 0 {
		banner += fmt.Sprintf(", game server id %08X", gsid)
	}
	if checker.Pretendo != nil {
		banner += ", Pretendo tokens accepted"
	}
	if checker.Switch != nil {
		banner += ", Switch ID tokens from " + a.switchJWKS
	}
	stop = func() {}
	if a.listen == "" {
		if a.selfRegister || a.nexHost != "" {
			return nil, "", errors.New("--self-register and --nex-host configure the account services: add --account-listen")
		}
		return stop, banner, nil
	}
	if lite {
		return nil, "", errors.New("--account-listen: the account services hand out UDP NEX servers (3DS, Wii U); PRUDP Lite is the Switch's, which logs in with BaaS ID tokens (--switch-jwks)")
	}
	host, err := a.nexHostFor(o.listen)
	if err != nil {
		return nil, "", err
	}
	_, portStr, _ := net.SplitHostPort(o.listen)
	port, _ := strconv.Atoi(portStr)
	if port == 0 {
		return nil, "", errors.New("--account-listen needs a fixed --listen port: it is what the account services hand out")
	}
	nexFor := func(_ context.Context, id uint32) (credentials.NEXServer, bool) {
		return credentials.NEXServer{Host: host, Port: port}, gsid == 0 || id == gsid
	}
	ns := &nnas.Server{Store: store.Credentials, Keys: keys, NEXServerFor: nexFor, AllowRegistration: a.selfRegister, Logger: srv.Logger}
	nc := &nasc.Server{Accounts: srv.Accounts, Keys: keys, NEXServerFor: nexFor, Logger: srv.Logger}
	if a.selfRegister {
		nc.Register = func(ctx context.Context, password string) (types.PID, error) {
			acc, err := store.Add(ctx, accounts.NewAccount{Password: password})
			return acc.PID, err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/api/", ns.Handler())
	mux.Handle("/ac", nc.Handler())
	mux.Handle("/ac/", nc.Handler())
	if a.maxConns <= 0 {
		return nil, "", fmt.Errorf("--account-max-conns %d: must be positive", a.maxConns)
	}
	ln, err := net.Listen("tcp", a.listen)
	if err != nil {
		return nil, "", fmt.Errorf("--account-listen: %w", err)
	}
	// The account services are an HTTP listener like the others
	// (internal/httplimit: timeouts, minimum rate, a connection cap that
	// evicts the longest-waiting idle connection), with the shorter
	// timeouts of a service whose requests and answers are a few KiB.
	hs := &httplimit.Server{Handler: mux, Logger: srv.Logger, Limits: httplimit.Limits{
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 15 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10, MaxConns: a.maxConns}}
	scheme := "http"
	if o.lite.tlsCert != "" || o.lite.tlsKey != "" {
		cert, err := tls.LoadX509KeyPair(o.lite.tlsCert, o.lite.tlsKey)
		if err != nil {
			ln.Close()
			return nil, "", fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		// Consoles speak old TLS: the 3DS and Wii U offer TLS 1.0 and 1.2 at best.
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS10}
		scheme = "https"
	}
	go func() { _ = hs.Serve(ln) }()
	banner += fmt.Sprintf("\naccount services on %s://%s (NNAS /v1/api/, NASC /ac), NEX server handed out %s:%d", scheme, ln.Addr(), host, port)
	if a.selfRegister {
		banner += ", self-registration on"
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}, banner, nil
}

// nexHostFor is --nex-host, or the --listen host (127.0.0.1 for a wildcard):
// an IPv4 literal, as Cemu copies nex_token's host into 15 characters.
func (a *serveAccountOptions) nexHostFor(listen string) (string, error) {
	host := a.nexHost
	if host == "" {
		h, _, err := net.SplitHostPort(listen)
		if err != nil {
			return "", fmt.Errorf("--listen %q: %w", listen, err)
		}
		host = h
		if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
	}
	if ip := net.ParseIP(host); ip == nil || ip.To4() == nil || strings.Contains(host, ":") {
		return "", fmt.Errorf("--nex-host %q: want an IPv4 address (consoles are handed it as is; Cemu keeps 15 characters)", host)
	}
	return host, nil
}
