package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/nex/desc"
)

// newNEXCmd groups the clients of the NEX game services (matchmaking,
// notifications, ranking, DataStore): each logs in as `gamewire login` does and
// then calls one service. Its subcommands are built in their own files (nex_*.go).
// `nex protocols` lists the protocol descriptions; --proto-dir, a flag of every nex
// subcommand, adds NintendoClients' .proto files to them.
func newNEXCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nex",
		Short: "Try the NEX game services of a server as a console would (log in, then call a service)",
	}
	descs := &nexDescOptions{}
	descs.register(cmd.PersistentFlags())
	cmd.AddCommand(newNEXDataStoreCmd(), newNEXFriendsCmd(), newNEXMatchmakeCmd(), newNEXRankingCmd(), newNEXProtocolsCmd(descs), newNEXCallCmd(descs))
	return cmd
}

// nexDescOptions are the nex command's description options, shared by its
// subcommands that encode or list by description.
type nexDescOptions struct {
	protoDir string
}

// register adds --proto-dir to f (nex and its subcommands, decode, wireshark-plugin).
func (o *nexDescOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.protoDir, "proto-dir", "",
		"a folder of NintendoClients .proto files (its nintendo/files/proto) to add to the built-in protocol descriptions; a file of a built-in family replaces its declarations of the same names")
}

// set returns the protocol descriptions: the built-in ones, with --proto-dir's
// files added when given.
func (o *nexDescOptions) set() (*desc.Set, error) {
	if o.protoDir == "" {
		return desc.Builtin()
	}
	return desc.BuiltinWithProtoDir(o.protoDir)
}
