package pipboy

import (
	"errors"
	"fmt"
	"math"
)

// ErrRefused means the game would refuse a command: fast travel to a place not
// discovered, using an item that cannot be used, a stale inventory version, ...
// Errors wrapping it say why.
var ErrRefused = errors.New("refused")

// Point is a position in world coordinates (the game's X east, Y north).
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// World is the world map of $.Map.World, as ReadWorld reads it.
type World struct {
	NW, NE, SW Point         // corners of the map ($.Map.World.Extents)
	Player     Point         // $.Map.World.Player
	Rotation   float64       // the player's heading in degrees, clockwise from north
	PowerArmor MapMarker     // $.Map.World.PowerArmor
	Custom     MapMarker     // $.Map.World.Custom, the marker commands 6 and 7 place and remove
	Locations  []Location    // $.Map.World.Locations, in the database's order
	Quests     []QuestTarget // $.Map.World.Quests
}

// MapMarker is a single marker of the world map (the custom marker, power armor).
type MapMarker struct {
	Point
	Visible bool `json:"visible"`
}

// Location is one element of $.Map.World.Locations. ID, its value id, is the argument
// of FastTravel.
type Location struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	Type int64  `json:"type"` // the game's map marker type
	Point
	Discovered bool  `json:"discovered"` // visited: fast travel is possible
	Visible    bool  `json:"visible"`    // shown on the map (known, maybe not visited)
	Cleared    bool  `json:"cleared"`    // ClearedStatus
	Workshop   bool  `json:"workshop"`   // a settlement the player owns (WorkshopOwned)
	Population int64 `json:"population"`
}

// QuestTarget is one element of $.Map.World.Quests: the map marker of a tracked
// quest's objective. QuestIDs are the formIDs of the quests it belongs to.
type QuestTarget struct {
	ID       uint32   `json:"id"`
	Name     string   `json:"name"`
	QuestIDs []uint32 `json:"questIDs"`
	Point
	OnDoor bool `json:"onDoor"`
}

// ReadWorld reads $.Map.World. Missing keys read as zero values; a missing
// $.Map.World or $.Map.World.Extents is an error wrapping ErrNotFound.
func ReadWorld(db *Database) (World, error) {
	var w World
	m, err := db.Lookup("$.Map.World")
	if err != nil {
		return w, err
	}
	ext := m.Key("Extents")
	if !ext.IsValid() {
		return w, fmt.Errorf("pipboy: $.Map.World: %w: no Extents", ErrNotFound)
	}
	w.NW = Point{ext.Key("NWX").Float(), ext.Key("NWY").Float()}
	w.NE = Point{ext.Key("NEX").Float(), ext.Key("NEY").Float()}
	w.SW = Point{ext.Key("SWX").Float(), ext.Key("SWY").Float()}
	p := m.Key("Player")
	w.Player = Point{p.Key("X").Float(), p.Key("Y").Float()}
	w.Rotation = p.Key("Rotation").Float()
	w.PowerArmor = readMarker(m.Key("PowerArmor"))
	w.Custom = readMarker(m.Key("Custom"))
	for _, l := range m.Key("Locations").Elems() {
		if l.Type() != TypeObject {
			continue
		}
		w.Locations = append(w.Locations, readLocation(l))
	}
	for _, q := range m.Key("Quests").Elems() {
		if q.Type() != TypeObject {
			continue
		}
		t := QuestTarget{ID: q.ID(), Name: q.Key("Name").Str(), Point: Point{q.Key("X").Float(), q.Key("Y").Float()}, OnDoor: q.Key("OnDoor").Bool()}
		for _, id := range q.Key("QuestId").Elems() {
			if id.IsNumber() && id.Int() >= 0 && id.Int() <= math.MaxUint32 {
				t.QuestIDs = append(t.QuestIDs, uint32(id.Int()))
			}
		}
		w.Quests = append(w.Quests, t)
	}
	return w, nil
}

func readMarker(v Value) MapMarker {
	return MapMarker{Point: Point{v.Key("X").Float(), v.Key("Y").Float()}, Visible: v.Key("Visible").Bool()}
}

