package dissect

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// TestCommittedCaptures decodes the tcpdump captures in testdata/captures
// (see the README there): every message the client sent and every echo
// appears decrypted, in order, with signatures and checksums verified.
func TestCommittedCaptures(t *testing.T) {
	for _, dialect := range []string{"nex-v1", "nex-v0", "nex-v0-friends", "nex-lite-websocket"} {
		t.Run(dialect, func(t *testing.T) {
			capture, err := os.ReadFile("testdata/captures/tcpdump-" + dialect + ".pcap")
			if err != nil {
				t.Fatal(err)
			}
			d := New(Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}})
			var got [2][]string
			err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
				if r.Kind == KindNote {
					t.Errorf("note: %s", r.AppendJSON(nil))
				}
				if f, ok := r.Field("signature_ok"); ok && f.Type == FieldBool && !f.Bool {
					t.Errorf("bad signature: %s", r.AppendJSON(nil))
				}
				if f, ok := r.Field("checksum_ok"); ok && f.Type == FieldBool && !f.Bool {
					t.Errorf("bad checksum: %s", r.AppendJSON(nil))
				}
				if r.Kind == KindMessage {
					f, _ := r.Field("plain_hex")
					dir := 0
					if r.NetSrc == d.Flows()[0].Server {
						dir = 1
					}
					got[dir] = append(got[dir], hex.EncodeToString(f.Bytes))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			msgs := captureMessages()
			for dir := range 2 {
				if len(got[dir]) != len(msgs) {
					t.Fatalf("direction %d: %d messages, want %d", dir, len(got[dir]), len(msgs))
				}
				for i, m := range msgs {
					if got[dir][i] != hex.EncodeToString(m) {
						t.Fatalf("direction %d message %d differs", dir, i)
					}
				}
			}
			want := strings.TrimSuffix(dialect, "-websocket")
			if fl := d.Flows(); len(fl) != 1 || fl[0].Dialect != want || fl[0].RTT <= 0 {
				t.Fatalf("flows %+v", fl)
			}
		})
	}
}
