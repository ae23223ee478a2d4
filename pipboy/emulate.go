package pipboy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// This file holds what the emulator does for the commands of the spec's table, the
// way the game does it as far as the recordings and the public clients show: the
// change each command makes to the database, pushed to the app as one update.

// DefaultCommandHandler is the emulator's answer to commands, as the game's:
//
//   - 9 fast travel: refused (allowed false) where the game refuses (CanFastTravel),
//     else the player moves to the location ($.Map.World.Player, $.Map.Local.Player,
//     the local map's extents follow); answered by a type 6 response either way.
//   - 6/7 place/remove the custom marker: $.Map.World.Custom and $.Map.Local.Custom.
//   - 5 toggle a quest's marker ([formID, instance, type] of an element of $.Quests):
//     flips its "active" flag; its objective markers leave $.Map.World.Quests and
//     $.Map.Local.Quests and come back when it is toggled again.
//   - 0-3 use, drop, favourite an item, tag a component; 4 cycles
//     $.Inventory.SortMode (see the functions below).
//   - 12 toggles a radio station (the others go off).
//
// Only fast travel gets a response, as from the game; a refused command other than
// fast travel changes nothing and is logged. Command 13's map frame is sent by the
// Server itself.
func DefaultCommandHandler(ctx context.Context, s *Server, cmd Command) (*CommandResponse, error) {
	switch cmd.Type {
	case CmdFastTravel:
		return s.fastTravel(cmd)
	case CmdToggleRadio:
		id, ok := ArgUint(cmd.Args, 0)
		if !ok {
			return nil, fmt.Errorf("toggle radio: argument 0 is not a station id: %v", cmd.Args)
		}
		return nil, s.updateWith(func(db *Database) ([]byte, error) { return radioToggle(db, id) })
	case CmdPlaceCustomMarker:
		x, okx := argFloat(cmd.Args, 0)
		y, oky := argFloat(cmd.Args, 1)
		if !okx || !oky {
			return nil, fmt.Errorf("place custom marker: arguments 0 and 1 must be the X and Y position: %v", cmd.Args)
		}
		return nil, s.updateWith(func(db *Database) ([]byte, error) { return customMarker(db, &Point{x, y}) })
	case CmdRemoveCustomMarker:
		return nil, s.updateWith(func(db *Database) ([]byte, error) { return customMarker(db, nil) })
	case CmdToggleQuestMarker:
		return nil, s.toggleQuest(cmd)
	case CmdUseItem, CmdDropItem, CmdSetFavorite, CmdToggleComponentTag, CmdCycleSearchMode:
		return nil, s.updateWith(func(db *Database) ([]byte, error) { return inventoryCommand(db, cmd) })
	}
	return nil, nil
}

