// Package nnas is the subset of the Wii U account server (NNAS,
// account.nintendo.net/v1/api) a NEX game needs: OAuth access tokens from an
// NNID and its password hash, the profile, the NEX token for a game server
// (host, port, PID, NEX password, token), service tokens, the NNID/PID
// lookups, Miis, and account creation when the operator allows it. Requests
// and answers are as nintendo-wiki "NNID Server"
// (github.com/PretendoNetwork/nintendo-wiki docs/wiiu/account.md) and
// NintendoClients nintendo/nnas.py (github.com/kinnay/NintendoClients)
// describe them; what Pretendo's account server answers
// (github.com/PretendoNetwork/account, facts only) settled the rest.
//
// NNIDs, verifiers of their passwords and their NEX passwords live in a
// credentials.Store; access and refresh tokens are stateless, authenticated
// with the store's token secret (credentials.Keys).
package nnas

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
)

// Client credentials the Wii U's system sends (X-Nintendo-Client-ID /
// -Secret; nintendo-wiki "NNID Server").
const (
	WiiUClientID     = "a2efa818a34fa16b8afbc8a74eba3eda"
	WiiUClientSecret = "c91cdb5658bd4954ade78533a339cf9a"
)

// Limits of what a client can make the server read.
const (
	// MaxFormBody bounds the access token request (a few short fields).
	MaxFormBody = 4 << 10
	// MaxXMLBody bounds an account creation request (a person with a Mii).
	MaxXMLBody = 64 << 10
	// MaxLookups bounds the ids of one mapped_ids or miis request.
	MaxLookups = 100
)

