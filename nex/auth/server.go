package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	crossproto "github.com/gamewire/gamewire/nex/protocols/authenticationcrossplay"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// DefaultBuildName is the strReturnMsg of Login responses when Server.BuildName is
// empty. Real servers send their build (authentication.md lists some); clients
// only display it.
const DefaultBuildName = "branch:origin/project/gamewire build:3_5_0_0_0"

// Server is the ticket-granting service, an rmc.Handler for protocol 10 on the
// generated dispatchers of its three forms (ServeRMC). Register it with
// mux.HandleProtocol(rmc.ProtocolTicketGranting, srv). Its fields configure it;
// zero values take the defaults written beside them, except Accounts, which is
// required.
type Server struct {
	// Accounts holds the users and the special accounts; the target (the secure
	// server's account, SecurePID) must exist in it.
	Accounts Accounts
	// SecureURL is where the secure server is (m_urlRegularProtocols). When the
	// secure server shares the authentication server's address, NEX 4 servers
	// send 0.0.0.1 port 1 instead. Its PID parameter should be SecurePID.
	SecureURL types.StationURL
	// SecureURLFor, when set, chooses the secure server per login instead of
	// SecureURL: a game run by several secure nodes hands each player the
	// least-loaded live one (nex/nodes). An error refuses the login with
	// RendezVous::MaxConnectionsReached (no node can take the player) and is
	// logged.
	SecureURLFor func(ctx context.Context, a Account) (types.StationURL, error)
	// SecurePID is the account of the secure server, the target of tickets;
	// default 2 (Quazal Rendez-Vous).
	SecurePID types.PID
	// LoginTarget is the target of tickets handed out by Login and LoginEx;
	// default SecurePID. Some servers name another principal there, and clients
	// then fetch a ticket for the secure server with RequestTicket.
	LoginTarget types.PID
	// BuildName is sent as strReturnMsg; default DefaultBuildName.
	BuildName string
	// Kerberos selects the session key size and the internal ticket format; the
	// PID size always follows the connection's settings.
	Kerberos kerberos.Settings
	// Derivation is how passwords became keys; default DeriveNEX.
	Derivation KeyDerivation
	// Options are the protocol revisions spoken (NEX 4, crossplay).
	Options Options
	// RequireExtraData refuses Login and LoginEx without a valid
	// AuthenticationInfo with Authentication::ValidationFailed, as NEX 2 and
	// NEX 4+ servers do. Default off (NEX 1 and 3 behaviour).
	RequireExtraData bool
	// ValidateToken, when set, authenticates LoginEx and
	// ValidateAndRequestTicketWithParam by the token of their AuthenticationInfo
	// instead of a password ("Token Authentication" in kerberos.md, what Switch
	// servers do for normal users): it returns the account the token belongs to,
	// or an error to refuse the login with Authentication::ValidationFailed. The
	// ticket is then sealed with a fresh random key sent back as pSourceKey (hex),
	// so the client needs no password. pSourceKey exists from NEX 4 on
	// (Authentication_NX), so this applies only to connections answered in that
	// form (Options.NEX4 or Crossplay, or a NEX 4+ connection). Requests without
	// AuthenticationInfo use the password keys as usual.
	ValidateToken func(ctx context.Context, user string, info AuthenticationInfo) (Account, error)
	// CheckToken, when set, decides every password login (Login, LoginEx,
	// ValidateAndRequestTicketWithParam) by its token once the account is
	// found: info is the AuthenticationInfo sent, nil when none was (Login,
	// NullData, or extra data of another class). A non-nil error refuses the
	// login with the types.Result it wraps (Authentication::ValidationFailed
	// when it wraps none): Authentication::TokenExpired,
	// PrincipalIdUnmatched, RendezVous::AccountDisabled
	// (nex/credentials.Checker decides them).
	CheckToken func(ctx context.Context, a Account, info *AuthenticationInfo) error
	// Maintenance answers every login with Authentication::UnderMaintenance.
	Maintenance bool
	// Now returns the current time (ticket issue time, server time); default time.Now.
	Now func() time.Time
	// Rand is the source of session keys; default crypto/rand.
	Rand io.Reader
	// Logger receives one record per login (name, PID, result). Passwords never
	// reach this package; tickets and keys are never logged.
	Logger *slog.Logger
}