// updateWith computes an update from the database and applies and sends it, under
// one hold of the server's lock so that nothing comes between. An empty update is
// not sent.
func (s *Server) updateWith(fn func(db *Database) ([]byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	payload, err := fn(s.db)
	if err != nil || len(payload) == 0 {
		return err
	}
	return s.updateLocked(payload)
}

// edit collects the values of one update; the first error sticks.
type edit struct {
	b   []byte
	err error
}

// set replaces scalar v (keeping its id and type) with x.
func (e *edit) set(v Value, what string, x any) {
	if e.err != nil {
		return
	}
	if !v.IsValid() {
		e.err = fmt.Errorf("%w: %s", ErrNotFound, what)
		return
	}
	var ent Entry
	ent, e.err = ScalarEntry(v.ID(), v.Type(), x)
	if e.err == nil {
		e.b, e.err = ent.Append(e.b)
	} else {
		e.err = fmt.Errorf("%s: %w", what, e.err)
	}
}

// array replaces array v's elements with ids.
func (e *edit) array(v Value, ids []uint32) {
	if e.err != nil {
		return
	}
	ent := Entry{Type: TypeArray, ID: v.ID(), Elems: AppendIDs(nil, ids...)}
	e.b, e.err = ent.Append(e.b)
}

func (e *edit) result() ([]byte, error) { return e.b, e.err }

func (s *Server) fastTravel(cmd Command) (*CommandResponse, error) {
	id, ok := ArgUint(cmd.Args, 0)
	if !ok {
		return nil, fmt.Errorf("fast travel: argument 0 is not a location id: %v", cmd.Args)
	}
	resp := &CommandResponse{ID: cmd.ID}
	err := s.updateWith(func(db *Database) ([]byte, error) {
		loc, err := CanFastTravel(db, id)
		if err != nil {
			return nil, err
		}
		return movePlayer(db, loc.Point)
	})
	if errors.Is(err, ErrRefused) {
		loggerOr(s.Logger).Info("pipboy: fast travel refused", "id", cmd.ID, "err", err)
		return resp, nil
	}
	resp.Allowed = true
	if err != nil {
		loggerOr(s.Logger).Warn("pipboy: fast travel failed", "id", cmd.ID, "err", err)
		return resp, nil
	}
	resp.Success = true
	return resp, nil
}

// movePlayer builds the update that puts the player at p on both maps and moves the
// local map's extents by as much.
func movePlayer(db *Database, p Point) ([]byte, error) {
	var e edit
	for _, path := range []string{"$.Map.World.Player", "$.Map.Local.Player"} {
		pl, err := db.Lookup(path)
		if err != nil {
			if path == "$.Map.Local.Player" {
				continue // the local map is optional
			}
			return nil, err
		}
		if path == "$.Map.Local.Player" {
			dx, dy := p.X-pl.Key("X").Float(), p.Y-pl.Key("Y").Float()
			if ext, err := db.Lookup("$.Map.Local.Extents"); err == nil {
				for _, k := range []string{"NWX", "NEX", "SWX"} {
					e.set(ext.Key(k), "$.Map.Local.Extents."+k, ext.Key(k).Float()+dx)
				}
				for _, k := range []string{"NWY", "NEY", "SWY"} {
					e.set(ext.Key(k), "$.Map.Local.Extents."+k, ext.Key(k).Float()+dy)
				}
			}
		}
		e.set(pl.Key("X"), path+".X", p.X)
		e.set(pl.Key("Y"), path+".Y", p.Y)
	}
	return e.result()
}

// customMarker builds the update that places the custom marker at p, or removes it
// (p nil), on both maps.
func customMarker(db *Database, p *Point) ([]byte, error) {
	var e edit
	n := 0
	for _, path := range []string{"$.Map.World.Custom", "$.Map.Local.Custom"} {
		m, err := db.Lookup(path)
		if err != nil {
			continue
		}
		n++
		if p != nil {
			e.set(m.Key("X"), path+".X", p.X)
			e.set(m.Key("Y"), path+".Y", p.Y)
		}
		e.set(m.Key("Visible"), path+".Visible", p != nil)
	}
	if n == 0 {
		return nil, fmt.Errorf("custom marker: %w: $.Map.World.Custom", ErrNotFound)
	}
	return e.result()
}

// hiddenMarker is a quest objective marker taken off a map by toggling its quest's
// marker: its values, children first, to put back.
type hiddenMarker struct {
	array   string // the path of the array it was in
	entries []Entry
}

// QuestByFormID returns the element of $.Quests with the given formID (and
// instance, if instance is not negative).
func QuestByFormID(db *Database, formID uint32, instance int64) (Value, error) {
	qs, err := db.Lookup("$.Quests")
	if err != nil {
		return Value{}, err
	}
	for _, q := range qs.Elems() {
		if q.Key("formID").IsNumber() && q.Key("formID").Int() == int64(formID) && (instance < 0 || q.Key("instance").Int() == instance) {
			return q, nil
		}
	}
	return Value{}, fmt.Errorf("%w: no quest with formID %d in $.Quests", ErrNotFound, formID)
}

// CanToggleQuest returns why the game would not toggle the marker of quest q, or nil:
// only quests in progress with a formID (not the "Miscellaneous" list) have one.
func CanToggleQuest(q Value) error {
	if q.Key("formID").Int() == 0 {
		return fmt.Errorf("quest marker: %w: %q is a list of miscellaneous objectives, not a quest", ErrRefused, q.Key("text").Str())
	}
	if !q.Key("enabled").Bool() {
		return fmt.Errorf("quest marker: %w: %q is not in progress", ErrRefused, q.Key("text").Str())
	}
	return nil
}

func (s *Server) toggleQuest(cmd Command) error {
	formID, ok := ArgUint(cmd.Args, 0)
	if !ok {
		return fmt.Errorf("quest marker: argument 0 is not a quest formID: %v", cmd.Args)
	}
	instance := int64(-1)
	if i, ok := ArgUint(cmd.Args, 1); ok {
		instance = int64(i)
	}
	return s.updateWith(func(db *Database) ([]byte, error) {
		q, err := QuestByFormID(db, formID, instance)
		if err != nil {
			return nil, fmt.Errorf("quest marker: %w", err)
		}
		if err := CanToggleQuest(q); err != nil {
			return nil, err
		}
		var e edit
		active := q.Key("active")
		e.set(active, "quest active", !active.Bool())
		if active.Bool() {
			s.hideQuestMarkers(db, &e, formID)
		} else {
			s.showQuestMarkers(db, &e, formID)
		}
		return e.result()
	})
}

// hideQuestMarkers takes the quest's objective markers off both maps, keeping them.
func (s *Server) hideQuestMarkers(db *Database, e *edit, formID uint32) {
	for _, path := range []string{"$.Map.World.Quests", "$.Map.Local.Quests"} {
		arr, err := db.Lookup(path)
		if err != nil {
			continue
		}
		var keep []uint32
		for _, m := range arr.Elems() {
			ofQuest := false
			for _, id := range m.Key("QuestId").Elems() {
				ofQuest = ofQuest || id.Int() == int64(formID)
			}
			if !ofQuest {
				keep = append(keep, m.ID())
				continue
			}
			h := hiddenMarker{array: path}
			if err := subtreeEntries(m, &h.entries, 0); err != nil {
				e.err = err
				return
			}
			if s.hidden == nil {
				s.hidden = map[uint32][]hiddenMarker{}
			}
			s.hidden[formID] = append(s.hidden[formID], h)
		}
		if len(keep) != arr.Len() {
			e.array(arr, keep)
		}
	}
}

// showQuestMarkers puts back the markers hideQuestMarkers took, with new ids (as the
// game sends replaced values).
func (s *Server) showQuestMarkers(db *Database, e *edit, formID uint32) {
	next := maxID(db) + 1
	added := map[string][]uint32{} // array path -> the markers going back into it
	var paths []string
	for _, h := range s.hidden[formID] {
		if _, err := db.Lookup(h.array); err != nil || len(h.entries) == 0 {
			continue
		}
		remap := map[uint32]uint32{}
		for _, ent := range h.entries {
			remap[ent.ID] = next
			next++
		}
		for _, ent := range h.entries {
			ent.ID = remap[ent.ID]
			switch ent.Type {
			case TypeArray:
				var ids IDList
				for i := range ent.Elems.Len() {
					ids = AppendIDs(ids, remap[ent.Elems.At(i)])
				}
				ent.Elems = ids
			case TypeObject:
				var add KeyList
				ent.Add.All(func(k []byte, id uint32) bool {
					add = add.AppendKey(string(k), remap[id])
					return true
				})
				ent.Add = add
			}
			if e.b, e.err = ent.Append(e.b); e.err != nil {
				return
			}
		}
		if _, ok := added[h.array]; !ok {
			paths = append(paths, h.array)
		}
		added[h.array] = append(added[h.array], remap[h.entries[len(h.entries)-1].ID])
	}
	for _, path := range paths {
		arr, _ := db.Lookup(path)
		var ids []uint32
		for _, v := range arr.Elems() {
			ids = append(ids, v.ID())
		}
		e.array(arr, append(ids, added[path]...))
	}
	delete(s.hidden, formID)
}

// subtreeEntries appends the values under v, children first.
func subtreeEntries(v Value, out *[]Entry, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("pipboy: value %d: nesting deeper than %d", v.ID(), maxDepth)
	}
	for _, c := range v.Elems() {
		if err := subtreeEntries(c, out, depth+1); err != nil {
			return err
		}
	}
	for _, c := range v.Fields() {
		if err := subtreeEntries(c, out, depth+1); err != nil {
			return err
		}
	}
	if v.IsValid() {
		*out = append(*out, v.Entry())
	}
	return nil
}

