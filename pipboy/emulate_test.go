package pipboy

import (
	"errors"
	"testing"
)

// itemNamed returns the inventory item with the given text in db.
func itemNamed(db *Database, name string) (Value, bool) {
	for it := range inventoryItems(db) {
		if it.Key("text").Str() == name {
			return it, true
		}
	}
	return Value{}, false
}

// TestEmulatorCommands drives every command the emulator answers like the game, on
// the recorded database, and checks each change as the app sees it. A refused
// command changes nothing: the command after it (answered in order) shows that the
// refused one was handled first.
func TestEmulatorCommands(t *testing.T) {
	ctx := testCtx(t)
	srv, addr := startEmulator(t, nil)
	c := dialTest(t, ctx, addr)
	wait := func(what string, cond func(db *Database) bool) {
		t.Helper()
		if err := c.WaitFor(ctx, cond); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	num := func(db *Database, path string) float64 {
		v, err := db.Lookup(path)
		if err != nil {
			t.Fatal(err)
		}
		return v.Float()
	}
	send := func(cmd Command) {
		t.Helper()
		if _, err := c.Send(cmd); err != nil {
			t.Fatal(err)
		}
	}

	// Fast travel: refused to a place not discovered, while over-encumbered, and to
	// no place; allowed to a discovered one, which moves the player.
	var flagon uint32
	srv.View(func(db *Database) {
		w, _ := ReadWorld(db)
		for _, l := range w.Locations {
			if l.Name == "Flagon Tunnel" && !l.Discovered {
				flagon = l.ID
			}
		}
	})
	if r, err := c.Do(ctx, FastTravel(flagon)); err != nil || r.Allowed || r.Success {
		t.Fatalf("fast travel to Flagon Tunnel (not discovered): %+v %v", r, err)
	}
	concord := locationID(t, srv, "Concord")
	if err := srv.Set("$.PlayerInfo.CurrWeight", 400); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Do(ctx, FastTravel(concord)); err != nil || r.Allowed {
		t.Fatalf("fast travel while over-encumbered: %+v %v", r, err)
	}
	srv.View(func(db *Database) {
		if _, err := CanFastTravel(db, concord); !errors.Is(err, ErrRefused) {
			t.Errorf("CanFastTravel over-encumbered: %v", err)
		}
	})
	if err := srv.Set("$.PlayerInfo.CurrWeight", 95); err != nil {
		t.Fatal(err)
	}
	c.View(func(db *Database) {
		if x := num(db, "$.Map.World.Player.X"); x != float64(float32(-78972.78)) {
			t.Fatalf("refused fast travel moved the player to X %v", x)
		}
	})
	if r, err := c.Do(ctx, FastTravel(concord)); err != nil || !r.Allowed || !r.Success {
		t.Fatalf("fast travel to Concord: %+v %v", r, err)
	}
	c.View(func(db *Database) {
		w, err := ReadWorld(db)
		if err != nil {
			t.Fatal(err)
		}
		if w.Player != (Point{float64(float32(-60286.01)), float64(float32(72977.79))}) {
			t.Errorf("after fast travel to Concord the player is at %+v", w.Player)
		}
		if x := num(db, "$.Map.Local.Player.X"); x != w.Player.X {
			t.Errorf("local map player X %v", x)
		}
	})

	// The custom marker.
	send(PlaceCustomMarker(-50000.5, 80000.25))
	wait("custom marker placed", func(db *Database) bool {
		w, _ := ReadWorld(db)
		return w.Custom == MapMarker{Point{-50000.5, 80000.25}, true} && num(db, "$.Map.Local.Custom.X") == -50000.5
	})
	send(RemoveCustomMarker())
	wait("custom marker removed", func(db *Database) bool { w, _ := ReadWorld(db); return !w.Custom.Visible })

	// Quest markers: The First Step (formID 1160046) is tracked with one objective
	// marker; a second one is added to the world map. Toggling takes both off both
	// maps and puts them back with new ids.
	var markerID uint32
	c.View(func(db *Database) {
		w, _ := ReadWorld(db)
		if len(w.Quests) != 1 || w.Quests[0].QuestIDs[0] != 1160046 {
			t.Fatalf("recorded quest markers %+v", w.Quests)
		}
		markerID = w.Quests[0].ID
	})
	var second []byte
	srv.View(func(db *Database) {
		n := maxID(db)
		arr, _ := db.Lookup("$.Map.World.Quests")
		obj := Entry{Type: TypeObject, ID: n + 6}
		obj.Add = obj.Add.AppendKey("X", n+1).AppendKey("Y", n+2).AppendKey("Name", n+3).AppendKey("QuestId", n+5)
		for _, e := range []Entry{
			{Type: TypeFloat, ID: n + 1, Float: 100}, {Type: TypeFloat, ID: n + 2, Float: 200},
			{Type: TypeString, ID: n + 3, Str: []byte("Second objective")}, {Type: TypeUint32, ID: n + 4, Uint: 1160046},
			{Type: TypeArray, ID: n + 5, Elems: AppendIDs(nil, n+4)}, obj,
			{Type: TypeArray, ID: arr.ID(), Elems: AppendIDs(nil, markerID, n+6)},
		} {
			second, _ = e.Append(second)
		}
	})
	if err := srv.Update(second); err != nil {
		t.Fatal(err)
	}
	wait("two quest markers", func(db *Database) bool { w, _ := ReadWorld(db); return len(w.Quests) == 2 })
	send(ToggleQuestMarker(1160046, 1, 4))
	wait("quest marker off", func(db *Database) bool {
		q, _ := QuestByFormID(db, 1160046, 1)
		w, _ := ReadWorld(db)
		local, _ := db.Lookup("$.Map.Local.Quests")
		return !q.Key("active").Bool() && len(w.Quests) == 0 && local.Len() == 0
	})
	c.View(func(db *Database) {
		if _, ok := db.Get(markerID); ok {
			t.Error("the removed marker's value is still in the app's database")
		}
	})
	send(ToggleQuestMarker(0, 0, 6)) // Miscellaneous: refused
	send(ToggleQuestMarker(1160046, 1, 4))
	wait("quest marker back", func(db *Database) bool {
		q, _ := QuestByFormID(db, 1160046, 1)
		w, _ := ReadWorld(db)
		local, _ := db.Lookup("$.Map.Local.Quests")
		return q.Key("active").Bool() && len(w.Quests) == 2 && local.Len() == 1
	})
	c.View(func(db *Database) {
		w, _ := ReadWorld(db)
		if q := w.Quests[0]; q.Name != "Talk to the settlers at Tenpines Bluff" || q.ID == markerID || q.X != float64(float32(-22534.285)) {
			t.Errorf("restored marker %+v", q)
		}
		if q := w.Quests[1]; q.Name != "Second objective" || q.X != 100 || len(q.QuestIDs) != 1 || q.QuestIDs[0] != 1160046 {
			t.Errorf("restored second marker %+v", q)
		}
		misc, _ := QuestByFormID(db, 0, -1)
		if misc.Key("active").Bool() {
			t.Error("the Miscellaneous list was toggled")
		}
	})

	// Items: a stale version and a junk item are refused; a Stimpak is used.
	var stimpak, water, beer uint32
	var version int64
	c.View(func(db *Database) {
		s, _ := itemNamed(db, "Stimpak")
		w, _ := itemNamed(db, "Purified Water")
		b, _ := itemNamed(db, "Beer Bottle")
		stimpak, water, beer = uint32(s.Key("HandleID").Int()), uint32(w.Key("HandleID").Int()), uint32(b.Key("HandleID").Int())
		v, _ := db.Lookup("$.Inventory.Version")
		version = v.Int()
		if s.Key("count").Int() != 10 || s.Key("favorite").Int() != 9 || version != 305 {
			t.Fatalf("recorded Stimpak %v, version %d", s.Interface(), version)
		}
	})
	send(UseItem(stimpak, version-1)) // stale
	send(UseItem(beer, version))      // junk
	send(UseItem(stimpak, version))
	wait("a Stimpak used", func(db *Database) bool {
		s, _ := itemNamed(db, "Stimpak")
		return s.Key("count").Int() == 9 && num(db, "$.Inventory.Version") == 306
	})
	// The Beer Bottle (one) is dropped: it leaves sortedIDS and its category.
	send(DropItem(beer, 1, version+1, []int64{0}))
	wait("the Beer Bottle dropped", func(db *Database) bool {
		_, ok := itemNamed(db, "Beer Bottle")
		return !ok && num(db, "$.Inventory.Version") == 307
	})
	c.View(func(db *Database) {
		junk, _ := db.Lookup("$.Inventory['35']")
		if junk.Len() != 2 {
			t.Errorf("category 35 has %d items after the drop, want 2", junk.Len())
		}
	})
	// Purified Water takes favourite slot 9 from the Stimpak.
	send(SetFavorite(water, []int64{0}, 9, version+2))
	wait("water on slot 9", func(db *Database) bool {
		s, _ := itemNamed(db, "Stimpak")
		w, _ := itemNamed(db, "Purified Water")
		return w.Key("favorite").Int() == 9 && s.Key("favorite").Int() == -2
	})
	send(ToggleComponentTag(129700, version+3)) // Glass
	wait("Glass tagged", func(db *Database) bool {
		g, _ := db.Lookup("$.Inventory.InvComponents[0].taggedForSearch")
		return g.Bool()
	})
	send(CycleSearchMode(0))
	wait("sort mode 1", func(db *Database) bool { return num(db, "$.Inventory.SortMode") == 1 })
}