func (s *Server) securePID() types.PID {
	if s.SecurePID == 0 {
		return PIDQuazalRendezVous
	}
	return s.SecurePID
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) kerberosSettings(ts types.Settings) kerberos.Settings {
	k := s.Kerberos
	k.PIDSize = ts.PIDSize
	return k
}

// ServeRMC implements rmc.Handler for protocol 10: it answers in the form of
// Ticket Granting the connection speaks (Options.shape: Authentication,
// Authentication_NX or Authentication_Crossplay) through that form's
// generated dispatcher, whose handler is the Server (handlers.go). Parameters
// that do not decode are Core::InvalidArgument with the decoding error kept
// for the log; Login's and LoginEx's refusals go in %retval%.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	form := s.Options.shape(c.Peer.Settings)
	if c.Method == MethodLoginEx {
		c = loginExCall(c)
	}
	switch form {
	case shapeCrossplay:
		return crossproto.ServeAuthenticationCrossplay(crossplayHandler{nxHandler{s}}, ctx, c, out)
	case shapeNX:
		return authproto.ServeAuthenticationNX(nxHandler{s}, ctx, c, out)
	}
	if c.Method == MethodLoginWithContext {
		// LoginWithContext's loginData is undocumented: refused plainly,
		// before its parameters are read.
		return out, types.CoreNotImplemented
	}
	return authproto.ServeAuthentication(handler{s}, ctx, c, out)
}

// loginExCall returns c, or, when LoginEx's AuthenticationInfo is not in the
// layout of the connection's NEX version but in the other one (NEX 2's without
// token_type and server_version, or NEX 3's with them), a copy of c whose
// peer's settings have that other version, so that the generated dispatcher
// reads it so: a login comes before the server knows much of its client
// (docs/nex.md "One protocol id, several shapes"). The holder's data must
// decode to its end in the layout (ParseAuthenticationInfo's rule): the
// generated AnyData reader would skip NEX 3's fields at NEX 2. The response is
// then written at that version too; both are below NEX 3.5 for a client
// without structure headers, where RVConnectionData is the same.
func loginExCall(c *rmc.Call) *rmc.Call {
	st := c.Peer.Settings
	r := c.Reader()
	r.String("username")
	h := r.AnyDataHolder("extra_data")
	if r.Done() != nil || h.TypeName != AuthenticationInfoName {
		return c
	}
	if _, err := parseAuthenticationInfo(h.Data, st); err == nil {
		return c
	}
	other := otherInfoLayout(st)
	if _, err := parseAuthenticationInfo(h.Data, other); err != nil {
		return c
	}
	peer := *c.Peer
	peer.Settings = other
	c2 := *c
	c2.Peer = &peer
	return &c2
}

// issue seals a ticket from source to target with sourceKey, or with the source's
// password key when sourceKey is nil.
func (s *Server) issue(ctx context.Context, c *rmc.Call, source Account, sourceKey []byte, target types.PID) ([]byte, error) {
	if sourceKey == nil {
		sourceKey = source.Key(s.Derivation)
	}
	t, err := s.Accounts.AccountByPID(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("ticket target PID %d: %w", target, err)
	}
	sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{
		SourcePID: uint64(source.PID), TargetPID: uint64(target),
		SourceKey: sourceKey, TargetKey: t.Key(s.Derivation),
		Issued: s.now(),
	}, s.kerberosSettings(c.Peer.Settings), s.Rand)
	return sealed, err
}

// randomKey draws the source key of a token login.
func (s *Server) randomKey() ([]byte, error) {
	rnd := s.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	key := make([]byte, 16)
	if _, err := io.ReadFull(rnd, key); err != nil {
		return nil, fmt.Errorf("nex/auth: source key: %w", err)
	}
	return key, nil
}

// connectionData is where the secure server is. Its revision 1 (the server's
// time) is NEX 3.5's (NintendoClients' authentication.proto): the generated
// writer gives a connection whose NEX version is older (types.Settings.Version,
// serve --nex-version) revision 0, as its clients expect, and the time is left
// out of the value too.
func (s *Server) connectionData(url types.StationURL, st types.Settings) RVConnectionData {
	d := RVConnectionData{MainStation: url}
	if st.NEXVersion() >= types.Version3_5 {
		d.ServerTime = types.DateTimeFromTime(s.now())
	}
	return d
}

