// Package codecbench measures the generated matchmaking and notification codecs
// (nex/protocols/matchmaking, nex/protocols/notification) against the
// hand-written ones they replaced (handwritten_test.go), on the same bytes, and
// checks that both write and read those bytes alike. docs/performance.md
// "Generated protocol codecs" has the figures.
package codecbench

import (
	"bytes"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/protocols/notification"
	"github.com/gamewire/gamewire/nex/types"
)

// The two layouts measured: NEX 3.4 as the consoles send it (no structure
// headers, progress_score and param3 present) and NEX 3.8 (headers, revision 3).
var (
	s34 = types.Settings{Version: types.Version3_4}
	s38 = types.Settings{StructureHeader: true, Version: types.Version3_8}
)

func sampleSession() MatchmakeSession {
	return MatchmakeSession{
		Gathering: Gathering{ID: 77, Owner: 1001, Host: 1001, MinParticipants: 2, MaxParticipants: 8, ParticipationPolicy: 98,
			Flags: 0x200, Description: "room"},
		GameMode: 3, Attributes: []uint32{1, 2, 3, 4, 5, 6}, OpenParticipation: true, MatchmakeSystemType: 1,
		ApplicationBuffer: bytes.Repeat([]byte{9}, 32), ParticipationCount: 2, ProgressScore: 40,
		SessionKey: bytes.Repeat([]byte{1}, 32), Option0: 1,
		MatchmakeParam: []types.Pair[string, types.Variant]{{Key: "@SR", Value: types.Variant{Type: types.VariantBool, Bool: true}}},
		StartedTime:    1 << 40, UserPassword: "pw", ReferGID: 5, UserPasswordEnabled: true,
	}
}

func sampleCriteria() SearchCriteria {
	return SearchCriteria{Attributes: []string{"1", "", "0,5", "", "", ""}, GameMode: "3", MinParticipants: "2",
		MaxParticipants: "8", MatchmakeSystemType: "1", VacantOnly: true, ExcludeLocked: true, SelectionMethod: 1,
		VacantParticipants: 1, ExcludeUserPasswordSet: true, ReferGID: 0}
}

func sampleEvent() Event {
	return Event{Source: 1001, Type: 3001, Param1: 77, Param2: 1002, StrParam: "hello", Param3: 1}
}

func encode(t testing.TB, st types.Settings, f func(w *types.Writer)) []byte {
	w := types.NewWriter(nil, st)
	f(&w)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read decodes b with the generated reader into v (a pointer to a generated
// structure) and fails unless it is used up.
func read(t testing.TB, st types.Settings, b []byte, v interface {
	Read(*types.Reader, string)
	Append(*types.Writer)
}) {
	r := types.NewReader(b, st)
	v.Read(&r, "value")
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
}

// TestSameBytes: the generated codecs read the hand-written ones' bytes and write
// them back unchanged, at NEX 3.4 (the consoles' reading) and 3.8.
func TestSameBytes(t *testing.T) {
	ms := sampleSession()
	crit := sampleCriteria()
	ev := sampleEvent()
	for _, st := range []types.Settings{s34, s38} {
		v := st.Version
		old := encode(t, st, func(w *types.Writer) { ms.Append(w, v) })
		var g mm.MatchmakeSession
		read(t, st, old, &g)
		if g.ProgressScore != ms.ProgressScore || g.Description != ms.Description {
			t.Errorf("%v MatchmakeSession read as %+v", v, g)
		}
		if b := encode(t, st, g.Append); !bytes.Equal(b, old) {
			t.Errorf("%v MatchmakeSession:\n generated %x\n hand      %x", v, b, old)
		}
		old = encode(t, st, func(w *types.Writer) { crit.Append(w, v) })
		var gc mm.MatchmakeSessionSearchCriteria
		read(t, st, old, &gc)
		if gc.VacantParticipants != 1 || gc.GameMode != "3" {
			t.Errorf("%v SearchCriteria read as %+v", v, gc)
		}
		if b := encode(t, st, gc.Append); !bytes.Equal(b, old) {
			t.Errorf("%v SearchCriteria:\n generated %x\n hand      %x", v, b, old)
		}
		old = encode(t, st, func(w *types.Writer) { ev.Append(w, v) })
		var ge notification.NotificationEvent
		read(t, st, old, &ge)
		if ge.Param3 != 1 || ge.Text != "hello" {
			t.Errorf("%v NotificationEvent read as %+v", v, ge)
		}
		if b := encode(t, st, ge.Append); !bytes.Equal(b, old) {
			t.Errorf("%v NotificationEvent:\n generated %x\n hand      %x", v, b, old)
		}
	}
}

func benchDecodeSession(b *testing.B, st types.Settings) {
	ms := sampleSession()
	data := encode(b, st, func(w *types.Writer) { ms.Append(w, st.Version) })
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, st)
		_, _ = ReadMatchmakeSession(&r, st.Version)
		return r.Done()
	}, func() error {
		r := types.NewReader(data, st)
		var g mm.MatchmakeSession
		g.Read(&r, "session")
		return r.Done()
	})
}

func BenchmarkDecodeMatchmakeSession34(b *testing.B) { benchDecodeSession(b, s34) }
func BenchmarkDecodeMatchmakeSession38(b *testing.B) { benchDecodeSession(b, s38) }

func BenchmarkEncodeMatchmakeSession38(b *testing.B) {
	ms := sampleSession()
	var g mm.MatchmakeSession
	read(b, s38, encode(b, s38, func(w *types.Writer) { ms.Append(w, s38.Version) }), &g)
	buf := make([]byte, 0, 1024)
	testutil.BenchPair(b, func() error {
		w := types.NewWriter(buf[:0], s38)
		ms.Append(&w, s38.Version)
		return w.Err()
	}, func() error {
		w := types.NewWriter(buf[:0], s38)
		g.Append(&w)
		return w.Err()
	})
}

func BenchmarkDecodeSearchCriteria38(b *testing.B) {
	crit := sampleCriteria()
	data := encode(b, s38, func(w *types.Writer) { crit.Append(w, s38.Version) })
	testutil.BenchPair(b, func() error {
		r := types.NewReader(data, s38)
		_ = ReadSearchCriteria(&r, "criteria", s38.Version)
		return r.Done()
	}, func() error {
		r := types.NewReader(data, s38)
		var g mm.MatchmakeSessionSearchCriteria
		g.Read(&r, "criteria")
		return r.Done()
	})
}

func BenchmarkEncodeNotificationEvent34(b *testing.B) {
	ev := sampleEvent()
	var g notification.NotificationEvent
	read(b, s34, encode(b, s34, func(w *types.Writer) { ev.Append(w, s34.Version) }), &g)
	buf := make([]byte, 0, 256)
	testutil.BenchPair(b, func() error {
		w := types.NewWriter(buf[:0], s34)
		ev.Append(&w, s34.Version)
		return w.Err()
	}, func() error {
		w := types.NewWriter(buf[:0], s34)
		g.Append(&w)
		return w.Err()
	})
}
