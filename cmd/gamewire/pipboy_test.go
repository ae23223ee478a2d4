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

// runPipboyCLI runs gamewire with args and restores the pipboy flags afterwards.
func runPipboyCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	reset := func() {
		rootCmd.SetArgs(nil)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		resetFlags(pipboyDecodeCmd.Flags())
	}
	defer reset()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	return out.String(), err
}

const pipboyStream = "../../testdata/pipboy/fo4-1.1.30-server-stream.bin"

func TestPipboyDecodeCLI(t *testing.T) {
	out, err := runPipboyCLI(t, "pipboy", "decode", pipboyStream, "--path", "$.PlayerInfo.PlayerName")
	if err != nil || strings.TrimSpace(out) != `"Gavin Sterling"` {
		t.Fatalf("--path: %q %v", out, err)
	}
	out, err = runPipboyCLI(t, "pipboy", "decode", pipboyStream, "--events")
	if err != nil || !strings.Contains(out, "game->app DataUpdate 365968 bytes, 12554 values") || strings.Count(out, "Heartbeat") != 4 {
		t.Fatalf("--events: %q %v", out, err)
	}
	out, err = runPipboyCLI(t, "pipboy", "decode", "../../testdata/pipboy/fo4-1.1.30-dump-payload.bin", "--json")
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
	if _, err := runPipboyCLI(t, "pipboy", "decode", cut); err == nil || !strings.Contains(err.Error(), "(stream)") || !strings.Contains(err.Error(), "DataUpdate content at offset 45: truncated") {
		t.Fatalf("cut stream: %v", err)
	}
}

// TestPipboyServeWithDiscovery runs an emulator with a discovery responder as
// `pipboy serve --discovery` does: discovery answers for it, an app gets the
// greeting, and ending the command's context stops both without an error.
func TestPipboyServeWithDiscovery(t *testing.T) {
	saved := pipboyServeFlags
	defer func() { pipboyServeFlags = saved }()
	pipboyServeFlags.discovery = "127.0.0.1:0"
	pipboyServeFlags.machine = "PS4"

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
	go func() { done <- serveWithDiscovery(cmd, log, ln, srv) }()

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
