package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/internal/httplimit"
	"github.com/gamewire/gamewire/pipboy"
	"github.com/gamewire/gamewire/pipboy/dashboard"
	"github.com/spf13/cobra"
)

// newPipboyCmd is `gamewire pipboy`, the Fallout 4 Pip-Boy protocol (docs/pipboy.md).
func newPipboyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipboy",
		Short: "Fallout 4 Pip-Boy: discover, connect, serve, relay, replay, dashboard, decode",
	}
	cmd.PersistentFlags().BoolP("verbose", "v", false, "log debug events")
	cmd.AddCommand(newPipboyDecodeCmd(), newPipboyDiscoverCmd(), newPipboyConnectCmd(),
		newPipboyServeCmd(), newPipboyReplayCmd(), newPipboyRelayCmd(), newPipboyDashboardCmd())
	// Every subcommand's error names it ("pipboy connect: ...").
	for _, c := range cmd.Commands() {
		name, run := "pipboy "+c.Name(), c.RunE
		if run == nil {
			continue
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if err != nil && !strings.HasPrefix(err.Error(), name) {
				err = fmt.Errorf("%s: %w", name, err)
			}
			return err
		}
	}
	return cmd
}

// pipboyDecodeOptions are the flags of pipboy decode.
type pipboyDecodeOptions struct {
	json   bool // --json, deprecated: --format json
	format formatFlag
	events bool
	path   string
}

