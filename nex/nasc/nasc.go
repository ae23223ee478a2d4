// Package nasc is the 3DS's NASC server (nasc.nintendowifi.net, POST /ac):
// LOGIN hands a game's NEX authentication server address (locator) and a
// token, SVCLOC a service token. Requests and answers are forms whose values
// are all in NASC base64 (nintendo-wiki "NASC",
// github.com/PretendoNetwork/nintendo-wiki docs/3ds/nasc.md; NintendoClients
// nintendo/nasc.py, github.com/kinnay/NintendoClients); what Pretendo's
// replacement answers (github.com/PretendoNetwork/account, facts only)
// settled the rest.
//
// NASC never hands out the NEX password: the 3DS made it when its account was
// created and keeps it, so the NEX account must exist with that password. A
// LOGIN with userid names an existing account; one with passwd instead (a
// console's first contact) creates the account when the operator allows
// self-registration.
package nasc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/types"
)

// Limits of a request.
const (
	// MaxBody bounds a request body (its largest field, fcdcert, is a few
	// hundred bytes).
	MaxBody = 16 << 10
	// MaxFields bounds the fields of a request.
	MaxFields = 64
)

// Return codes (returncd; nintendo-wiki "NASC").
const (
	CodeLoginOK         = "001"
	CodeSVCLOCOK        = "007"
	CodeNZCHKOK         = "009"
	CodeBadParameter    = "109"
	CodeGameUnavailable = "110"
	CodeBadSVC          = "112"
	CodeBadPIDHMAC      = "122"
	CodeBadGameID       = "125"
	// CodeRegistrationFailed is Pretendo's own (account registration failed):
	// a first contact (passwd) when self-registration is off.
	CodeRegistrationFailed = "151"
)

// Server answers POST /ac.
type Server struct {
	// Accounts finds the NEX accounts LOGIN names by userid.
	Accounts auth.Accounts
	// Register, when set, creates the NEX account of a first contact (passwd)
	// and returns its PID: self-registration. Nil refuses first contacts.
	Register func(ctx context.Context, password string) (types.PID, error)
	Keys     *credentials.Keys
	// NEXServerFor returns the NEX server of a game server id, false when this
	// deployment runs none (returncd 110).
	NEXServerFor func(ctx context.Context, gameServerID uint32) (credentials.NEXServer, bool)
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

// Handler returns the /ac route (also /ac/, the URL Nimbus patches in).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ac", s.serve)
	mux.HandleFunc("POST /ac/", s.serve)
	return mux
}

// Request is a decoded NASC request: every field's raw bytes.
type Request map[string]string

// ParseRequest reads a request body: a URL-encoded form of NASC base64
// values.
func ParseRequest(body []byte) (Request, error) {
	if len(body) > MaxBody {
		return nil, fmt.Errorf("nasc: body of %d bytes, at most %d", len(body), MaxBody)
	}
	if n := strings.Count(string(body), "&") + 1; n > MaxFields {
		return nil, fmt.Errorf("nasc: %d fields, at most %d", n, MaxFields)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("nasc: form: %w", err)
	}
	req := Request{}
	for k, vs := range form {
		b, err := credentials.ParseNintendoBase64(vs[0])
		if err != nil {
			return nil, fmt.Errorf("nasc: field %q: %w", k, err)
		}
		req[k] = string(b)
	}
	return req, nil
}

// Encode writes a response form: each value in NASC base64, URL-encoded,
// in the order given (key, value, key, value, ...).
func Encode(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(kv[i])
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(credentials.NintendoBase64([]byte(kv[i+1]))))
	}
	return b.String()
}

func (s *Server) write(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain;charset=ISO-8859-1")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, body)
}

// fail answers an error: retry 1, the code, the time (HTTP status 200).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, code string, err error) {
	if s.Logger != nil {
		attrs := []slog.Attr{slog.String("returncd", code), slog.String("from", r.RemoteAddr)}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		s.Logger.LogAttrs(r.Context(), slog.LevelInfo, "nasc refused", attrs...)
	}
	s.write(w, Encode("retry", "1", "returncd", code, "datetime", s.datetime()))
}