// maxID returns the largest value id in the database.
func maxID(db *Database) uint32 {
	var m uint32
	for v := range db.All() {
		m = max(m, v.ID())
	}
	return m
}

// Inventory filterFlag bits the commands depend on.
const (
	flagWeapon  = 0x2
	flagApparel = 0x4
	flagAid     = 0x8
)

// CanUseItem returns why the game would not use (equip, consume) item it from the
// app, or nil: the app uses weapons, apparel and aid.
func CanUseItem(it Value) error {
	if it.Key("filterFlag").Int()&(flagWeapon|flagApparel|flagAid) == 0 {
		return fmt.Errorf("use item: %w: %q is not a weapon, apparel or aid", ErrRefused, it.Key("text").Str())
	}
	return nil
}

// CanFavoriteItem returns why the game would not put item it on a favourite slot, or
// nil: the item's canFavorite flag says.
func CanFavoriteItem(it Value) error {
	if !it.Key("canFavorite").Bool() {
		return fmt.Errorf("favourite: %w: the game does not allow %q as a favourite", ErrRefused, it.Key("text").Str())
	}
	return nil
}

// ItemByHandle returns the item reached through $.Inventory.sortedIDS whose HandleID
// is handle, with the id of the sortedIDS element naming it.
func ItemByHandle(db *Database, handle uint32) (item Value, ref uint32, err error) {
	sorted, err := db.Lookup("$.Inventory.sortedIDS")
	if err != nil {
		return Value{}, 0, err
	}
	for _, r := range sorted.Elems() {
		if !r.IsNumber() || r.Int() < 0 || r.Int() > math.MaxUint32 {
			continue
		}
		it, ok := db.Get(uint32(r.Int()))
		if ok && it.Type() == TypeObject && it.Key("HandleID").IsNumber() && it.Key("HandleID").Int() == int64(handle) {
			return it, r.ID(), nil
		}
	}
	return Value{}, 0, fmt.Errorf("%w: no item with HandleID %d in $.Inventory", ErrNotFound, handle)
}

