package main

import "github.com/spf13/cobra"

// nexCmd groups the clients of the NEX game services (matchmaking, notifications,
// ranking, DataStore): each logs in as `gamewire login` does and then calls one
// service. Its subcommands register themselves from their own files (nex_*.go).
var nexCmd = &cobra.Command{
	Use:   "nex",
	Short: "Try the NEX game services of a server as a console would (log in, then call a service)",
}

func init() {
	rootCmd.AddCommand(nexCmd)
}