func (s *Server) datetime() string { return s.now().UTC().Format("20060102150405") }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		s.fail(w, r, CodeBadParameter, err)
		return
	}
	req, err := ParseRequest(body)
	if err != nil {
		s.fail(w, r, CodeBadParameter, err)
		return
	}
	for _, f := range []string{"action", "gameid", "titleid", "csnum", "macadr", "fcdcert"} {
		if req[f] == "" {
			s.fail(w, r, CodeBadParameter, fmt.Errorf("no %s", f))
			return
		}
	}
	gsid, err := strconv.ParseUint(req["gameid"], 16, 32)
	if err != nil {
		s.fail(w, r, CodeBadGameID, fmt.Errorf("gameid %q", req["gameid"]))
		return
	}
	title, err := strconv.ParseUint(req["titleid"], 16, 64)
	if err != nil {
		s.fail(w, r, CodeBadParameter, fmt.Errorf("titleid %q", req["titleid"]))
		return
	}
	action := strings.ToUpper(req["action"])
	if action == "NZCHK" {
		s.write(w, Encode("retry", "0", "returncd", CodeNZCHKOK, "datetime", s.datetime()))
		return
	}
	if action != "LOGIN" && action != "SVCLOC" {
		s.fail(w, r, CodeBadParameter, fmt.Errorf("action %q", req["action"]))
		return
	}
	ctx := r.Context()
	srv, ok := s.NEXServerFor(ctx, uint32(gsid))
	if !ok {
		s.fail(w, r, CodeGameUnavailable, fmt.Errorf("no NEX server for game server id %08X", gsid))
		return
	}
	pid, code, err := s.account(ctx, req)
	if err != nil {
		s.fail(w, r, code, err)
		return
	}
	tok := credentials.Token{System: credentials.System3DS, PID: pid, TitleID: title, GameServerID: uint32(gsid)}
	if action == "SVCLOC" {
		if svc := req["svc"]; svc != "0000" && svc != "9001" {
			s.fail(w, r, CodeBadSVC, fmt.Errorf("svc %q", svc))
			return
		}
		tok.Type, tok.Expires = credentials.TypeService, s.now().Add(time.Hour)
		s.write(w, Encode("retry", "0", "returncd", CodeSVCLOCOK, "servicetoken", string(s.Keys.Seal(tok)),
			"statusdata", "Y", "svchost", "n/a", "datetime", s.datetime()))
		return
	}
	tok.Type, tok.Expires = credentials.TypeNEX, s.now().Add(time.Hour)
	locator := fmt.Sprintf("%s:%d", srv.Host, srv.Port)
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nasc login", slog.Uint64("pid", uint64(pid)),
			slog.String("game_server_id", fmt.Sprintf("%08X", gsid)), slog.String("locator", locator), slog.String("from", r.RemoteAddr))
	}
	s.write(w, Encode("locator", locator, "retry", "0", "returncd", CodeLoginOK, "token", string(s.Keys.Seal(tok)),
		"datetime", s.datetime()))
}

// account is the NEX account a request names: userid (an existing account;
// uidhmac is not checked, as Pretendo does not: the NEX password still
// guards the login), or passwd (a first contact, registered when allowed).
func (s *Server) account(ctx context.Context, req Request) (types.PID, string, error) {
	if id := req["userid"]; id != "" {
		pid, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return 0, CodeBadParameter, fmt.Errorf("userid %q", id)
		}
		if _, err := s.Accounts.AccountByPID(ctx, types.PID(pid)); errors.Is(err, auth.ErrNoAccount) {
			return 0, CodeBadPIDHMAC, fmt.Errorf("no NEX account %d", pid)
		} else if err != nil {
			return 0, CodeGameUnavailable, err
		}
		return types.PID(pid), "", nil
	}
	pw := req["passwd"]
	if pw == "" {
		return 0, CodeBadParameter, errors.New("neither userid nor passwd")
	}
	if s.Register == nil {
		return 0, CodeRegistrationFailed, errors.New("first contact (passwd) and self-registration is off (serve --self-register)")
	}
	pid, err := s.Register(ctx, pw)
	if err != nil {
		return 0, CodeRegistrationFailed, err
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nasc account registered", slog.Uint64("pid", uint64(pid)))
	}
	return pid, "", nil
}
