package main

import "github.com/spf13/cobra"

// newNEXCmd groups the clients of the NEX game services (matchmaking,
// notifications, ranking, DataStore): each logs in as `gamewire login` does and
// then calls one service. Its subcommands are built in their own files (nex_*.go).
func newNEXCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nex",
		Short: "Try the NEX game services of a server as a console would (log in, then call a service)",
	}
	cmd.AddCommand(newNEXDataStoreCmd(), newNEXMatchmakeCmd(), newNEXRankingCmd(), newNEXCallCmd())
	return cmd
}
