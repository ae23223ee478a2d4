package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
)

// `gamewire connect ws://... | wss://... | tcp://... | tls://... --dialect nex-lite`:
// the echo probe over PRUDP Lite. It hooks into the command newConnectCmd builds.

// connectLiteOptions are connect's flags for PRUDP Lite.
type connectLiteOptions struct {
	insecure bool
}

// hook adds connect's Lite flag and help to cmd, and makes its run dial Lite
// when --dialect is nex-lite; o is connect's options, of which l is part.
func (l *connectLiteOptions) hook(cmd *cobra.Command, o *connectFlagSet) {
	cmd.Flags().BoolVar(&l.insecure, "insecure-skip-verify", false, "nex-lite over wss:// or tls://: accept any server certificate")
	cmd.Long += `

With --dialect nex-lite ADDR is a URL: ws://host:port/, wss://host:port/ (WebSocket,
subprotocol NEX), tcp://host:port or tls://host:port (raw Lite stream).

  gamewire connect wss://127.0.0.1:4430/ --dialect nex-lite --access-key K [--insecure-skip-verify]`
	next := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		isURL := strings.Contains(args[0], "://")
		lite := o.effectiveDialect() == prudp.NEXLite.String()
		switch {
		case lite && !isURL:
			return fmt.Errorf("connect: --dialect nex-lite dials a URL (ws://, wss://, tcp://, tls://), not %q", args[0])
		case !lite && isURL:
			return fmt.Errorf("connect: %s is a URL: PRUDP over WebSocket or TCP needs --dialect nex-lite", args[0])
		case !lite:
			return next(cmd, args)
		}
		return o.runLite(cmd, args[0])
	}
}

func (o *connectFlagSet) runLite(cmd *cobra.Command, url string) error {
	cfg, err := o.config()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if err := o.checkProbe(); err != nil {
		return err
	}
	lcfg := &lite.Config{Logger: cfg.Logger}
	if o.lite.insecure {
		lcfg.TLS = &tls.Config{InsecureSkipVerify: true}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	c, err := lite.Dial(ctx, url, &cfg, lcfg)
	if err != nil {
		return fmt.Errorf("connect: %w", explainHandshake(err, url, cfg, o.timeout))
	}
	rep, err := prudp.EchoProbe(ctx, c, o.substream, o.count, o.size)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s %s: %v\n", cfg.Dialect, url, rep)
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
