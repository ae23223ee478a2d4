package dashboard

import (
	"math"

	"github.com/gamewire/gamewire/pipboy"
)

// State is what the page shows, rebuilt from the live database after every change
// and pushed to the page as JSON.
type State struct {
	Connected bool              `json:"connected"`
	Error     string            `json:"error,omitempty"`
	Game      pipboy.Hello      `json:"game"`
	Player    Player            `json:"player"`
	Special   []Special         `json:"special"`
	Inventory map[string][]Item `json:"inventory"`
	Invalid   int               `json:"invalidItems"` // sortedIDS entries naming no item object
	Quests    []Quest           `json:"quests"`
	Radio     []Station         `json:"radio"`
	Map       MapView           `json:"map"`
	Missing   []string          `json:"missing,omitempty"` // paths the database lacks
}

// Player is $.PlayerInfo.
type Player struct {
	Name       string  `json:"name"`
	Level      int64   `json:"level"`
	XPProgress float64 `json:"xpProgress"`
	HP         float64 `json:"hp"`
	MaxHP      float64 `json:"maxHP"`
	AP         float64 `json:"ap"`
	MaxAP      float64 `json:"maxAP"`
	Caps       int64   `json:"caps"`
	Weight     float64 `json:"weight"`
	MaxWeight  float64 `json:"maxWeight"`
}

// Special is one element of $.Special.
type Special struct {
	Name     string `json:"name"`
	Value    int64  `json:"value"`
	Modifier int64  `json:"modifier"`
}

// Item is one inventory item reached through $.Inventory.sortedIDS.
type Item struct {
	ID       uint32 `json:"id"`
	Name     string `json:"name"`
	Count    int64  `json:"count"`
	Equipped bool   `json:"equipped"`
	Favorite bool   `json:"favorite"`
	HandleID uint32 `json:"handleID"`
}

// Quest is one element of $.Quests that is in progress (enabled).
type Quest struct {
	ID     uint32 `json:"id"`
	Name   string `json:"name"`
	Active bool   `json:"active"` // the tracked quest
}

// Station is one element of $.Radio; ID is its value id, the argument of command 12.
type Station struct {
	ID        uint32  `json:"id"`
	Name      string  `json:"name"`
	Frequency float64 `json:"frequency"`
	Active    bool    `json:"active"`
	InRange   bool    `json:"inRange"`
}

// MapView places the player on the latest local map frame: U and V are the player's
// position across and down the frame (0..1), Rotation the heading in degrees.
type MapView struct {
	Seq      uint64  `json:"seq"` // frames received; the page reloads /map.png when it changes
	Width    uint32  `json:"width"`
	Height   uint32  `json:"height"`
	U        float64 `json:"u"`
	V        float64 `json:"v"`
	Rotation float64 `json:"rotation"`
	OnMap    bool    `json:"onMap"`
	Blank    bool    `json:"blank"`
}

// Inventory categories by the item's filterFlag bits (as the official app groups them).
var categories = []struct {
	name string
	mask int64
}{
	{"Weapons", 0x2},
	{"Apparel", 0x4},
	{"Aid", 0x8},
	{"Misc", 0x200 | 0x80 | 0x2000}, // misc, notes, holotapes
	{"Junk", 0x400},
	{"Mods", 0x800},
	{"Ammo", 0x1000},
}

// CategoryNames lists the inventory categories in display order ("Other" last).
func CategoryNames() []string {
	out := make([]string, 0, len(categories)+1)
	for _, c := range categories {
		out = append(out, c.name)
	}
	return append(out, "Other")
}

