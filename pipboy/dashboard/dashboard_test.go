package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/gamewire/gamewire/pipboy"
)

const streamFile = "../../testdata/pipboy/fo4-1.1.30-server-stream.bin"

// setup runs the emulator replaying the recorded stream, an app client, and the
// dashboard behind an httptest server, all on 127.0.0.1. Its context is a safety
// net of two minutes (the browser tests run long on a loaded machine); every wait
// has its own bound.
func setup(t *testing.T, opts *Options) (*pipboy.Server, *pipboy.Client, *httptest.Server, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	f, err := os.Open(streamFile)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := pipboy.RecordingFromStream(f, 0)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	srv := &pipboy.Server{Replay: rec}
	srv.Addr = "127.0.0.1:0"
	srv.HeartbeatInterval = 200 * time.Millisecond
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c, err := pipboy.Dial(ctx, ln.Addr().String(), &pipboy.ClientConfig{HeartbeatInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	d := New(c, opts)
	t.Cleanup(func() { d.Close() })
	hs := httptest.NewServer(d) // httptest binds 127.0.0.1
	t.Cleanup(hs.Close)
	return srv, c, hs, ctx
}

// recorded decodes the recorded stream.
func recorded(t *testing.T) *pipboy.GameState {
	t.Helper()
	b, err := os.ReadFile(streamFile)
	if err != nil {
		t.Fatal(err)
	}
	state, _, err := pipboy.DecodeInput(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

func TestBuildStateFromRecording(t *testing.T) {
	state := recorded(t)
	st := BuildState(state.DB, nil, 0)
	if st.Player.Name != "Gavin Sterling" || st.Player.Level != 8 || st.Player.Caps != 968 || st.Player.MaxAP != 112 || st.Player.MaxHP != 131.5 {
		t.Errorf("player %+v", st.Player)
	}
	if len(st.Special) != 7 || st.Special[0] != (Special{"Strength", 11, 7}) {
		t.Errorf("special %+v", st.Special)
	}
	total := 0
	for _, items := range st.Inventory {
		total += len(items)
	}
	var sorted int
	if v, err := state.DB.Lookup("$.Inventory.sortedIDS"); err == nil {
		sorted = v.Len()
	}
	if total+st.Invalid != sorted || total == 0 {
		t.Errorf("inventory: %d items + %d invalid, sortedIDS has %d", total, st.Invalid, sorted)
	}
	if weapons := st.Inventory["Weapons"]; len(weapons) == 0 {
		t.Errorf("no weapons in %v", st.Inventory)
	}
	if len(st.Radio) != 2 || st.Radio[1].Name != "Diamond City Radio" || !st.Radio[1].Active || st.Radio[0].Active {
		t.Errorf("radio %+v", st.Radio)
	}
	active := ""
	for _, q := range st.Quests {
		if q.Active {
			active = q.Name
		}
	}
	if active != "The First Step" || len(st.Quests) != 5 {
		t.Errorf("quests %+v", st.Quests)
	}
	if len(st.Missing) != 0 {
		t.Errorf("missing paths %v", st.Missing)
	}
}

func TestDashboardLive(t *testing.T) {
	srv, _, hs, ctx := setup(t, &Options{MapInterval: 50 * time.Millisecond, MinPush: 10 * time.Millisecond})
	resp, err := http.Get(hs.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page := new(bytes.Buffer)
	page.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(page.String(), `id="player-name"`) {
		t.Fatalf("page: %d", resp.StatusCode)
	}

	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	next := func(cond func(m map[string]json.RawMessage, st *State) bool) {
		t.Helper()
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			var st *State
			if raw, ok := m["state"]; ok {
				st = new(State)
				if err := json.Unmarshal(raw, st); err != nil {
					t.Fatal(err)
				}
			}
			if cond(m, st) {
				return
			}
		}
	}
	next(func(_ map[string]json.RawMessage, st *State) bool {
		return st != nil && st.Player.Name == "Gavin Sterling" && st.Player.Level == 8
	})
	// A change in the game reaches the page.
	if err := srv.Set("$.PlayerInfo.XPLevel", 9); err != nil {
		t.Fatal(err)
	}
	next(func(_ map[string]json.RawMessage, st *State) bool { return st != nil && st.Player.Level == 9 })
	// Map frames are requested while a page is open, and served as PNG.
	next(func(_ map[string]json.RawMessage, st *State) bool {
		return st != nil && st.Map.Seq > 0 && st.Map.Width == 128
	})
	mresp, err := http.Get(hs.URL + "/map.png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(mresp.Body)
	mresp.Body.Close()
	if err != nil || img.Bounds().Dx() != 128 {
		t.Fatalf("map.png: %v", err)
	}
	// A command from the page reaches the game, and its effect comes back.
	var classical uint32
	srv.View(func(db *pipboy.Database) {
		v, _ := db.Lookup("$.Radio[0]")
		classical = v.ID()
	})
	cmd := fmt.Sprintf(`{"command":{"type":12,"args":[%d]}}`, classical)
	if err := ws.Write(ctx, websocket.MessageText, []byte(cmd)); err != nil {
		t.Fatal(err)
	}
	next(func(m map[string]json.RawMessage, _ *State) bool { _, ok := m["result"]; return ok })
	next(func(_ map[string]json.RawMessage, st *State) bool { return st != nil && st.Radio[0].Active })
	// Bad commands get an error, not a crash.
	ws.Write(ctx, websocket.MessageText, []byte(`{"command":{"type":99}}`))
	next(func(m map[string]json.RawMessage, _ *State) bool { _, ok := m["error"]; return ok })
	r, err := http.Post(hs.URL+"/api/command", "application/json", strings.NewReader(`{"type":"x"}`))
	if err != nil || r.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad POST command: %v %v", r.StatusCode, err)
	}
	r.Body.Close()
	// A body above the limit is refused as too large, not parsed cut short.
	huge := `{"type":9,"args":[` + strings.Repeat("1,", 40<<10) + `1]}`
	r, err = http.Post(hs.URL+"/api/command", "application/json", strings.NewReader(huge))
	if err != nil || r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized POST command: %v %v", r.StatusCode, err)
	}
	r.Body.Close()
	// Fast travel is answered with the game's response: refused to no location,
	// allowed to a discovered one.
	var sanctuary uint32
	srv.View(func(db *pipboy.Database) {
		w, _ := pipboy.ReadWorld(db)
		for _, l := range w.Locations {
			if l.Name == "Sanctuary" {
				sanctuary = l.ID
			}
		}
	})
	for id, allowed := range map[uint32]bool{48363: false, sanctuary: true} {
		r, err = http.Post(hs.URL+"/api/command", "application/json", strings.NewReader(fmt.Sprintf(`{"type":9,"args":[%d]}`, id)))
		if err != nil || r.StatusCode != http.StatusOK {
			t.Fatalf("POST command: %v %v", r.StatusCode, err)
		}
		var res Result
		err = json.NewDecoder(r.Body).Decode(&res)
		r.Body.Close()
		if err != nil || res.Type != 9 || res.Sent < 1 || res.Response == nil || res.Response.Allowed != allowed || res.Response.Success != allowed || res.Response.ID != res.Sent {
			t.Fatalf("fast travel to %d: %+v %v", id, res, err)
		}
	}
}

// TestDashboardBrowser drives Debian's chromium against the dashboard of an emulator
// serving the recording: the page shows the player's name and level, follows a change
// the emulator pushes, and sends a radio toggle. It saves a screenshot.
func TestDashboardBrowser(t *testing.T) {
	srv, _, hs, ctx := setup(t, &Options{MapInterval: 100 * time.Millisecond, MinPush: 20 * time.Millisecond})
	bctx := startBrowser(t, ctx, 1280, 900)

	wait := func(what, expr string) { t.Helper(); waitJS(t, bctx, what, expr) }
	if err := chromedp.Do(bctx, chromedp.Navigate(hs.URL+"/")); err != nil {
		t.Fatal(err)
	}
	wait("player name", `document.getElementById("player-name").textContent === "Gavin Sterling"`)
	wait("player level", `document.getElementById("player-level").textContent === "8"`)

	if err := srv.Set("$.PlayerInfo.XPLevel", 9); err != nil {
		t.Fatal(err)
	}
	wait("pushed level", `document.getElementById("player-level").textContent === "9"`)

	var classical uint32
	srv.View(func(db *pipboy.Database) {
		v, _ := db.Lookup("$.Radio[0]")
		classical = v.ID()
	})
	sel := fmt.Sprintf("#station-%d button", classical)
	// The page rebuilds a list only when its data changes, so the button stays put;
	// a node replaced between query and click would still be retried.
	var clickErr error
	for range 3 {
		if clickErr = chromedp.Do(bctx, chromedp.Click(chromedp.CSS(sel))); clickErr == nil {
			break
		}
	}
	if clickErr != nil {
		t.Fatal(clickErr)
	}
	wait("radio toggled on the page", fmt.Sprintf(`document.querySelector(%q).textContent === "on"`, sel))
	found := false
	for _, c := range srv.Commands() {
		if c.Type == pipboy.CmdToggleRadio {
			if id, _ := pipboy.ArgUint(c.Args, 0); id == classical {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("the emulator did not receive the radio command: %+v", srv.Commands())
	}
	wait("map frame", `document.getElementById("map").classList.contains("has-frame") && document.getElementById("map-img").complete`)

	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	saveArtifact(t, "pipboy-dashboard.png", shot)

	// A foreign web page (another origin: another port) tries what any site could:
	// a no-cors text/plain POST, a JSON POST, a form POST and a WebSocket, each
	// sending a toggle of the other station. None reaches the game.
	var other uint32
	srv.View(func(db *pipboy.Database) {
		v, _ := db.Lookup("$.Radio[1]")
		other = v.ID()
	})
	before := radioCommands(srv, other)
	d := hs.Config.Handler.(*Dashboard)
	cmd := fmt.Sprintf(`{"type":12,"args":[%d]}`, other)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><body><iframe name="sink"></iframe>
<form id="f" method="POST" action="%[1]s/api/command" enctype="text/plain" target="sink"><input name='%[2]s' value=''></form>
<script>
const target = %[1]q;
const cmd = %[2]q;
window.results = [];
(async () => {
  try { await fetch(target + "/api/command", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: cmd}); window.results.push("no-cors sent"); } catch (e) { window.results.push("no-cors: " + e); }
  try { const r = await fetch(target + "/api/command", {method: "POST", headers: {"Content-Type": "application/json"}, body: cmd}); window.results.push("json " + r.status); } catch (e) { window.results.push("json blocked"); }
  document.getElementById("f").submit();
  await new Promise(done => {
    const ws = new WebSocket(target.replace("http", "ws") + "/ws");
    ws.onopen = () => { ws.send(JSON.stringify({command: JSON.parse(cmd)})); window.results.push("ws open"); setTimeout(done, 300); };
    ws.onerror = () => { window.results.push("ws refused"); done(); };
  });
  await new Promise(done => setTimeout(done, 300));
  window.finished = true;
})();
</script></body>`, hs.URL, cmd)
	}))
	defer evil.Close()
	if err := chromedp.Do(bctx, chromedp.Navigate(evil.URL+"/")); err != nil {
		t.Fatal(err)
	}
	wait("the foreign page's attempts", `window.finished === true`)
	results, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.results`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("foreign page: %v; refused requests: %d", results, d.Refused())
	if n := radioCommands(srv, other) - before; n != 0 {
		t.Fatalf("a foreign page sent %d commands to the game (%v)", n, results)
	}
	if d.Refused() < 3 {
		t.Fatalf("the dashboard refused %d requests of the foreign page, want at least 3 (%v)", d.Refused(), results)
	}
}

// startBrowser starts Debian's chromium (headless, its own profile) with a window of
// w x h and returns a browser context; without chromium the test is skipped (and
// fails in CI, which installs it).
func startBrowser(t *testing.T, ctx context.Context, w, h int) context.Context {
	t.Helper()
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found (CI installs it with apt-get)")
		}
		t.Skip("chromium not found")
	}
	actx, cancelA := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(w, h),
	)
	t.Cleanup(cancelA)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)
	return bctx
}