// Server answers NNAS requests. Its exported fields configure it before the
// first request.
type Server struct {
	Store credentials.Store
	Keys  *credentials.Keys
	// NEXServerFor returns the NEX server of a game server id, false when this
	// deployment runs none (error 1021).
	NEXServerFor func(ctx context.Context, gameServerID uint32) (credentials.NEXServer, bool)
	// Clients are the accepted X-Nintendo-Client-ID / -Secret pairs; default
	// the Wii U's.
	Clients map[string]string
	// AllowRegistration lets consoles create NNIDs (POST people).
	AllowRegistration bool
	// Now is the clock; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Handler returns the routes under /v1/api/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/api/oauth20/access_token/generate", s.accessToken)
	mux.HandleFunc("GET /v1/api/people/@me/profile", s.bearer(s.profile))
	mux.HandleFunc("GET /v1/api/provider/nex_token/@me", s.bearer(s.nexToken))
	mux.HandleFunc("GET /v1/api/provider/service_token/@me", s.bearer(s.serviceToken))
	mux.HandleFunc("GET /v1/api/admin/mapped_ids", s.mappedIDs)
	mux.HandleFunc("GET /v1/api/admin/time", func(w http.ResponseWriter, r *http.Request) { s.header(w); w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/api/miis", s.miis)
	mux.HandleFunc("POST /v1/api/people", s.createPerson)
	mux.HandleFunc("/v1/api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, Error{Code: "0008", Message: "Not Found"}, nil)
	})
	return mux
}

// Error is one NNAS error (the <error> of an <errors> body).
type Error struct {
	Cause   string `xml:"cause"`
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

// Errors used (codes from nintendo-wiki "NNID Server").
var (
	errBadFormat    = Error{Code: "0002", Message: "Invalid parameter in request"}
	errBadClient    = Error{Cause: "client_id", Code: "0004", Message: "API application invalid or incorrect application credentials"}
	errBadGrant     = Error{Cause: "grant_type", Code: "0004", Message: "Invalid Grant Type"}
	errBadToken     = Error{Cause: "access_token", Code: "0005", Message: "Invalid access token"}
	errTokenExpired = Error{Cause: "access_token", Code: "0006", Message: "Access token expired"}
	errForbidden    = Error{Code: "0007", Message: "Forbidden request"}
	errBadLogin     = Error{Code: "0106", Message: "Invalid account ID or password"}
	errBanned       = Error{Code: "0108", Message: "Account has been banned"}
	errNoGame       = Error{Code: "0118", Message: "Unique ID and Game Server ID are not linked"}
	errExists       = Error{Cause: "user_id", Code: "0100", Message: "Account ID already exists"}
	errBadGameID    = Error{Code: "1021", Message: "The requested game server was not found"}
	errInternal     = Error{Code: "2001", Message: "Internal server error"}
)

func (s *Server) header(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("X-Nintendo-Date", strconv.FormatInt(s.now().UnixMilli(), 10))
	h.Set("Server", "Nintendo 3DS (http)")
}

// fail answers an error body; err (the cause on the server side) is logged.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, e Error, err error) {
	if s.Logger != nil {
		attrs := []slog.Attr{slog.String("path", r.URL.Path), slog.String("code", e.Code), slog.String("from", r.RemoteAddr)}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		s.Logger.LogAttrs(r.Context(), slog.LevelInfo, "nnas refused", attrs...)
	}
	s.header(w)
	w.WriteHeader(status)
	b, _ := xml.Marshal(struct {
		XMLName xml.Name `xml:"errors"`
		Error   Error    `xml:"error"`
	}{Error: e})
	w.Write(b)
}

func (s *Server) reply(w http.ResponseWriter, v any) {
	b, err := xml.Marshal(v)
	s.header(w)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Write(b)
}

// client checks the client id and secret headers.
func (s *Server) client(r *http.Request) bool {
	clients := s.Clients
	if clients == nil {
		clients = map[string]string{WiiUClientID: WiiUClientSecret}
	}
	secret, ok := clients[r.Header.Get("X-Nintendo-Client-ID")]
	return ok && secret == r.Header.Get("X-Nintendo-Client-Secret")
}

// TokenRequest is an access token request's form.
type TokenRequest struct {
	GrantType    string // password or refresh_token
	UserID       string
	Password     string
	PasswordHash bool // password_type=hash
	RefreshToken string
}

// ParseTokenRequest reads the form of oauth20/access_token/generate.
func ParseTokenRequest(body string) (TokenRequest, error) {
	if len(body) > MaxFormBody {
		return TokenRequest{}, fmt.Errorf("nnas: form of %d bytes, at most %d", len(body), MaxFormBody)
	}
	f, err := url.ParseQuery(body)
	if err != nil {
		return TokenRequest{}, fmt.Errorf("nnas: form: %w", err)
	}
	t := TokenRequest{GrantType: f.Get("grant_type"), UserID: f.Get("user_id"), Password: f.Get("password"),
		PasswordHash: f.Get("password_type") == "hash", RefreshToken: f.Get("refresh_token")}
	switch t.GrantType {
	case "password":
		if t.UserID == "" || t.Password == "" {
			return t, errors.New("nnas: grant_type password without user_id or password")
		}
		if len(t.UserID) > 32 || len(t.Password) > 256 {
			return t, errors.New("nnas: user_id or password too long")
		}
	case "refresh_token":
		if t.RefreshToken == "" {
			return t, errors.New("nnas: grant_type refresh_token without refresh_token")
		}
	default:
		return t, fmt.Errorf("nnas: grant_type %q", t.GrantType)
	}
	return t, nil
}

func readBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("body over %d bytes", limit)
	}
	return b, nil
}

type oauthXML struct {
	XMLName     xml.Name `xml:"OAuth20"`
	AccessToken struct {
		Token        string `xml:"token"`
		RefreshToken string `xml:"refresh_token"`
		ExpiresIn    int    `xml:"expires_in"`
	} `xml:"access_token"`
}

