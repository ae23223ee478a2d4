// Package hpp serves NEX over HTTP (HPP), as Pokémon Rumble World and Super
// Smash Bros. for Wii U call some of their protocols: a client POSTs one
// packed RMC request as the multipart form file "file" to /hpp/, with its PID
// and two signatures in headers, and gets the RMC response as the body. The
// calls go to the same handlers (an rmc.Mux) the PRUDP secure server
// dispatches to.
//
// The format is NintendoClients' HppClient (nintendo/nex/hpp.py,
// https://github.com/kinnay/NintendoClients, MIT), read as facts: headers
// pid, version, token, signature1 (HMAC-MD5 of the request under the game's
// access key, its hex digits as bytes padded to 8 with zeros) and signature2
// (HMAC-MD5 under the account's password key, derived with 65000 +
// pid%1024 MD5 rounds as for Kerberos), both upper-case hex; the response is
// a packed RMC response without the protocol id (size, success, then the
// call id and method, or the error code and call id).
package hpp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Path is where HPP requests are posted.
const Path = "/hpp/"

// DefaultMaxRequestBytes bounds a request body (the multipart form); HPP
// calls are small (a request is one RMC message).
const DefaultMaxRequestBytes = 64 << 10

// Handler answers HPP requests with Handler's RMC handlers.
type Handler struct {
	// RMC answers the calls (the secure server's Mux); required.
	RMC rmc.Handler
	// Accounts gives a PID's password key (signature2); required.
	Accounts auth.Accounts
	// AccessKey is the game's access key (signature1), as its hex digits
	// ("9f2b4678"); required.
	AccessKey string
	// Settings are the calls' encoding settings (PID size, structure
	// headers, NEX version), as the game's PRUDP connections have them.
	Settings types.Settings
	// MaxRequestBytes bounds a request body; default DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// Logger receives failed requests and handler failures.
	Logger *slog.Logger
	// Ready, when set, holds requests until it is closed (nex.Server.Ready:
	// every service registered on RMC); a request whose context ends first
	// is answered 503 Service Unavailable.
	Ready <-chan struct{}
}

// Errors a request is refused with (HTTP 400 or 401, the error's text as the
// body).
var (
	ErrBadRequest   = errors.New("hpp: bad request")
	ErrUnauthorized = errors.New("hpp: bad signature")
)

// Sign returns the signature of an RMC message under key: HMAC-MD5 in
// upper-case hex.
func Sign(key, msg []byte) string {
	m := hmac.New(md5.New, key)
	m.Write(msg)
	return strings.ToUpper(hex.EncodeToString(m.Sum(nil)))
}

// AccessKeyBytes is the signature1 key of an access key: its hex digits
// decoded ("9f2b4678" is 4 bytes) and padded to 8 bytes with zeros.
func AccessKeyBytes(accessKey string) ([]byte, error) {
	b, err := hex.DecodeString(accessKey)
	if err != nil {
		return nil, fmt.Errorf("hpp: access key %q is not hex: %w", accessKey, err)
	}
	if len(b) < 8 {
		b = append(b, make([]byte, 8-len(b))...)
	}
	return b, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Ready != nil {
		select {
		case <-h.Ready:
		case <-r.Context().Done():
			http.Error(w, "hpp: the server is still starting", http.StatusServiceUnavailable)
			return
		}
	}
	resp, status, err := h.serve(r)
	if err != nil {
		if h.Logger != nil {
			h.Logger.LogAttrs(r.Context(), slog.LevelInfo, "hpp: request refused", slog.String("remote", r.RemoteAddr), slog.String("error", err.Error()))
		}
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(resp)))
	_, _ = w.Write(resp)
}

func (h *Handler) serve(r *http.Request) ([]byte, int, error) {
	if r.Method != http.MethodPost {
		return nil, http.StatusMethodNotAllowed, fmt.Errorf("%w: method %s (want POST)", ErrBadRequest, r.Method)
	}
	limit := h.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	msg, err := readFile(http.MaxBytesReader(nil, r.Body, limit), r.Header.Get("Content-Type"), limit)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	pid, err := strconv.ParseUint(r.Header.Get("pid"), 10, 64)
	if err != nil || pid == 0 {
		return nil, http.StatusUnauthorized, fmt.Errorf("%w: header pid %q is not a PID", ErrUnauthorized, r.Header.Get("pid"))
	}
	key1, err := AccessKeyBytes(h.AccessKey)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	if !hmac.Equal([]byte(strings.ToUpper(r.Header.Get("signature1"))), []byte(Sign(key1, msg))) {
		return nil, http.StatusUnauthorized, fmt.Errorf("%w: signature1 does not match the game's access key", ErrUnauthorized)
	}
	acct, err := h.Accounts.AccountByPID(r.Context(), types.PID(pid))
	if err != nil {
		if errors.Is(err, auth.ErrNoAccount) {
			return nil, http.StatusUnauthorized, fmt.Errorf("%w: no account %d", ErrUnauthorized, pid)
		}
		return nil, http.StatusInternalServerError, fmt.Errorf("hpp: account %d: %w", pid, err)
	}
	if !hmac.Equal([]byte(strings.ToUpper(r.Header.Get("signature2"))), []byte(Sign(acct.Key(auth.DeriveNEX), msg))) {
		return nil, http.StatusUnauthorized, fmt.Errorf("%w: signature2 does not match account %d's password key", ErrUnauthorized, pid)
	}
	if !rmc.IsRequest(msg) {
		return nil, http.StatusBadRequest, fmt.Errorf("%w: the file is not an RMC request", ErrBadRequest)
	}
	peer := &rmc.Peer{PID: types.PID(pid), Settings: h.Settings, Scheme: "hpp"}
	out, err := rmc.Dispatch(r.Context(), h.RMC, peer, msg, nil, h.Logger)
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	resp, err := stripProtocol(out)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	return resp, http.StatusOK, nil
}

