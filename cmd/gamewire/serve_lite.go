package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/gamewire/gamewire/prudp/metrics"
)

// `gamewire serve --dialect nex-lite --echo`: PRUDP Lite over WebSocket and raw
// TCP (TLS with --tls-cert/--tls-key) on one TCP port, echoing on virtual ports
// 1 (authentication) and 2 (secure). It hooks into the command newServeCmd
// builds so that serve keeps one set of flags.

// serveLiteOptions are serve's flags for PRUDP Lite.
type serveLiteOptions struct {
	tlsCert, tlsKey string
}

// hook adds serve's Lite flags and help to cmd, and makes its run serve Lite
// when --dialect is nex-lite; o is serve's options, of which l is part.
func (l *serveLiteOptions) hook(cmd *cobra.Command, o *serveOptions) {
	f := cmd.Flags()
	f.StringVar(&l.tlsCert, "tls-cert", "", "TLS certificate file (PEM): nex-lite serves wss:// and tls://; otherwise the account services (--account-listen) serve HTTPS")
	f.StringVar(&l.tlsKey, "tls-key", "", "TLS private key file (PEM), with --tls-cert")
	cmd.Long += `

With --dialect nex-lite (Switch games) the servers speak PRUDP Lite on one TCP port
instead: WebSocket connections (subprotocol NEX, path /) and raw Lite streams alike,
over TLS with --tls-cert and --tls-key (wss:// and tls://). The NEX authentication
server is virtual port 1 and the secure server virtual port 2 of that one listener,
with Switch settings (8-byte PIDs, the Switch key derivation); with --echo both
ports run the echo diagnostic.

  gamewire serve --dialect nex-lite --listen 127.0.0.1:4430 [--tls-cert F --tls-key F]
                 [--access-key K] [--echo] [--metrics 127.0.0.1:9100]`
	next := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if o.effectiveDialect() != prudp.NEXLite.String() {
			if (l.tlsCert != "" || l.tlsKey != "") && o.account.listen == "" {
				return errors.New("serve: --tls-cert and --tls-key need --dialect nex-lite or --account-listen")
			}
			return next(cmd, args)
		}
		return o.runLite(cmd)
	}
}

func (o *serveOptions) runLite(cmd *cobra.Command) error {
	cfg, err := o.config()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Refusals (a bad Lite signature, a slow reader dropped) are worth a
	// line on stderr even without --verbose.
	o.opsLog(cmd, &cfg)
	lcfg := &lite.Config{Logger: cfg.Logger}
	scheme, raw := "ws", "tcp"
	switch {
	case o.lite.tlsCert != "" && o.lite.tlsKey != "":
		if lcfg.TLS, err = lite.LoadTLS(o.lite.tlsCert, o.lite.tlsKey); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		scheme, raw = "wss", "tls"
	case o.lite.tlsCert != "" || o.lite.tlsKey != "":
		return errors.New("serve: --tls-cert and --tls-key go together")
	}
	if err := checkAddr("--listen", o.listen); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := o.bindMetrics(); err != nil {
		return err
	}
	defer o.closeMetrics()
	l, err := lite.Listen(o.listen, lcfg)
	if err != nil {
		return fmt.Errorf("serve: PRUDP Lite listener (--listen): %w", err)
	}
	defer l.Close()
	if !o.echo {
		return o.runNEX(cmd, cfg, l, fmt.Sprintf("%s://%s/ (and raw %s streams)", scheme, announce(o.publicHost, l.Addr().String()), raw))
	}
	servers := make([]*prudp.Server, 2)
	for i := range servers {
		c := cfg
		c.Port = uint8(i + 1)
		c.MaxBuffer = max(cfg.MaxBuffer/2, 1) // the two ports share the process's budget
		servers[i] = &prudp.Server{Config: c, Handler: prudp.EchoHandler}
	}
	if o.metrics != "" {
		stop, err := o.serveMetrics(cmd, map[string]prometheus.Collector{
			"lite": metrics.Lite(l), "echo-port1": metrics.Server(servers[0]), "echo-port2": metrics.Server(servers[1]),
		})
		if err != nil {
			return err
		}
		defer stop()
	}
	done := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { done <- srv.Serve(l.Port(uint8(i + 1))) }()
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "serving PRUDP nex-lite echo on %s://%s/ and raw %s streams, virtual ports 1 and 2, access key %q\n",
		scheme, announce(o.publicHost, l.Addr().String()), raw, cfg.AccessKey)
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-cmd.Context().Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(ctx)
	}
	for range servers {
		<-done
	}
	for i, srv := range servers {
		st := srv.Stats()
		fmt.Fprintf(cmd.ErrOrStderr(), "port %d: served %d connections, %d messages in, %d out, drops %s\n",
			i+1, st.Accepted, st.MessagesIn, st.MessagesOut, formatDrops(st.Drops, st.ConnDrops))
	}
	ls := l.Stats()
	fmt.Fprintf(cmd.ErrOrStderr(), "streams: opened %v, closed %v, refused %v\n", ls.Accepted, ls.Closed, ls.Refused)
	if s := o.ops.summary(); s != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "log: %s\n", s)
	}
	return nil
}
