package pipboy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

// seedEntries adds the first values of the real dump and the spec example as seeds.
func seedEntries(f *testing.F) {
	dump := readVector(f, payloadFile)
	it := NewEntries(dump)
	for i := 0; i < 64; i++ {
		start := it.Offset()
		if _, ok := it.Next(); !ok {
			break
		}
		f.Add(dump[start:it.Offset()])
	}
	f.Add(testutil.Unhex(f, specExample)[HeaderSize:])
}

func FuzzParseEntry(f *testing.F) {
	seedEntries(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		e, n, err := ParseEntry(b)
		if err != nil {
			return
		}
		out, err := e.Append(nil)
		if err != nil {
			t.Fatalf("append of a parsed value: %v", err)
		}
		// Booleans normalise any non-zero byte to 1; otherwise bytes round-trip.
		if e.Type != TypeBool && !bytes.Equal(out, b[:n]) {
			t.Fatalf("round trip: %x -> %x", b[:n], out)
		}
		e2, n2, err := ParseEntry(out)
		if err != nil || n2 != len(out) || !e2.Equal(&e) {
			t.Fatalf("reparse: %v", err)
		}
	})
}

func FuzzApply(f *testing.F) {
	dump := readVector(f, payloadFile)
	f.Add(dump[:2000])
	seedEntries(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		db := NewDatabase()
		if err := db.Apply(entries(t, i32(1, 1), obj(0, nil, "x", 1))); err != nil {
			t.Fatal(err)
		}
		before := jsonOf(t, db)
		err := db.Apply(b)
		if err != nil {
			if after := jsonOf(t, db); after != before {
				t.Fatalf("refused update changed the database: %v", err)
			}
			return
		}
		// Exports must terminate (cycles are bounded) and dumps must re-apply.
		if r, ok := db.Root(); ok {
			_, _ = r.AppendJSON(nil, "")
		}
		if dump, err := db.AppendDump(nil); err == nil {
			if err := NewDatabase().Apply(dump); err != nil {
				t.Fatalf("dump of an applied database does not apply: %v", err)
			}
		}
		for v := range db.All() {
			for range v.Elems() {
			}
		}
	})
}

func FuzzParseMessage(f *testing.F) {
	f.Add(readVector(f, streamFile)[:40])
	f.Add(testutil.Unhex(f, specExample))
	f.Add([]byte{0, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, n, err := ParseMessage(b, 1<<20)
		if err != nil {
			if n != 0 {
				t.Fatal("n != 0 on error")
			}
			return
		}
		out, err := m.Append(nil)
		if err != nil || !bytes.Equal(out, b[:n]) {
			t.Fatalf("round trip: %v", err)
		}
		r := NewReader(bytes.NewReader(b))
		m2, err := r.ReadMessage()
		if err != nil || m2.Type != m.Type || !bytes.Equal(m2.Content, m.Content) {
			t.Fatalf("Reader disagrees with ParseMessage: %v", err)
		}
	})
}

func FuzzParseMapFrame(f *testing.F) {
	for _, m := range []MapFrame{
		{Width: 4, Height: 2, Stride: 6, Pixels: []byte{1, 2, 3, 4, 0, 0, 5, 6, 7, 8, 0, 0}},
		{},
		{Width: 1, Height: 1, Pixels: []byte{255}, NW: Extent{-1, 2}},
	} {
		b, _ := m.Append(nil)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMapFrame(b)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrBadMap) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		out, err := m.Append(nil)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("round trip: %v", err)
		}
		if m.Width*m.Height <= 1<<16 {
			_ = m.Image(DefaultTint)
		}
	})
}