// secureURL is where account a is sent: SecureURLFor's choice, or SecureURL. ok
// is false when no secure node can take the player (logged).
func (s *Server) secureURL(ctx context.Context, a Account) (url types.StationURL, ok bool) {
	if s.SecureURLFor == nil {
		return s.SecureURL, true
	}
	url, err := s.SecureURLFor(ctx, a)
	if err != nil {
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex login: no secure node", slog.Uint64("pid", uint64(a.PID)), slog.String("error", err.Error()))
		}
		return url, false
	}
	return url, true
}

func (s *Server) buildName() string {
	if s.BuildName == "" {
		return DefaultBuildName
	}
	return s.BuildName
}

// refusal is the result a token check's error refuses a login with: the
// types.Result it wraps, else Authentication::ValidationFailed.
func refusal(err error) types.Result {
	var r types.Result
	if errors.As(err, &r) && r.IsError() {
		return r
	}
	return types.AuthenticationValidationFailed
}

// checkToken runs CheckToken on a password login; it returns the refusal, or
// success.
func (s *Server) checkToken(ctx context.Context, a Account, info *AuthenticationInfo) types.Result {
	if s.CheckToken == nil {
		return types.ResultSuccess
	}
	err := s.CheckToken(ctx, a, info)
	if err == nil {
		return types.ResultSuccess
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex token refused", slog.Uint64("pid", uint64(a.PID)), slog.String("error", err.Error()))
	}
	return refusal(err)
}

// login answers Login and LoginEx. Failures go in %retval% with the other fields
// empty, as authentication.md describes; the RMC call itself succeeds. info is
// the AuthenticationInfo sent (nil when none); tokenLogin authenticates by it
// alone (ValidateToken).
func (s *Server) login(ctx context.Context, c *rmc.Call, name string, res types.Result, info *AuthenticationInfo, tokenLogin bool) (LoginResponse, error) {
	if s.Maintenance {
		res = types.AuthenticationUnderMaintenance
	}
	var resp LoginResponse
	if res.IsSuccess() && tokenLogin {
		a, err := s.ValidateToken(ctx, name, *info)
		if err != nil {
			res = refusal(err)
			if s.Logger != nil {
				s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex token refused", slog.String("user", name), slog.String("error", err.Error()))
			}
		} else {
			key, err := s.randomKey()
			if err != nil {
				return LoginResponse{}, err
			}
			if url, ok := s.secureURL(ctx, a); !ok {
				res = types.RendezVousMaxConnectionsReached
			} else {
				ticket, err := s.issue(ctx, c, a, key, s.loginTarget())
				if err != nil {
					return LoginResponse{}, err
				}
				resp = LoginResponse{Result: res, PID: a.PID, Ticket: ticket, Connection: s.connectionData(url, c.Peer.Settings),
					BuildName: s.buildName(), SourceKey: hex.EncodeToString(key)}
			}
		}
	} else if res.IsSuccess() {
		a, err := s.Accounts.AccountByName(ctx, name)
		switch {
		case errors.Is(err, ErrNoAccount):
			res = types.RendezVousInvalidUsername
		case err != nil:
			return LoginResponse{}, err
		default:
			if res = s.checkToken(ctx, a, info); res.IsError() {
				break
			}
			url, ok := s.secureURL(ctx, a)
			if !ok {
				res = types.RendezVousMaxConnectionsReached
				break
			}
			ticket, err := s.issue(ctx, c, a, nil, s.loginTarget())
			if err != nil {
				return LoginResponse{}, err
			}
			resp = LoginResponse{Result: res, PID: a.PID, Ticket: ticket, Connection: s.connectionData(url, c.Peer.Settings), BuildName: s.buildName()}
		}
	}
	resp.Result = res
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex login", slog.String("user", name),
			slog.Uint64("pid", uint64(resp.PID)), slog.String("result", res.String()),
			slog.String("from", c.Peer.Addr.String()))
	}
	return resp, nil
}

// loginTarget is the target of Login's and LoginEx's tickets.
func (s *Server) loginTarget() types.PID {
	if s.LoginTarget != 0 {
		return s.LoginTarget
	}
	return s.securePID()
}

