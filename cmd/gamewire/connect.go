package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp"
)

// newConnectCmd is `gamewire connect`: an echo client that measures round trips.
func newConnectCmd() *cobra.Command {
	o := &connectFlagSet{}
	cmd := &cobra.Command{
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
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	o.register(cmd)
	f := cmd.Flags()
	f.IntVar(&o.count, "count", 10, "messages to send")
	f.IntVar(&o.size, "size", 64, "bytes per message (at least 8)")
	f.Uint8Var(&o.substream, "substream", 0, "reliable substream to use (needs --max-substream)")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after this long")
	f.StringVar(&o.certPub, "cert-pub", "", "hyperscape: the server's certification public key (PEM, e.g. key.pub.pem from gamewire keygen hyperscape)")
	o.lite.hook(cmd, o)
	return cmd
}

// connectFlagSet are connect's flags: the shared connection settings, the
// echo probe's, and those of connect over PRUDP Lite (connect_lite.go).
type connectFlagSet struct {
	prudpFlags
	count     int
	size      int
	substream uint8
	timeout   time.Duration
	lite      connectLiteOptions
}

func (o *connectFlagSet) run(cmd *cobra.Command, addr string) error {
	cfg, err := o.config()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if cfg.Dialect == prudp.Hyperscape && cfg.CertPub == nil {
		return fmt.Errorf("connect: --dialect hyperscape needs --cert-pub, the server's certification public key")
	}
	if err := o.checkProbe(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	c, err := withProgress(cmd.ErrOrStderr(), progressEvery(o.timeout), o.timeout, prudp.Dial)(ctx, addr, &cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", explainHandshake(err, addr, cfg, o.timeout))
	}
	rep, err := prudp.EchoProbe(ctx, c, o.substream, o.count, o.size)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s %s: %v\n", cfg.Dialect, addr, rep)
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

// minProbeSize is the smallest echo message: each starts with its 8-byte
// sequence number (prudp.EchoProbe).
const minProbeSize = 8

// checkProbe refuses probe flags the echo probe cannot honour.
func (f *connectFlagSet) checkProbe() error {
	if f.count < 0 {
		return fmt.Errorf("connect: --count %d: the number of messages cannot be negative", f.count)
	}
	if f.size < minProbeSize {
		return fmt.Errorf("connect: --size %d: messages are at least %d bytes (each starts with its 8-byte sequence number)", f.size, minProbeSize)
	}
	return nil
}

// explainHandshake turns a handshake that timed out into an error that says
// what was tried and why a server may stay silent: a PRUDP server drops,
// without answering, a SYN or CONNECT whose dialect, access key (checksum,
// signature) or virtual port is not its own, and UDP reports no refusal, so
// all of these look alike to the client: no answer until the deadline.
// Other errors are returned as they are.
func explainHandshake(err error, target string, cfg prudp.Config, timeout time.Duration) error {
	if !errors.Is(err, prudp.ErrHandshake) || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	where := "a server listens at that address (UDP reports no refusal) and no firewall drops the packets"
	if cfg.Dialect == prudp.NEXLite {
		where = "the URL is the game server's (its stream was accepted, its PRUDP was not answered)"
	}
	return fmt.Errorf("no answer to the PRUDP handshake from %s within %v (tried --dialect %s, --access-key %q, --vport %d); "+
		"a server silently drops a handshake with another dialect, access key or virtual port, so check those against the game's, "+
		"and that %s: %w", target, timeout, cfg.Dialect, cfg.AccessKey, cfg.Port, where, err)
}
