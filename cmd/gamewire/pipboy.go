package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gamewire/gamewire/pipboy"
	"github.com/spf13/cobra"
)

// pipboyCmd is `gamewire pipboy`, the Fallout 4 Pip-Boy protocol (docs/pipboy.md).
var pipboyCmd = &cobra.Command{
	Use:   "pipboy",
	Short: "Fallout 4 Pip-Boy: discover, connect, serve, relay, replay, dashboard, decode",
}

var pipboyDecodeFlags struct {
	json   bool
	events bool
	path   string
}

var pipboyDecodeCmd = &cobra.Command{
	Use:   "decode FILE",
	Short: "Decode a server-to-app stream, a bare update payload or a recording",
	Long: `decode reads FILE ("-" for standard input): a raw server-to-app TCP stream, the bare
payload of one data update, or a recording made by "gamewire pipboy relay", and prints
the final database as JSON (--json, the default), each message (--events), or one
value (--path '$.PlayerInfo.PlayerName').`,
	Args: cobra.ExactArgs(1),
	RunE: runPipboyDecode,
}

func init() {
	f := pipboyDecodeCmd.Flags()
	f.BoolVar(&pipboyDecodeFlags.json, "json", false, "print the final tree as JSON (default when neither --events nor --path is given)")
	f.BoolVar(&pipboyDecodeFlags.events, "events", false, "print one line per message")
	f.StringVar(&pipboyDecodeFlags.path, "path", "", "print the value at this path, e.g. $.PlayerInfo.PlayerName")
	pipboyCmd.AddCommand(pipboyDecodeCmd)
	rootCmd.AddCommand(pipboyCmd)
}

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

func runPipboyDecode(cmd *cobra.Command, args []string) error {
	b, err := readInput(args[0])
	if err != nil {
		return err
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	var event func(int64, pipboy.Message) error
	if pipboyDecodeFlags.events {
		event = func(off int64, m pipboy.Message) error {
			_, err := fmt.Fprintf(out, "%8d %s\n", off, pipboy.Summary(m))
			return err
		}
	}
	state, kind, err := pipboy.DecodeInput(b, event)
	if err != nil {
		return fmt.Errorf("pipboy decode %s (%s): %w", args[0], kind, err)
	}
	if pipboyDecodeFlags.path != "" {
		v, err := state.DB.Lookup(pipboyDecodeFlags.path)
		if err != nil {
			return err
		}
		j, err := v.AppendJSON(nil, "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", j)
		return err
	}
	if pipboyDecodeFlags.json || !pipboyDecodeFlags.events {
		root, ok := state.DB.Root()
		if !ok {
			return errors.New("pipboy decode: the input holds no root value (id 0)")
		}
		j, err := root.AppendJSON(nil, "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", j)
		return err
	}
	return nil
}
