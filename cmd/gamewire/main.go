// Command gamewire speaks, serves and dissects the network protocols of online games
// that the game-preservation community has reverse-engineered: PRUDP in all its dialects,
// Pia, and the Fallout 4 Pip-Boy protocol.
//
// The CLI is thin: every subcommand lives in a file of its own (decode.go, serve.go,
// pia.go, pipboy.go, ...) with a constructor (newServeCmd, ...) that builds the
// command and binds its flags to the fields of an options value made for that
// command. newRootCmd builds the whole tree afresh for every run, so no flag value,
// context or writer outlives one invocation (the tests run many side by side).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// newRootCmd builds the gamewire command tree: the root and every subcommand,
// each with flags bound to a fresh options value, and every command group made
// to refuse an unknown subcommand.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "gamewire",
		Short: "Toolkit for reverse-engineered game network protocols (PRUDP, Pia, Pip-Boy)",
		Long: `gamewire implements the network protocols of online games that the
game-preservation community has reverse-engineered: PRUDP (NEX V0, V1, Lite,
Quazal Rendez-Vous, Hyperscape), Pia, and the Fallout 4 Pip-Boy protocol.
It decodes packets and captures, and runs clients, servers and relays.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(debug.ReadBuildInfo()),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	// Declared here so that cobra does not give it the shorthand -v, which
	// every subcommand with connections uses for --verbose.
	root.Flags().Bool("version", false, "print gamewire's version (as gamewire version does)")
	root.AddCommand(
		newAccountsCmd(),
		newConnectCmd(),
		newDecodeCmd(),
		newGamesCmd(),
		newKeygenCmd(),
		newLoginCmd(),
		newNEXCmd(),
		newPiaCmd(),
		newPipboyCmd(),
		newServeCmd(),
		newVersionCmd(),
		newWiresharkPluginCmd(),
	)
	refuseUnknownSubcommands(root)
	explainArgs(root)
	root.SetHelpCommand(newHelpCmd(root))
	root.SetFlagErrorFunc(suggestFlags)
	return root
}

// newVersionCmd is `gamewire version`, the same as `gamewire --version`.
func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gamewire's module version, VCS revision and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), version(debug.ReadBuildInfo()))
		},
	}
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

// refuseUnknownSubcommands makes every command group (a command with no
// action of its own, that only holds subcommands) under c refuse an unknown
// subcommand. cobra checks subcommand names only on the root; a group given a
// mistyped one (`accounts lst`) would print its help and exit 0.
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

// run executes the command line args on root, a tree newRootCmd built, and
// returns the process exit status: 0, or 1 after printing the error to root's
// standard error.
func run(ctx context.Context, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(root.ErrOrStderr(), "gamewire:", err)
		return 1
	}
	return 0
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, newRootCmd(), os.Args[1:])
	stop()
	os.Exit(code)
}
