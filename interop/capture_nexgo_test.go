package interop

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/dissect"
	"github.com/gamewire/gamewire/internal/tcpdumptest"
	"github.com/gamewire/gamewire/interop/nexgo"
	"github.com/gamewire/gamewire/interop/rmcframe"
	"github.com/gamewire/gamewire/prudp"
)

// nexgoCaptureCases are the conversations captured by TestCaptureNexgo: gamewire's
// client and nex-go v2.3.1's server, RC4-encrypted (an authentication connection, so
// the key is "CD&ML"), with a 3000-byte request and echo that both sides fragment.
var nexgoCaptureCases = []struct {
	name    string
	version int
	dialect prudp.Dialect
	key     string
	zlib    bool
}{
	{"nex-v1", 1, prudp.NEXV1, "ridfebb9", false},
	// nex-go compresses every reliable payload (the ratio byte and zlib): the
	// dissector has to notice it from the bytes.
	{"nex-v1-compression", 1, prudp.NEXV1, "ridfebb9", true},
	{"nex-v0", 0, prudp.NEXV0, "6f599f81", false},
	{"nex-v0-friends", 0, prudp.NEXV0Friends, "ridfebb9", false},
}

// nexgoCaptureSizes are the RMC request sizes of each conversation.
var nexgoCaptureSizes = []int{13, 64, 1024, 3000, 64, 1}

// TestCaptureNexgo captures, with tcpdump on the loopback interface, gamewire's PRUDP
// client talking to nex-go's server, and checks that the dissector decrypts every
// message nex-go sent: bytes gamewire did not produce. With GAMEWIRE_SAVE_CAPTURES=DIR
// the captures are written to DIR/nexgo-NAME.pcap (dissect/testdata/captures holds
// the committed ones, which dissect's TestNexgoCaptures checks without tcpdump).
// Skipped when tcpdump is missing or may not capture (fails under CI=true).
func TestCaptureNexgo(t *testing.T) {
	for _, tc := range nexgoCaptureCases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := nexgo.Start(nexgo.Config{Version: tc.version, AccessKey: tc.key,
				FixedRTO: 200 * time.Millisecond, Compression: tc.zlib})
			if err != nil {
				t.Fatal(err)
			}
			td := tcpdumptest.Start(t, fmt.Sprintf("udp port %d", srv.Port))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := prudp.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", srv.Port),
				&prudp.Config{Dialect: tc.dialect, AccessKey: tc.key, Compression: tc.zlib})
			if err != nil {
				t.Fatalf("dial nex-go: %v", err)
			}
			echoRMC(t, ctx, conn, 0x66, 7, nexgoCaptureSizes)
			capture := td.Stop(t)
			if dir := os.Getenv("GAMEWIRE_SAVE_CAPTURES"); dir != "" {
				if err := os.WriteFile(filepath.Join(dir, "nexgo-"+tc.name+".pcap"), capture, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			checkNexgoCapture(t, capture, tc.key, tc.name)
		})
	}
}

// checkNexgoCapture decodes a capture of one conversation: every request the client
// sent and every echo nex-go sent appear decrypted, in order, with no note, no bad
// checksum and no bad signature.
func checkNexgoCapture(t *testing.T, capture []byte, key, dialect string) {
	t.Helper()
	keys := &dissect.Keys{AccessKeys: []string{key}}
	if strings.HasSuffix(dialect, "-compression") {
		// The first request goes out with ratio 0 (zlib would make it larger), which
		// auto mode cannot tell from a plain payload (docs/dissector.md, "Decompression").
		keys.Compression = "on"
	}
	d := dissect.New(dissect.Config{Keys: keys})
	var msgs [2][][]byte
	err := d.Decode(bytes.NewReader(capture), func(r *dissect.Record) error {
		if r.Kind == dissect.KindNote || r.Error != "" {
			t.Errorf("%s", r.AppendJSON(nil))
		}
		for _, k := range []string{"signature_ok", "checksum_ok"} {
			if f, ok := r.Field(k); ok && f.Type == dissect.FieldBool && !f.Bool {
				t.Errorf("%s false: %s", k, r.AppendJSON(nil))
			}
		}
		if r.Kind == dissect.KindMessage {
			f, _ := r.Field("plain_hex")
			dir := 0
			if d.Flows()[0].Server == r.NetSrc {
				dir = 1
			}
			msgs[dir] = append(msgs[dir], bytes.Clone(f.Bytes))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fl := d.Flows(); len(fl) != 1 || fl[0].Dialect != strings.TrimSuffix(dialect, "-compression") {
		t.Fatalf("flows %+v", fl)
	}
	if len(msgs[0]) != len(nexgoCaptureSizes) || len(msgs[1]) != len(nexgoCaptureSizes) {
		t.Fatalf("%d requests and %d responses decoded, want %d each", len(msgs[0]), len(msgs[1]), len(nexgoCaptureSizes))
	}
	for i, size := range nexgoCaptureSizes {
		req := rmcframe.Request(0x66, uint32(i+1), 7, size, byte(i))
		if !bytes.Equal(msgs[0][i], req) {
			t.Errorf("request %d: %s, want %s", i, hex.EncodeToString(msgs[0][i]), hex.EncodeToString(req))
		}
		if err := rmcframe.CheckEcho(req, msgs[1][i]); err != nil {
			t.Errorf("nex-go's response %d: %v", i, err)
		}
	}
}