// waitJS polls a JavaScript condition in the page until it holds (20 s at most).
func waitJS(t *testing.T, bctx context.Context, what, expr string) {
	t.Helper()
	// A poll fails outright when the page's JavaScript context is replaced
	// under it (a frame navigating, as the foreign page's form does): that
	// is not an answer, so poll again in the new context, a few times.
	var err error
	for try := 0; try < 5; try++ {
		_, err = chromedp.Run(bctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
		if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") && !strings.Contains(err.Error(), "Execution context was destroyed") {
			break
		}
	}
	if err != nil {
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// saveArtifact writes a screenshot under $GAMEWIRE_ARTIFACTS (CI keeps that
// directory), or the test's temporary directory.
func saveArtifact(t *testing.T, name string, b []byte) {
	t.Helper()
	dir := os.Getenv("GAMEWIRE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(b))
}

// startServer serves the recorded database (with the level set to level) on 127.0.0.1.
func startServer(t *testing.T, level int) (*pipboy.Server, string) {
	t.Helper()
	srv := pipboy.NewServer(recorded(t).DB)
	srv.Addr = "127.0.0.1:0"
	if err := srv.Set("$.PlayerInfo.XPLevel", level); err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String()
}

// TestDashboardReconnect: when the game goes away the page says so, and the dashboard
// reconnects through Redial.
func TestDashboardReconnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv1, addr1 := startServer(t, 8)
	var addr atomic.Value
	addr.Store(addr1)
	c, err := pipboy.Dial(ctx, addr1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	d := New(c, &Options{MinPush: 10 * time.Millisecond, MapInterval: -1, Redial: func(ctx context.Context) (*pipboy.Client, error) {
		return pipboy.Dial(ctx, addr.Load().(string), nil)
	}})
	defer d.Close()
	waitState := func(what string, cond func(State) bool) {
		t.Helper()
		for !cond(d.State()) {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: last state %+v", what, d.State())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitState("level 8", func(st State) bool { return st.Connected && st.Player.Level == 8 })
	_, addr2 := startServer(t, 11)
	addr.Store(addr2)
	srv1.Close()
	waitState("reconnection to the second game", func(st State) bool { return st.Connected && st.Player.Level == 11 })
	if d.Client() == c {
		t.Fatal("dashboard still on the first connection")
	}
}

// radioCommands returns the radio toggles the emulator received for station id.
func radioCommands(srv *pipboy.Server, id uint32) int {
	n := 0
	for _, c := range srv.Commands() {
		if c.Type == pipboy.CmdToggleRadio {
			if got, _ := pipboy.ArgUint(c.Args, 0); got == id {
				n++
			}
		}
	}
	return n
}

// TestDashboardRefusesForeignRequests reproduces the cross-site attacks with raw
// requests: a text/plain POST from a foreign Origin (what a no-cors fetch or a form
// on any web page sends), requests naming a foreign Host (DNS rebinding: the
// attacker's name resolved to 127.0.0.1), and a WebSocket whose Host and Origin are
// both the attacker's. Each is refused and no command reaches the game; the
// dashboard's own origin, and a host given in Options.Hosts, still work.
func TestDashboardRefusesForeignRequests(t *testing.T) {
	srv, _, hs, ctx := setup(t, &Options{MapInterval: -1, MinPush: 10 * time.Millisecond, Hosts: []string{"pipboy.lan"}})
	var station uint32
	srv.View(func(db *pipboy.Database) {
		v, _ := db.Lookup("$.Radio[1]")
		station = v.ID()
	})
	port := strings.TrimPrefix(hs.URL, "http://127.0.0.1:")
	command := fmt.Sprintf(`{"type":12,"args":[%d]}`, station)
	do := func(method, path, host, origin, ctype, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, hs.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name                              string
		method, path, host, origin, ctype string
		want                              int
	}{
		{"cross-site text/plain POST", "POST", "/api/command", "", "http://evil.example", "text/plain", http.StatusForbidden},
		{"cross-site JSON POST", "POST", "/api/command", "", "http://evil.example", "application/json", http.StatusForbidden},
		{"another local origin", "POST", "/api/command", "", "http://127.0.0.1:1", "application/json", http.StatusForbidden},
		{"opaque origin", "POST", "/api/command", "", "null", "application/json", http.StatusForbidden},
		{"same-origin text/plain POST", "POST", "/api/command", "", hs.URL, "text/plain", http.StatusUnsupportedMediaType},
		{"form POST without Origin", "POST", "/api/command", "", "", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"rebinding: state", "GET", "/api/state", "evil.example:" + port, "", "", http.StatusForbidden},
		{"rebinding: page", "GET", "/", "evil.example:" + port, "", "", http.StatusForbidden},
		{"rebinding: map", "GET", "/map.png", "evil.example", "", "", http.StatusForbidden},
		{"rebinding: world map image", "GET", "/world-map", "evil.example", "", "", http.StatusForbidden},
		{"rebinding: command", "POST", "/api/command", "evil.example:" + port, "http://evil.example:" + port, "application/json", http.StatusForbidden},
		{"foreign origin reading state", "GET", "/api/state", "", "http://evil.example", "", http.StatusForbidden},
		{"own origin reads state", "GET", "/api/state", "", hs.URL, "", http.StatusOK},
		{"localhost name", "GET", "/api/state", "localhost:" + port, "http://localhost:" + port, "", http.StatusOK},
		{"configured host", "GET", "/api/state", "pipboy.lan:" + port, "http://pipboy.lan:" + port, "", http.StatusOK},
	} {
		body := ""
		if tc.method == "POST" {
			body = command
		}
		if got := do(tc.method, tc.path, tc.host, tc.origin, tc.ctype, body); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	wsURL := "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws"
	_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Host: "evil.example:" + port,
		HTTPHeader: http.Header{"Origin": {"http://evil.example:" + port}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("rebinding WebSocket: %v (response %v)", err, resp)
	}
	_, resp, err = websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site WebSocket: %v (response %v)", err, resp)
	}
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Host: "pipboy.lan:" + port,
		HTTPHeader: http.Header{"Origin": {"http://pipboy.lan:" + port}}})
	if err != nil {
		t.Fatalf("WebSocket on a configured host: %v", err)
	}
	ws.CloseNow()
	time.Sleep(100 * time.Millisecond) // a command that got through would have arrived
	if n := radioCommands(srv, station); n != 0 {
		t.Fatalf("%d refused commands reached the game", n)
	}
	// The dashboard's own page still sends commands.
	if got := do("POST", "/api/command", "", hs.URL, "application/json; charset=utf-8", command); got != http.StatusOK {
		t.Fatalf("same-origin JSON command: %d", got)
	}
	for deadline := time.Now().Add(10 * time.Second); radioCommands(srv, station) != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the same-origin command did not reach the game")
		}
	}
}
