package pipboy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

// specExample is the 59-byte data update of "Type 3: Data Update" in the Pip-Boy PROTOCOL.md.
const specExample = `3b000000 03
	03 0a000000 2a000000
	07 0b000000 0200 01000000 02000000
	08 0c000000 0200 05000000 666f6f00 06000000 68656c6c6f00 0200 03000000 04000000`

func TestSpecExample(t *testing.T) {
	b := testutil.Unhex(t, specExample)
	m, n, err := ParseMessage(b, 0)
	if err != nil || n != len(b) || m.Type != TypeDataUpdate || len(m.Content) != 59 {
		t.Fatalf("ParseMessage: %v n=%d type=%v len=%d", err, n, m.Type, len(m.Content))
	}
	it := NewEntries(m.Content)
	var got []Entry
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		got = append(got, e)
	}
	if it.Err() != nil || len(got) != 3 {
		t.Fatalf("entries: %d, %v", len(got), it.Err())
	}
	if got[0].Type != TypeInt32 || got[0].ID != 10 || got[0].Int != 42 {
		t.Errorf("first: %+v", got[0])
	}
	if got[1].Type != TypeArray || got[1].ID != 11 || got[1].Elems.Len() != 2 || got[1].Elems.At(0) != 1 || got[1].Elems.At(1) != 2 {
		t.Errorf("second: %+v", got[1])
	}
	var keys []string
	var ids []uint32
	for k, id := range got[2].Add.All {
		keys = append(keys, string(k))
		ids = append(ids, id)
	}
	if got[2].Type != TypeObject || got[2].ID != 12 || strings.Join(keys, ",") != "foo,hello" || ids[0] != 5 || ids[1] != 6 ||
		got[2].Remove.Len() != 2 || got[2].Remove.At(0) != 3 || got[2].Remove.At(1) != 4 {
		t.Errorf("third: %+v keys %v ids %v", got[2], keys, ids)
	}
	// Re-encoding gives the same bytes.
	var payload []byte
	for i := range got {
		payload, err = got[i].Append(payload)
		if err != nil {
			t.Fatal(err)
		}
	}
	out, _ := Message{Type: TypeDataUpdate, Content: payload}.Append(nil)
	if !bytes.Equal(out, b) {
		t.Fatalf("re-encoded:\n%x\nwant\n%x", out, b)
	}
}

