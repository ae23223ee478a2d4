package pipboy

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeDump decodes the real 366 KB dump into a fresh database.
func BenchmarkDecodeDump(b *testing.B) {
	dump := readVector(b, payloadFile)
	b.SetBytes(int64(len(dump)))
	b.ReportAllocs()
	for b.Loop() {
		db := NewDatabase()
		if err := db.Apply(dump); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeDumpJSONBaseline is the in-run reference for BenchmarkDecodeDump:
// encoding/json decoding the same tree, as JSON, into map[string]any.
func BenchmarkDecodeDumpJSONBaseline(b *testing.B) {
	db := NewDatabase()
	if err := db.Apply(readVector(b, payloadFile)); err != nil {
		b.Fatal(err)
	}
	root, _ := db.Root()
	j, err := root.AppendJSON(nil, "")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(readVector(b, payloadFile)))) // same unit as BenchmarkDecodeDump
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseDump only walks the dump's values (no database).
func BenchmarkParseDump(b *testing.B) {
	dump := readVector(b, payloadFile)
	b.SetBytes(int64(len(dump)))
	b.ReportAllocs()
	for b.Loop() {
		it := NewEntries(dump)
		for _, ok := it.Next(); ok; _, ok = it.Next() {
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
}

// smallUpdates are typical live updates on the recorded tree: the game changing HP, the
// clock and the caps (scalars by id), and replacing an object's member by a value with
// a new id (remove + add, as the game replaces subtrees). Applying replace[0] then
// replace[1] returns the tree to its recorded state.
func smallUpdates(tb testing.TB, db *Database) (scalars []byte, replace [2][]byte) {
	hp, err := db.Lookup("$.PlayerInfo.CurrHP")
	if err != nil {
		tb.Fatal(err)
	}
	hour, _ := db.Lookup("$.PlayerInfo.TimeHour")
	caps, _ := db.Lookup("$.PlayerInfo.Caps")
	scalars = entries(tb,
		Entry{Type: TypeFloat, ID: hp.ID(), Float: 100.5},
		Entry{Type: TypeFloat, ID: hour.ID(), Float: 18.25},
		Entry{Type: caps.Type(), ID: caps.ID(), Int: 968, Uint: 968},
	)
	info, _ := db.Lookup("$.PlayerInfo")
	const newID = 900001
	replace[0] = entries(tb,
		Entry{Type: TypeInt32, ID: newID, Int: 1001},
		obj(info.ID(), []uint32{caps.ID()}, "Caps", newID),
	)
	replace[1] = entries(tb,
		Entry{Type: caps.Type(), ID: caps.ID(), Int: 968, Uint: 968},
		obj(info.ID(), []uint32{newID}, "Caps", int(caps.ID())),
	)
	return scalars, replace
}

func BenchmarkApplySmallUpdate(b *testing.B) {
	db := NewDatabase()
	if err := db.Apply(readVector(b, payloadFile)); err != nil {
		b.Fatal(err)
	}
	scalars, replace := smallUpdates(b, db)
	b.Run("scalars", func(b *testing.B) {
		b.SetBytes(int64(len(scalars)))
		b.ReportAllocs()
		for b.Loop() {
			if err := db.Apply(scalars); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replace-member", func(b *testing.B) {
		b.SetBytes(int64(len(replace[0]) + len(replace[1])))
		b.ReportAllocs()
		for b.Loop() {
			for _, u := range replace {
				if err := db.Apply(u); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestApplySmallUpdateAllocs: applying numeric updates to a warm database allocates nothing.
func TestApplySmallUpdateAllocs(t *testing.T) {
	db := NewDatabase()
	if err := db.Apply(readVector(t, payloadFile)); err != nil {
		t.Fatal(err)
	}
	scalars, replace := smallUpdates(t, db)
	for name, us := range map[string][][]byte{"scalars": {scalars}, "replace-member": replace[:]} {
		run := func() {
			for _, u := range us {
				if err := db.Apply(u); err != nil {
					t.Fatal(err)
				}
			}
		}
		run() // warm up
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Errorf("%s: %v allocations per update, want 0", name, n)
		}
	}
	if v, _ := db.Lookup("$.PlayerInfo.Caps"); v.Int() != 968 || db.Len() != 12554 {
		t.Fatalf("after the updates: caps %d, %d values", v.Int(), db.Len())
	}
}

// BenchmarkParseMessage frames the recorded stream (headers only; contents alias it).
func BenchmarkParseMessage(b *testing.B) {
	stream := readVector(b, streamFile)
	b.ReportAllocs()
	for b.Loop() {
		for off := 0; off < len(stream); {
			_, n, err := ParseMessage(stream[off:], 0)
			if err != nil {
				b.Fatal(err)
			}
			off += n
		}
	}
}

func BenchmarkExportJSON(b *testing.B) {
	db := NewDatabase()
	if err := db.Apply(readVector(b, payloadFile)); err != nil {
		b.Fatal(err)
	}
	root, _ := db.Root()
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		out, err = root.AppendJSON(out[:0], "")
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(out)))
}

func BenchmarkLookup(b *testing.B) {
	db := NewDatabase()
	if err := db.Apply(readVector(b, payloadFile)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Lookup("$.Inventory.sortedIDS[3]"); err != nil {
			b.Fatal(err)
		}
	}
}