// loginEx answers LoginEx (ValidateAndRequestTicketWithCustomData): Login with
// the AuthenticationInfo extra, which RequireExtraData demands; nx (the
// Authentication_NX form, NEX 4) lets ValidateToken authenticate by it.
func (s *Server) loginEx(ctx context.Context, c *rmc.Call, name string, extra types.AnyData, nx bool) (LoginResponse, error) {
	res := types.ResultSuccess
	info, err := authenticationInfo(extra, c.Peer.Settings)
	if err != nil && s.RequireExtraData {
		res = types.AuthenticationValidationFailed
	}
	var sent *AuthenticationInfo
	if err == nil {
		sent = &info
	}
	return s.login(ctx, c, name, res, sent, sent != nil && s.ValidateToken != nil && nx)
}

// requestTicket answers RequestTicket: a ticket for an existing source to an
// existing target, or Core::AccessDenied with an empty ticket.
func (s *Server) requestTicket(ctx context.Context, c *rmc.Call, source, target types.PID) (TicketResponse, error) {
	resp := TicketResponse{Result: types.CoreAccessDenied}
	src, err := s.Accounts.AccountByPID(ctx, source)
	if err != nil && !errors.Is(err, ErrNoAccount) {
		return TicketResponse{}, err
	}
	if err == nil {
		if _, terr := s.Accounts.AccountByPID(ctx, target); terr == nil {
			ticket, err := s.issue(ctx, c, src, nil, target)
			if err != nil {
				return TicketResponse{}, err
			}
			resp = TicketResponse{Result: types.ResultSuccess, Ticket: ticket}
		} else if !errors.Is(terr, ErrNoAccount) {
			return TicketResponse{}, terr
		}
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex ticket request", slog.Uint64("source", uint64(source)),
			slog.Uint64("target", uint64(target)), slog.String("result", resp.Result.String()))
	}
	return resp, nil
}

// validateWithParam answers ValidateAndRequestTicketWithParam (in the crossplay
// form; Authentication_NX's handler drops the platform fields). That method has
// no %retval%, so failures are RMC errors.
func (s *Server) validateWithParam(ctx context.Context, c *rmc.Call, p *ValidateParam) (ValidateResult, error) {
	if s.Maintenance {
		return ValidateResult{}, types.AuthenticationUnderMaintenance
	}
	info, infoErr := authenticationInfo(p.Data, c.Peer.Settings)
	if s.RequireExtraData && p.Data.ClassName() != "NullData" && infoErr != nil {
		return ValidateResult{}, fmt.Errorf("%w: %w", types.AuthenticationValidationFailed, infoErr)
	}
	var a Account
	var key []byte
	var err error
	if s.ValidateToken != nil && infoErr == nil {
		if a, err = s.ValidateToken(ctx, p.Username, info); err != nil {
			if s.Logger != nil {
				s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex token refused", slog.String("user", p.Username), slog.String("error", err.Error()))
			}
			return ValidateResult{}, fmt.Errorf("%w: %w", refusal(err), err)
		}
		if key, err = s.randomKey(); err != nil {
			return ValidateResult{}, err
		}
	} else {
		a, err = s.Accounts.AccountByName(ctx, p.Username)
		if errors.Is(err, ErrNoAccount) {
			return ValidateResult{}, types.RendezVousInvalidUsername
		} else if err != nil {
			return ValidateResult{}, err
		}
		var sent *AuthenticationInfo
		if infoErr == nil {
			sent = &info
		}
		if res := s.checkToken(ctx, a, sent); res.IsError() {
			return ValidateResult{}, res
		}
	}
	url, ok := s.secureURL(ctx, a)
	if !ok {
		return ValidateResult{}, types.RendezVousMaxConnectionsReached
	}
	ticket, err := s.issue(ctx, c, a, key, s.securePID())
	if err != nil {
		return ValidateResult{}, err
	}
	return ValidateResult{PID: a.PID, Ticket: ticket, ServerURL: url, ServerTime: types.DateTimeFromTime(s.now()),
		ServerName: s.buildName(), SourceKey: hex.EncodeToString(key), PlatformPID: a.PID}, nil
}
