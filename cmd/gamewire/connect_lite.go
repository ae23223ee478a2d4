package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

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

  gamewire connect --server wss://127.0.0.1:4430/ --dialect nex-lite --access-key K [--insecure-skip-verify]`
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		addr, err := serverFromArgs(cmd, o.server, args)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		isURL := strings.Contains(addr, "://")
		lite := o.effectiveDialect() == prudp.NEXLite.String()
		switch {
		case lite && !isURL:
			return fmt.Errorf("connect: --dialect nex-lite dials a URL (ws://, wss://, tcp://, tls://), not %q", addr)
		case !lite && isURL:
			return fmt.Errorf("connect: %s is a URL: PRUDP over WebSocket or TCP needs --dialect nex-lite", addr)
		case !lite:
			return o.run(cmd, addr)
		}
		return o.runLite(cmd, addr)
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
	return o.probe(ctx, cmd, c, cfg, url)
}
