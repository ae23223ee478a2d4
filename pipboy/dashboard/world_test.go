package dashboard

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gamewire/gamewire/pipboy"
)

// The discovered locations of the recording (testdata/pipboy, PC 1.1.30).
var recordedDiscovered = []string{
	"Abernathy Farm", "Concord", "Mercer Safehouse", "Museum of Freedom", "Ranger Cabin", "Red Rocket Truck Stop",
	"Robotics Disposal Ground", "Sanctuary", "Thicket Excavations", "USAF Satellite Station Olivia", "Vault 111",
	"Vault 75", "Weatherby Savings & Loan",
}

func TestBuildWorldFromRecording(t *testing.T) {
	state := recorded(t)
	st := BuildState(state.DB, nil, 0)
	w := st.World
	if !w.Available || w.Aspect != 1 || w.NW != (pipboy.Point{X: -135168, Y: 102400}) {
		t.Fatalf("world extents %+v %+v aspect %v", w.NW, w.NE, w.Aspect)
	}
	var discovered []string
	undiscovered := 0
	for _, l := range w.Locations {
		if l.U < 0 || l.U > 1 || l.V < 0 || l.V > 1 {
			t.Errorf("%s off the map at %v, %v", l.Name, l.U, l.V)
		}
		if l.Discovered {
			discovered = append(discovered, l.Name)
			if l.TravelBlocked != "" {
				t.Errorf("%s: travel blocked: %s", l.Name, l.TravelBlocked)
			}
		} else {
			undiscovered++
			if !strings.Contains(l.TravelBlocked, "not discovered") {
				t.Errorf("%s (not discovered): travel blocked %q", l.Name, l.TravelBlocked)
			}
		}
	}
	slices.Sort(discovered)
	if !slices.Equal(discovered, recordedDiscovered) || undiscovered != 3 || w.Hidden != 298 {
		t.Errorf("discovered %q, %d visible undiscovered, %d hidden", discovered, undiscovered, w.Hidden)
	}
	// The player, west of Concord, is placed by the extents: u = (x - NWX) / width.
	if u := (-78972.78 + 135168) / 249856; math.Abs(w.Player.U-u) > 1e-6 || w.Rotation < 266 || w.Rotation > 267 {
		t.Errorf("player %+v rotation %v, want u %v", w.Player, w.Rotation, u)
	}
	if len(w.Quests) != 1 || w.Quests[0].Name != "Talk to the settlers at Tenpines Bluff" || !w.Custom.Visible || w.PowerArmor.Visible {
		t.Errorf("quests %+v custom %+v power armor %+v", w.Quests, w.Custom, w.PowerArmor)
	}
	// Actions carry the reasons the game would refuse them.
	for _, q := range st.Quests {
		if (q.FormID == 0) != (q.Blocked != "") {
			t.Errorf("quest %q formID %d blocked %q", q.Name, q.FormID, q.Blocked)
		}
	}
	for _, it := range st.Inventory["Junk"] {
		if it.UseBlocked == "" {
			t.Errorf("junk %q usable", it.Name)
		}
	}
	if st.InventoryVersion != 305 || st.FreeFavorite != 6 || len(st.Components) != 1 {
		t.Errorf("version %d, free favourite %d, components %+v", st.InventoryVersion, st.FreeFavorite, st.Components)
	}
	// Over-encumbered, the game refuses every fast travel.
	upd, _ := pipboy.ScalarEntry(mustLookup(t, state.DB, "$.PlayerInfo.CurrWeight").ID(), pipboy.TypeFloat, 400)
	payload, _ := upd.Append(nil)
	if err := state.DB.Apply(payload); err != nil {
		t.Fatal(err)
	}
	st = BuildState(state.DB, nil, 0)
	for _, l := range st.World.Locations {
		if !strings.Contains(l.TravelBlocked, "over-encumbered") && l.Discovered {
			t.Errorf("%s over-encumbered: %q", l.Name, l.TravelBlocked)
		}
	}
}

