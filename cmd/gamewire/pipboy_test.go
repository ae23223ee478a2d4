package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// runPipboyCLI runs gamewire with args and restores the pipboy flags afterwards.
func runPipboyCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	reset := func() {
		rootCmd.SetArgs(nil)
		rootCmd.SetOut(nil)
		rootCmd.SetErr(nil)
		for _, fs := range []*pflag.FlagSet{pipboyDecodeCmd.Flags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Changed {
					f.Value.Set(f.DefValue)
					f.Changed = false
				}
			})
		}
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
