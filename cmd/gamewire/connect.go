package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp"
)

// connectCmd is `gamewire connect`: an echo client that measures round trips.
var connectCmd = &cobra.Command{
	Use:   "connect ADDR",
	Short: "Connect to a PRUDP echo server, send messages, check the echoes, print RTT statistics",
	Long: `connect dials ADDR, sends --count messages of --size bytes one at a time on
--substream, expects each echoed back unchanged (gamewire serve --echo), prints
round-trip statistics and the connection's counters, and disconnects.
It exits 0 only if every echo came back.

  gamewire connect 127.0.0.1:60000 [--dialect nex-v1|nex-v0|nex-v0-friends]
                   [--access-key K] [--vport N] [--count N] [--size B]
  gamewire connect ADDR --dialect quazal [--checksum 1|4] [--rc4 per-packet|stream]
  gamewire connect ADDR --dialect hyperscape --cert-pub DIR/key.pub.pem`,
	Args: cobra.ExactArgs(1),
	RunE: runConnect,
}

var connectFlags struct {
	prudpFlags
	count     int
	size      int
	substream uint8
	timeout   time.Duration
}

func init() {
	connectFlags.register(connectCmd)
	f := connectCmd.Flags()
	f.IntVar(&connectFlags.count, "count", 10, "messages to send")
	f.IntVar(&connectFlags.size, "size", 64, "bytes per message (at least 8)")
	f.Uint8Var(&connectFlags.substream, "substream", 0, "reliable substream to use (needs --max-substream)")
	f.DurationVar(&connectFlags.timeout, "timeout", 30*time.Second, "give up after this long")
	f.StringVar(&connectFlags.certPub, "cert-pub", "", "hyperscape: the server's certification public key (PEM, e.g. key.pub.pem from gamewire keygen hyperscape)")
	rootCmd.AddCommand(connectCmd)
}

func runConnect(cmd *cobra.Command, args []string) error {
	cfg, err := connectFlags.config()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if cfg.Dialect == prudp.Hyperscape && cfg.CertPub == nil {
		return fmt.Errorf("connect: --dialect hyperscape needs --cert-pub, the server's certification public key")
	}
	if connectFlags.count < 0 {
		return fmt.Errorf("connect: --count %d", connectFlags.count)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), connectFlags.timeout)
	defer cancel()
	c, err := prudp.Dial(ctx, args[0], &cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	rep, err := prudp.EchoProbe(ctx, c, connectFlags.substream, connectFlags.count, connectFlags.size)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s %s: %v\n", cfg.Dialect, args[0], rep)
	closeErr := c.Close(ctx)
	st := c.Stats()
	fmt.Fprintf(out, "srtt %v rttvar %v; packets %d out, %d in; retransmissions %d; duplicates %d; drops %v\n",
		st.SRTT.Round(time.Microsecond), st.RTTVar.Round(time.Microsecond), st.PacketsOut, st.PacketsIn, st.Retransmits, st.Duplicates, st.Drops)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if closeErr != nil {
		return fmt.Errorf("connect: disconnect: %w", closeErr)
	}
	return nil
}
