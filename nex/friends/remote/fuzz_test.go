package remote

import (
	"slices"
	"testing"
)

// FuzzParseFriendPIDsResponse: no panic, at most max PIDs, and what parses
// re-encodes (packed) to what parses the same.
func FuzzParseFriendPIDsResponse(f *testing.F) {
	f.Add([]byte{0x0a, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}) // protobuf.dev's packed example, as field 1
	f.Add([]byte{0x08, 0x96, 0x01})                               // protobuf.dev's 150, unpacked
	f.Add([]byte{0x12, 0x01, 'x', 0x1d, 1, 2, 3, 4, 0x09, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		pids, err := ParseFriendPIDsResponse(b, 50)
		if err != nil {
			return
		}
		if len(pids) > 50 {
			t.Fatalf("%d PIDs, at most 50", len(pids))
		}
		again, err := ParseFriendPIDsResponse(AppendFriendPIDsResponse(nil, pids), 50)
		if err != nil || !slices.Equal(again, pids) {
			t.Fatalf("re-encoded %v: %v %v", pids, again, err)
		}
	})
}

// FuzzParseFrame: no panic; a frame parsed is within its input and
// re-encodes to the bytes it used.
func FuzzParseFrame(f *testing.F) {
	f.Add(AppendFrame(nil, []byte{0x0a, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}))
	f.Add([]byte{0, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, n, err := ParseFrame(b)
		if err != nil {
			return
		}
		if n > len(b) || string(AppendFrame(nil, m)) != string(b[:n]) {
			t.Fatalf("frame % x used %d of % x", m, n, b)
		}
	})
}

// FuzzParseHTTPAnswer: no panic, at most MaxFriends.
func FuzzParseHTTPAnswer(f *testing.F) {
	f.Add([]byte(`{"pid": 1234, "friends": [5678, 9012]}`))
	f.Add([]byte(`{"friends": []}`))
	f.Add([]byte(`{"pid": 1, "friends": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		pids, err := ParseHTTPAnswer(b, 1234, "fuzz")
		if err == nil && len(pids) > MaxFriends {
			t.Fatalf("%d friends", len(pids))
		}
	})
}