// testMapImage is a 4x4 PNG in the map's background colour, standing for a user's
// --map-image (no game art is shipped).
func testMapImage(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range 16 {
		img.Set(i%4, i/4, color.RGBA{6, 32 + uint8(i%2), 15, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDashboardMapImage: a --map-image is checked and served at /world-map; the
// state says so. An unusable one is not served.
func TestDashboardMapImage(t *testing.T) {
	pic := testMapImage(t)
	_, _, hs, _ := setup(t, &Options{MapInterval: -1, MapImage: pic})
	resp, err := http.Get(hs.URL + "/world-map")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" || !bytes.Equal(got, pic) {
		t.Fatalf("/world-map: %d %v, %d bytes", resp.StatusCode, resp.Header, len(got))
	}
	if !hs.Config.Handler.(*Dashboard).State().World.Image {
		t.Fatal("state does not announce the map image")
	}
	for _, bad := range [][]byte{[]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), []byte("hello"), nil} {
		if _, err := CheckMapImage(bad); !errors.Is(err, ErrBadMapImage) {
			t.Errorf("CheckMapImage(%.20q): %v", bad, err)
		}
	}
	_, _, hs2, _ := setup(t, &Options{MapInterval: -1, MapImage: []byte(`<svg></svg>`)})
	resp, err = http.Get(hs2.URL + "/world-map")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || hs2.Config.Handler.(*Dashboard).State().World.Image {
		t.Fatalf("an SVG map image: %d", resp.StatusCode)
	}
}

func mustLookup(t *testing.T, db *pipboy.Database, path string) pipboy.Value {
	t.Helper()
	v, err := db.Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDashboardWorldMap drives chromium against the dashboard of the emulator
// replaying the real recording: the world map shows the 13 discovered locations by
// name and the player; fast travel by mouse and by keyboard moves the player in the
// emulator and on the map; a place the game would refuse says why and sends
// nothing; right-click places and removes the custom marker; a quest marker and an
// item are used from the lists. Screenshots at 1280x800 and on a phone-sized
// viewport are saved under $GAMEWIRE_ARTIFACTS.
func TestDashboardWorldMap(t *testing.T) {
	srv, _, hs, ctx := setup(t, &Options{MapInterval: -1, MinPush: 20 * time.Millisecond, MapImage: testMapImage(t)})
	bctx := startBrowser(t, ctx, 1280, 800)
	wait := func(what, expr string) { t.Helper(); waitJS(t, bctx, what, expr) }
	do := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			t.Fatal(err)
		}
	}
	eval := func(expr string) []float64 {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[[]float64](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	// clickAt clicks (left or right) the centre of the first element sel matches.
	clickAt := func(sel string, opts ...chromedp.MouseOption) {
		t.Helper()
		p := eval(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, sel))
		do(chromedp.MouseClickXY(p[0], p[1], opts...))
	}
	world := func() pipboy.World {
		var w pipboy.World
		srv.View(func(db *pipboy.Database) {
			var err error
			if w, err = pipboy.ReadWorld(db); err != nil {
				t.Fatal(err)
			}
		})
		return w
	}
	byName := map[string]pipboy.Location{}
	var refusedPlace pipboy.Location
	for _, l := range world().Locations {
		byName[l.Name] = l
		if l.Visible && !l.Discovered {
			refusedPlace = l
		}
	}
	fastTravels := func() int {
		n := 0
		for _, c := range srv.Commands() {
			if c.Type == pipboy.CmdFastTravel {
				n++
			}
		}
		return n
	}

	do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(hs.URL+"/"))
	wait("13 discovered locations", `document.querySelectorAll("#world-locations .loc.discovered").length === 13`)
	names, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#world-locations .loc.discovered")].map(e => e.querySelector(".label").textContent).sort()`))
	if err != nil || !slices.Equal(names, recordedDiscovered) {
		t.Fatalf("discovered locations on the map: %q %v", names, err)
	}
	wait("the player", `Math.abs(+document.getElementById("world-player").dataset.x - -78972.78) < 0.01 && document.getElementById("world-player").getAttribute("transform").includes("rotate(266.7")`)
	// The user's map image lies exactly over the extents: the map's 1000 x 1000 units.
	wait("the map image over the extents", `(() => { const i = document.getElementById("world-image"); const b = i.getBBox(); return i.getAttribute("visibility") === "visible" && i.getAttribute("href") === "world-map" && i.getAttribute("preserveAspectRatio") === "none" && b.x === 0 && b.y === 0 && b.width === 1000 && b.height === 1000; })()`)
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	saveArtifact(t, "pipboy-worldmap-1280x800.png", shot)

	// A place not discovered: the page says why and sends nothing.
	do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-key="list-%d"]`, refusedPlace.ID))))
	wait("details of a place not discovered", fmt.Sprintf(`document.getElementById("travel").getAttribute("aria-disabled") === "true" && document.getElementById("travel").title === %q`, refusedPlace.Name+" is not discovered"))
	do(chromedp.Click(chromedp.ID("travel")))
	wait("the reason shown", `document.getElementById("command-status").textContent.includes("not possible: ") && document.getElementById("command-status").textContent.includes("is not discovered")`)

	// Fast travel by mouse: Concord's marker (zoomed in, so that the Museum of
	// Freedom next to it does not overlap), then the button.
	concord := byName["Concord"]
	do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-key="list-%d"]`, concord.ID))), chromedp.Click(chromedp.ID("zoom-in")), chromedp.Click(chromedp.ID("zoom-in")))
	clickAt(fmt.Sprintf("#loc-%d circle", concord.ID))
	wait("Concord selected", `document.querySelector("#world-details h3").textContent === "Concord" && !document.getElementById("travel").hasAttribute("aria-disabled")`)
	do(chromedp.Click(chromedp.ID("travel")))
	wait("fast travel answered", `document.getElementById("command-status").textContent.startsWith("fast travel to Concord: done (command")`)
	if p := world().Player; p != concord.Point {
		t.Fatalf("the emulator's player is at %+v after fast travel to Concord at %+v", p, concord.Point)
	}
	wait("the player on the map at Concord", fmt.Sprintf(`Math.abs(+document.getElementById("world-player").dataset.x - %v) < 0.01`, concord.X))
	shot, err = chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	saveArtifact(t, "pipboy-worldmap-travel.png", shot)
	if n := fastTravels(); n != 1 {
		t.Fatalf("the emulator got %d fast travel commands, want 1 (the refused place sends none)", n)
	}

	// Right-click places the custom marker where clicked, right-click on it removes it.
	do(chromedp.Click(chromedp.ID("zoom-reset")))
	const u, v = 0.3, 0.25
	p := eval(fmt.Sprintf(`(() => { const m = document.getElementById("world-svg").getScreenCTM(); const p = new DOMPoint(%v * 1000, %v * 1000).matrixTransform(m); return [p.x, p.y, m.a]; })()`, u, v))
	do(chromedp.MouseClickXY(p[0], p[1], chromedp.ButtonRight))
	// (The recording has a custom marker already: wait for it to move to the click.)
	wait("custom marker on the map", fmt.Sprintf(`(() => { const c = document.getElementById("world-custom"); return c.getAttribute("visibility") === "visible" && Math.abs(c.dataset.u - %v) < 0.01 && Math.abs(c.dataset.v - %v) < 0.01; })()`, u, v))
	w := world()
	want := pipboy.Unproject(w.NW, w.NE, w.SW, u, v)
	perPixel := (w.NE.X - w.NW.X) / 1000 / p[2] // world units per CSS pixel
	if !w.Custom.Visible || math.Abs(w.Custom.X-want.X) > 2*perPixel || math.Abs(w.Custom.Y-want.Y) > 2*perPixel {
		t.Fatalf("custom marker %+v, want near %+v (±%.0f)", w.Custom, want, 2*perPixel)
	}
	clickAt("#world-custom circle", chromedp.ButtonRight)
	wait("custom marker removed", `document.getElementById("world-custom").getAttribute("visibility") === "hidden"`)
	if world().Custom.Visible {
		t.Fatal("the emulator still shows the custom marker")
	}

	// Keyboard: Tab-reachable markers, Enter selects and focuses Fast travel, Enter
	// travels; on the focused map, M places the marker at the centre, Delete removes it.
	sanctuary := byName["Sanctuary"]
	do(chromedp.Focus(chromedp.ID(fmt.Sprintf("loc-%d", sanctuary.ID))), chromedp.KeyEvent("\r"))
	wait("Fast travel focused", `document.activeElement && document.activeElement.id === "travel" && document.querySelector("#world-details h3").textContent === "Sanctuary"`)
	do(chromedp.KeyEvent("\r"))
	wait("keyboard fast travel answered", `document.getElementById("command-status").textContent.startsWith("fast travel to Sanctuary: done")`)
	if p := world().Player; p != sanctuary.Point {
		t.Fatalf("after fast travel to Sanctuary the player is at %+v", p)
	}
	do(chromedp.Focus(chromedp.ID("world")), chromedp.KeyEvent("0"), chromedp.KeyEvent("m"))
	wait("marker placed by keyboard", `document.getElementById("world-custom").getAttribute("visibility") === "visible"`)
	if c := world().Custom; !c.Visible || math.Abs(c.X-(w.NW.X+w.NE.X)/2) > 2*perPixel {
		t.Fatalf("keyboard marker %+v, want the centre of the map", c)
	}
	do(chromedp.KeyEvent("\x7f")) // Delete
	wait("marker removed by keyboard", `document.getElementById("world-custom").getAttribute("visibility") === "hidden"`)

	// The quest marker toggled from the quest list leaves the map; an item is used.
	wait("quest target on the map", `document.querySelectorAll("#world-quests .quest").length === 1`)
	var firstStep uint32
	srv.View(func(db *pipboy.Database) {
		q, _ := pipboy.QuestByFormID(db, 1160046, 1)
		firstStep = q.ID()
	})
	do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-key="quest-%d"]`, firstStep))))
	wait("quest target gone", `document.querySelectorAll("#world-quests .quest").length === 0 && document.querySelector('[data-key="quest-`+fmt.Sprint(firstStep)+`"]').textContent === "mark"`)
	do(chromedp.Click(chromedp.CSS(`[data-key="tab-Aid"]`)))
	wait("Aid tab", `[...document.querySelectorAll("#inventory li")].some(li => li.textContent.startsWith("Stimpak ×10"))`)
	var stimpak uint32
	srv.View(func(db *pipboy.Database) {
		for _, r := range mustLookup(t, db, "$.Inventory.sortedIDS").Elems() {
			if it, ok := db.Get(uint32(r.Int())); ok && it.Key("text").Str() == "Stimpak" {
				stimpak = uint32(it.Key("HandleID").Int())
			}
		}
	})
	do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-key="use-%d"]`, stimpak))))
	wait("a Stimpak used", `[...document.querySelectorAll("#inventory li")].some(li => li.textContent.startsWith("Stimpak ×9"))`)
	// Junk cannot be used: the button says why and sends nothing.
	do(chromedp.Click(chromedp.CSS(`[data-key="tab-Junk"]`)))
	wait("Junk tab", `document.querySelector('#inventory [data-key^="use-"]') !== null`)
	do(chromedp.Click(chromedp.CSS(`#inventory [data-key^="use-"]`)))
	wait("junk refused with a reason", `document.getElementById("command-status").textContent.includes("not possible: ") && document.getElementById("command-status").textContent.includes("is not a weapon, apparel or aid")`)

	// The local map panel says how frames come (this dashboard does not poll), and
	// its button asks for one with command 13.
	wait("local map help", `document.getElementById("map-help").textContent.includes("does not poll") && !document.getElementById("map").classList.contains("has-frame")`)
	do(chromedp.Click(chromedp.ID("map-request")))
	wait("a local map frame", `document.getElementById("map").classList.contains("has-frame") && document.getElementById("map-help").textContent.startsWith("128×128, frame 1")`)

	// A phone-sized viewport: the map fits the width, nothing scrolls sideways, and
	// fast travel still works.
	do(chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	wait("phone layout", `(() => { const r = document.getElementById("world").getBoundingClientRect(); return r.width > 300 && r.right <= window.innerWidth && document.documentElement.scrollWidth <= window.innerWidth; })()`)
	do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-key="list-%d"]`, byName["Red Rocket Truck Stop"].ID))), chromedp.Click(chromedp.ID("travel")))
	wait("fast travel on a phone", `document.getElementById("command-status").textContent.startsWith("fast travel to Red Rocket Truck Stop: done")`)
	do(chromedp.Click(chromedp.ID("find-player")))
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`)); err != nil {
		t.Fatal(err)
	}
	shot, err = chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	saveArtifact(t, "pipboy-worldmap-phone.png", shot)
	if p := world().Player; p != byName["Red Rocket Truck Stop"].Point {
		t.Fatalf("after fast travel to Red Rocket the player is at %+v", p)
	}
}
