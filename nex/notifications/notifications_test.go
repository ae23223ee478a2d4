package notifications

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

var cases = []struct {
	v  types.Version
	st types.Settings
	ev Event
}{
	{types.Version3, types.Settings{Version: types.Version3}, Event{Source: 5, Type: TypeNewParticipant, Param1: 7, Param2: 5, StrParam: "hi"}},
	{types.Version3_4, types.Settings{Version: types.Version3_4}, Event{Source: 5, Type: TypeNewParticipant, Param1: 7, Param2: 5, StrParam: "hi", Param3: 2}},
	{types.Version3_5, types.Settings{StructureHeader: true, Version: types.Version3_5}, Event{Source: 5, Type: TypeOwnershipChanged, Param1: 7, Param2: 6, Param3: 1}},
	{types.Version4, types.Settings{StructureHeader: true, PIDSize: 8, Version: types.Version4}, Event{Source: 1 << 40, Type: 200000, Param1: 1 << 33, Param2: 3, Param3: 4}},
	{types.Version4, types.Settings{StructureHeader: true, PIDSize: 8, Version: types.Version4}, Event{Source: 9, Type: 200000, Param1: 1,
		Map: []types.Pair[string, types.Variant]{{Key: "url", Value: types.Variant{Type: types.VariantString, Str: "wss://x"}}}}},
}

func TestEventVersions(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.v.String(), func(t *testing.T) {
			w := types.NewWriter(nil, tc.st)
			tc.ev.Append(&w)
			b, err := w.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			r := types.NewReader(b, tc.st)
			got := ReadEvent(&r)
			if err := r.Done(); err != nil || !reflect.DeepEqual(got, tc.ev) {
				t.Fatalf("got %+v (%v), want %+v", got, err, tc.ev)
			}
			for n := range len(b) {
				r := types.NewReader(b[:n], tc.st)
				ReadEvent(&r)
				if r.Done() == nil {
					t.Fatalf("prefix of %d bytes parsed", n)
				}
			}
		})
	}
}

func FuzzReadEvent(f *testing.F) {
	for i, tc := range cases {
		w := types.NewWriter(nil, tc.st)
		tc.ev.Append(&w)
		f.Add(w.B, uint8(i))
	}
	// Decode, encode, decode, encode: both encodings agree (bytes, not values:
	// a Double may be NaN).
	f.Fuzz(func(t *testing.T, data []byte, i uint8) {
		tc := cases[int(i)%len(cases)]
		r := types.NewReader(data, tc.st)
		ev := ReadEvent(&r)
		if r.Done() != nil {
			return
		}
		w := types.NewWriter(nil, tc.st)
		ev.Append(&w)
		if w.Err() != nil {
			return
		}
		r = types.NewReader(w.B, tc.st)
		ev2 := ReadEvent(&r)
		if err := r.Done(); err != nil {
			t.Fatalf("re-encoding does not parse: %v", err)
		}
		w2 := types.NewWriter(nil, tc.st)
		ev2.Append(&w2)
		if !bytes.Equal(w.B, w2.B) {
			t.Fatalf("round trip: %x vs %x", w.B, w2.B)
		}
	})
}