// readFile reads the form file "file" of a multipart body.
func readFile(body io.Reader, contentType string, limit int64) ([]byte, error) {
	ct, params, ok := strings.Cut(contentType, ";")
	if !ok || strings.TrimSpace(ct) != "multipart/form-data" {
		return nil, fmt.Errorf("%w: content type %q (want multipart/form-data with a boundary)", ErrBadRequest, contentType)
	}
	boundary := ""
	for _, p := range strings.Split(params, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && k == "boundary" {
			boundary = strings.Trim(v, `"`)
		}
	}
	if boundary == "" {
		return nil, fmt.Errorf("%w: multipart content type without a boundary", ErrBadRequest)
	}
	mr := multipart.NewReader(body, boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: no form file \"file\"", ErrBadRequest)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: multipart body: %w", ErrBadRequest, err)
		}
		if part.FormName() != "file" {
			continue
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, io.LimitReader(part, limit+1)); err != nil {
			return nil, fmt.Errorf("%w: form file: %w", ErrBadRequest, err)
		}
		return b.Bytes(), nil
	}
}

// stripProtocol turns a packed RMC response into HPP's: without the protocol
// id (1 byte, or 3 for an extended id), the size field counting the rest.
func stripProtocol(msg []byte) ([]byte, error) {
	if len(msg) < 5 {
		return nil, fmt.Errorf("hpp: response of %d bytes", len(msg))
	}
	n := 1
	if msg[4]&0x7F == 0x7F {
		n = 3
	}
	if len(msg) < 4+n {
		return nil, fmt.Errorf("hpp: response of %d bytes", len(msg))
	}
	out := make([]byte, 4, len(msg)-n)
	out = append(out, msg[4+n:]...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)-4))
	return out, nil
}

// Client calls a server's HPP endpoint; it is an rmc.Caller, so the
// generated protocol clients run over it.
type Client struct {
	// URL is the endpoint ("http://127.0.0.1:60002/hpp/").
	URL       string
	AccessKey string
	PID       types.PID
	// Key is the account's password key (auth.NewAccount's KeyNEX).
	Key   []byte
	Set   types.Settings
	HTTP  *http.Client
	calls uint32
}

var _ rmc.Caller = (*Client)(nil)

// Settings implements rmc.Caller.
func (c *Client) Settings() types.Settings { return c.Set }

// Call implements rmc.Caller: one POST per call.
func (c *Client) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	c.calls++
	req := rmc.Request{Protocol: protocol, CallID: c.calls, Method: method, Params: params}
	msg, err := req.Append(nil)
	if err != nil {
		return nil, err
	}
	key1, err := AccessKeyBytes(c.AccessKey)
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "file")
	fw.Write(msg)
	mw.Close()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, &body)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", mw.FormDataContentType())
	hr.Header.Set("pid", strconv.FormatUint(uint64(c.PID), 10))
	hr.Header.Set("token", "normaltoken")
	hr.Header.Set("signature1", Sign(key1, msg))
	hr.Header.Set("signature2", Sign(c.Key, msg))
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxRequestBytes<<4))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("hpp: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return parseResponse(b, req.CallID, method)
}

// parseResponse reads an HPP response: the results, or the error's Result.
func parseResponse(b []byte, callID, method uint32) ([]byte, error) {
	if len(b) < 5 || binary.LittleEndian.Uint32(b) != uint32(len(b)-4) {
		return nil, fmt.Errorf("%w: hpp response of %d bytes with a wrong size field", types.ErrTruncated, len(b))
	}
	if b[4] == 0 {
		if len(b) != 13 || binary.LittleEndian.Uint32(b[9:]) != callID {
			return nil, fmt.Errorf("hpp: malformed error response (%d bytes)", len(b))
		}
		return nil, types.Result(binary.LittleEndian.Uint32(b[5:]))
	}
	if len(b) < 13 || binary.LittleEndian.Uint32(b[5:]) != callID || binary.LittleEndian.Uint32(b[9:]) != method|0x8000 {
		return nil, fmt.Errorf("hpp: response does not answer call %d method %d", callID, method)
	}
	return b[13:], nil
}
