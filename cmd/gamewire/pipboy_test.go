package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/pipboy"
	"github.com/spf13/cobra"
)

const pipboyStream = "../../testdata/pipboy/fo4-1.1.30-server-stream.bin"

func TestPipboyDecodeCLI(t *testing.T) {
	t.Parallel()
	out, err := runCLI(t, "pipboy", "decode", pipboyStream, "--path", "$.PlayerInfo.PlayerName")
	if err != nil || strings.TrimSpace(out) != `"Gavin Sterling"` {
		t.Fatalf("--path: %q %v", out, err)
	}
	out, err = runCLI(t, "pipboy", "decode", pipboyStream, "--events")
	if err != nil || !strings.Contains(out, "game->app DataUpdate 365968 bytes, 12554 values") || strings.Count(out, "Heartbeat") != 4 {
		t.Fatalf("--events: %q %v", out, err)
	}
	out, err = runCLI(t, "pipboy", "decode", pipboyStream, "--events", "--format", "json")
	var ev struct {
		Offset    int64
		Direction string
		Summary   string
	}
	if first, _, _ := strings.Cut(out, "\n"); err != nil || json.Unmarshal([]byte(first), &ev) != nil || ev.Summary == "" {
		t.Fatalf("--events --format json: %v\n%.300s", err, out)
	}
	out, err = runCLI(t, "pipboy", "decode", "../../testdata/pipboy/fo4-1.1.30-dump-payload.bin", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal([]byte(out), &tree); err != nil || len(tree) != 11 {
		t.Fatalf("--json: %d keys, %v", len(tree), err)
	}
	// A cut stream is an error naming the offset.
	b, err := os.ReadFile(pipboyStream)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.bin")
	os.WriteFile(cut, b[:1000], 0o644)
	if _, err := runCLI(t, "pipboy", "decode", cut); err == nil || !strings.Contains(err.Error(), "(stream)") || !strings.Contains(err.Error(), "DataUpdate content at offset 45: truncated") {
		t.Fatalf("cut stream: %v", err)
	}
}

// TestPipboyServeWithDiscovery runs an emulator with a discovery responder as
// `pipboy serve --discovery` does: discovery answers for it, an app gets the
// greeting, and ending the command's context stops both without an error.
func TestPipboyServeWithDiscovery(t *testing.T) {
	o := &pipboyServeOptions{discovery: "127.0.0.1:0", machine: "PS4"}

	srv := pipboy.NewServer(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := &cobra.Command{}
	cmd.SetContext(ctx)
	done := make(chan error, 1)
	go func() { done <- o.serveWithDiscovery(cmd, log, ln, srv) }()

	// The responder's port is only in the log line.
	var discoveryAddr string
	for i := 0; i < 500 && discoveryAddr == ""; i++ {
		if _, rest, ok := strings.Cut(logs.String(), "answering discovery\" addr="); ok {
			discoveryAddr, _, _ = strings.Cut(rest, "\n")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if discoveryAddr == "" {
		t.Fatalf("no discovery responder logged: %s", logs.String())
	}
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	defer dcancel()
	games, err := pipboy.Discover(dctx, discoveryAddr, 3*time.Second)
	if err != nil || len(games) != 1 || games[0].MachineType != "PS4" || games[0].IsBusy {
		t.Fatalf("Discover: %+v %v", games, err)
	}

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := pipboy.NewReader(c).ReadMessage()
	if err != nil || m.Type != pipboy.TypeNewConnection {
		t.Fatalf("first message: %v %v", m.Type, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serveWithDiscovery after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serveWithDiscovery did not return after its context ended")
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPipboyFlagsRefused: values the emulator, responder or replay cannot use are
// refused before anything listens, with the subcommand and the flag in the error.
func TestPipboyFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"pipboy", "replay", pipboyStream, "--speed", "-1", "--listen", "127.0.0.1:0", "--discovery", ""}, "pipboy replay: --speed -1: must be a finite number above 0"},
		{[]string{"pipboy", "replay", pipboyStream, "--speed", "0", "--listen", "127.0.0.1:0", "--discovery", ""}, "pipboy replay: --speed 0"},
		{[]string{"pipboy", "replay", pipboyStream, "--speed", "NaN", "--listen", "127.0.0.1:0", "--discovery", ""}, "pipboy replay: --speed NaN"},
		{[]string{"pipboy", "serve", "--from", pipboyStream, "--machine-type", "XBOX", "--listen", "127.0.0.1:0", "--discovery", ""}, `pipboy serve: --machine-type "XBOX": want PC or PS4`},
		{[]string{"pipboy", "serve", "--from", pipboyStream, "--heartbeat", "-1s", "--listen", "127.0.0.1:0", "--discovery", ""}, "pipboy serve: --heartbeat -1s: must be above 0"},
		{[]string{"pipboy", "relay", "--game", "127.0.0.1:1", "--machine-type", "wii", "--listen", "127.0.0.1:0", "--discovery", ""}, `pipboy relay: --machine-type "wii"`},
		{[]string{"pipboy", "relay", "--game", "127.0.0.1:1", "--record-max", "-5"}, `invalid argument "-5" for "--record-max"`},
		{[]string{"pipboy", "relay", "--game", "127.0.0.1:1", "--record-max", "1.5G"}, `"1.5G" is not a size`},
		// Errors from deeper down name the subcommand too.
		{[]string{"pipboy", "connect", "127.0.0.1:1"}, "pipboy connect: "},
		{[]string{"pipboy", "replay", "/nonexistent/rec.bin"}, "pipboy replay: open /nonexistent/rec.bin"},
		{[]string{"pipboy", "dashboard"}, "pipboy dashboard: --server HOST is required"},
		{[]string{"pipboy", "dashboard", "--server", "127.0.0.1:1", "--map-image", "/nonexistent/map.png"}, "pipboy dashboard: --map-image: open /nonexistent/map.png"},
		{[]string{"pipboy", "dashboard", "--server", "127.0.0.1:1", "--map-image", pipboyStream}, "pipboy dashboard: --map-image: " + pipboyStream + ": dashboard: unusable map image: content is application/octet-stream, not PNG, JPEG, GIF or WebP"},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want an error saying %q", tc.args[1:], err, tc.says)
		}
	}
	var size byteSize
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "64KiB": 64 << 10, "512MiB": 512 << 20, "1G": 1 << 30, "2gb": 2 << 30} {
		if err := size.Set(in); err != nil || int64(size) != want {
			t.Errorf("byteSize %q: %d %v, want %d", in, size, err, want)
		}
	}
}

// TestPipboyDiscoverNoAnswer: discover exits non-zero when no game answered (a
// silent UDP socket on 127.0.0.1 stands for the network).
func TestPipboyDiscoverNoAnswer(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	_, err = runCLI(t, "pipboy", "discover", "--broadcast", silent.LocalAddr().String(), "--wait", "200ms")
	if err == nil || !strings.Contains(err.Error(), "pipboy discover: no game answered discovery on "+silent.LocalAddr().String()) {
		t.Fatalf("discover with no answer: %v", err)
	}
}

// TestPipboyDecodeCutRecording: a recording cut inside a record prints every record
// before the cut (as decode does for a cut stream or capture), then fails naming the
// offset of the cut record.
func TestPipboyDecodeCutRecording(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(pipboyStream)
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	rec, err := pipboy.NewRecorder(&file, time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	r := pipboy.NewReader(bytes.NewReader(b))
	n := 0
	for {
		m, err := r.ReadMessage()
		if err != nil {
			break
		}
		if err := rec.Record(time.Unix(1000, int64(n)), 1, pipboy.FromGame, m); err != nil {
			t.Fatal(err)
		}
		n++
	}
	whole := file.Bytes()
	full := filepath.Join(t.TempDir(), "full.rec")
	os.WriteFile(full, whole, 0o600)
	out, err := runCLI(t, "pipboy", "decode", "--events", full)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(out, "\n")
	if lines != n {
		t.Fatalf("whole recording: %d lines for %d messages", lines, n)
	}
	cut := filepath.Join(t.TempDir(), "cut.rec")
	os.WriteFile(cut, whole[:len(whole)-3], 0o600)
	out, err = runCLI(t, "pipboy", "decode", "--events", cut)
	if err == nil || !strings.Contains(err.Error(), "pipboy decode") || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("cut recording: %v", err)
	}
	if got := strings.Count(out, "\n"); got != n-1 {
		t.Fatalf("cut recording printed %d lines before its error, want the %d whole records:\n%s", got, n-1, out)
	}
}
