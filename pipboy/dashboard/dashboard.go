// Package dashboard serves a live web page for a Pip-Boy app connection: the player's
// name, level, HP/AP, caps, SPECIAL, inventory by category, active quests, radio
// stations and the local map with the player's position and heading. Changes are
// pushed to the page over a WebSocket (github.com/coder/websocket) as they arrive from
// the game, and the page sends commands (toggle a radio station, ...) back.
//
// Endpoints: / (the page), /ws (WebSocket: the server sends {"state": State} after
// every change; the page sends {"command": {"type": N, "args": [...]}, "tag": T}
// and gets {"result": Result, "tag": T} or {"error": "...", "tag": T}; a fast travel
// result carries the game's response), /api/state (the State as JSON), /api/command
// (POST a command as JSON, answered with a Result), /map.png (the latest map frame,
// tinted by $.Status.EffectColor), /world-map (Options.MapImage).
//
// The dashboard drives a game, so it answers only its own pages: a request whose
// Host is not one the dashboard is served on (a loopback name or address, or one of
// Options.Hosts) is refused, which defeats DNS rebinding; a request with an Origin
// other than the dashboard's own is refused on every endpoint, which stops a foreign
// web page from sending commands (its POST would otherwise arrive, unread but obeyed)
// or reading the state; and /api/command takes only Content-Type application/json,
// which a cross-site form or a no-cors fetch cannot send. docs/security.md has the
// threat model.
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/gamewire/gamewire/pipboy"
)

//go:embed assets
var assets embed.FS

// Options configures a Dashboard. The zero value (or nil) uses the defaults.
type Options struct {
	// MapInterval is how often the dashboard asks the game for a local map frame
	// (command 13) while a page is open; default 1 s, negative disables.
	MapInterval time.Duration
	// MinPush is the least time between two state pushes (changes in between are
	// coalesced); default 100 ms.
	MinPush time.Duration
	// Redial, if set, is called to connect again when the game connection ends
	// (with a pause of 1 s, doubling up to 10 s, between failed attempts); the page
	// shows "disconnected" meanwhile. Without it the dashboard stays disconnected.
	Redial func(ctx context.Context) (*pipboy.Client, error)
	// Hosts are the host names or addresses, besides loopback ones (localhost,
	// 127.0.0.0/8, ::1), that requests may name in their Host header: the
	// address the dashboard is reached at on the network, e.g. "192.168.1.20"
	// or "pipboy.lan". A port in an entry is ignored.
	Hosts []string
	// MapImage is a background image for the world map (PNG, JPEG, GIF or WebP,
	// checked by CheckMapImage), stretched over the map's extents: its top-left
	// corner is the NW corner of $.Map.World.Extents, its top-right NE, its
	// bottom-left SW. It is served at /world-map. None is shipped: the map is drawn
	// from the database alone.
	MapImage []byte
	// Logger receives errors; default none.
	Logger *slog.Logger
}

// MaxMapImage bounds Options.MapImage.
const MaxMapImage = 64 << 20

// ErrBadMapImage means a map image that is not a PNG, JPEG, GIF or WebP, or too large.
var ErrBadMapImage = errors.New("dashboard: unusable map image")

// CheckMapImage returns the content type of a world map background image, or an
// error wrapping ErrBadMapImage. Only raster formats are taken: an SVG could carry
// script into the dashboard's origin.
func CheckMapImage(b []byte) (string, error) {
	if len(b) > MaxMapImage {
		return "", fmt.Errorf("%w: %d bytes, above %d", ErrBadMapImage, len(b), MaxMapImage)
	}
	switch ct := http.DetectContentType(b); ct {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return ct, nil
	default:
		return "", fmt.Errorf("%w: content is %s, not PNG, JPEG, GIF or WebP", ErrBadMapImage, ct)
	}
}

