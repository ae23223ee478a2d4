// Command gamewire speaks, serves and dissects the network protocols of online games
// that the game-preservation community has reverse-engineered: PRUDP in all its dialects,
// Pia, and the Fallout 4 Pip-Boy protocol.
//
// The CLI is thin: every subcommand lives in a file of its own (decode.go, serve.go,
// pia.go, pipboy.go, ...) and registers itself on rootCmd from an init function, so
// the wiring of one job never touches another's file.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
)

// rootCmd is the gamewire command; subcommands add themselves in their files' init.
var rootCmd = &cobra.Command{
	Use:   "gamewire",
	Short: "Toolkit for reverse-engineered game network protocols (PRUDP, Pia, Pip-Boy)",
	Long: `gamewire implements the network protocols of online games that the
game-preservation community has reverse-engineered: PRUDP (NEX V0, V1, Lite,
Quazal Rendez-Vous, Hyperscape), Pia, and the Fallout 4 Pip-Boy protocol.
It decodes packets and captures, and runs clients, servers and relays.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// versionCmd is `gamewire version`, the same as `gamewire --version`.
var versionCmd = &cobra.Command{
	Use:   "version",
	Short: "Print gamewire's module version, VCS revision and Go version",
	Args:  cobra.NoArgs,
	Run: func(cmd *cobra.Command, args []string) {
		fmt.Fprintln(cmd.OutOrStdout(), version(debug.ReadBuildInfo()))
	},
}

func init() {
	rootCmd.AddCommand(versionCmd)
	rootCmd.Version = version(debug.ReadBuildInfo())
	rootCmd.SetVersionTemplate("{{.Version}}\n")
	// Declared here so that cobra does not give it the shorthand -v, which
	// every subcommand with connections uses for --verbose.
	rootCmd.Flags().Bool("version", false, "print gamewire's version (as gamewire version does)")
}

// version describes the running binary from its build information: the main
// module's version ("(devel)" for a build from a work tree, vX.Y.Z for go
// install of a tagged version), the VCS revision and commit time the go command
// stamped (with "+modified" when the work tree had uncommitted changes), and
// the Go version that built it.
func version(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "gamewire (no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(unknown version)" // test binaries have no main module version
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	b := strings.Builder{}
	fmt.Fprintf(&b, "gamewire %s", v)
	switch {
	case rev != "":
		if modified {
			rev += "+modified"
		}
		fmt.Fprintf(&b, " revision %s", rev)
		if at != "" {
			fmt.Fprintf(&b, " (%s)", at)
		}
	default:
		b.WriteString(" revision unknown (built without VCS information)")
	}
	fmt.Fprintf(&b, " %s", info.GoVersion)
	return b.String()
}

// prepareOnce runs prepare once every init has registered its subcommands.
var prepareOnce sync.Once

// prepare finishes the command tree before it runs: every command group (a
// command with no action of its own, that only holds subcommands) refuses an
// unknown subcommand. cobra checks subcommand names only on the root; a group
// given a mistyped one (`accounts lst`) would print its help and exit 0.
func prepare() {
	prepareOnce.Do(func() { refuseUnknownSubcommands(rootCmd) })
}

// groupAnnotation marks the commands refuseUnknownSubcommands made refuse.
const groupAnnotation = "gamewire/group"

func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if c.Runnable() {
		return
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[groupAnnotation] = "true"
	c.Args = cobra.ArbitraryArgs
	c.RunE = runCommandGroup
}

// run executes the command line args (os.Args[1:] when nil) and returns the
// process exit status: 0, or 1 after printing the error to stderr.
func run(ctx context.Context, args []string) int {
	prepare()
	if args != nil {
		rootCmd.SetArgs(args)
		defer rootCmd.SetArgs(nil)
	}
	if err := rootCmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(rootCmd.ErrOrStderr(), "gamewire:", err)
		return 1
	}
	return 0
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, nil)
	stop()
	os.Exit(code)
}