// entries encodes values into an update payload.
func entries(t testing.TB, es ...Entry) []byte {
	t.Helper()
	var b []byte
	var err error
	for i := range es {
		if b, err = es[i].Append(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func obj(id uint32, remove []uint32, kv ...any) Entry {
	var add KeyList
	for i := 0; i < len(kv); i += 2 {
		add = add.AppendKey(kv[i].(string), uint32(kv[i+1].(int)))
	}
	return Entry{Type: TypeObject, ID: id, Add: add, Remove: AppendIDs(nil, remove...)}
}

func str(id uint32, s string) Entry { return Entry{Type: TypeString, ID: id, Str: []byte(s)} }
func i32(id uint32, v int32) Entry  { return Entry{Type: TypeInt32, ID: id, Int: v} }
func arr(id uint32, ids ...uint32) Entry {
	return Entry{Type: TypeArray, ID: id, Elems: AppendIDs(nil, ids...)}
}

func jsonOf(t testing.TB, db *Database) string {
	t.Helper()
	r, ok := db.Root()
	if !ok {
		t.Fatal("no root")
	}
	j, err := r.AppendJSON(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func TestAllValueTypes(t *testing.T) {
	db := NewDatabase()
	err := db.Apply(entries(t,
		Entry{Type: TypeBool, ID: 1, Bool: true},
		Entry{Type: TypeInt8, ID: 2, Int: -5},
		Entry{Type: TypeUint8, ID: 3, Uint: 250},
		Entry{Type: TypeInt32, ID: 4, Int: -100000},
		Entry{Type: TypeUint32, ID: 5, Uint: 4207600675},
		Entry{Type: TypeFloat, ID: 6, Float: 1.5},
		str(7, `q"\`),
		arr(8, 1, 2),
		obj(0, nil, "b", 1, "i8", 2, "u8", 3, "i32", 4, "u32", 5, "f", 6, "s", 7, "a", 8),
	))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"i8":-5,"u8":250,"i32":-100000,"u32":4207600675,"f":1.5,"s":"q\"\\","a":[true,-5]}`
	if got := jsonOf(t, db); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, e := range []Entry{{Type: TypeBool, ID: 9}, {Type: TypeFloat, ID: 9, Float: -0.25}, arr(9), obj(9, nil)} {
		b, _ := e.Append(nil)
		p, n, err := ParseEntry(b)
		if err != nil || n != len(b) || !p.Equal(&e) {
			t.Errorf("%v round trip: %v", e.Type, err)
		}
	}
}

func TestUpdateSemantics(t *testing.T) {
	tests := []struct {
		name    string
		updates [][]Entry
		want    string
		values  int
	}{
		{
			name: "replace scalar by id",
			updates: [][]Entry{
				{i32(1, 1), obj(0, nil, "x", 1)},
				{i32(1, 2)},
			},
			want: `{"x":2}`, values: 2,
		},
		{
			name: "remove deletes the value and its subtree",
			updates: [][]Entry{
				{i32(1, 1), i32(2, 2), obj(3, nil, "n", 2), obj(0, nil, "a", 1, "sub", 3)},
				{obj(0, []uint32{3})},
			},
			want: `{"a":1}`, values: 2,
		},
		{
			name: "key removed and added in one update ends with the added value",
			updates: [][]Entry{
				{i32(1, 1), obj(0, nil, "foo", 1)},
				{i32(5, 1234), obj(0, []uint32{1}, "foo", 5)},
			},
			want: `{"foo":1234}`, values: 2,
		},
		{
			name: "add replaces an existing key",
			updates: [][]Entry{
				{i32(1, 1), obj(0, nil, "foo", 1)},
				{i32(5, 7), obj(0, nil, "foo", 5)},
			},
			want: `{"foo":7}`, values: 2,
		},
		{
			name: "removal is per object",
			updates: [][]Entry{
				{i32(1, 1), i32(2, 2), obj(3, nil, "v", 1), obj(4, nil, "v", 2), obj(0, nil, "a", 3, "b", 4)},
				{obj(3, []uint32{2})}, // 2 belongs to object 4, not 3: nothing changes
			},
			want: `{"a":{"v":1},"b":{"v":2}}`, values: 5,
		},
		{
			name: "array shrink deletes values no longer named",
			updates: [][]Entry{
				{i32(1, 1), i32(2, 2), arr(3, 1, 2), obj(0, nil, "a", 3)},
				{arr(3, 2)},
			},
			want: `{"a":[2]}`, values: 3,
		},
		{
			name: "value named twice survives one removal",
			updates: [][]Entry{
				{i32(1, 1), arr(2, 1), arr(3, 1), obj(0, nil, "cat", 2, "sorted", 3)},
				{arr(2)},
			},
			want: `{"cat":[],"sorted":[1]}`, values: 4,
		},
		{
			name: "reference defined later in the same update",
			updates: [][]Entry{
				{obj(0, nil, "x", 1), i32(1, 9)},
			},
			want: `{"x":9}`, values: 2,
		},
		{
			name: "type change of an id",
			updates: [][]Entry{
				{i32(1, 1), obj(0, nil, "x", 1)},
				{str(1, "now a string")},
			},
			want: `{"x":"now a string"}`, values: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := NewDatabase()
			for i, u := range tc.updates {
				if err := db.Apply(entries(t, u...)); err != nil {
					t.Fatalf("update %d: %v", i, err)
				}
			}
			if got := jsonOf(t, db); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if db.Len() != tc.values {
				t.Errorf("values: got %d, want %d", db.Len(), tc.values)
			}
		})
	}
}

func TestUpdateRefused(t *testing.T) {
	base := func(t *testing.T) *Database {
		db := NewDatabase()
		if err := db.Apply(entries(t, i32(1, 1), obj(0, nil, "x", 1))); err != nil {
			t.Fatal(err)
		}
		return db
	}
	tests := []struct {
		name    string
		payload func(t *testing.T) []byte
		want    error
		detail  string
	}{
		{"unknown id in array", func(t *testing.T) []byte { return entries(t, i32(1, 2), arr(7, 1, 99)) }, ErrUnknownID, "offset 9"},
		{"unknown id in object", func(t *testing.T) []byte { return entries(t, obj(0, nil, "y", 42)) }, ErrUnknownID, `key "y"`},
		{"unknown id in remove list", func(t *testing.T) []byte { return entries(t, obj(0, []uint32{42})) }, ErrUnknownID, "remove[0]"},
		{"unknown value type", func(t *testing.T) []byte { return append(entries(t, i32(1, 5)), 9, 1, 0, 0, 0) }, ErrUnknownValueType, "offset 9"},
		{"truncated value", func(t *testing.T) []byte { return append(entries(t, i32(1, 5)), 3, 1, 0, 0, 0, 7) }, ErrTruncated, "offset 9"},
		{"unterminated string", func(t *testing.T) []byte { return append(entries(t, i32(1, 5)), 6, 1, 0, 0, 0, 'a') }, ErrTruncated, "NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := base(t)
			before := jsonOf(t, db)
			err := db.Apply(tc.payload(t))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("got %v, want %v mentioning %q", err, tc.want, tc.detail)
			}
			if after := jsonOf(t, db); after != before || db.Len() != 2 {
				t.Fatalf("database changed by a refused update: %s -> %s", before, after)
			}
		})
	}
}

// TestEntryPrefixes: every strict prefix of a valid value is an error, never a panic.
func TestEntryPrefixes(t *testing.T) {
	for _, e := range []Entry{i32(1, 1), str(2, "abc"), arr(3, 1, 2), obj(4, []uint32{9}, "k", 1), {Type: TypeBool, ID: 5}, {Type: TypeFloat, ID: 6}} {
		b, _ := e.Append(nil)
		for i := range len(b) {
			if _, _, err := ParseEntry(b[:i]); !errors.Is(err, ErrTruncated) {
				t.Errorf("%v prefix %d: got %v, want ErrTruncated", e.Type, i, err)
			}
		}
	}
}

func TestMessagePrefixes(t *testing.T) {
	b := testutil.Unhex(t, specExample)
	for i := range len(b) {
		if _, _, err := ParseMessage(b[:i], 0); !errors.Is(err, ErrTruncated) {
			t.Errorf("prefix %d: got %v", i, err)
		}
		_, err := NewReader(bytes.NewReader(b[:i])).ReadMessage()
		if i == 0 {
			if err != io.EOF {
				t.Errorf("empty stream: got %v, want io.EOF", err)
			}
		} else if !errors.Is(err, ErrTruncated) {
			t.Errorf("reader prefix %d: got %v", i, err)
		}
	}
}

func TestMessageBadInput(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want error
	}{
		{"size above default limit", "01000001 03", 0, ErrTooLarge},
		{"size above configured limit", "00010000 03", 255, ErrTooLarge},
		{"unknown type", "00000000 07", 0, ErrUnknownMessageType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := testutil.Unhex(t, tc.in)
			if _, _, err := ParseMessage(b, tc.max); !errors.Is(err, tc.want) {
				t.Errorf("ParseMessage: got %v, want %v", err, tc.want)
			}
			r := NewReader(bytes.NewReader(b))
			r.MaxSize = tc.max
			if _, err := r.ReadMessage(); !errors.Is(err, tc.want) {
				t.Errorf("Reader: got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestReaderDoesNotTrustSize: a frame claiming 16 MiB with 10 bytes behind it fails
// without the reader allocating the claimed size.
func TestReaderDoesNotTrustSize(t *testing.T) {
	b := append(testutil.Unhex(t, "00000001 03"), make([]byte, 10)...)
	r := NewReader(bytes.NewReader(b))
	_, err := r.ReadMessage()
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("got %v, want ErrTruncated", err)
	}
	if cap(r.buf) > 1<<20 {
		t.Fatalf("reader allocated %d bytes for a truncated 16 MiB claim", cap(r.buf))
	}
}

func TestHelloAndCommands(t *testing.T) {
	h, err := ParseHello([]byte("{\"lang\":\"en\",\"version\":\"1.1.30.0\"}\n"))
	if err != nil || h != (Hello{Lang: "en", Version: "1.1.30.0"}) {
		t.Fatalf("hello: %+v %v", h, err)
	}
	b, _ := h.Append(nil)
	if string(b) != "{\"lang\":\"en\",\"version\":\"1.1.30.0\"}\n" {
		t.Fatalf("hello append: %q", b)
	}
	for _, bad := range []string{`{"lang":"en","version":"beta"}`, `{"lang":"en"`, `[]`, `{"lang":"en","version":"1.0"} x`} {
		if _, err := ParseHello([]byte(bad)); !errors.Is(err, ErrBadJSON) {
			t.Errorf("hello %s: got %v", bad, err)
		}
	}
	c, err := ParseCommand([]byte(`{"type": 1, "args": [4207600675, 7, 494, [0, 1]], "id": 3}`))
	if err != nil || c.Type != CmdDropItem || c.ID != 3 || len(c.Args) != 4 {
		t.Fatalf("command: %+v %v", c, err)
	}
	if v, ok := ArgUint(c.Args, 0); !ok || v != 4207600675 {
		t.Fatalf("handle id arg: %v %v", v, ok)
	}
	helpers := []struct {
		cmd  Command
		want string
	}{
		{ToggleRadio(50308), `{"type":12,"args":[50308],"id":34}`},
		{FastTravel(48363), `{"type":9,"args":[48363],"id":34}`},
		{ToggleLocalMap(), `{"type":13,"args":[],"id":34}`},
		{DropItem(4207600413, 1, 0, []int64{0}), `{"type":1,"args":[4207600413,1,0,[0]],"id":34}`},
		{PlaceCustomMarker(-71774.5, 87841.25), `{"type":6,"args":[-71774.5,87841.25,false],"id":34}`},
		{UseItem(7, 494), `{"type":0,"args":[7,0,494],"id":34}`},
		{RemoveCustomMarker(), `{"type":7,"args":[],"id":34}`},
		// The other rows of the command table ("Type 5: Command Request").
		{SetFavorite(4207600675, []int64{0, 1}, 7, 494), `{"type":2,"args":[4207600675,[0,1],7,494],"id":34}`},
		{ToggleComponentTag(1234, 494), `{"type":3,"args":[1234,494],"id":34}`},
		{CycleSearchMode(6), `{"type":4,"args":[6],"id":34}`},
		{ToggleQuestMarker(2345, 0, false), `{"type":5,"args":[2345,0,false],"id":34}`},
	}
	for _, tc := range helpers {
		tc.cmd.ID = 34
		b, err := tc.cmd.Append(nil)
		if err != nil || string(b) != tc.want {
			t.Errorf("got %s, want %s (%v)", b, tc.want, err)
		}
		back, err := ParseCommand(b)
		if err != nil || back.Type != tc.cmd.Type || back.ID != 34 {
			t.Errorf("parse back %s: %+v %v", b, back, err)
		}
	}
	for _, bad := range []string{`{"args":[],"id":1}`, `{"type":1,"args":[]}`, `nope`} {
		if _, err := ParseCommand([]byte(bad)); !errors.Is(err, ErrBadJSON) {
			t.Errorf("command %s: got %v", bad, err)
		}
	}
	r, err := ParseCommandResponse([]byte(`{"allowed":true,"id":3,"success":true}`))
	if err != nil || r != (CommandResponse{Allowed: true, ID: 3, Success: true}) {
		t.Fatalf("response: %+v %v", r, err)
	}
	if _, err := ParseCommandResponse([]byte(`{"allowed":true,"success":true`)); !errors.Is(err, ErrBadJSON) {
		t.Fatalf("truncated response: %v", err)
	}
}

// TestLargeObject exercises the indexed paths for objects above largeObject keys:
// the results must match what the scanning paths give for small objects.
func TestLargeObject(t *testing.T) {
	const n = 3000
	var first []Entry
	var kv []any
	for i := range n {
		first = append(first, i32(uint32(1+i), int32(i)))
		kv = append(kv, fmt.Sprintf("k%d", i), 1+i)
	}
	kv = append(kv, "k5", 1+7) // a repeated key: the later pair wins
	first = append(first, obj(0, nil, kv...))
	db := NewDatabase()
	if err := db.Apply(entries(t, first...)); err != nil {
		t.Fatal(err)
	}
	root, _ := db.Root()
	if root.Len() != n || root.Key("k5").Int() != 7 || root.Key("k2999").Int() != 2999 {
		t.Fatalf("after the first update: %d keys, k5=%d", root.Len(), root.Key("k5").Int())
	}
	// Remove the values of the even keys (ids 1, 3, 5, ...), and re-add k0 with a new
	// value in the same update.
	var remove []uint32
	for i := 0; i < n; i += 2 {
		remove = append(remove, uint32(1+i))
	}
	if err := db.Apply(entries(t, i32(99999, -1), obj(0, remove, "k0", 99999))); err != nil {
		t.Fatal(err)
	}
	root, _ = db.Root()
	keys := root.Keys()
	// The odd keys remain in order (k5 names id 8, which stays), then the re-added k0.
	if len(keys) != n/2+1 || keys[0] != "k1" || keys[len(keys)-1] != "k0" || root.Key("k0").Int() != -1 || root.Key("k5").Int() != 7 {
		t.Fatalf("after removal: %d keys, first %q, last %q, k0=%d", len(keys), keys[0], keys[len(keys)-1], root.Key("k0").Int())
	}
	if _, ok := db.Get(3); ok {
		t.Fatal("removed value 3 still in the database")
	}
	// The 1500 even ids (id 6 among them: the first update both named it, for k5, and
	// replaced it, and a value sent in an update is kept by it), k0's new value, root.
	if db.Len() != n/2+2 {
		t.Fatalf("values: %d, want %d", db.Len(), n/2+2)
	}
	// Removing id 8 drops both keys naming it, and the value.
	if err := db.Apply(entries(t, obj(0, []uint32{8}))); err != nil {
		t.Fatal(err)
	}
	root, _ = db.Root()
	if root.Key("k5").IsValid() || root.Key("k7").IsValid() || root.Len() != n/2-1 {
		t.Fatalf("after removing id 8: %d keys", root.Len())
	}
	if _, ok := db.Get(8); ok {
		t.Fatal("value 8 still in the database")
	}
}

// TestSharedSubtreeExport: a hostile update sharing subtrees (each array names the
// next one twice) would expand to 2^60 values; exports stop with an error instead.
func TestSharedSubtreeExport(t *testing.T) {
	var es []Entry
	es = append(es, i32(100, 1))
	for i := uint32(60); i >= 1; i-- {
		next := i + 1
		if i == 60 {
			next = 100
		}
		es = append(es, arr(i, next, next))
	}
	es = append(es, obj(0, nil, "a", 1))
	db := NewDatabase()
	if err := db.Apply(entries(t, es...)); err != nil {
		t.Fatal(err)
	}
	root, _ := db.Root()
	if _, err := root.AppendJSON(nil, ""); err == nil || !strings.Contains(err.Error(), "shared subtrees") {
		t.Fatalf("got %v, want the visit budget error", err)
	}
	_ = root.Interface() // returns, truncated
	if dump, err := db.AppendDump(nil); err != nil || NewDatabase().Apply(dump) != nil {
		t.Fatalf("dump of a shared tree: %v", err)
	}
}

// TestSharedStringExport: one long string named by thousands of array elements is
// cut off by the output budget instead of expanding to tens of megabytes.
func TestSharedStringExport(t *testing.T) {
	ids := make([]uint32, 6000)
	for i := range ids {
		ids[i] = 1
	}
	db := NewDatabase()
	if err := db.Apply(entries(t, str(1, strings.Repeat("x", 30000)), arr(2, ids...), obj(0, nil, "a", 2))); err != nil {
		t.Fatal(err)
	}
	root, _ := db.Root()
	out, err := root.AppendJSON(nil, "")
	if err == nil || !strings.Contains(err.Error(), "shared subtrees") || len(out) > 4<<20 {
		t.Fatalf("got %d bytes, %v; want the output budget error", len(out), err)
	}
}

// TestDumpFromJSONRefusesDuplicateKeys: a Pip-Boy object holds each key once, so
// a JSON tree naming a key twice in one object is refused (found by
// FuzzDumpFromJSON: {"":[],"":0} left the array in the dump with no object
// naming it), while the same key in different objects is fine.
func TestDumpFromJSONRefusesDuplicateKeys(t *testing.T) {
	for _, bad := range []string{`{"a":1,"a":2}`, `{"":[],"":0}`, `{"x":{"k":true,"k":false}}`} {
		_, err := DumpFromJSON(strings.NewReader(bad))
		if !errors.Is(err, ErrBadJSON) || !strings.Contains(err.Error(), "appears twice") {
			t.Errorf("DumpFromJSON(%s) = %v, want ErrBadJSON naming the duplicate key", bad, err)
		}
	}
	if _, err := DumpFromJSON(strings.NewReader(`{"a":{"k":1},"b":{"k":2},"A":3}`)); err != nil {
		t.Errorf("the same key in different objects, or in another case: %v", err)
	}
}