// BuildState extracts the dashboard's view from a database and the latest map frame.
func BuildState(db *pipboy.Database, frame *pipboy.MapFrame, mapSeq uint64) State {
	st := State{Inventory: map[string][]Item{}}
	get := func(path string) pipboy.Value {
		v, err := db.Lookup(path)
		if err != nil {
			st.Missing = append(st.Missing, path)
			return pipboy.Value{}
		}
		return v
	}
	p := get("$.PlayerInfo")
	st.Player = Player{
		Name:       p.Key("PlayerName").Str(),
		Level:      p.Key("XPLevel").Int(),
		XPProgress: p.Key("XPProgressPct").Float(),
		HP:         p.Key("CurrHP").Float(),
		MaxHP:      p.Key("MaxHP").Float(),
		AP:         p.Key("CurrAP").Float(),
		MaxAP:      p.Key("MaxAP").Float(),
		Caps:       p.Key("Caps").Int(),
		Weight:     p.Key("CurrWeight").Float(),
		MaxWeight:  p.Key("MaxWeight").Float(),
	}
	for _, s := range get("$.Special").Elems() {
		st.Special = append(st.Special, Special{Name: s.Key("Name").Str(), Value: s.Key("Value").Int(), Modifier: s.Key("Modifier").Int()})
	}
	for _, ref := range get("$.Inventory.sortedIDS").Elems() {
		if !ref.IsNumber() || ref.Int() < 0 || ref.Int() > math.MaxUint32 {
			st.Invalid++
			continue
		}
		it, ok := db.Get(uint32(ref.Int()))
		if !ok || it.Type() != pipboy.TypeObject || it.Key("text").Type() != pipboy.TypeString {
			st.Invalid++
			continue
		}
		item := Item{
			ID:       it.ID(),
			Name:     it.Key("text").Str(),
			Count:    it.Key("count").Int(),
			Equipped: it.Key("equipState").Int() != 0,
			Favorite: it.Key("favorite").Int() >= 0,
			HandleID: uint32(it.Key("HandleID").Int()),
		}
		flag := it.Key("filterFlag").Int()
		cat := "Other"
		for _, c := range categories {
			if flag&c.mask != 0 {
				cat = c.name
				break
			}
		}
		st.Inventory[cat] = append(st.Inventory[cat], item)
	}
	for _, q := range get("$.Quests").Elems() {
		if !q.Key("enabled").Bool() && !q.Key("active").Bool() {
			continue
		}
		st.Quests = append(st.Quests, Quest{ID: q.ID(), Name: q.Key("text").Str(), Active: q.Key("active").Bool()})
	}
	for _, r := range get("$.Radio").Elems() {
		st.Radio = append(st.Radio, Station{
			ID: r.ID(), Name: r.Key("text").Str(), Frequency: r.Key("frequency").Float(),
			Active: r.Key("active").Bool(), InRange: r.Key("inRange").Bool(),
		})
	}
	st.Map = placePlayer(db, frame, mapSeq)
	return st
}

// placePlayer projects $.Map.Local.Player onto the frame's extents (NW, NE, SW corners),
// which allows for a rotated map. Without a frame, the database's extents are used.
func placePlayer(db *pipboy.Database, f *pipboy.MapFrame, seq uint64) MapView {
	mv := MapView{Seq: seq}
	num := func(path string) float64 {
		v, err := db.Lookup(path)
		if err != nil || !v.IsNumber() {
			return math.NaN()
		}
		return v.Float()
	}
	px, py := num("$.Map.Local.Player.X"), num("$.Map.Local.Player.Y")
	mv.Rotation = num("$.Map.Local.Player.Rotation")
	if math.IsNaN(mv.Rotation) {
		mv.Rotation = 0
	}
	var nw, ne, sw [2]float64
	if f != nil && f.Width > 0 {
		mv.Width, mv.Height, mv.Blank = f.Width, f.Height, f.Blank()
		nw = [2]float64{float64(f.NW.X), float64(f.NW.Y)}
		ne = [2]float64{float64(f.NE.X), float64(f.NE.Y)}
		sw = [2]float64{float64(f.SW.X), float64(f.SW.Y)}
	} else {
		mv.Blank = true
		nw = [2]float64{num("$.Map.Local.Extents.NWX"), num("$.Map.Local.Extents.NWY")}
		ne = [2]float64{num("$.Map.Local.Extents.NEX"), num("$.Map.Local.Extents.NEY")}
		sw = [2]float64{num("$.Map.Local.Extents.SWX"), num("$.Map.Local.Extents.SWY")}
	}
	ax, ay := ne[0]-nw[0], ne[1]-nw[1]
	bx, by := sw[0]-nw[0], sw[1]-nw[1]
	la, lb := ax*ax+ay*ay, bx*bx+by*by
	dx, dy := px-nw[0], py-nw[1]
	u, v := (dx*ax+dy*ay)/la, (dx*bx+dy*by)/lb
	// The extents can hold garbage (docs/peers.md): only place a finite, on-map position.
	if !math.IsNaN(u) && !math.IsInf(u, 0) && !math.IsNaN(v) && !math.IsInf(v, 0) && la > 0 && lb > 0 {
		mv.U, mv.V = u, v
		mv.OnMap = u >= 0 && u <= 1 && v >= 0 && v <= 1
	}
	return mv
}
