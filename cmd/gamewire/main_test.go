package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/spf13/cobra"
)

func TestMain(m *testing.M) {
	// A topology test starts the gamewire command as a process of its own: the
	// test binary re-executed with GAMEWIRE_TEST_MAIN=1 runs main, so separate
	// processes need no build of the binary (roles_test.go).
	if os.Getenv("GAMEWIRE_TEST_MAIN") == "1" {
		os.Args = append([]string{"gamewire"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs the command line as main does, on a command tree of its own,
// and returns the exit status and what went to stdout and stderr.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetErr(&errOut)
	code = run(context.Background(), root, args)
	return code, out.String(), errOut.String()
}

// executeCLI runs the command line args on a command tree of its own until it
// returns or ctx ends, with stdout and stderr going to the writers given and
// standard input read from stdin (the process's when nil), and returns the
// command's error. Every run builds its tree afresh, so runs share no flag
// value, context or writer and may go on side by side.
func executeCLI(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args ...string) error {
	root := newRootCmd()
	if stdin != nil {
		root.SetIn(stdin)
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// runCLI runs gamewire with args, for 30 s at most (a serve expected to fail
// that does not ends then), and returns what it wrote to stdout and stderr.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := &syncWriter{}
	err := executeCLI(ctx, nil, out, out, args...)
	return out.String(), err
}

// runCLIContext runs gamewire with args until it returns or ctx ends, its
// output going to out (which the test may read while it runs).
func runCLIContext(t *testing.T, ctx context.Context, out *syncWriter, args ...string) error {
	t.Helper()
	return executeCLI(ctx, nil, out, out, args...)
}

// findCmd returns the command at path (names below gamewire) in a fresh tree.
func findCmd(t *testing.T, path ...string) *cobra.Command {
	t.Helper()
	c, rest, err := newRootCmd().Find(path)
	if err != nil || len(rest) != 0 {
		t.Fatalf("no command gamewire %s: %v", strings.Join(path, " "), err)
	}
	return c
}

// TestUnknownSubcommandRefused: every command group (a command that only holds
// subcommands, the root included) given a mistyped subcommand exits non-zero
// with an error naming it and the group, instead of printing its help and
// exiting 0; a group with no arguments still prints its help and exits 0.
func TestUnknownSubcommandRefused(t *testing.T) {
	t.Parallel()
	var groups []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Annotations[groupAnnotation] != "" {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	seen := map[string]bool{}
	for _, g := range groups {
		seen[g.CommandPath()] = true
		path := strings.Fields(g.CommandPath())[1:]
		t.Run(g.CommandPath(), func(t *testing.T) {
			code, _, stderr := runMain(t, append(path, "xyzzy")...)
			want := `unknown command "xyzzy" for "` + g.CommandPath() + `"`
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want non-zero and %q", code, stderr, want)
			}
			code, stdout, _ := runMain(t, path...)
			if code != 0 || !strings.Contains(stdout, "Usage:") {
				t.Errorf("with no subcommand: exit %d, stdout %q; want 0 and its help", code, stdout)
			}
		})
	}
	// pia runs runCommandGroup itself (it parses no flags of its own).
	for _, g := range []string{"gamewire", "gamewire accounts", "gamewire keygen", "gamewire nex"} {
		if !seen[g] {
			t.Errorf("%s is not a command group any more: update this test", g)
		}
	}
	// The cases of the issue, with cobra's suggestions.
	for _, c := range []struct{ args, want string }{
		{"accounts lst", `unknown command "lst" for "gamewire accounts" (did you mean list?)`},
		{"pia foo", `unknown command "foo" for "gamewire pia"`},
		{"keygen foo", `unknown command "foo" for "gamewire keygen"`},
		{"srve", `unknown command "srve" for "gamewire" (did you mean serve?)`},
	} {
		code, stdout, stderr := runMain(t, strings.Fields(c.args)...)
		if code != 1 || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("gamewire %s: exit %d, stdout %q, stderr %q; want 1 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// TestVersion: `gamewire version` and `gamewire --version` print the module
// version, VCS revision and Go version from the build information.
func TestVersion(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/gamewire/gamewire", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "4083ac7db19c24361192dcb4bf857e60b9538a97"},
			{Key: "vcs.time", Value: "2026-11-24T13:29:24Z"}, {Key: "vcs.modified", Value: "false"}}}
	for _, c := range []struct {
		name     string
		modified string
		info     *debug.BuildInfo
		ok       bool
		want     string
	}{
		{"tagged", "false", info, true, "gamewire v1.2.3 revision 4083ac7db19c24361192dcb4bf857e60b9538a97 (2026-11-24T13:29:24Z) go1.26.0"},
		{"modified", "true", info, true, "gamewire v1.2.3 revision 4083ac7db19c24361192dcb4bf857e60b9538a97+modified (2026-11-24T13:29:24Z) go1.26.0"},
		{"no-vcs", "", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, true,
			"gamewire (devel) revision unknown (built without VCS information) go1.26.0"},
		{"no-build-info", "", nil, false, "gamewire (no build information)"},
	} {
		if c.modified != "" {
			info.Settings[3].Value = c.modified
		}
		if got := version(c.info, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	want := version(debug.ReadBuildInfo()) + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, stderr := runMain(t, args...)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("gamewire %s: exit %d, stdout %q, stderr %q; want %q", args[0], code, stdout, stderr, want)
		}
	}
}

// TestRunsShareNoState: every run builds its own command tree, so a flag given
// to one run is not seen by the next (neither its value nor that it was given)
// and runs going on at the same time do not mix their flags (the race detector
// watches this test too).
func TestRunsShareNoState(t *testing.T) {
	t.Parallel()
	want := func(pid uint64, password string, sw bool) string {
		k := kerberos.DeriveKey(password, pid)
		if sw {
			k = kerberos.DeriveKeySwitch(password, pid)
		}
		return hex.EncodeToString(k[:]) + "\n"
	}
	if out, err := runCLI(t, "keygen", "kerberos", "--pid", "1000", "--password", "x", "--platform", "switch"); err != nil || out != want(1000, "x", true) {
		t.Fatalf("first run: %q %v", out, err)
	}
	if out, err := runCLI(t, "keygen", "kerberos", "--pid", "1000", "--password", "x"); err != nil || out != want(1000, "x", false) {
		t.Errorf("--platform of the run before leaked: %q %v", out, err)
	}
	if _, err := runCLI(t, "keygen", "kerberos"); err == nil || !strings.Contains(err.Error(), "--pid and --password are required") {
		t.Errorf("--pid and --password of the runs before leaked: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			pid, password, sw := uint64(1000+i), fmt.Sprint("pw", i), i%2 == 0
			args := []string{"keygen", "kerberos", "--pid", fmt.Sprint(pid), "--password", password}
			if sw {
				args = append(args, "--platform", "switch")
			}
			if out, err := runCLI(t, args...); err != nil || out != want(pid, password, sw) {
				t.Errorf("concurrent run %d: %q %v, want %q", i, out, err, want(pid, password, sw))
			}
		})
	}
	wg.Wait()
}
