package dashboard

import (
	"fmt"
	"math"
	"strings"

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
	World     WorldView         `json:"world"`
	// Components are $.Inventory.InvComponents, taggable for search (command 3).
	Components []Component `json:"components"`
	// InventoryVersion is $.Inventory.Version, which commands 0-3 carry.
	InventoryVersion int64 `json:"inventoryVersion"`
	SortMode         int64 `json:"sortMode"` // $.Inventory.SortMode, cycled by command 4
	// FreeFavorite is the first favourite slot (0-11) no item holds, or -1.
	FreeFavorite int64    `json:"freeFavorite"`
	Missing      []string `json:"missing,omitempty"` // paths the database lacks
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

// Item is one inventory item reached through $.Inventory.sortedIDS. The *Blocked
// fields say why the game would refuse the action (empty: allowed).
type Item struct {
	ID           uint32  `json:"id"`
	Name         string  `json:"name"`
	Count        int64   `json:"count"`
	Equipped     bool    `json:"equipped"`
	Favorite     bool    `json:"favorite"`
	FavoriteSlot int64   `json:"favoriteSlot"` // 0-11, or -1
	HandleID     uint32  `json:"handleID"`
	StackIDs     []int64 `json:"stackIDs"`
	UseBlocked   string  `json:"useBlocked,omitempty"`
	FavBlocked   string  `json:"favBlocked,omitempty"`
}

// Component is one element of $.Inventory.InvComponents.
type Component struct {
	FormID uint32 `json:"formID"`
	Name   string `json:"name"`
	Count  int64  `json:"count"`
	Tagged bool   `json:"tagged"`
}

// Quest is one element of $.Quests that is in progress (enabled). FormID, Instance
// and Type are the arguments of command 5 (toggle its marker).
type Quest struct {
	ID       uint32 `json:"id"`
	Name     string `json:"name"`
	Active   bool   `json:"active"` // tracked: its objectives are marked on the map
	FormID   uint32 `json:"formID"`
	Instance int64  `json:"instance"`
	Type     int64  `json:"type"`
	Blocked  string `json:"blocked,omitempty"` // why its marker cannot be toggled
}

// WorldView is the world map ($.Map.World) with every position projected onto the
// map's extents: U across from the NW corner, V down, both 0..1 on the map.
type WorldView struct {
	Available bool `json:"available"` // $.Map.World and its extents are present
	// Aspect is the map's height over its width.
	Aspect     float64       `json:"aspect"`
	NW         pipboy.Point  `json:"nw"`
	NE         pipboy.Point  `json:"ne"`
	SW         pipboy.Point  `json:"sw"`
	Player     Placed        `json:"player"`
	Rotation   float64       `json:"rotation"`
	PowerArmor PlacedMarker  `json:"powerArmor"`
	Custom     PlacedMarker  `json:"custom"`
	Locations  []MapLocation `json:"locations"` // visible or discovered ones
	Quests     []QuestMarker `json:"quests"`
	Blocked    string        `json:"travelBlocked,omitempty"` // why no fast travel is possible now
	Image      bool          `json:"image"`                   // a background image is served (Options.MapImage)
	Hidden     int           `json:"hidden"`                  // locations neither visible nor discovered
}

// Placed is a world position and its place on the map.
type Placed struct {
	pipboy.Point
	U float64 `json:"u"`
	V float64 `json:"v"`
}

// PlacedMarker is a single marker of the world map.
type PlacedMarker struct {
	Placed
	Visible bool `json:"visible"`
}

// MapLocation is a location on the world map; TravelBlocked says why fast travel to
// it would be refused (empty: allowed).
type MapLocation struct {
	pipboy.Location
	U             float64 `json:"u"`
	V             float64 `json:"v"`
	TravelBlocked string  `json:"travelBlocked,omitempty"`
}

// QuestMarker is a quest objective's marker on the world map.
type QuestMarker struct {
	pipboy.QuestTarget
	U float64 `json:"u"`
	V float64 `json:"v"`
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
	// Poll is how often the dashboard asks for a frame (command 13) while a page is
	// open, in seconds; 0 when it does not.
	Poll float64 `json:"poll"`
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
	var taken [12]bool
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
			ID:           it.ID(),
			Name:         it.Key("text").Str(),
			Count:        it.Key("count").Int(),
			Equipped:     it.Key("equipState").Int() != 0,
			Favorite:     it.Key("favorite").Int() >= 0,
			FavoriteSlot: max(it.Key("favorite").Int(), -1),
			HandleID:     uint32(it.Key("HandleID").Int()),
			StackIDs:     []int64{},
		}
		for _, s := range it.Key("StackID").Elems() {
			item.StackIDs = append(item.StackIDs, s.Int())
		}
		if err := pipboy.CanUseItem(it); err != nil {
			item.UseBlocked = reason(err)
		}
		if err := pipboy.CanFavoriteItem(it); err != nil {
			item.FavBlocked = reason(err)
		} else if item.FavoriteSlot >= 0 {
			item.FavBlocked = fmt.Sprintf("already on favourite slot %d", item.FavoriteSlot)
		}
		if item.FavoriteSlot >= 0 && item.FavoriteSlot < 12 {
			taken[item.FavoriteSlot] = true
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
	st.FreeFavorite = -1
	for i, t := range taken {
		if !t {
			st.FreeFavorite = int64(i)
			break
		}
	}
	if st.FreeFavorite < 0 {
		for _, items := range st.Inventory {
			for i := range items {
				if items[i].FavBlocked == "" {
					items[i].FavBlocked = "all 12 favourite slots are taken"
				}
			}
		}
	}
	inv := get("$.Inventory")
	st.InventoryVersion = inv.Key("Version").Int()
	st.SortMode = inv.Key("SortMode").Int()
	for _, c := range inv.Key("InvComponents").Elems() {
		st.Components = append(st.Components, Component{
			FormID: uint32(c.Key("componentFormID").Int()), Name: c.Key("text").Str(),
			Count: c.Key("count").Int(), Tagged: c.Key("taggedForSearch").Bool(),
		})
	}
	for _, q := range get("$.Quests").Elems() {
		if !q.Key("enabled").Bool() && !q.Key("active").Bool() {
			continue
		}
		quest := Quest{ID: q.ID(), Name: q.Key("text").Str(), Active: q.Key("active").Bool(),
			FormID: uint32(q.Key("formID").Int()), Instance: q.Key("instance").Int(), Type: q.Key("type").Int()}
		if err := pipboy.CanToggleQuest(q); err != nil {
			quest.Blocked = reason(err)
		}
		st.Quests = append(st.Quests, quest)
	}
	for _, r := range get("$.Radio").Elems() {
		st.Radio = append(st.Radio, Station{
			ID: r.ID(), Name: r.Key("text").Str(), Frequency: r.Key("frequency").Float(),
			Active: r.Key("active").Bool(), InRange: r.Key("inRange").Bool(),
		})
	}
	st.Map = placePlayer(db, frame, mapSeq)
	st.World = buildWorld(db)
	return st
}

// reason is the part of a refusal worth showing: what follows "refused: ".
func reason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, pipboy.ErrRefused.Error()+": "); i >= 0 {
		return msg[i+len(pipboy.ErrRefused.Error())+2:]
	}
	return msg
}