func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	if !s.client(r) {
		s.fail(w, r, http.StatusBadRequest, errBadClient, nil)
		return
	}
	body, err := readBody(r, MaxFormBody)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, errBadFormat, err)
		return
	}
	req, err := ParseTokenRequest(string(body))
	if err != nil {
		e := errBadFormat
		if req.GrantType != "password" && req.GrantType != "refresh_token" {
			e = errBadGrant
		}
		s.fail(w, r, http.StatusBadRequest, e, err)
		return
	}
	ctx := r.Context()
	now := s.now()
	var n credentials.NNID
	if req.GrantType == "refresh_token" {
		t, err := s.Keys.OpenOAuth(req.RefreshToken, credentials.TypeRefresh, now)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, errBadLogin, err)
			return
		}
		if n, _, err = s.Store.NNIDByPID(ctx, t.PID); err != nil {
			s.fail(w, r, http.StatusBadRequest, errBadLogin, err)
			return
		}
	} else {
		var v credentials.Verifier
		n, v, err = s.Store.NNIDByUserID(ctx, req.UserID)
		if errors.Is(err, credentials.ErrNoNNID) {
			s.fail(w, r, http.StatusBadRequest, errBadLogin, err)
			return
		} else if err != nil {
			s.fail(w, r, http.StatusInternalServerError, errInternal, err)
			return
		}
		hash := req.Password
		if !req.PasswordHash {
			hash = credentials.PasswordHash(n.PID, req.Password)
		}
		if !v.Check(hash) {
			s.fail(w, r, http.StatusBadRequest, errBadLogin, fmt.Errorf("wrong password for %q", n.UserID))
			return
		}
	}
	if n.AccessLevel < 0 {
		s.fail(w, r, http.StatusBadRequest, errBanned, nil)
		return
	}
	var out oauthXML
	out.AccessToken.Token = s.Keys.SealOAuth(credentials.OAuthToken{Type: credentials.TypeAccess, PID: n.PID, Expires: now.Add(credentials.AccessTokenExpiry)})
	out.AccessToken.RefreshToken = s.Keys.SealOAuth(credentials.OAuthToken{Type: credentials.TypeRefresh, PID: n.PID, Expires: now.Add(credentials.RefreshTokenExpiry)})
	out.AccessToken.ExpiresIn = int(credentials.AccessTokenExpiry / time.Second)
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nnas access token", slog.String("nnid", n.UserID), slog.Uint64("pid", uint64(n.PID)),
			slog.String("grant", req.GrantType), slog.String("from", r.RemoteAddr))
	}
	s.reply(w, out)
}

// bearer authenticates a call by its access token and hands on the NNID.
func (s *Server) bearer(next func(w http.ResponseWriter, r *http.Request, n credentials.NNID)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			s.fail(w, r, http.StatusUnauthorized, errBadToken, errors.New("no bearer token"))
			return
		}
		t, err := s.Keys.OpenOAuth(strings.TrimSpace(tok), credentials.TypeAccess, s.now())
		if errors.Is(err, credentials.ErrExpired) {
			s.fail(w, r, http.StatusUnauthorized, errTokenExpired, err)
			return
		} else if err != nil {
			s.fail(w, r, http.StatusUnauthorized, errBadToken, err)
			return
		}
		n, _, err := s.Store.NNIDByPID(r.Context(), t.PID)
		if err != nil {
			s.fail(w, r, http.StatusUnauthorized, errBadToken, err)
			return
		}
		if n.AccessLevel < 0 {
			s.fail(w, r, http.StatusForbidden, errBanned, nil)
			return
		}
		next(w, r, n)
	}
}

// titleID reads X-Nintendo-Title-ID (hex, any case); 0 when absent or bad.
func titleID(r *http.Request) uint64 {
	v, _ := strconv.ParseUint(r.Header.Get("X-Nintendo-Title-ID"), 16, 64)
	return v
}

type nexTokenXML struct {
	XMLName     xml.Name `xml:"nex_token"`
	Host        string   `xml:"host"`
	NEXPassword string   `xml:"nex_password"`
	PID         uint64   `xml:"pid"`
	Port        int      `xml:"port"`
	Token       string   `xml:"token"`
}

func (s *Server) nexToken(w http.ResponseWriter, r *http.Request, n credentials.NNID) {
	raw := r.URL.Query().Get("game_server_id")
	if raw == "" {
		s.fail(w, r, http.StatusBadRequest, errNoGame, nil)
		return
	}
	gsid, err := strconv.ParseUint(raw, 16, 32)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, errBadGameID, err)
		return
	}
	srv, ok := s.NEXServerFor(r.Context(), uint32(gsid))
	if !ok {
		s.fail(w, r, http.StatusBadRequest, errBadGameID, fmt.Errorf("no NEX server for game server id %08X", gsid))
		return
	}
	tok := s.Keys.Seal(credentials.Token{Type: credentials.TypeNEX, System: credentials.SystemWiiU, AccessLevel: n.AccessLevel,
		PID: n.PID, Expires: s.now().Add(time.Hour), TitleID: titleID(r), GameServerID: uint32(gsid)})
	if s.Logger != nil {
		s.Logger.LogAttrs(r.Context(), slog.LevelInfo, "nnas nex token", slog.Uint64("pid", uint64(n.PID)),
			slog.String("game_server_id", fmt.Sprintf("%08X", gsid)), slog.String("nex", fmt.Sprintf("%s:%d", srv.Host, srv.Port)))
	}
	s.reply(w, nexTokenXML{Host: srv.Host, NEXPassword: n.NEXPassword, PID: uint64(n.PID), Port: srv.Port,
		Token: base64.StdEncoding.EncodeToString(tok)})
}