// inventoryCommand builds the update of commands 0-4. Commands 0-3 carry the
// inventory version the app saw ($.Inventory.Version); a stale one is refused, and
// every change increments it.
func inventoryCommand(db *Database, cmd Command) ([]byte, error) {
	inv, err := db.Lookup("$.Inventory")
	if err != nil {
		return nil, err
	}
	version := inv.Key("Version")
	checkVersion := func(i int) error {
		v, ok := ArgUint(cmd.Args, i)
		if !ok {
			return fmt.Errorf("command %d: argument %d is not an inventory version: %v", cmd.Type, i, cmd.Args)
		}
		if int64(v) != version.Int() {
			return fmt.Errorf("command %d: %w: inventory version %d is stale (now %d)", cmd.Type, ErrRefused, v, version.Int())
		}
		return nil
	}
	var e edit
	// item finds the item of argument 0 and checks the version at argument v.
	item := func(v int) (Value, uint32, error) {
		h, ok := ArgUint(cmd.Args, 0)
		if !ok {
			return Value{}, 0, fmt.Errorf("command %d: argument 0 is not an item HandleID: %v", cmd.Type, cmd.Args)
		}
		it, ref, err := ItemByHandle(db, h)
		if err != nil {
			return Value{}, 0, fmt.Errorf("command %d: %w", cmd.Type, err)
		}
		return it, ref, checkVersion(v)
	}
	switch cmd.Type {
	case CmdUseItem:
		it, ref, err := item(2)
		if err != nil {
			return nil, err
		}
		if err := CanUseItem(it); err != nil {
			return nil, err
		}
		if it.Key("filterFlag").Int()&flagAid != 0 {
			takeItems(db, &e, inv, it, ref, 1)
		} else {
			eq := it.Key("equipState")
			state := 1
			if eq.Int() != 0 {
				state = 0
			}
			e.set(eq, "equipState", state)
		}
	case CmdDropItem:
		it, ref, err := item(2)
		if err != nil {
			return nil, err
		}
		n, ok := ArgUint(cmd.Args, 1)
		if !ok || n == 0 {
			return nil, fmt.Errorf("drop item: %w: count %v is not a positive number", ErrRefused, cmd.Args[1:])
		}
		takeItems(db, &e, inv, it, ref, int64(n))
	case CmdSetFavorite:
		it, _, err := item(3)
		if err != nil {
			return nil, err
		}
		pos, ok := ArgUint(cmd.Args, 2)
		if !ok || pos > 11 {
			return nil, fmt.Errorf("favourite: %w: slot %v is not 0-11", ErrRefused, cmd.Args[2:3])
		}
		if err := CanFavoriteItem(it); err != nil {
			return nil, err
		}
		for o := range inventoryItems(db) {
			if f := o.Key("favorite"); f.Int() == int64(pos) && o.ID() != it.ID() {
				e.set(f, "favorite", -2)
			}
		}
		e.set(it.Key("favorite"), "favorite", int(pos))
	case CmdToggleComponentTag:
		form, ok := ArgUint(cmd.Args, 0)
		if !ok {
			return nil, fmt.Errorf("tag component: argument 0 is not a component formID: %v", cmd.Args)
		}
		if err := checkVersion(1); err != nil {
			return nil, err
		}
		found := false
		for _, c := range inv.Key("InvComponents").Elems() {
			if c.Key("componentFormID").IsNumber() && c.Key("componentFormID").Int() == int64(form) {
				t := c.Key("taggedForSearch")
				e.set(t, "taggedForSearch", !t.Bool())
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("tag component: %w: no component with formID %d in $.Inventory.InvComponents", ErrNotFound, form)
		}
	case CmdCycleSearchMode:
		page, ok := ArgUint(cmd.Args, 0)
		if !ok || page > 6 {
			return nil, fmt.Errorf("sort: %w: page %v is not 0-6", ErrRefused, cmd.Args)
		}
		mode := inv.Key("SortMode")
		e.set(mode, "$.Inventory.SortMode", (mode.Int()+1)%SortModes)
		return e.result() // sorting does not change the inventory's version
	}
	e.set(version, "$.Inventory.Version", version.Int()+1)
	return e.result()
}

// SortModes is how many values the emulator cycles $.Inventory.SortMode through
// (command 4); the game's number per page is not documented.
const SortModes = 4

// inventoryItems iterates over the items reached through $.Inventory.sortedIDS.
func inventoryItems(db *Database) func(yield func(Value) bool) {
	return func(yield func(Value) bool) {
		sorted, err := db.Lookup("$.Inventory.sortedIDS")
		if err != nil {
			return
		}
		for _, r := range sorted.Elems() {
			if !r.IsNumber() || r.Int() < 0 || r.Int() > math.MaxUint32 {
				continue
			}
			if it, ok := db.Get(uint32(r.Int())); ok && it.Type() == TypeObject && !yield(it) {
				return
			}
		}
	}
}

// takeItems removes n of item it (named by sortedIDS element ref): its count goes
// down, and at 0 it leaves sortedIDS and its category array.
func takeItems(db *Database, e *edit, inv, it Value, ref uint32, n int64) {
	count := it.Key("count")
	if count.Int() > n {
		e.set(count, "count", count.Int()-n)
		return
	}
	for key, arr := range inv.Fields() {
		if arr.Type() != TypeArray {
			continue
		}
		var keep []uint32
		for _, el := range arr.Elems() {
			if (key == "sortedIDS" && el.ID() == ref) || (key != "sortedIDS" && el.ID() == it.ID()) {
				continue
			}
			keep = append(keep, el.ID())
		}
		if len(keep) != arr.Len() {
			e.array(arr, keep)
		}
	}
}

// argFloat returns args[i] as a finite number.
func argFloat(args []any, i int) (float64, bool) {
	if i < 0 || i >= len(args) {
		return 0, false
	}
	var f float64
	switch x := args[i].(type) {
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case float64:
		f = x
	case int:
		f = float64(x)
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
