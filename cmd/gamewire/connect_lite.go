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
// the echo probe over PRUDP Lite. It hooks into connect.go's command.

var connectLiteFlags struct {
	insecure bool
}

func init() {
	connectCmd.Flags().BoolVar(&connectLiteFlags.insecure, "insecure-skip-verify", false, "nex-lite over wss:// or tls://: accept any server certificate")
	connectCmd.Long += `

With --dialect nex-lite ADDR is a URL: ws://host:port/, wss://host:port/ (WebSocket,
subprotocol NEX), tcp://host:port or tls://host:port (raw Lite stream).

  gamewire connect wss://127.0.0.1:4430/ --dialect nex-lite --access-key K [--insecure-skip-verify]`
	next := connectCmd.RunE
	connectCmd.RunE = func(cmd *cobra.Command, args []string) error {
		isURL := strings.Contains(args[0], "://")
		lite := connectFlags.effectiveDialect() == prudp.NEXLite.String()
		switch {
		case lite && !isURL:
			return fmt.Errorf("connect: --dialect nex-lite dials a URL (ws://, wss://, tcp://, tls://), not %q", args[0])
		case !lite && isURL:
			return fmt.Errorf("connect: %s is a URL: PRUDP over WebSocket or TCP needs --dialect nex-lite", args[0])
		case !lite:
			return next(cmd, args)
		}
		return runConnectLite(cmd, args[0])
	}
}

func runConnectLite(cmd *cobra.Command, url string) error {
	cfg, err := connectFlags.config()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if err := connectFlags.checkProbe(); err != nil {
		return err
	}
	lcfg := &lite.Config{Logger: cfg.Logger}
	if connectLiteFlags.insecure {
		lcfg.TLS = &tls.Config{InsecureSkipVerify: true}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), connectFlags.timeout)
	defer cancel()
	c, err := lite.Dial(ctx, url, &cfg, lcfg)
	if err != nil {
		return fmt.Errorf("connect: %w", explainHandshake(err, url, cfg, connectFlags.timeout))
	}
	rep, err := prudp.EchoProbe(ctx, c, connectFlags.substream, connectFlags.count, connectFlags.size)
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
