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
		Use:   "connect [--server ADDR]",
		Short: "Connect to a PRUDP echo server, send messages, check the echoes, print RTT statistics",
		Long: `connect dials --server ADDR, sends --count messages of --size bytes one at a time on
--substream, expects each echoed back unchanged (gamewire serve --echo), prints
round-trip statistics and the connection's counters, and disconnects.
It exits 0 only if every echo came back. The older form with ADDR as an
argument (gamewire connect ADDR) still works, with a note.

  gamewire connect --server 127.0.0.1:60000 [--dialect nex-v1|nex-v0|nex-v0-friends]
                   [--access-key K] [--vport N] [--count N] [--size B] [--format json]
  gamewire connect --server ADDR --dialect quazal [--checksum 1|4] [--rc4 per-packet|stream]
  gamewire connect --server ADDR --dialect hyperscape --cert-pub DIR/key.pub.pem`,
		Args: cobra.MaximumNArgs(1),
		RunE: withServer("connect", &o.server, o.run),
	}
	o.register(cmd)
	addServerFlag(cmd, &o.server, "127.0.0.1:60000", "the echo server, HOST:PORT (a ws/wss/tcp/tls URL with --dialect nex-lite)")
	addFormatFlag(cmd, &o.format)
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
	server    string
	format    formatFlag
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
	return o.probe(ctx, cmd, c, cfg, addr)
}

// probe runs the echo probe on c, prints its report and the connection's
// counters (text, or one JSON record with --format json), and disconnects.
func (o *connectFlagSet) probe(ctx context.Context, cmd *cobra.Command, c *prudp.Conn, cfg prudp.Config, target string) error {
	rep, err := prudp.EchoProbe(ctx, c, o.substream, o.count, o.size)
	out := cmd.OutOrStdout()
	closeErr := c.Close(ctx)
	st := c.Stats()
	if o.format.json() {
		rec := map[string]any{"dialect": cfg.Dialect.String(), "server": target, "sent": rep.Sent, "echoed": rep.Received,
			"elapsed_us": rep.Elapsed.Microseconds(), "rtt_min_us": rep.Min.Microseconds(), "rtt_p50_us": rep.P50.Microseconds(),
			"rtt_p90_us": rep.P90.Microseconds(), "rtt_p99_us": rep.P99.Microseconds(), "rtt_max_us": rep.Max.Microseconds(),
			"rtt_mean_us": rep.Mean.Microseconds(), "srtt_us": st.SRTT.Microseconds(), "rttvar_us": st.RTTVar.Microseconds(),
			"packets_out": st.PacketsOut, "packets_in": st.PacketsIn, "retransmissions": st.Retransmits,
			"duplicates": st.Duplicates, "drops": st.Drops}
		if err != nil {
			rec["error"] = err.Error()
		}
		if werr := writeJSON(out, rec); werr != nil {
			return werr
		}
	} else {
		fmt.Fprintf(out, "%s %s: %v\n", cfg.Dialect, target, rep)
		fmt.Fprintf(out, "srtt %v rttvar %v; packets %d out, %d in; retransmissions %d; duplicates %d; drops %s\n",
			st.SRTT.Round(time.Microsecond), st.RTTVar.Round(time.Microsecond), st.PacketsOut, st.PacketsIn, st.Retransmits, st.Duplicates, formatDrops(st.Drops))
	}
	if err != nil {
		if rep.Received == 0 && o.count > 0 {
			return fmt.Errorf("connect: the server accepted the connection but echoed nothing back: it is not an echo server "+
				"(gamewire serve --echo is one; a NEX server answers RMC requests only: try gamewire login): %w", err)
		}
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