// Dashboard is an http.Handler showing one app connection. Close stops it.
type Dashboard struct {
	cmu     sync.Mutex
	client  *pipboy.Client // the current connection; replaced on Redial
	initial *pipboy.Client // the caller's connection, which the caller closes
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	hosts   map[string]bool // lower-case, without port: Options.Hosts
	refused atomic.Uint64
	imgType string // content type of opts.MapImage; "" without one

	mu      sync.Mutex
	state   []byte // latest State as JSON
	version uint64
	viewers int
	subs    map[chan struct{}]struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Dashboard for c and starts following its changes.
func New(c *pipboy.Client, opts *Options) *Dashboard {
	if opts == nil {
		opts = &Options{}
	}
	d := &Dashboard{client: c, initial: c, opts: *opts, subs: map[chan struct{}]struct{}{}}
	if d.opts.MapInterval == 0 {
		d.opts.MapInterval = time.Second
	}
	if d.opts.MinPush <= 0 {
		d.opts.MinPush = 100 * time.Millisecond
	}
	d.log = opts.Logger
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.hosts = map[string]bool{}
	for _, h := range opts.Hosts {
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		d.hosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	if len(d.opts.MapImage) > 0 {
		ct, err := CheckMapImage(d.opts.MapImage)
		if err != nil {
			d.log.Error("pipboy dashboard: map image not served", "err", err)
		} else {
			d.imgType = ct
		}
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	static, _ := fs.Sub(assets, "assets")
	d.mux = http.NewServeMux()
	d.mux.Handle("GET /", http.FileServerFS(static))
	d.mux.HandleFunc("GET /ws", d.serveWS)
	d.mux.HandleFunc("GET /api/state", d.serveState)
	d.mux.HandleFunc("POST /api/command", d.serveCommand)
	d.mux.HandleFunc("GET /map.png", d.serveMap)
	d.mux.HandleFunc("GET /world-map", d.serveWorldImage)
	d.rebuild()
	d.wg.Add(2)
	go d.follow()
	go d.pollMap()
	return d
}

// ServeHTTP implements http.Handler. It refuses, with 403 Forbidden, a request for a
// Host the dashboard is not served on and a request from a foreign Origin.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := d.checkRequest(r); err != nil {
		d.refused.Add(1)
		d.log.Warn("pipboy dashboard: request refused", "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "err", err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	d.mux.ServeHTTP(w, r)
}

// Refused returns how many requests ServeHTTP refused (foreign Host or Origin).
func (d *Dashboard) Refused() uint64 { return d.refused.Load() }

// checkRequest accepts a Host the dashboard is served on and no Origin or the
// dashboard's own ("http://" or "https://" and the same Host).
func (d *Dashboard) checkRequest(r *http.Request) error {
	if !d.hostAllowed(r.Host) {
		return fmt.Errorf("dashboard: Host %.100q is not an address this dashboard is served on (loopback, or --allow-host)", r.Host)
	}
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		return nil // not sent by a browser, or a same-origin GET
	}
	u, err := url.Parse(origins[0])
	if len(origins) > 1 || err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("dashboard: Origin %.100q is not this dashboard's", origins[0])
	}
	return nil
}

// hostAllowed reports whether a Host header names the dashboard: a loopback name
// or address, or one of Options.Hosts.
func (d *Dashboard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || d.hosts[host] {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Close stops following the client and ends open WebSockets. It closes the
// connections it made itself (Redial), not the one given to New.
func (d *Dashboard) Close() error {
	d.cancel()
	d.wg.Wait()
	if c := d.current(); c != d.initial {
		return c.Close()
	}
	return nil
}

// State returns the latest state pushed to pages.
func (d *Dashboard) State() State {
	d.mu.Lock()
	b := d.state
	d.mu.Unlock()
	var st State
	_ = json.Unmarshal(b, &st)
	return st
}

// current returns the current game connection.
func (d *Dashboard) current() *pipboy.Client {
	d.cmu.Lock()
	defer d.cmu.Unlock()
	return d.client
}

// rebuild recomputes the state and wakes the pages if it changed.
func (d *Dashboard) rebuild() {
	c := d.current()
	frame, seq := c.Map()
	var st State
	c.View(func(db *pipboy.Database) { st = BuildState(db, &frame, seq) })
	st.Game = c.Hello()
	st.World.Image = d.imgType != ""
	if d.opts.MapInterval > 0 {
		st.Map.Poll = d.opts.MapInterval.Seconds()
	}
	st.Connected = true
	select {
	case <-c.Done():
		st.Connected = false
		if err := c.Err(); err != nil {
			st.Error = err.Error()
		}
	default:
	}
	b, err := json.Marshal(st)
	if err != nil {
		d.log.Error("pipboy dashboard: encoding state", "err", err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if bytes.Equal(b, d.state) {
		return
	}
	d.state = b
	d.version++
	for ch := range d.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// follow rebuilds the state after client changes, at most once per MinPush, and
// reconnects through Options.Redial when the connection ends.
func (d *Dashboard) follow() {
	defer d.wg.Done()
	t := time.NewTimer(0)
	<-t.C
	for {
		c := d.current()
		ch, cancel := c.Subscribe()
		ended := false
		for !ended {
			select {
			case <-d.ctx.Done():
				cancel()
				return
			case <-ch:
			case <-c.Done():
				ended = true
			}
			d.rebuild()
			t.Reset(d.opts.MinPush)
			select {
			case <-d.ctx.Done():
				cancel()
				return
			case <-t.C:
			}
		}
		cancel()
		if d.opts.Redial == nil {
			<-d.ctx.Done()
			return
		}
		next := d.redial()
		if next == nil {
			return
		}
		d.cmu.Lock()
		old := d.client
		d.client = next
		d.cmu.Unlock()
		if old != d.initial {
			old.Close()
		}
		d.rebuild()
	}
}

// redial connects again with backoff; nil when the dashboard closes first.
func (d *Dashboard) redial() *pipboy.Client {
	pause := time.Second
	for {
		c, err := d.opts.Redial(d.ctx)
		if err == nil {
			if err = c.WaitReady(d.ctx); err == nil {
				d.log.Info("pipboy dashboard: reconnected to the game")
				return c
			}
			c.Close()
		}
		d.log.Info("pipboy dashboard: reconnecting", "err", err, "retry in", pause)
		select {
		case <-d.ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Second)
	}
}

// Client returns the current game connection (which changes after a reconnection).
func (d *Dashboard) Client() *pipboy.Client { return d.current() }

// pollMap asks for map frames while a page is open, as the official app does.
func (d *Dashboard) pollMap() {
	defer d.wg.Done()
	if d.opts.MapInterval < 0 {
		return
	}
	t := time.NewTicker(d.opts.MapInterval)
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		}
		d.mu.Lock()
		viewers := d.viewers
		d.mu.Unlock()
		c := d.current()
		if viewers > 0 && !isDone(c) {
			if _, err := c.Send(pipboy.ToggleLocalMap()); err != nil {
				d.log.Info("pipboy dashboard: map request", "err", err)
			}
		}
	}
}

func (d *Dashboard) subscribe() (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	d.mu.Lock()
	d.subs[ch] = struct{}{}
	d.viewers++
	d.mu.Unlock()
	return ch, func() {
		d.mu.Lock()
		delete(d.subs, ch)
		d.viewers--
		d.mu.Unlock()
	}
}

func (d *Dashboard) serveState(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	b := d.state
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (d *Dashboard) serveMap(w http.ResponseWriter, r *http.Request) {
	c := d.current()
	frame, seq := c.Map()
	if seq == 0 || frame.Width == 0 {
		http.Error(w, "no local map frame yet", http.StatusNotFound)
		return
	}
	tint := pipboy.DefaultTint
	c.View(func(db *pipboy.Database) { tint = db.EffectColor() })
	var buf bytes.Buffer
	if err := frame.WritePNG(&buf, tint); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

func (d *Dashboard) serveWorldImage(w http.ResponseWriter, r *http.Request) {
	if d.imgType == "" {
		http.Error(w, "no map image (gamewire pipboy dashboard --map-image FILE)", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", d.imgType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Write(d.opts.MapImage)
}

// commandRequest is what the page sends; Type must be one of the spec's commands.
type commandRequest struct {
	Type *int  `json:"type"`
	Args []any `json:"args"`
}

// Result is the outcome of a command from the page: the id it was sent with and,
// for the commands the game answers (fast travel), its response.
type Result struct {
	Sent     int                     `json:"sent"`
	Type     int                     `json:"type"`
	Response *pipboy.CommandResponse `json:"response,omitempty"`
}

// responseTimeout bounds the wait for the game's answer to a command.
const responseTimeout = 10 * time.Second

// parseCommand reads a command from the page.
func parseCommand(raw json.RawMessage) (pipboy.Command, error) {
	var req commandRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return pipboy.Command{}, fmt.Errorf("command: %w: %w", pipboy.ErrBadJSON, err)
	}
	if req.Type == nil || *req.Type < 0 || *req.Type > 14 {
		return pipboy.Command{}, fmt.Errorf("command: %w: \"type\" must be a command type 0-14", pipboy.ErrBadJSON)
	}
	if req.Args == nil {
		req.Args = []any{}
	}
	return pipboy.Command{Type: pipboy.CommandType(*req.Type), Args: req.Args}, nil
}

// send sends a command from the page and, for fast travel (the command the game
// answers), waits for the response.
func (d *Dashboard) send(ctx context.Context, cmd pipboy.Command) (Result, error) {
	res := Result{Type: int(cmd.Type)}
	if cmd.Type != pipboy.CmdFastTravel {
		id, err := d.current().Send(cmd)
		res.Sent = id
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, responseTimeout)
	defer cancel()
	resp, err := d.current().Do(ctx, cmd)
	if err != nil {
		return res, fmt.Errorf("command %d: no response from the game: %w", cmd.Type, err)
	}
	res.Sent, res.Response = resp.ID, &resp
	return res, nil
}

// maxCommandSize bounds a command from the page (POST body or WebSocket message).
const maxCommandSize = 64 << 10

func (d *Dashboard) serveCommand(w http.ResponseWriter, r *http.Request) {
	// A cross-site form or a no-cors fetch can send only text/plain, form data or
	// multipart: requiring JSON makes a browser ask first (CORS preflight), which
	// the dashboard never grants.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		d.refused.Add(1)
		http.Error(w, "command: Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCommandSize))
	if err != nil {
		code := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			code = http.StatusRequestEntityTooLarge
			err = fmt.Errorf("command: body above %d bytes", maxCommandSize)
		}
		http.Error(w, err.Error(), code)
		return
	}
	cmd, err := parseCommand(body)
	var res Result
	if err == nil {
		res, err = d.send(r.Context(), cmd)
	}
	if err != nil {
		code := http.StatusBadGateway
		if errors.Is(err, pipboy.ErrBadJSON) {
			code = http.StatusBadRequest
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

// wsMessage is a message from the page.
type wsMessage struct {
	Command json.RawMessage `json:"command"`
	// Tag, if any, comes back with the command's result, so the page can tell
	// which of its actions the result is for.
	Tag string `json:"tag,omitempty"`
}

func (d *Dashboard) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		d.log.Info("pipboy dashboard: websocket", "err", err)
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(maxCommandSize)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(d.ctx, cancel)
	defer stop()
	ch, unsubscribe := d.subscribe()
	defer unsubscribe()

	replies := make(chan []byte, 8)
	waiting := make(chan struct{}, 4)
	go func() {
		defer cancel()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m wsMessage
			cmd, err := pipboy.Command{}, json.Unmarshal(b, &m)
			if err != nil || len(m.Command) == 0 {
				err = errors.New("expected {\"command\": {...}}")
			} else {
				cmd, err = parseCommand(m.Command)
			}
			if err == nil && cmd.Type == pipboy.CmdFastTravel {
				// The game's answer is waited for aside, so the page's other
				// commands go on meanwhile; at most a few wait at once. Commands
				// without an answer are sent here, in the page's order.
				select {
				case waiting <- struct{}{}:
				case <-ctx.Done():
					return
				}
				go func() {
					defer func() { <-waiting }()
					res, err := d.send(ctx, cmd)
					reply(ctx, replies, m.Tag, res, err)
				}()
				continue
			}
			var res Result
			if err == nil {
				res, err = d.send(ctx, cmd)
			}
			if !reply(ctx, replies, m.Tag, res, err) {
				return
			}
		}
	}()

	var sent uint64
	for {
		d.mu.Lock()
		version, state := d.version, d.state
		d.mu.Unlock()
		if version != sent {
			msg := append(append([]byte(`{"state":`), state...), '}')
			if err := write(ctx, c, msg); err != nil {
				return
			}
			sent = version
		}
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusGoingAway, "dashboard closing")
			return
		case <-ch:
		case reply := <-replies:
			if err := write(ctx, c, reply); err != nil {
				return
			}
		}
	}
}

// reply queues the answer to a command from the page; false when the page is gone.
func reply(ctx context.Context, replies chan<- []byte, tag string, res Result, err error) bool {
	m := map[string]any{"result": res}
	if err != nil {
		m = map[string]any{"error": err.Error()}
	}
	if tag != "" {
		m["tag"] = tag
	}
	b, _ := json.Marshal(m)
	select {
	case replies <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

func isDone(c *pipboy.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

func write(ctx context.Context, c *websocket.Conn, b []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.Write(ctx, websocket.MessageText, b)
}