func readLocation(l Value) Location {
	return Location{
		ID: l.ID(), Name: l.Key("Name").Str(), Type: l.Key("type").Int(),
		Point:      Point{l.Key("X").Float(), l.Key("Y").Float()},
		Discovered: l.Key("Discovered").Bool(), Visible: l.Key("Visible").Bool(),
		Cleared: l.Key("ClearedStatus").Bool(), Workshop: l.Key("WorkshopOwned").Bool(),
		Population: l.Key("WorkshopPopulation").Int(),
	}
}

// Project places a world position on the map: u across from the NW corner towards
// NE, v down from NW towards SW, both 0..1 on the map. The corners allow a rotated
// or sheared map. ok is false when the extents are degenerate (the game's extents can
// hold garbage).
func Project(nw, ne, sw, p Point) (u, v float64, ok bool) {
	ax, ay := ne.X-nw.X, ne.Y-nw.Y
	bx, by := sw.X-nw.X, sw.Y-nw.Y
	la, lb := ax*ax+ay*ay, bx*bx+by*by
	dx, dy := p.X-nw.X, p.Y-nw.Y
	u, v = (dx*ax+dy*ay)/la, (dx*bx+dy*by)/lb
	ok = la > 0 && lb > 0 && !math.IsNaN(u) && !math.IsInf(u, 0) && !math.IsNaN(v) && !math.IsInf(v, 0)
	return u, v, ok
}

// Unproject is the inverse of Project for a rectangular map: the world position at
// u, v.
func Unproject(nw, ne, sw Point, u, v float64) Point {
	return Point{nw.X + u*(ne.X-nw.X) + v*(sw.X-nw.X), nw.Y + u*(ne.Y-nw.Y) + v*(sw.Y-nw.Y)}
}

// statusBlocks are the $.Status flags under which the game refuses fast travel, and
// why.
var statusBlocks = []struct{ key, why string }{
	{"IsPlayerDead", "the player is dead"},
	{"IsLoading", "the game is loading"},
	{"IsInVats", "the player is in V.A.T.S."},
	{"IsInVatsPlayback", "the player is in V.A.T.S."},
	{"IsPlayerInDialogue", "the player is in a dialogue"},
	{"IsPlayerMovementLocked", "the player cannot move"},
	{"IsInAnimation", "the player is in an animation"},
	{"IsDataUnavailable", "the game has no Pip-Boy data"},
}

// TravelBlocked returns why the game refuses any fast travel now ($.Status flags,
// over-encumbrance), or nil.
func TravelBlocked(db *Database) error {
	if st, err := db.Lookup("$.Status"); err == nil {
		for _, b := range statusBlocks {
			if st.Key(b.key).Bool() {
				return fmt.Errorf("fast travel: %w: %s ($.Status.%s)", ErrRefused, b.why, b.key)
			}
		}
	}
	if p, err := db.Lookup("$.PlayerInfo"); err == nil {
		cur, most := p.Key("CurrWeight"), p.Key("MaxWeight")
		if cur.IsNumber() && most.IsNumber() && most.Float() > 0 && cur.Float() > most.Float() {
			return fmt.Errorf("fast travel: %w: over-encumbered (carrying %.0f of %.0f)", ErrRefused, cur.Float(), most.Float())
		}
	}
	return nil
}

// CanFastTravel returns nil if the game would fast travel to the location whose
// value id is id (the argument of FastTravel), or why not: no such location, a
// location not discovered, or TravelBlocked. The error wraps ErrRefused.
func CanFastTravel(db *Database, id uint32) (Location, error) {
	l, ok := db.Get(id)
	locs, err := db.Lookup("$.Map.World.Locations")
	if err != nil {
		return Location{}, fmt.Errorf("fast travel: %w: %w", ErrRefused, err)
	}
	found := false
	if ok {
		for _, e := range locs.Elems() {
			if e.ID() == id {
				found = true
				break
			}
		}
	}
	if !found {
		return Location{}, fmt.Errorf("fast travel: %w: no location with id %d in $.Map.World.Locations", ErrRefused, id)
	}
	loc := readLocation(l)
	if !loc.Discovered {
		return loc, fmt.Errorf("fast travel: %w: %s is not discovered", ErrRefused, loc.Name)
	}
	return loc, TravelBlocked(db)
}