// buildWorld projects $.Map.World onto its extents. Locations neither visible nor
// discovered are left out (counted in Hidden), as on the game's map.
func buildWorld(db *pipboy.Database) WorldView {
	w, err := pipboy.ReadWorld(db)
	if err != nil {
		return WorldView{}
	}
	wv := WorldView{NW: w.NW, NE: w.NE, SW: w.SW, Rotation: w.Rotation}
	width := math.Hypot(w.NE.X-w.NW.X, w.NE.Y-w.NW.Y)
	height := math.Hypot(w.SW.X-w.NW.X, w.SW.Y-w.NW.Y)
	if !(width > 0) || !(height > 0) || math.IsInf(width, 0) || math.IsInf(height, 0) {
		return wv // garbage extents: nothing can be placed
	}
	wv.Available = true
	wv.Aspect = height / width
	place := func(p pipboy.Point) Placed {
		u, v, _ := pipboy.Project(w.NW, w.NE, w.SW, p)
		return Placed{Point: p, U: u, V: v}
	}
	wv.Player = place(w.Player)
	wv.PowerArmor = PlacedMarker{Placed: place(w.PowerArmor.Point), Visible: w.PowerArmor.Visible}
	wv.Custom = PlacedMarker{Placed: place(w.Custom.Point), Visible: w.Custom.Visible}
	if err := pipboy.TravelBlocked(db); err != nil {
		wv.Blocked = reason(err)
	}
	wv.Locations = []MapLocation{}
	for _, l := range w.Locations {
		if !l.Visible && !l.Discovered {
			wv.Hidden++
			continue
		}
		p := place(l.Point)
		ml := MapLocation{Location: l, U: p.U, V: p.V}
		if !l.Discovered {
			ml.TravelBlocked = l.Name + " is not discovered"
		} else if wv.Blocked != "" {
			ml.TravelBlocked = wv.Blocked
		}
		wv.Locations = append(wv.Locations, ml)
	}
	wv.Quests = []QuestMarker{}
	for _, q := range w.Quests {
		p := place(q.Point)
		wv.Quests = append(wv.Quests, QuestMarker{QuestTarget: q, U: p.U, V: p.V})
	}
	return wv
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
	// The extents can hold garbage (docs/peers.md): only place a finite, on-map position.
	if u, v, ok := pipboy.Project(pipboy.Point{X: nw[0], Y: nw[1]}, pipboy.Point{X: ne[0], Y: ne[1]}, pipboy.Point{X: sw[0], Y: sw[1]}, pipboy.Point{X: px, Y: py}); ok {
		mv.U, mv.V = u, v
		mv.OnMap = u >= 0 && u <= 1 && v >= 0 && v <= 1
	}
	return mv
}
