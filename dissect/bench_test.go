package dissect

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/wire"
)

// benchMessages makes the benchmark capture about 9.5 MB, large enough that
// tshark's start-up (~0.2 s here) is a small part of its time.
const benchMessages = 1000

// benchCapture is a V1 conversation: handshake, then messages of 8 KiB each
// way in 1300-byte fragments (the NEX fragment size), each fragment acknowledged,
// RC4-encrypted with "CD&ML" as on an authentication connection.
func benchCapture(tb testing.TB, messages int) []byte {
	c := newConvo(tb, wire.NewV1("6f599f81"), "6f599f81", 1300)
	c.handshake()
	for i := range messages {
		c.message(i%2, testMessage(i, 8192), false)
	}
	return c.pcap()
}

// BenchmarkDecodeV1RC4 measures decoding a capture of V1 traffic with RC4
// decryption, signature verification and reassembly into records (the
// records are built but not formatted). MB/s is capture bytes per second.
func BenchmarkDecodeV1RC4(b *testing.B) {
	capture := benchCapture(b, benchMessages)
	keys := &Keys{AccessKeys: []string{"6f599f81"}}
	b.SetBytes(int64(len(capture)))
	b.ReportAllocs()
	for b.Loop() {
		d := New(Config{Keys: keys})
		if err := d.Decode(bytes.NewReader(capture), func(*Record) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeV1RC4JSON is the same with every record formatted as JSON.
func BenchmarkDecodeV1RC4JSON(b *testing.B) {
	capture := benchCapture(b, benchMessages)
	keys := &Keys{AccessKeys: []string{"6f599f81"}}
	b.SetBytes(int64(len(capture)))
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		d := New(Config{Keys: keys})
		if err := d.Decode(bytes.NewReader(capture), func(r *Record) error {
			out = r.AppendJSON(out[:0])
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTsharkSameCapture runs `tshark -r FILE` (no PRUDP dissector: tshark
// has none) on the same capture, for the ratio in docs/performance.md.
func BenchmarkTsharkSameCapture(b *testing.B) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		b.Skip("tshark not installed")
	}
	path := filepath.Join(b.TempDir(), "v1.pcap")
	capture := benchCapture(b, benchMessages)
	if err := os.WriteFile(path, capture, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(capture)))
	for b.Loop() {
		cmd := exec.Command(tshark, "-n", "-r", path)
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// rmcBenchCapture is a V1 conversation of n RMC calls of the description
// fixture (rmcFixture): Upload requests with their responses and Get requests
// answered with a list of 20 scores and an AnyData room, as a game's traffic.
func rmcBenchCapture(tb testing.TB, n int) []byte {
	set := rmcFixtureSet(tb)
	st := types.Settings{StructureHeader: true}
	c := newConvo(tb, wire.NewV1("6f599f81"), "6f599f81", 1300)
	c.handshake()
	scores := `[` + strings.Repeat(`{"category":5,"score":1234,"groups":[1,2]},`, 19) + `{"category":5,"score":1}]`
	for i := range n {
		id := uint32(i + 1)
		if i%2 == 0 {
			c.message(0, rmcCall(tb, set, st, "Board", "Upload", id, true, `{"score":{"category":5,"score":1234},"unique_id":9}`), false)
			c.message(1, rmcCall(tb, set, st, "Board", "Upload", id, false, `{}`), false)
		} else {
			c.message(0, rmcCall(tb, set, st, "Board", "Get", id, true, `{"category":5}`), false)
			c.message(1, rmcCall(tb, set, st, "Board", "Get", id, false, `{"scores":`+scores+`,"room":{"class":"Room","value":{"name":"club"}}}`), false)
		}
	}
	return c.pcap()
}

// BenchmarkDecodeRMC decodes a capture of RMC calls (records built; -json: every
// record formatted as JSON too): "ids" as the dissector did before descriptions
// (protocol, method and call ids only), "described" naming methods and decoding
// every parameter and return value by description. docs/performance.md has the
// ratios.
func BenchmarkDecodeRMC(b *testing.B) {
	capture := rmcBenchCapture(b, 2000)
	set := rmcFixtureSet(b)
	keys := &Keys{AccessKeys: []string{"6f599f81"}}
	for _, bc := range []struct {
		name string
		cfg  Config
		json bool
	}{
		{"ids", Config{Keys: keys, NoDescriptions: true}, false},
		{"described", Config{Keys: keys, Descriptions: set}, false},
		{"ids-json", Config{Keys: keys, NoDescriptions: true}, true},
		{"described-json", Config{Keys: keys, Descriptions: set}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(capture)))
			b.ReportAllocs()
			var out []byte
			outBytes := 0
			for b.Loop() {
				d := New(bc.cfg)
				outBytes = 0
				if err := d.Decode(bytes.NewReader(capture), func(r *Record) error {
					if bc.json {
						out = r.AppendJSON(out[:0])
						outBytes += len(out)
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(outBytes), "json-bytes/op")
		})
	}
}

// BenchmarkDecodeDoneFlow decodes the done-when capture (real NintendoClients
// and gamewire serve traffic, testdata/captures/nintendoclients-doneflow.pcap:
// 105 frames, 44 RMC messages) with every record as JSON, keyed by the two
// secure connections' session keys (their tickets' keys, as a password line
// would find them, without the password derivation's cost per run): "ids" as
// before descriptions, "described" with every method named and decoded.
func BenchmarkDecodeDoneFlow(b *testing.B) {
	capture, err := os.ReadFile("testdata/captures/nintendoclients-doneflow.pcap")
	if err != nil {
		b.Fatal(err)
	}
	keys, err := ParseKeys(strings.NewReader("access-key 3d37fbdb\n" +
		"session-key 7de76beb322e871e76cc3b12273aeffe23e666f29e962140335047e0dfd64042\n" +
		"session-key 60543d7b19deda79f7ce023643d1e87add14dcddae0c2606123eb5ef9a2556e2\n"))
	if err != nil {
		b.Fatal(err)
	}
	set, err := desc.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"ids", Config{Keys: keys, NoDescriptions: true}},
		{"described", Config{Keys: keys, Descriptions: set}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(capture)))
			b.ReportAllocs()
			var out []byte
			for b.Loop() {
				d := New(bc.cfg)
				methods := 0
				if err := d.Decode(bytes.NewReader(capture), func(r *Record) error {
					out = r.AppendJSON(out[:0])
					if bytes.Contains(out, []byte(`"method":`)) {
						methods++
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				if bc.name == "described" && methods != 44 {
					b.Fatalf("%d messages named, want 44", methods)
				}
			}
		})
	}
}