func FuzzParseJSONMessages(f *testing.F) {
	f.Add([]byte("{\"lang\":\"en\",\"version\":\"1.1.30.0\"}\n"))
	f.Add([]byte(`{"type": 1, "args": [4207600675, 7, 494, [0, 1]], "id": 3}`))
	f.Add([]byte(`{"allowed":true,"id":3,"success":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, err := ParseHello(b); err == nil {
			out, _ := h.Append(nil)
			if h2, err := ParseHello(out); err != nil || h2 != h {
				t.Fatalf("hello round trip: %v", err)
			}
		}
		if c, err := ParseCommand(b); err == nil {
			out, err := c.Append(nil)
			if err != nil {
				t.Fatalf("command append: %v", err)
			}
			if c2, err := ParseCommand(out); err != nil || c2.Type != c.Type || c2.ID != c.ID || len(c2.Args) != len(c.Args) {
				t.Fatalf("command round trip: %v", err)
			}
		}
		if r, err := ParseCommandResponse(b); err == nil {
			out, _ := r.Append(nil)
			if r2, err := ParseCommandResponse(out); err != nil || r2 != r {
				t.Fatalf("response round trip: %v", err)
			}
		}
	})
}

func FuzzLookup(f *testing.F) {
	for _, p := range []string{"$.PlayerInfo.PlayerName", "$.Inventory.sortedIDS[3]", "$['a'][0]", "x", "$[", "$.a..b"} {
		f.Add(p)
	}
	db := NewDatabase()
	if err := db.Apply(readVector(f, payloadFile)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		_, _ = db.Lookup(path)
	})
}

func FuzzDumpFromJSON(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,"x",1.5,{"c":-3}],"d":4294967295}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		payload, err := DumpFromJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		db := NewDatabase()
		if err := db.Apply(payload); err != nil {
			t.Fatalf("a dump built from JSON does not apply: %v", err)
		}
		r, _ := db.Root()
		j, err := r.AppendJSON(nil, "")
		if err != nil {
			t.Fatal(err)
		}
		payload2, err := DumpFromJSON(bytes.NewReader(j))
		if err != nil || !bytes.Equal(payload, payload2) {
			t.Fatalf("JSON -> dump -> JSON -> dump differs: %v\n%s", err, j)
		}
	})
}

func FuzzLoadRecording(f *testing.F) {
	var file bytes.Buffer
	rec, _ := NewRecorder(&file, time.Unix(100, 0))
	rec.Record(time.Unix(101, 0), 1, FromGame, Message{Type: TypeNewConnection, Content: []byte("{\"lang\":\"en\",\"version\":\"1.1.30.0\"}\n")})
	rec.Record(time.Unix(101, 0), 1, FromGame, Message{Type: TypeDataUpdate, Content: readVector(f, payloadFile)[:300]})
	rec.Record(time.Unix(102, 0), 1, FromApp, Message{Type: TypeCommandRequest, Content: []byte(`{"type":13,"args":[],"id":1}`)})
	f.Add(file.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := LoadRecording(bytes.NewReader(b), 1<<20)
		if err != nil {
			if !errors.Is(err, ErrBadRecording) {
				t.Fatalf("error without ErrBadRecording: %v", err)
			}
			return
		}
		// Re-recording the records gives the same bytes.
		var out bytes.Buffer
		w, _ := NewRecorder(&out, r.Start)
		for _, x := range r.Records {
			if err := w.Record(r.Start.Add(x.Time), x.Session, x.Dir, x.Message); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out.Bytes(), b) {
			t.Fatalf("recording round trip differs")
		}
		_, _ = r.FinalState(0)
	})
}

// FuzzDecodeInput runs what `gamewire pipboy decode` runs on any file.
func FuzzDecodeInput(f *testing.F) {
	f.Add(readVector(f, streamFile)[:600])
	f.Add(readVector(f, payloadFile)[:600])
	f.Add([]byte(`{"PlayerInfo":{"PlayerName":"x","XPLevel":3}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, _, err := DecodeInput(b, func(int64, Direction, Message) error { return nil })
		if err != nil {
			return
		}
		if r, ok := s.DB.Root(); ok {
			_, _ = r.AppendJSON(nil, "")
		}
	})
}

func FuzzDiscovery(f *testing.F) {
	f.Add([]byte(DiscoveryRequest))
	f.Add([]byte(`{"IsBusy":false,"MachineType":"PC"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = ParseDiscoveryRequest(b)
		if r, err := ParseDiscoveryReply(b); err == nil {
			j, _ := json.Marshal(r)
			if r2, err := ParseDiscoveryReply(j); err != nil || r2 != r {
				t.Fatalf("discovery reply round trip: %v", err)
			}
		}
	})
}

// FuzzCommandHandler runs commands from an app (any JSON a type 5 message can carry)
// through the emulator's DefaultCommandHandler, twice, on the recorded database:
// nothing panics, fast travel is always answered, and the database stays whole (its
// dump names no missing value).
func FuzzCommandHandler(f *testing.F) {
	dump := readVector(f, payloadFile)
	db := NewDatabase()
	if err := db.Apply(dump); err != nil {
		f.Fatal(err)
	}
	w, err := ReadWorld(db)
	if err != nil {
		f.Fatal(err)
	}
	inv, _ := db.Lookup("$.Inventory.Version")
	version := inv.Int()
	var handle uint32
	for it := range inventoryItems(db) {
		if it.Key("text").Str() == "Stimpak" {
			handle = uint32(it.Key("HandleID").Int())
		}
	}
	var discovered uint32
	for _, l := range w.Locations {
		if l.Discovered {
			discovered = l.ID
		}
	}
	for _, cmd := range []Command{
		FastTravel(w.Locations[0].ID), FastTravel(discovered), FastTravel(1), PlaceCustomMarker(-1, 2), RemoveCustomMarker(),
		ToggleQuestMarker(1160046, 1, 4), ToggleQuestMarker(0, 0, 6), UseItem(handle, version),
		DropItem(handle, 3, version, []int64{0}), SetFavorite(handle, []int64{0}, 2, version),
		ToggleComponentTag(129700, version), CycleSearchMode(1), ToggleRadio(1), ToggleLocalMap(),
	} {
		b, _ := cmd.Append(nil)
		f.Add(b)
	}
	f.Add([]byte(`{"type":2,"args":[4207599286],"id":1}`))
	f.Add([]byte(`{"type":6,"args":["1e999",null],"id":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cmd, err := ParseCommand(b)
		if err != nil {
			return
		}
		db := NewDatabase()
		if err := db.Apply(dump); err != nil {
			t.Fatal(err)
		}
		srv := NewServer(db)
		for range 2 {
			resp, err := DefaultCommandHandler(context.Background(), srv, cmd)
			if _, ok := ArgUint(cmd.Args, 0); cmd.Type == CmdFastTravel && ok && (resp == nil || err != nil) {
				t.Fatalf("fast travel %v not answered: %v", cmd.Args, err)
			}
		}
		srv.View(func(db *Database) {
			if _, err := db.AppendDump(nil); err != nil {
				t.Fatalf("database broken by %s: %v", b, err)
			}
		})
	})
}
