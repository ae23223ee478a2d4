package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/gamewire/gamewire/prudp"
)

// serveCmd is `gamewire serve`: a PRUDP server. Today its service is the echo
// diagnostic; with no flags it echoes on 127.0.0.1:60000 (NEX V1).
var serveCmd = &cobra.Command{
	Use:   "serve",
	Short: "Run a PRUDP server (echo service; Prometheus metrics)",
	Long: `serve runs a PRUDP server on one UDP socket. With --echo (the default and, for
now, the only service) every reliable message is sent back on the same
connection and substream, and every unreliable one unreliably: the diagnostic
service for interop tests and benchmarks.

  gamewire serve [--dialect nex-v1|nex-v0|nex-v0-friends] [--listen 127.0.0.1:60000]
                 [--access-key K] [--vport N] [--echo] [--metrics 127.0.0.1:9100]

Ctrl-C disconnects every client gracefully (5 s at most) and exits.`,
	Args: cobra.NoArgs,
	RunE: runServe,
}

var serveFlags struct {
	prudpFlags
	listen  string
	echo    bool
	metrics string
}

// prudpFlags are the connection settings serve and connect share.
type prudpFlags struct {
	dialect      string
	accessKey    string
	vport        uint8
	maxSubstream uint8
	compression  bool
	verbose      bool
}

func (f *prudpFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.dialect, "dialect", "nex-v1", "PRUDP dialect: nex-v1, nex-v0 or nex-v0-friends")
	fl.StringVar(&f.accessKey, "access-key", "", "the game server's access key (checksums, signatures)")
	fl.Uint8Var(&f.vport, "vport", 1, "the server's virtual port (stream type RVSecure)")
	fl.Uint8Var(&f.maxSubstream, "max-substream", 0, "highest reliable substream id offered (V1)")
	fl.BoolVar(&f.compression, "compression", false, "zlib-compress payloads (both ends must agree)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log connection events to stderr")
}

func (f *prudpFlags) config() (prudp.Config, error) {
	d, err := prudp.ParseDialect(f.dialect)
	if err != nil {
		return prudp.Config{}, err
	}
	if f.vport > 15 {
		return prudp.Config{}, fmt.Errorf("--vport %d: virtual ports are 0-15", f.vport)
	}
	cfg := prudp.Config{Dialect: d, AccessKey: f.accessKey, Port: f.vport, MaxSubstreamID: f.maxSubstream, Compression: f.compression}
	if f.verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg, nil
}

func init() {
	serveFlags.register(serveCmd)
	f := serveCmd.Flags()
	f.StringVar(&serveFlags.listen, "listen", "127.0.0.1:60000", "UDP address to listen on")
	f.BoolVar(&serveFlags.echo, "echo", true, "echo every message back (the default service)")
	f.StringVar(&serveFlags.metrics, "metrics", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9100)")
	rootCmd.AddCommand(serveCmd)
}

func runServe(cmd *cobra.Command, args []string) error {
	cfg, err := serveFlags.config()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if !serveFlags.echo {
		return errors.New("serve: --echo=false leaves no service to run (the NEX services come with a later release)")
	}
	srv := &prudp.Server{Addr: serveFlags.listen, Config: cfg, Handler: prudp.EchoHandler}
	ua, err := net.ResolveUDPAddr("udp", serveFlags.listen)
	if err != nil {
		return fmt.Errorf("serve: --listen: %w", err)
	}
	pc, err := net.ListenUDP("udp", ua)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if serveFlags.metrics != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(srv.Collector())
		ln, err := net.Listen("tcp", serveFlags.metrics)
		if err != nil {
			pc.Close()
			return fmt.Errorf("serve: --metrics: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ln)
		defer hs.Close()
		fmt.Fprintf(cmd.ErrOrStderr(), "metrics on http://%s/metrics\n", ln.Addr())
	}
	_ = pc.SetReadBuffer(4 << 20)
	_ = pc.SetWriteBuffer(4 << 20)
	fmt.Fprintf(cmd.ErrOrStderr(), "serving PRUDP %s echo on %s (virtual port %d)\n", cfg.Dialect, pc.LocalAddr(), cfg.Port)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-cmd.Context().Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	<-done
	st := srv.Stats()
	fmt.Fprintf(cmd.ErrOrStderr(), "served %d connections, %d messages in, %d out, %d retransmissions, drops %v %v\n",
		st.Accepted, st.MessagesIn, st.MessagesOut, st.Retransmits, st.Drops, st.ConnDrops)
	return nil
}