func newPipboyDecodeCmd() *cobra.Command {
	o := &pipboyDecodeOptions{}
	cmd := &cobra.Command{
		Use:   "decode FILE",
		Short: "Decode a server-to-app stream, a bare update payload, a recording or a JSON tree",
		Long: `decode reads FILE ("-" for standard input): a raw server-to-app TCP stream, the bare
payload of one data update, a recording made by "gamewire pipboy relay" (its main
session), or a nested JSON tree, and prints the final database as JSON (--json, the
default), each message with its offset and direction (--events), or one value
(--path '$.PlayerInfo.PlayerName'). The format is detected from the content.
With --format json, --events prints one JSON record per message (offset,
direction, summary); the tree and --path values are JSON either way.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the final tree as JSON (default when neither --events nor --path is given)")
	addFormatFlag(cmd, &o.format)
	deprecateFlag(cmd, "json", "the tree is printed as JSON by default; --format json makes --events JSON too")
	f.BoolVar(&o.events, "events", false, "print one line per message")
	f.StringVar(&o.path, "path", "", "print the value at this path, e.g. $.PlayerInfo.PlayerName")
	return cmd
}

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

func (o *pipboyDecodeOptions) run(cmd *cobra.Command, file string) error {
	b, err := readInput(file)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	var event func(int64, pipboy.Direction, pipboy.Message) error
	if o.events {
		event = func(off int64, dir pipboy.Direction, m pipboy.Message) error {
			if o.format.json() {
				return writeJSON(out, map[string]any{"offset": off, "direction": dir.String(), "summary": pipboy.Summary(m)})
			}
			_, err := fmt.Fprintf(out, "%8d %s %s\n", off, dir, pipboy.Summary(m))
			return err
		}
	}
	state, kind, err := pipboy.DecodeInput(b, event)
	if err != nil {
		return fmt.Errorf("pipboy decode %s (%s): %w", file, kind, err)
	}
	if o.path != "" {
		v, err := state.DB.Lookup(o.path)
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
	if o.json || !o.events {
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

// loadGameFile reads a stream, payload, recording or JSON tree into a database.
func loadGameFile(name string) (*pipboy.GameState, error) {
	b, err := readInput(name)
	if err != nil {
		return nil, err
	}
	state, kind, err := pipboy.DecodeInput(b, nil)
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", name, kind, err)
	}
	return state, nil
}

func cliLogger(cmd *cobra.Command) *slog.Logger {
	level := slog.LevelInfo
	if v, _ := cmd.Flags().GetBool("verbose"); v {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
}

// pipboyDiscoverOptions are the discovery flags of pipboy discover and connect.
type pipboyDiscoverOptions struct {
	broadcast string
	wait      time.Duration
}

func newPipboyDiscoverCmd() *cobra.Command {
	o := &pipboyDiscoverOptions{}
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "List the games that answer Pip-Boy discovery (UDP 28000)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.broadcast, "broadcast", pipboy.DefaultBroadcast, "where to send the discovery request (a broadcast address or one host)")
	f.DurationVar(&o.wait, "wait", 2*time.Second, "how long to collect answers")
	return cmd
}

func (o *pipboyDiscoverOptions) run(cmd *cobra.Command) error {
	games, err := pipboy.Discover(cmd.Context(), o.broadcast, o.wait)
	if err != nil {
		return err
	}
	for _, g := range games {
		fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\tbusy=%v\n", g.Addr, g.MachineType, g.IsBusy)
	}
	if len(games) == 0 {
		// A script asking "is a game there?" reads the exit status.
		return fmt.Errorf("no game answered discovery on %s within %v", o.broadcast, o.wait)
	}
	return nil
}

// pipboyConnectOptions are the flags of pipboy connect.
type pipboyConnectOptions struct {
	discover pipboyDiscoverOptions // when no HOST is given
	path     string
	watch    bool
	mapFile  string
	server   string
}

func newPipboyConnectCmd() *cobra.Command {
	o := &pipboyConnectOptions{}
	cmd := &cobra.Command{
		Use:   "connect [--server HOST[:PORT]]",
		Short: "Connect to a game as the app (found by discovery if no --server) and print the database, or one path, live with --watch",
		Args:  cobra.MaximumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
	}
	f := cmd.Flags()
	addServerFlag(cmd, &o.server, "", "the game's HOST[:PORT] (port 27000 by default; none: found by discovery)")
	f.StringVar(&o.discover.broadcast, "broadcast", pipboy.DefaultBroadcast, "where to send discovery when no HOST is given")
	f.DurationVar(&o.discover.wait, "wait", 2*time.Second, "how long to wait for discovery answers")
	f.StringVar(&o.path, "path", "", "print only this value, e.g. $.PlayerInfo")
	f.BoolVar(&o.watch, "watch", false, "keep printing the value whenever it changes")
	f.StringVar(&o.mapFile, "map", "", "request one local map frame and write it to this PNG file")
	return cmd
}

func (o *pipboyConnectOptions) run(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	host, err := serverFromArgs(cmd, o.server, args)
	if err != nil {
		return err
	}
	if host == "" {
		games, err := pipboy.Discover(ctx, o.discover.broadcast, o.discover.wait)
		if err != nil {
			return err
		}
		for _, g := range games {
			if !g.IsBusy {
				host = g.Addr.String()
				break
			}
		}
		if host == "" {
			return fmt.Errorf("pipboy connect: no idle game answered discovery on %s (%d busy)", o.discover.broadcast, len(games))
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "found a game at %s\n", host)
	}
	c, err := pipboy.Dial(ctx, host, &pipboy.ClientConfig{Logger: cliLogger(cmd)})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "connected: game %s, language %s\n", c.Hello().Version, c.Hello().Lang)
	if o.mapFile != "" {
		f, err := c.RequestMap(ctx)
		if err != nil {
			return err
		}
		out, err := os.Create(o.mapFile)
		if err != nil {
			return err
		}
		var tint = pipboy.DefaultTint
		c.View(func(db *pipboy.Database) { tint = db.EffectColor() })
		if err := f.WritePNG(out, tint); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	path := o.path
	if path == "" {
		path = "$"
	}
	print := func() ([]byte, error) {
		var j []byte
		var err error
		c.View(func(db *pipboy.Database) {
			var v pipboy.Value
			if v, err = db.Lookup(path); err == nil {
				j, err = v.AppendJSON(nil, "  ")
			}
		})
		return j, err
	}
	last, err := print()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", last)
	if !o.watch {
		return nil
	}
	ch, cancel := c.Subscribe()
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.Done():
			return c.Err()
		case <-ch:
		}
		j, err := print()
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
			continue
		}
		if string(j) != string(last) {
			last = j
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", time.Now().Format(time.TimeOnly), j)
		}
	}
}

// pipboyServeOptions are the flags of the commands that serve apps: pipboy
// serve, replay and relay (each has some of them).
type pipboyServeOptions struct {
	from      string
	listen    string
	discovery string
	machine   string
	heartbeat time.Duration
	replaySpd float64
}

// register adds the flags every serving command has to cmd, and --heartbeat
// when heartbeat is true.
func (o *pipboyServeOptions) register(cmd *cobra.Command, heartbeat bool) {
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", fmt.Sprintf(":%d", pipboy.StreamPort), "TCP address apps connect to")
	f.StringVar(&o.discovery, "discovery", fmt.Sprintf(":%d", pipboy.DiscoveryPort), `UDP address to answer discovery on ("" to disable)`)
	f.StringVar(&o.machine, "machine-type", "PC", "MachineType to answer discovery with (PC or PS4)")
	if heartbeat {
		f.DurationVar(&o.heartbeat, "heartbeat", pipboy.DefaultHeartbeatInterval, "heartbeat interval")
	}
}

// machineTypes are the MachineType values the app knows ("Discovery" in docs/pipboy.md).
var machineTypes = []string{"PC", "PS4"}

// check refuses flag values the emulator, relay or responder cannot use,
// naming the flag, before anything listens. It checks the flags cmd has.
func (o *pipboyServeOptions) check(cmd *cobra.Command) error {
	fs := cmd.Flags()
	if fs.Lookup("machine-type") != nil {
		ok := false
		for _, m := range machineTypes {
			if strings.EqualFold(o.machine, m) {
				o.machine, ok = m, true
			}
		}
		if !ok {
			return fmt.Errorf("--machine-type %q: want PC or PS4 (the values the app knows)", o.machine)
		}
	}
	if fs.Lookup("heartbeat") != nil && o.heartbeat <= 0 {
		return fmt.Errorf("--heartbeat %v: must be above 0 (the game sends one every second)", o.heartbeat)
	}
	if fs.Lookup("speed") != nil {
		if sp := o.replaySpd; !(sp > 0) || math.IsInf(sp, 0) {
			return fmt.Errorf("--speed %v: must be a finite number above 0 (1 = the recorded timing, 2 = twice as fast)", sp)
		}
	}
	return nil
}

// serveGame runs an emulator (and a discovery responder) until the context ends.
func (o *pipboyServeOptions) serveGame(cmd *cobra.Command, srv *pipboy.Server) error {
	log := cliLogger(cmd)
	srv.Logger = log
	srv.Addr = o.listen
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	return o.serveWithDiscovery(cmd, log, ln, srv)
}

// pipboyService is what serveWithDiscovery runs: a pipboy.Server or pipboy.Relay.
type pipboyService interface {
	Serve(net.Listener) error
	Close() error
	Busy() bool
}

// serveWithDiscovery serves ln with svc, and answers discovery (--discovery) for it,
// until the command's context ends or either stops with an error.
func (o *pipboyServeOptions) serveWithDiscovery(cmd *cobra.Command, log *slog.Logger, ln net.Listener, svc pipboyService) error {
	errs := make(chan error, 2)
	go func() { errs <- svc.Serve(ln) }()
	var resp *pipboy.Responder
	if o.discovery != "" {
		resp = &pipboy.Responder{Addr: o.discovery, MachineType: o.machine, Busy: svc.Busy, Logger: log}
		pc, err := resp.Listen()
		if err != nil {
			svc.Close()
			return err
		}
		log.Info("pipboy: answering discovery", "addr", pc.LocalAddr())
		go func() { errs <- resp.Serve(pc) }()
	}
	var err error
	select {
	case <-cmd.Context().Done():
	case err = <-errs:
	}
	if resp != nil {
		resp.Close()
	}
	svc.Close()
	if errors.Is(err, pipboy.ErrServerClosed) {
		err = nil
	}
	return err
}

func newPipboyServeCmd() *cobra.Command {
	o := &pipboyServeOptions{}
	cmd := &cobra.Command{
		Use:   "serve --from FILE",
		Short: "Run a game emulator serving a database from a stream, payload, recording or JSON tree",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd); err != nil {
				return err
			}
			if o.from == "" {
				return errors.New("pipboy serve: --from FILE is required")
			}
			state, err := loadGameFile(o.from)
			if err != nil {
				return err
			}
			srv := pipboy.NewServer(state.DB)
			if state.HelloSeen {
				srv.Hello = state.Hello
			}
			srv.HeartbeatInterval = o.heartbeat
			return o.serveGame(cmd, srv)
		},
	}
	o.register(cmd, true)
	cmd.Flags().StringVar(&o.from, "from", "", "stream, payload, recording or JSON tree to serve")
	return cmd
}

func newPipboyReplayCmd() *cobra.Command {
	o := &pipboyServeOptions{}
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Serve a recording (or a raw server-to-app stream) to apps with its original timing (or faster with --speed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd); err != nil {
				return err
			}
			b, err := readInput(args[0])
			if err != nil {
				return err
			}
			var rec *pipboy.Recording
			switch kind := pipboy.DetectInput(b); kind {
			case pipboy.InputRecording:
				rec, err = pipboy.LoadRecording(bytes.NewReader(b), 0)
			case pipboy.InputStream:
				rec, err = pipboy.RecordingFromStream(bytes.NewReader(b), 0)
			default:
				err = fmt.Errorf("pipboy replay: %s is a %s; replay takes a recording or a raw server-to-app stream (serve --from takes any)", args[0], kind)
			}
			if err != nil {
				return err
			}
			srv := &pipboy.Server{Replay: rec, Speed: o.replaySpd, HeartbeatInterval: o.heartbeat}
			return o.serveGame(cmd, srv)
		},
	}
	o.register(cmd, true)
	cmd.Flags().Float64Var(&o.replaySpd, "speed", 1, "replay speed factor (2 = twice as fast)")
	return cmd
}

// pipboyRelayOptions are the flags of pipboy relay.
type pipboyRelayOptions struct {
	pipboyServeOptions
	game      string
	record    string
	recordMax byteSize
}

// byteSize is a flag holding a size in bytes: a number with an optional unit
// (B, KiB or K, MiB or M, GiB or G; powers of 1024).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }
func (b *byteSize) Type() string   { return "size" }

func (b *byteSize) Set(s string) error {
	num := strings.TrimRight(s, "KMGiBkmgb")
	unit := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(s[len(num):], "B"), "b"))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "I"), "i")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30}[unit]
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if _, known := map[string]bool{"": true, "K": true, "M": true, "G": true}[unit]; err != nil || !known || n < 0 || n > math.MaxInt64>>shift {
		return fmt.Errorf("%q is not a size (e.g. 1048576, 512MiB, 1GiB)", s)
	}
	*b = byteSize(n << shift)
	return nil
}

func newPipboyRelayCmd() *cobra.Command {
	o := &pipboyRelayOptions{recordMax: defaultRecordMax}
	cmd := &cobra.Command{
		Use:   "relay --server HOST[:PORT] [--record FILE]",
		Short: "Relay between a real app and a real game, recording the session",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.register(cmd, false)
	f := cmd.Flags()
	addServerFlag(cmd, &o.game, "", "the game's HOST[:PORT]")
	f.StringVar(&o.game, "game", "", "the game's HOST[:PORT]")
	deprecateFlag(cmd, "game", "use --server (--game names a game preset in the other commands)")
	f.StringVar(&o.record, "record", "", "record the sessions to this file")
	f.Var(&o.recordMax, "record-max", "stop recording (and go on relaying) before the file passes this size: bytes, or with KiB/MiB/GiB; 0 for no limit")
	return cmd
}

func (o *pipboyRelayOptions) run(cmd *cobra.Command) error {
	if err := o.check(cmd); err != nil {
		return err
	}
	if o.game == "" {
		return errors.New("pipboy relay: --server HOST is required")
	}
	log := cliLogger(cmd)
	relay := &pipboy.Relay{Addr: o.listen, Game: o.game, Logger: log}
	if o.record != "" {
		f, err := os.Create(o.record)
		if err != nil {
			return err
		}
		defer f.Close()
		rec, err := pipboy.NewRecorder(f, time.Now())
		if err != nil {
			return err
		}
		rec.MaxBytes = int64(o.recordMax)
		relay.Recorder = rec
	}
	ln, err := relay.Listen()
	if err != nil {
		return err
	}
	return o.serveWithDiscovery(cmd, log, ln, relay)
}

// pipboyDashboardOptions are the flags of pipboy dashboard.
type pipboyDashboardOptions struct {
	game       string
	listen     string
	retry      time.Duration
	mapInt     time.Duration
	allowHosts []string
	mapImage   string
	http       httpLimitFlags
}

// readMapImage reads a world map background image (--map-image), bounded by
// dashboard.MaxMapImage.
func readMapImage(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, dashboard.MaxMapImage+1))
	if err != nil {
		return nil, err
	}
	if _, err := dashboard.CheckMapImage(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// dashboardHosts returns the Host names the dashboard accepts besides loopback: the
// --listen host, or every interface address and the host name when --listen binds
// all interfaces, and --allow-host.
func dashboardHosts(listen net.Addr, allow []string) []string {
	hosts := append([]string(nil), allow...)
	ta, ok := listen.(*net.TCPAddr)
	if !ok {
		return hosts
	}
	if !ta.IP.IsUnspecified() {
		return append(hosts, ta.IP.String())
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				hosts = append(hosts, ipn.IP.String())
			}
		}
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	return hosts
}

func newPipboyDashboardCmd() *cobra.Command {
	o := &pipboyDashboardOptions{}
	cmd := &cobra.Command{
		Use:   "dashboard --server HOST[:PORT]",
		Short: "Serve a live web dashboard of a game's Pip-Boy data (name, level, inventory, map, radio)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	addServerFlag(cmd, &o.game, "", "the game's HOST[:PORT] (port 27000 by default)")
	f.StringVar(&o.game, "game", "", "the game's HOST[:PORT] (port 27000 by default)")
	deprecateFlag(cmd, "game", "use --server (--game names a game preset in the other commands)")
	f.DurationVar(&o.retry, "retry", 2*time.Second, "while the game is not up, try again this often (0: give up at once)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "HTTP address of the dashboard")
	f.DurationVar(&o.mapInt, "map-interval", time.Second, "how often to request a local map frame while a page is open (negative: never)")
	f.StringSliceVar(&o.allowHosts, "allow-host", nil, "a host name the page may be opened at, besides loopback and the --listen address (repeatable), e.g. pipboy.lan")
	f.StringVar(&o.mapImage, "map-image", "", "your own world map picture (PNG, JPEG, GIF or WebP) drawn under the markers, its corners at the NW, NE and SW extents of $.Map.World.Extents")
	o.http.register(f)
	return cmd
}

func (o *pipboyDashboardOptions) run(cmd *cobra.Command) error {
	if o.game == "" {
		return errors.New("pipboy dashboard: --server HOST is required")
	}
	lim, err := o.http.limits()
	if err != nil {
		return fmt.Errorf("pipboy dashboard: %w", err)
	}
	var img []byte
	if o.mapImage != "" {
		if img, err = readMapImage(o.mapImage); err != nil {
			return fmt.Errorf("pipboy dashboard: --map-image: %w", err)
		}
	}
	ctx := cmd.Context()
	log := cliLogger(cmd)
	c, err := o.dialGame(ctx, cmd.ErrOrStderr(), log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped (Ctrl-C, SIGTERM) while waiting for the game
		}
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	d := dashboard.New(c, &dashboard.Options{MapInterval: o.mapInt, Logger: log, MapImage: img,
		Hosts: dashboardHosts(ln.Addr(), o.allowHosts),
		Redial: func(ctx context.Context) (*pipboy.Client, error) {
			return pipboy.Dial(ctx, o.game, &pipboy.ClientConfig{Logger: log})
		}})
	defer d.Close()
	hs := &httplimit.Server{Handler: d, Limits: lim, Logger: log}
	fmt.Fprintf(cmd.ErrOrStderr(), "dashboard: http://%s/ (game %s)\n", ln.Addr(), o.game)
	errs := make(chan error, 1)
	go func() { errs <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// defaultRecordMax is relay --record-max's default: about 2,900 app connections of
// ~366 KB (one database dump each) plus their updates.
const defaultRecordMax = 1 << 30

// dialGame connects to the game and waits for its database; while the game is
// not up (not started, loading, its Pip-Boy app setting off) it says so and
// tries again every --retry until it answers or the command is stopped.
func (o *pipboyDashboardOptions) dialGame(ctx context.Context, w io.Writer, log *slog.Logger) (*pipboy.Client, error) {
	for attempt := 1; ; attempt++ {
		c, err := pipboy.Dial(ctx, o.game, &pipboy.ClientConfig{Logger: log})
		if err == nil {
			if err = c.WaitReady(ctx); err == nil {
				return c, nil
			}
			c.Close()
		}
		if o.retry <= 0 || ctx.Err() != nil {
			return nil, err
		}
		fmt.Fprintf(w, "waiting for the game at %s (attempt %d): %v; trying again in %v (Ctrl-C stops)\n", o.game, attempt, err, o.retry)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.retry):
		}
	}
}
