package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gamewire/gamewire/internal/httplimit"
	"github.com/gamewire/gamewire/internal/memlimit"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/metrics"
)

// newServeCmd is `gamewire serve`: a NEX game server (authentication and secure
// servers over PRUDP) by default, or the PRUDP echo diagnostic with --echo.
func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a NEX game server (authentication + secure), or a PRUDP echo server with --echo",
		Long: `serve runs a NEX game server: an authentication server that grants Kerberos
tickets and a secure server that accepts them, both speaking RMC over PRUDP
(docs/nex.md). With no flags: authentication on 127.0.0.1:60000, secure on
127.0.0.1:60001, NEX V1, the default access key, and an account store created in
the default data directory on first start (guest / MMQea3n!fsik among the
special accounts; add users with gamewire accounts).

With --echo it runs the PRUDP echo diagnostic instead: every reliable message is
sent back on the same connection and substream, and every unreliable one
unreliably (for interop tests and benchmarks).

  gamewire serve [--dialect nex-v1|nex-v0|nex-v0-friends] [--listen 127.0.0.1:60000]
                 [--secure-listen ADDR] [--data DIR] [--access-key K] [--vport N]
                 [--echo] [--metrics 127.0.0.1:9100]
  gamewire serve --dialect quazal [--checksum 1|4] [--rc4 per-packet|stream]
                 [--quazal-signatures connection|payload|session] [--echo] ...
  gamewire serve --echo --dialect hyperscape --cert-key DIR/key.pem
                 (gamewire keygen hyperscape --out DIR writes the key pair)

Ctrl-C disconnects every client gracefully (5 s at most) and exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:60000", "UDP address to listen on")
	f.BoolVar(&o.echo, "echo", false, "run the PRUDP echo diagnostic instead of the NEX servers")
	f.StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics on this address (e.g. 127.0.0.1:9100)")
	f.StringVar(&o.publicHost, "public-host", "", "host name or IP address clients reach this machine at, written in every endpoint serve announces (the secure station url unless --secure-host, the DataStore URL unless --datastore-url, the metrics URL); default: the listening host, 127.0.0.1 when that is a wildcard (0.0.0.0, ::)")
	o.maxBuffer = defaultMaxBuffer()
	f.Var(&o.maxBuffer, "max-buffer", "memory budget for received data held for connections (reorder buffers, unfinished messages): bytes, or with KiB/MiB/GiB; default 1/16 of the machine's memory, 64 MiB to 1 GiB (docs/security.md)")
	f.IntVar(&o.maxConns, "max-conns", 50000, "most connections a server holds; further CONNECTs get no answer")
	f.StringVar(&o.memLimit, "memory-limit", "auto", "the Go runtime's soft memory limit: auto (the --max-buffer budget + 16MiB), off, or a size (96MiB); GOMEMLIMIT wins (docs/security.md)")
	f.StringVar(&o.certKey, "cert-key", "", "hyperscape: the certification private key (PEM, e.g. key.pem from gamewire keygen hyperscape)")
	f.Lookup("dialect").Usage = "PRUDP dialect: nex-v1, nex-v0, nex-v0-friends, nex-lite (over ws/wss/tcp/tls), quazal, or hyperscape (with --echo)"
	o.lite.hook(cmd, o)
	o.nex.register(cmd)
	o.http.register(f)
	o.account.register(cmd)
	return cmd
}

// serveOptions are serve's flags: the shared connection settings plus the
// server's own, those of PRUDP Lite (serve_lite.go) and of the NEX servers
// (serve_nex.go).
type serveOptions struct {
	prudpFlags
	listen  string
	echo    bool
	metrics string
	// publicHost is --public-host: what clients reach this machine at.
	publicHost string
	// metricsLn is --metrics bound before the banner (bindMetrics).
	metricsLn net.Listener
	// ops is the operator log without --verbose (oplog.go); nil with it.
	ops       *opsHandler
	maxBuffer byteSize
	maxConns  int
	memLimit  string
	lite      serveLiteOptions
	nex       serveNEXOptions
	http      httpLimitFlags
	account   serveAccountOptions
}

// defaultAccessKey is the access key serve, connect and login use unless told
// otherwise: Terraria's (Wii U), from the published vector in testdata/prudp.
// Real clients need their game's key (nintendo-wiki "Game Servers List").
const defaultAccessKey = "3d37fbdb"

// prudpFlags are the connection settings serve, connect and login share.
type prudpFlags struct {
	dialect      string
	accessKey    string
	vport        uint8
	maxSubstream uint8
	compression  bool
	noEncryption bool
	verbose      bool
	// Quazal and Hyperscape (docs/prudp-quazal.md, docs/prudp-hyperscape.md)
	checksum   int
	rc4        string
	quazalSigs string
	certKey    string // server: certification private key PEM
	certPub    string // client: certification public key PEM
	// --game: the dialect and access key from the games table (games.go)
	game  string
	flags *pflag.FlagSet
}

func (f *prudpFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.dialect, "dialect", "nex-v1", "PRUDP dialect: nex-v1, nex-v0, nex-v0-friends, nex-lite (over ws/wss/tcp/tls), quazal or hyperscape")
	fl.StringVar(&f.accessKey, "access-key", defaultAccessKey, "the game server's access key (checksums, signatures)")
	fl.Uint8Var(&f.vport, "vport", 1, "the server's virtual port (stream type RVSecure)")
	fl.Uint8Var(&f.maxSubstream, "max-substream", 0, "highest reliable substream id offered (V1)")
	fl.BoolVar(&f.compression, "compression", false, "zlib-compress payloads (both ends must agree)")
	fl.BoolVar(&f.noEncryption, "no-encryption", false, "send DATA payloads without RC4; signatures stay (both ends must agree)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log connection events to stderr")
	fl.IntVar(&f.checksum, "checksum", 1, "quazal: checksum size, 1 or 4 bytes")
	fl.StringVar(&f.rc4, "rc4", "per-packet", "quazal: RC4 re-keyed per packet (per-packet) or one stream (stream)")
	fl.StringVar(&f.quazalSigs, "quazal-signatures", "connection", "quazal: DATA signatures: connection, payload (HMAC of the payload) or session (nex-go's)")
	registerGameFlag(fl, &f.game)
	f.flags = fl
}

func (f *prudpFlags) config() (prudp.Config, error) {
	dialect, accessKey, err := f.gameSettings()
	if err != nil {
		return prudp.Config{}, err
	}
	d, err := prudp.ParseDialect(dialect)
	if err != nil {
		return prudp.Config{}, err
	}
	if f.vport > 15 {
		return prudp.Config{}, fmt.Errorf("--vport %d: virtual ports are 0-15", f.vport)
	}
	cfg := prudp.Config{Dialect: d, AccessKey: accessKey, Port: f.vport, MaxSubstreamID: f.maxSubstream, Compression: f.compression, NoEncryption: f.noEncryption}
	if d == prudp.NEXV0Friends {
		// The 3DS / Wii U friends server uses 16-byte session keys (kerberos.md).
		cfg.Kerberos = kerberos.Friends
	}
	if d == prudp.Quazal {
		if f.checksum != 1 && f.checksum != 4 {
			return prudp.Config{}, fmt.Errorf("--checksum %d: 1 or 4", f.checksum)
		}
		cfg.ChecksumSize = f.checksum
		// Spelled out (the engine would default to them) so that the NEX
		// servers and login, which read Config.Kerberos and StreamType (the
		// secure station URL), agree with the engine.
		cfg.Kerberos = kerberos.Quazal
		cfg.StreamType = prudp.StreamOldRVSec
		if cfg.RC4Mode, err = prudp.ParseRC4Mode(f.rc4); err != nil {
			return prudp.Config{}, fmt.Errorf("--rc4: %w", err)
		}
		if cfg.QuazalSignatures, err = prudp.ParseQuazalSignatures(f.quazalSigs); err != nil {
			return prudp.Config{}, fmt.Errorf("--quazal-signatures: %w", err)
		}
	}
	if d == prudp.Hyperscape {
		cfg.StreamType = prudp.StreamOldRVSec
		if f.certKey != "" {
			if cfg.CertKey, err = hyperscape.LoadPrivateKey(f.certKey); err != nil {
				return prudp.Config{}, fmt.Errorf("--cert-key: %w", err)
			}
		}
		if f.certPub != "" {
			if cfg.CertPub, err = hyperscape.LoadPublicKey(f.certPub); err != nil {
				return prudp.Config{}, fmt.Errorf("--cert-pub: %w", err)
			}
		}
	}
	if f.verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg, nil
}

func (o *serveOptions) run(cmd *cobra.Command) error {
	cfg, err := o.config()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	o.opsLog(cmd, &cfg)
	ml, err := memlimit.Choose(o.memLimit, int64(o.maxBuffer), os.Getenv("GOMEMLIMIT"))
	if err != nil {
		return fmt.Errorf("serve: --memory-limit %w", err)
	}
	defer ml.Apply()()
	fmt.Fprintf(cmd.ErrOrStderr(), "memory limit %s\n", ml.Why)
	if cfg.Dialect == prudp.Hyperscape && cfg.CertKey == nil {
		return fmt.Errorf("serve: --dialect hyperscape needs --cert-key (gamewire keygen hyperscape --out DIR writes one)")
	}
	if !o.echo {
		if cfg.Dialect == prudp.Hyperscape {
			// As login refuses it: the secure server is entered with a Kerberos
			// ticket, Hyperscape keys connections by ECDH (docs/prudp-hyperscape.md).
			return fmt.Errorf("serve: --dialect hyperscape runs the echo diagnostic only (add --echo): its connections are keyed by ECDH, not by a Kerberos ticket, so the NEX servers do not apply")
		}
		return o.runNEX(cmd, cfg, nil, "")
	}
	srv := &prudp.Server{Addr: o.listen, Config: cfg, Handler: prudp.EchoHandler}
	if err := checkAddr("--listen", o.listen); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := o.bindMetrics(); err != nil {
		return err
	}
	pc, err := listenUDP("echo server (--listen)", o.listen)
	if err != nil {
		o.closeMetrics()
		return fmt.Errorf("serve: %w", err)
	}
	if o.metricsLn != nil {
		stop, err := o.serveMetrics(cmd, map[string]prometheus.Collector{"echo": metrics.Server(srv)})
		if err != nil {
			pc.Close()
			return err
		}
		defer stop()
	}
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
	fmt.Fprintf(cmd.ErrOrStderr(), "served %d connections, %d messages in, %d out, %d retransmissions, drops %s\n",
		st.Accepted, st.MessagesIn, st.MessagesOut, st.Retransmits, formatDrops(st.Drops, st.ConnDrops))
	return nil
}

// config is the shared settings' Config with the server's limits
// (--max-buffer, --max-conns).
func (f *serveOptions) config() (prudp.Config, error) {
	cfg, err := f.prudpFlags.config()
	if err != nil {
		return cfg, err
	}
	if f.maxBuffer <= 0 {
		return cfg, fmt.Errorf("--max-buffer %d: must be positive", f.maxBuffer)
	}
	if f.maxConns <= 0 {
		return cfg, fmt.Errorf("--max-conns %d: must be positive", f.maxConns)
	}
	cfg.MaxBuffer = int(min(int64(f.maxBuffer), math.MaxInt))
	cfg.MaxConns = f.maxConns
	return cfg, nil
}

// opsLog gives cfg serve's operator log (oplog.go) unless --verbose gave it
// the full one: warnings, errors and failed logins reach stderr either way.
func (f *serveOptions) opsLog(cmd *cobra.Command, cfg *prudp.Config) {
	if cfg.Logger == nil {
		cfg.Logger, f.ops = newOpsLogger(cmd.ErrOrStderr())
	}
}

// defaultMaxBuffer is serve --max-buffer's default: a sixteenth of the
// machine's memory (Linux's MemTotal), at least 64 MiB and at most 1 GiB;
// 64 MiB where the machine's memory is unknown.
func defaultMaxBuffer() byteSize {
	const floor, ceiling = 64 << 20, 1 << 30
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return floor
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return floor
			}
			return byteSize(min(max(kb<<10/16, floor), ceiling))
		}
	}
	return floor
}

// bindMetrics binds --metrics, when given, so that a busy port fails before
// any banner claims to serve; serveMetrics serves on it later, under the
// --http-* limits.
func (o *serveOptions) bindMetrics() error {
	if o.metrics == "" || o.metricsLn != nil {
		return nil
	}
	if err := checkAddr("--metrics", o.metrics); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", o.metrics)
	if err != nil {
		return fmt.Errorf("serve: metrics endpoint (--metrics): %w", err)
	}
	o.metricsLn = ln
	return nil
}

// closeMetrics releases what bindMetrics bound, on a failure before
// serveMetrics.
func (o *serveOptions) closeMetrics() {
	if o.metricsLn != nil {
		o.metricsLn.Close()
		o.metricsLn = nil
	}
}

// serveMetrics serves the collectors' Prometheus metrics on the listener
// bindMetrics bound, each labelled with server="NAME", until stop is called.
func (o *serveOptions) serveMetrics(cmd *cobra.Command, collectors map[string]prometheus.Collector) (stop func(), err error) {
	lim, err := o.http.limits()
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := o.bindMetrics(); err != nil {
		return nil, err
	}
	ln := o.metricsLn
	reg := prometheus.NewRegistry()
	for name, c := range collectors {
		if err := prometheus.WrapRegistererWith(prometheus.Labels{"server": name}, reg).Register(c); err != nil {
			o.closeMetrics()
			return nil, fmt.Errorf("serve: --metrics: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &httplimit.Server{Handler: mux, Limits: lim}
	go hs.Serve(ln)
	fmt.Fprintf(cmd.ErrOrStderr(), "metrics on http://%s/metrics\n", announce(o.publicHost, ln.Addr().String()))
	return func() { hs.Close() }, nil
}

// checkAddr checks that addr, the value of flag, is HOST:PORT with a port
// number a socket can have, so that a typo is reported against the flag the
// user set rather than against an address derived from it.
func checkAddr(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w (want HOST:PORT)", flag, addr, err)
	}
	if _, err := parsePort(port); err != nil {
		return fmt.Errorf("%s %q: %w", flag, addr, err)
	}
	return nil
}

// parsePort parses a port number, 0 to 65535 (0: any free port).
func parsePort(port string) (int, error) {
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return p, nil
}

// nextPort returns addr with its port + delta, the way serve derives a
// default address from another (the secure server's from --listen, the
// DataStore endpoint's from the secure server's); port 0 stays 0 (any free
// port). from names where addr came from, for the error when the port would
// pass 65535.
func nextPort(addr string, delta int, from string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", from, addr, err)
	}
	p, err := parsePort(port)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", from, addr, err)
	}
	if p == 0 {
		return addr, nil
	}
	if p+delta > 65535 {
		return "", fmt.Errorf("%s %q: port + %d passes 65535", from, addr, delta)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+delta)), nil
}

// announce returns the HOST:PORT clients are told for a socket bound to
// bound: public (--public-host, or --secure-host) when set, else the bound
// host, except that a wildcard address (0.0.0.0, ::), which no client can
// dial, becomes 127.0.0.1.
func announce(public, bound string) string {
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return bound
	}
	if public != "" {
		return net.JoinHostPort(public, port)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// wildcard reports whether addr's host is empty or a wildcard address.
func wildcard(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// formatDrops describes a server's drop counters (prudp.Stats Drops and
// ConnDrops) for people: "none", or "reason N, ..." sorted by reason.
func formatDrops(counts ...map[string]uint64) string {
	sum := map[string]uint64{}
	for _, m := range counts {
		for k, v := range m {
			sum[k] += v
		}
	}
	if len(sum) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(sum))
	for k, v := range sum {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
