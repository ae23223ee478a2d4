package dissect

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
