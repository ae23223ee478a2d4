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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := rootCmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gamewire:", err)
		os.Exit(1)
	}
}