func (s *Server) serviceToken(w http.ResponseWriter, r *http.Request, n credentials.NNID) {
	if len(r.URL.Query().Get("client_id")) != 32 {
		s.fail(w, r, http.StatusBadRequest, errBadFormat, errors.New("client_id is not 32 hex digits"))
		return
	}
	tok := s.Keys.Seal(credentials.Token{Type: credentials.TypeService, System: credentials.SystemWiiU, AccessLevel: n.AccessLevel,
		PID: n.PID, Expires: s.now().Add(time.Hour), TitleID: titleID(r)})
	s.reply(w, struct {
		XMLName xml.Name `xml:"service_token"`
		Token   string   `xml:"token"`
	}{Token: base64.StdEncoding.EncodeToString(tok)})
}

// ids splits a comma-separated list of at most MaxLookups ids.
func ids(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("no ids")
	}
	out := strings.Split(s, ",")
	if len(out) > MaxLookups {
		return nil, fmt.Errorf("%d ids, at most %d", len(out), MaxLookups)
	}
	return out, nil
}

func (s *Server) mappedIDs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in, out := q.Get("input_type"), q.Get("output_type")
	list, err := ids(q.Get("input"))
	if err != nil || !(in == "pid" && out == "user_id" || in == "user_id" && out == "pid") {
		s.fail(w, r, http.StatusBadRequest, errBadFormat, err)
		return
	}
	type mapped struct {
		In  string `xml:"in_id"`
		Out string `xml:"out_id"`
	}
	var res struct {
		XMLName xml.Name `xml:"mapped_ids"`
		IDs     []mapped `xml:"mapped_id"`
	}
	for _, id := range list {
		m := mapped{In: id}
		var n credentials.NNID
		var err error
		if in == "pid" {
			pid, perr := strconv.ParseUint(id, 10, 32)
			err = perr
			if err == nil {
				n, _, err = s.Store.NNIDByPID(r.Context(), types.PID(pid))
			}
		} else {
			n, _, err = s.Store.NNIDByUserID(r.Context(), id)
		}
		if err == nil {
			if in == "pid" {
				m.Out = n.UserID
			} else {
				m.Out = strconv.FormatUint(uint64(n.PID), 10)
			}
		}
		res.IDs = append(res.IDs, m)
	}
	s.reply(w, res)
}

type miiImage struct {
	CachedURL string `xml:"cached_url"`
	ID        uint64 `xml:"id"`
	URL       string `xml:"url"`
	Type      string `xml:"type"`
}

// miiImages is always written, empty or not (NintendoClients reads it).
type miiImages struct {
	Image []miiImage `xml:"image"`
}

type miiXML struct {
	Data    string    `xml:"data"`
	ID      uint64    `xml:"id"`
	Name    string    `xml:"name"`
	Images  miiImages `xml:"images"`
	Primary string    `xml:"primary"`
	PID     uint64    `xml:"pid"`
	UserID  string    `xml:"user_id"`
}

func (s *Server) miis(w http.ResponseWriter, r *http.Request) {
	list, err := ids(r.URL.Query().Get("pids"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, errBadFormat, err)
		return
	}
	var res struct {
		XMLName xml.Name `xml:"miis"`
		Miis    []miiXML `xml:"mii"`
	}
	for _, id := range list {
		pid, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, errBadFormat, err)
			return
		}
		n, _, err := s.Store.NNIDByPID(r.Context(), types.PID(pid))
		if err != nil {
			continue
		}
		res.Miis = append(res.Miis, miiXML{Data: base64.StdEncoding.EncodeToString(n.MiiData), ID: uint64(n.PID), Name: n.MiiName,
			Primary: "Y", PID: uint64(n.PID), UserID: n.UserID})
	}
	s.reply(w, res)
}
