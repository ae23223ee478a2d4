package matchmaking

import (
	"bytes"
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// memMail is a nodes.Mailbox in memory.
type memMail struct {
	mu  sync.Mutex
	box map[string][]nodes.Message
}

func (m *memMail) Post(_ context.Context, node string, msgs ...nodes.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.box == nil {
		m.box = map[string][]nodes.Message{}
	}
	m.box[node] = append(m.box[node], msgs...)
	return nil
}

func (m *memMail) Take(_ context.Context, node string, max int) ([]nodes.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.box[node][:min(max, len(m.box[node]))]
	m.box[node] = m.box[node][len(out):]
	return out, nil
}

// TestRouteAcrossNodes: a change's notifications for participants that joined
// on another node go to that node's mailbox in the canonical encoding, with
// the seq (and an empty delivery for a node with nobody to tell); the rest
// stays here.
func TestRouteAcrossNodes(t *testing.T) {
	mail := &memMail{}
	s := &Server{Node: "n1", Mail: mail}
	joined := Participant{PID: 1 << 40, Node: "n2", Conn: 7, Message: "hi"}
	c := Change{
		Session: MatchmakeSession{Gathering: Gathering{ID: 99, Owner: 10}},
		Participants: []Participant{
			{PID: 10, Node: "n1", Conn: 1},
			{PID: 11, Node: "n3", Conn: 1},
			joined,
		},
		Seq:    4,
		Joined: &joined,
	}
	evs := events(c, joined.PID, "hi", reasonEnded, false)
	local, fresh, gone := s.route(context.Background(), c, evs)
	if fresh || gone {
		t.Errorf("n1 has a participant before and after the change, yet fresh %v, gone %v", fresh, gone)
	}
	if len(local) != 1 || !reflect.DeepEqual(local[0].to, []types.PID{10}) || local[0].ev.Type != notifications.TypeNewParticipant {
		t.Fatalf("local part %+v", local)
	}
	for node, want := range map[string]struct {
		to    []types.PID
		fresh bool
	}{"n3": {[]types.PID{11}, false}, "n2": {nil, true}} {
		got, _ := mail.Take(context.Background(), node, 10)
		if len(got) != 1 || got[0].Kind != MailKind {
			t.Fatalf("node %s mail %+v", node, got)
		}
		gid, d, fr, deleted, err := decodeMail(got[0].Payload)
		if err != nil {
			t.Fatal(err)
		}
		if gid != 99 || d.seq != 4 || fr != want.fresh || deleted {
			t.Fatalf("node %s: gid %d seq %d fresh %v deleted %v", node, gid, d.seq, fr, deleted)
		}
		if want.to == nil {
			if len(d.events) != 0 {
				t.Fatalf("node %s (nobody to tell) got events %+v", node, d.events)
			}
			continue
		}
		if len(d.events) != 1 || !reflect.DeepEqual(d.events[0].to, want.to) || !reflect.DeepEqual(d.events[0].ev, evs[0].ev) {
			t.Fatalf("node %s events %+v, want %+v to %v", node, d.events, evs[0].ev, want.to)
		}
	}
}

// TestRouteLastLeaves: the node whose last participant left hears the
// change as the gathering's end (its sequencer forgets it); the leaving node
// of a participant is told even with nobody left to tell there.
func TestRouteLastLeaves(t *testing.T) {
	mail := &memMail{}
	s := &Server{Node: "n1", Mail: mail}
	left := Participant{PID: 11, Node: "n2", Conn: 3}
	c := Change{
		Session:      MatchmakeSession{Gathering: Gathering{ID: 5, Owner: 10}},
		Participants: []Participant{{PID: 10, Node: "n1", Conn: 1}},
		Seq:          9,
		Left:         &left,
	}
	local, fresh, gone := s.route(context.Background(), c, events(c, 11, "", reasonEnded, false))
	if len(local) != 1 || fresh || gone {
		t.Fatalf("local %+v fresh %v gone %v", local, fresh, gone)
	}
	got, _ := mail.Take(context.Background(), "n2", 10)
	if len(got) != 1 {
		t.Fatalf("n2 mail %+v", got)
	}
	_, d, fr, deleted, err := decodeMail(got[0].Payload)
	if err != nil || d.seq != 9 || fr || !deleted || len(d.events) != 0 {
		t.Fatalf("n2: seq %d fresh %v deleted %v events %+v (%v)", d.seq, fr, deleted, d.events, err)
	}
}

// TestSequencerFresh: a node that had nobody in a gathering does not wait for
// the changes it never saw.
func TestSequencerFresh(t *testing.T) {
	var q sequencer
	var got []uint64
	send := func(_ context.Context, a addressed) { got = append(got, a.ev.Param1) }
	d := func(seq uint64) delivery {
		return delivery{seq: seq, events: []addressed{{ev: notifications.Event{Param1: seq}}}}
	}
	ctx := context.Background()
	q.submit(ctx, 1, d(1), false, true, send)
	q.submit(ctx, 1, d(2), false, false, send)
	// Changes 3 to 6 happened among other nodes' players only.
	q.submit(ctx, 1, d(7), false, true, send)
	q.submit(ctx, 1, d(8), false, false, send)
	if !reflect.DeepEqual(got, []uint64{1, 2, 7, 8}) {
		t.Fatalf("delivered %v, want 1 2 7 8 at once", got)
	}
}

func FuzzDecodeMail(f *testing.F) {
	ev := notifications.Event{Source: 5, Type: notifications.TypeOwnershipChanged, Param1: 3, Param2: 6, StrParam: "x",
		Map: []types.Pair[string, types.Variant]{{Key: "k", Value: types.Variant{Type: types.VariantString, Str: "v"}}}}
	seed, err := encodeMail(3, 9, true, false, []addressed{{[]types.PID{5, 1 << 33}, ev}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	empty, _ := encodeMail(1, 1, false, true, nil)
	f.Add(empty)
	f.Fuzz(func(t *testing.T, b []byte) {
		gid, d, fresh, deleted, err := decodeMail(b)
		if err != nil {
			return
		}
		again, err := encodeMail(gid, d.seq, fresh, deleted, d.events)
		if err != nil {
			t.Fatalf("re-encoding what decoded: %v", err)
		}
		// Empty lists decode as nil or empty: compare encodings.
		gid2, d2, fresh2, deleted2, err := decodeMail(again)
		if err != nil {
			t.Fatalf("decoding a re-encoding: %v", err)
		}
		third, err := encodeMail(gid2, d2.seq, fresh2, deleted2, d2.events)
		if err != nil || !bytes.Equal(third, again) {
			t.Fatalf("decode -> encode is not stable: %x, then %x (%v)", again, third, err)
		}
	})
}
