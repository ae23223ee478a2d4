package dissect

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFramer feeds a stream of messages framed by a one-byte length in uneven
// pieces: whole messages come out once each with their stream offsets, a partial
// one waits for the rest, and a gap or a bad frame ends the direction with a note
// naming the offset; a message cut by the end of the capture is noted too.
func TestFramer(t *testing.T) {
	type piece struct {
		data string
		gap  int
	}
	tests := []struct {
		name   string
		pieces []piece
		want   []string // "offset:message"
		notes  []string // substrings, in order
	}{
		{"whole and split", []piece{{data: "\x02ab\x03c"}, {data: "de\x01"}, {data: "f"}}, []string{"0:ab", "3:cde", "7:f"}, nil},
		{"gap", []piece{{data: "\x02ab\x02c"}, {data: "\x01z", gap: 1}, {data: "\x01y"}}, []string{"0:ab"},
			[]string{"1 bytes missing from the capture at stream offset 5; message framing lost"}},
		{"bad frame", []piece{{data: "\x02ab\x00\x01q"}}, []string{"0:ab"},
			[]string{"message at stream offset 3: zero length; framing lost"}},
		{"cut by the end", []piece{{data: "\x01a\x05bc"}}, []string{"0:a"},
			[]string{"capture ended inside a message: 3 bytes of it at stream offset 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(Config{})
			d.frame = &Frame{Number: 1, Time: time.Unix(0, 0)}
			var notes []string
			d.emitFn = func(r *Record) error {
				if r.Kind == KindNote {
					notes = append(notes, r.Error)
				}
				return nil
			}
			from, to := netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2")
			fl, dir := d.lookup(protoTCP, from, to)
			c := &pktCtx{d: d, fl: fl, dir: dir, src: from, dst: to}
			var f framer
			var got []string
			next := func(b []byte, off int64) (int, error) {
				if b[0] == 0 {
					return 0, errors.New("zero length")
				}
				if int(b[0]) >= len(b) {
					return 0, nil
				}
				got = append(got, strconv.FormatInt(off, 10)+":"+string(b[1:1+b[0]]))
				return 1 + int(b[0]), nil
			}
			for _, p := range tc.pieces {
				f.feed(c, "test", "message", []byte(p.data), p.gap, next)
			}
			f.finish(c, dir, "test", "message")
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("messages %q, want %q", got, tc.want)
			}
			if len(notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tc.notes))
			}
			for i, n := range tc.notes {
				if !strings.Contains(notes[i], n) {
					t.Errorf("note %q, want it to contain %q", notes[i], n)
				}
			}
		})
	}
}
