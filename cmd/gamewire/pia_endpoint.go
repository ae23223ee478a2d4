package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gamewire/gamewire/pia"
	"github.com/spf13/cobra"
)

// newPiaListenCmd is `gamewire pia listen`: a Pia station (pia.Endpoint) that prints
// every message it is handed and, with --answer, sends each back (docs/cli.md).
func newPiaListenCmd() *cobra.Command {
	lf := &piaEndpointFlags{name: "pia listen"}
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Run a Pia station on UDP and print every message it receives (--answer echoes them)",
		Long: `listen runs a Pia endpoint (package pia) and prints one line, or with
--format json one record, per message delivered to it: the sender's address,
protocol type and port, flags, destination and payload. On exit (Ctrl-C,
--count messages, --timeout) it prints the endpoint's counters and its drops by
reason (auth, replay, unknown-peer, no-handler, ...). --answer sends every
message back to its sender: a diagnostic peer for gamewire pia send.

  gamewire pia listen --listen 127.0.0.1:49150 --pia-version 5.27 --pia-network lan \
      --pia-key HEX --accept-unknown --answer

Messages are delivered for the --protocol-type and --protocol-port pairs given
(every combination; default the unreliable protocol, port 1); others count as
no-handler drops, which -v logs with their type and port.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return lf.runListen(cmd) },
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&lf.listenAddr, "listen", "127.0.0.1:0", "UDP address to listen on")
	f.StringVar(&lf.peer, "peer", "", "a known station's UDP address (needed unless --accept-unknown)")
	f.BoolVar(&lf.acceptUnknown, "accept-unknown", false, "accept any station whose first packet authenticates")
	f.BoolVar(&lf.answer, "answer", false, "send every message back to its sender")
	f.BoolVar(&lf.relay, "relay", false, "forward messages that carry the relay flag to the known station their destination names")
	f.StringSliceVar(&lf.protocolTypes, "protocol-type", nil, "protocol types to deliver, comma-separated or repeated (default: unreliable, 0x68 or 0x2000 up to 5.4)")
	f.StringSliceVar(&lf.protocolPorts, "protocol-port", nil, "protocol ports to deliver, comma-separated or repeated (default 1)")
	f.IntVar(&lf.count, "count", 0, "exit after this many messages (0: run until Ctrl-C or --timeout)")
	f.DurationVar(&lf.timeout, "timeout", 0, "exit after this long (0: no limit); with --count, an error if fewer came")
	return cmd
}

// newPiaSendCmd is `gamewire pia send ADDR`: sends messages to a Pia station and
// optionally waits for each answer.
func newPiaSendCmd() *cobra.Command {
	sf := &piaEndpointFlags{name: "pia send"}
	cmd := &cobra.Command{
		Use:   "send ADDR",
		Short: "Send Pia messages to a station at ADDR (--expect-answer waits for each answer and prints RTTs)",
		Long: `send runs a Pia endpoint on a local UDP port, adds the station at ADDR as its
peer and sends it --count messages of --protocol-type and --protocol-port, one
packet each. With --expect-answer it waits up to --timeout for a message of the
same type and port from ADDR after each one, prints its round-trip time, and
exits 0 only if every message was answered (against gamewire pia listen
--answer, an answer is an echo).

  gamewire pia send 127.0.0.1:49150 --pia-version 5.27 --pia-network lan \
      --pia-key HEX --text hello --count 3 --expect-answer`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return sf.runSend(cmd, args[0]) },
	}
	sf.register(cmd)
	g := cmd.Flags()
	g.StringVar(&sf.local, "local", "", "local UDP address (default: the address the route to ADDR uses, any port)")
	g.StringSliceVar(&sf.protocolTypes, "protocol-type", nil, "protocol type of the messages (default: unreliable, 0x68 or 0x2000 up to 5.4)")
	g.StringSliceVar(&sf.protocolPorts, "protocol-port", nil, "protocol port of the messages (default 1)")
	g.StringVar(&sf.payload, "payload", "", "message payload in hex")
	g.StringVar(&sf.text, "text", "", "message payload as text (default \"gamewire\")")
	g.BoolVar(&sf.zlib, "zlib", false, "send the payload zlib-compressed (flag 0x10 up to 5.26, 0x20 from 5.27)")
	g.IntVar(&sf.count, "count", 1, "messages to send")
	g.BoolVar(&sf.expectAnswer, "expect-answer", false, "wait for an answer to each message; exit non-zero if one does not come")
	g.BoolVar(&sf.multicast, "multicast", false, "send multicast messages to the station index of --peer-station-index (destination bitmap with its bit)")
	g.BoolVar(&sf.broadcast, "broadcast", false, "send multicast messages to every station (destination bitmap 0xffffffff)")
	g.BoolVar(&sf.relay, "relay", false, "set the relay flag: the station at ADDR forwards the messages to the station of --peer-constant-id")
	g.BoolVar(&sf.ping, "ping", false, "send a Pia RTT protocol request before each message (the peer's endpoint answers it) and print the endpoint's smoothed RTT")
	g.DurationVar(&sf.timeout, "timeout", 2*time.Second, "with --expect-answer, how long to wait for each answer")
	return cmd
}

// piaEndpointFlags are the flags of listen and send. Flags without a prefix
// describe this station, --peer-* flags the other one; numbers are decimal or 0x
// hex as in decode.
type piaEndpointFlags struct {
	name string // "pia listen" or "pia send": the prefix of every error

	session                              piaSessionFlags // --pia-version, --pia-key, --src-mac, ...
	variableID, constantID, stationIndex string
	peerMAC, peerVariableID              string
	peerConstantID, peerStationIndex     string
	protocolTypes, protocolPorts         []string
	format                               string
	count                                int
	timeout                              time.Duration
	verbose                              bool

	listenAddr, peer      string // listen
	acceptUnknown, answer bool   // listen
	relay                 bool   // listen: forward relay requests; send: make them

	local, payload, text string // send
	zlib, expectAnswer   bool   // send
	ping                 bool   // send
	multicast, broadcast bool   // send
}

type piaProtocol struct {
	typ  uint16
	port uint32
}

// defaultPiaProtocolPort is the port listen and send use unless told otherwise.
const defaultPiaProtocolPort = 1

func (f *piaEndpointFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	f.session.register(fs, true)
	fs.StringVar(&f.variableID, "variable-id", "0", "this station's variable id (5.27 and later headers)")
	fs.StringVar(&f.constantID, "constant-id", "0", "this station's constant id (0: unknown, every unicast message is delivered)")
	fs.StringVar(&f.stationIndex, "station-index", strconv.Itoa(pia.StationIndexInvalid), "this station's index in the mesh (253: none, every multicast message is delivered)")
	fs.StringVar(&f.peerMAC, "peer-mac", "", "ldn up to 5.44: the peer's MAC address")
	fs.StringVar(&f.peerVariableID, "peer-variable-id", "0", "the peer's variable id (5.27 and later headers)")
	fs.StringVar(&f.peerConstantID, "peer-constant-id", "0", "the peer's constant id: messages to it are unicast to this destination (0: no destination)")
	fs.StringVar(&f.peerStationIndex, "peer-station-index", strconv.Itoa(pia.StationIndexInvalid), "the peer's station index")
	fs.StringVar(&f.format, "format", "text", "output: text or json (one record per line)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log every drop (reason, sender, detail) to stderr")
}

func (f *piaEndpointFlags) errorf(format string, a ...any) error {
	return fmt.Errorf(f.name+": "+format, a...)
}

// piaSetup is what the flags of listen and send describe.
type piaSetup struct {
	cfg       pia.EndpointConfig
	peer      pia.PeerConfig
	protocols []piaProtocol
	json      bool
}

// setup checks every flag common to listen and send and builds the endpoint's
// configuration; logs (with -v) go to logTo. The protocol facts (field widths,
// nonce inputs, the unreliable protocol's id) come from package pia.
func (f *piaEndpointFlags) setup(logTo io.Writer) (piaSetup, error) {
	var s piaSetup
	cfg := &s.cfg
	sess, err := f.session.parse(false, "")
	if err != nil {
		return s, f.errorf("%w", err)
	}
	v := sess.cfg.Version
	cfg.Version, cfg.NonceParams, cfg.SessionKey, cfg.Source = v, sess.cfg.NonceParams, sess.cfg.SessionKey, sess.src
	if f.peerMAC != "" {
		if s.peer.MAC, err = piaParseMAC(f.peerMAC); err != nil {
			return s, f.errorf("--peer-mac: %w", err)
		}
	}
	if cfg.VariableID, err = piaParseNumber(f.variableID); err != nil {
		return s, f.errorf("--variable-id: %w", err)
	}
	if s.peer.VariableID, err = piaParseNumber(f.peerVariableID); err != nil {
		return s, f.errorf("--peer-variable-id: %w", err)
	}
	if cfg.ConstantID, err = piaParseConstantID(f.constantID, v); err != nil {
		return s, f.errorf("--constant-id: %w", err)
	}
	if s.peer.ConstantID, err = piaParseConstantID(f.peerConstantID, v); err != nil {
		return s, f.errorf("--peer-constant-id: %w", err)
	}
	if err := s.peer.Validate(*cfg); err != nil {
		if errors.Is(err, pia.ErrUnusedInput) {
			return s, f.errorf("--peer-mac: %w", err)
		}
		return s, f.errorf("%w", err)
	}
	if cfg.StationIndex, err = piaParseStationIndex(f.stationIndex); err != nil {
		return s, f.errorf("--station-index: %w", err)
	}
	if s.peer.StationIndex, err = piaParseStationIndex(f.peerStationIndex); err != nil {
		return s, f.errorf("--peer-station-index: %w", err)
	}
	if s.protocols, err = f.parseProtocols(v); err != nil {
		return s, err
	}
	switch f.format {
	case "text":
	case "json":
		s.json = true
	default:
		return s, f.errorf("--format %q: want text or json", f.format)
	}
	if f.count < 0 {
		return s, f.errorf("--count %d: want 0 or more", f.count)
	}
	if f.timeout < 0 {
		return s, f.errorf("--timeout %v: want a positive duration", f.timeout)
	}
	if f.verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return s, nil
}

// parseProtocols returns every combination of --protocol-type and
// --protocol-port, checked against the field widths of v's message layout
// (pia.MessageLayout.ProtocolTypeMax and ProtocolPortMax).
func (f *piaEndpointFlags) parseProtocols(v pia.Version) ([]piaProtocol, error) {
	ml := v.MessageLayout()
	types, ports := []uint32{uint32(pia.UnreliableProtocolType(v))}, []uint32{defaultPiaProtocolPort}
	parse := func(flag string, vals []string, max uint32) ([]uint32, error) {
		var out []uint32
		for _, s := range vals {
			x, err := piaParseNumber(s)
			if err != nil {
				return nil, f.errorf("%s: %w", flag, err)
			}
			if x > max {
				return nil, f.errorf("%s %s: Pia %s carries at most 0x%x", flag, s, v, max)
			}
			out = append(out, x)
		}
		return out, nil
	}
	var err error
	if len(f.protocolTypes) > 0 {
		if types, err = parse("--protocol-type", f.protocolTypes, uint32(ml.ProtocolTypeMax())); err != nil {
			return nil, err
		}
	}
	if len(f.protocolPorts) > 0 {
		if ports, err = parse("--protocol-port", f.protocolPorts, ml.ProtocolPortMax()); err != nil {
			return nil, err
		}
	}
	var out []piaProtocol
	for _, t := range types {
		for _, p := range ports {
			out = append(out, piaProtocol{uint16(t), p})
		}
	}
	return out, nil
}

// piaParseConstantID parses a constant id as wide as v's message fields
// (pia.MessageLayout.DestinationBits). Decimal or 0x hex, as piaParseNumber.
func piaParseConstantID(s string, v pia.Version) (uint64, error) {
	t := strings.TrimSpace(s)
	base := 10
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		t, base = t[2:], 16
	}
	bits := int(v.MessageLayout().DestinationBits())
	x, err := strconv.ParseUint(t, base, bits)
	if err != nil {
		return 0, fmt.Errorf("%q is not a %d-bit decimal or 0x hex number (the constant id of Pia %s)", s, bits, v)
	}
	return x, nil
}

func piaParseStationIndex(s string) (uint8, error) {
	x, err := piaParseNumber(s)
	if err != nil || x > 0xFF {
		return 0, fmt.Errorf("%q: want a number 0..255 (253: none, 254: host)", s)
	}
	return uint8(x), nil
}

// listenError explains an error of pia.Listen on the address of flag.
func (f *piaEndpointFlags) listenError(flag, addr string, err error) error {
	if errors.Is(err, pia.ErrWildcardSource) {
		return f.errorf("%s %s: %w (give --src-ip)", flag, addr, err)
	}
	return f.errorf("%s: %w", flag, err)
}

// piaResolve resolves a UDP address that must name a port.
func piaResolve(s string) (netip.AddrPort, error) {
	ua, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ap := ua.AddrPort()
	if ap.Port() == 0 || !ap.Addr().IsValid() || ap.Addr().IsUnspecified() {
		return netip.AddrPort{}, errors.New("want HOST:PORT of a station (a port, and no wildcard address)")
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// piaRouteLocal returns the local address the route to remote uses, port 0:
// connecting a UDP socket sends nothing, it only picks the route.
func piaRouteLocal(remote netip.AddrPort) (string, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(remote))
	if err != nil {
		return "", err
	}
	defer c.Close()
	la := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	return netip.AddrPortFrom(la, 0).String(), nil
}

func (f *piaEndpointFlags) runListen(cmd *cobra.Command) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	s, err := f.setup(errOut)
	if err != nil {
		return err
	}
	cfg := &s.cfg
	cfg.AcceptUnknownPeers = f.acceptUnknown
	cfg.Relay = f.relay
	peerAddr, err := f.listenPeer(cmd)
	if err != nil {
		return err
	}
	e, err := pia.Listen(f.listenAddr, *cfg)
	if err != nil {
		return f.listenError("--listen", f.listenAddr, err)
	}
	defer e.Close()
	if peerAddr.IsValid() {
		e.AddPeer(peerAddr, s.peer)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if f.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	pr := &piaPrinter{w: out, json: s.json, v: cfg.Version}
	got := 0 // handlers run on Serve's goroutine, this one
	h := pia.HandlerFunc(func(from *pia.Peer, m *pia.Message) {
		if f.count > 0 && got >= f.count {
			return // closing
		}
		got++
		pr.message(from.Addr(), m, nil)
		if f.answer {
			if err := piaAnswer(e, cfg.Version, from, m); err != nil {
				fmt.Fprintf(errOut, "%s: answer to %s: %v\n", f.name, from.Addr(), err)
			}
		}
		if f.count > 0 && got == f.count {
			cancel()
		}
	})
	names := make([]string, 0, len(s.protocols))
	for _, p := range s.protocols {
		e.Handle(p.typ, p.port, h)
		names = append(names, piaProtocolName(cfg.Version, p))
	}
	relaying := ""
	if f.relay {
		relaying = ", relaying"
	}
	fmt.Fprintf(errOut, "%s: listening on %s (Pia %s, %s, %s%s); delivering %s\n",
		f.name, e.LocalAddr(), cfg.Version, cfg.NonceParams.Network, piaEncryption(cfg), relaying, strings.Join(names, ", "))
	serveErr := e.Serve(ctx)
	pr.stats(e.Stats())
	if serveErr != nil {
		return f.errorf("%w", serveErr)
	}
	if f.count > 0 && got < f.count && cmd.Context().Err() == nil {
		return f.errorf("--timeout %v: %d of %d messages received", f.timeout, got, f.count)
	}
	return nil
}

// listenPeer returns listen's --peer address (invalid with --accept-unknown
// alone) and refuses --peer-* flags without --peer.
func (f *piaEndpointFlags) listenPeer(cmd *cobra.Command) (netip.AddrPort, error) {
	var peerAddr netip.AddrPort
	var err error
	switch {
	case f.peer != "":
		if peerAddr, err = piaResolve(f.peer); err != nil {
			return peerAddr, f.errorf("--peer %q: %w", f.peer, err)
		}
	case !f.acceptUnknown:
		return peerAddr, f.errorf("no station to hear from: give --peer ADDR (a known station) or --accept-unknown (any station whose packets authenticate)")
	}
	if f.peer == "" {
		for _, name := range []string{"peer-mac", "peer-variable-id", "peer-constant-id", "peer-station-index"} {
			if cmd.Flags().Changed(name) {
				return peerAddr, f.errorf("--%s describes the --peer station: give --peer ADDR too (stations accepted with --accept-unknown are learnt from their packets)", name)
			}
		}
	}
	return peerAddr, nil
}

// piaAnswer sends m back to its sender, compressed again if it came compressed,
// unicast to the sender's constant id when it is known.
func piaAnswer(e *pia.Endpoint, v pia.Version, from *pia.Peer, m *pia.Message) error {
	r := pia.Message{ProtocolType: m.ProtocolType, ProtocolPort: m.ProtocolPort, Payload: m.Payload}
	if m.Compressed(v) {
		if err := r.Deflate(m.Payload, pia.ZlibFlag(v)); err != nil {
			return err
		}
	}
	var err error
	if from.ConstantID() != 0 {
		err = e.SendTo(from, r)
	} else {
		err = e.Send(from, r)
	}
	if err != nil {
		return err
	}
	return e.FlushPeer(from)
}

func piaEncryption(cfg *pia.EndpointConfig) string {
	if cfg.SessionKey == nil {
		return "unencrypted"
	}
	return "encrypted"
}

func piaProtocolName(v pia.Version, p piaProtocol) string {
	if name := pia.ProtocolName(v, p.typ); name != "" {
		return fmt.Sprintf("%s(0x%x) port %d", name, p.typ, p.port)
	}
	return fmt.Sprintf("type 0x%x port %d", p.typ, p.port)
}

// piaAnswerInfo is what send adds to the record of an answer.
type piaAnswerInfo struct {
	Answer int   `json:"answer"`
	Of     int   `json:"of"`
	RTTNS  int64 `json:"rtt_ns"`
	Echo   bool  `json:"echo"`
}

// piaMessageRecord is a delivered message as listen and send print it: the keys
// of a message of `gamewire decode --format json` (pia.MessageRecord) and the
// sender. payload_hex is the payload the handler got, inflated if it was
// compressed (flag_names then says zlib).
type piaMessageRecord struct {
	*piaAnswerInfo
	From string `json:"from"`
	pia.MessageRecord
}

type piaPrinter struct {
	w    io.Writer
	json bool
	v    pia.Version
}

func (p *piaPrinter) message(from netip.AddrPort, m *pia.Message, ans *piaAnswerInfo) {
	r := piaMessageRecord{piaAnswerInfo: ans, From: from.String(), MessageRecord: pia.DescribeMessage(m, p.v)}
	if p.json {
		p.writeJSON(r)
		return
	}
	var sb strings.Builder
	if ans != nil {
		fmt.Fprintf(&sb, "answer %d/%d rtt=%v", ans.Answer, ans.Of, time.Duration(ans.RTTNS))
		if ans.Echo {
			sb.WriteString(" echo ")
		} else {
			sb.WriteString(" differs ")
		}
	}
	mr := &r.MessageRecord
	fmt.Fprintf(&sb, "from=%s protocol_type=0x%x", r.From, mr.ProtocolType)
	if mr.ProtocolName != "" {
		fmt.Fprintf(&sb, "(%s)", mr.ProtocolName)
	}
	fmt.Fprintf(&sb, " protocol_port=%d flags=0x%02x", mr.ProtocolPort, mr.Flags)
	if len(mr.FlagNames) > 0 {
		fmt.Fprintf(&sb, "(%s)", strings.Join(mr.FlagNames, ","))
	}
	fmt.Fprintf(&sb, " destination=0x%x", mr.Destination)
	if mr.SourceStationIndex != nil {
		fmt.Fprintf(&sb, " source_station_index=%d", *mr.SourceStationIndex)
	}
	if mr.SourceConstantID != nil {
		fmt.Fprintf(&sb, " source_constant_id=0x%x", *mr.SourceConstantID)
	}
	fmt.Fprintf(&sb, " payload(%d)=%s\n", mr.PayloadSize, mr.PayloadHex)
	io.WriteString(p.w, sb.String())
}

func (p *piaPrinter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(p.w, "{\"error\":%q}\n", err.Error())
		return
	}
	p.w.Write(append(b, '\n'))
}

// piaStatsRecord is the closing record: the endpoint's counters and drops by
// reason.
type piaStatsRecord struct {
	PacketsIn       uint64            `json:"packets_in"`
	PacketsOut      uint64            `json:"packets_out"`
	MessagesIn      uint64            `json:"messages_in"`
	MessagesOut     uint64            `json:"messages_out"`
	MessagesRelayed uint64            `json:"messages_relayed"`
	Drops           map[string]uint64 `json:"drops"`
}

func (p *piaPrinter) stats(st pia.EndpointStats) {
	r := piaStatsRecord{st.PacketsIn, st.PacketsOut, st.MessagesIn, st.MessagesOut, st.MessagesRelayed, st.Drops}
	if p.json {
		p.writeJSON(struct {
			Stats piaStatsRecord `json:"stats"`
		}{r})
		return
	}
	fmt.Fprintln(p.w, st)
}

// piaReceived is an answer as send's handler hands it over.
type piaReceived struct {
	msg pia.Message // Payload copied
	at  time.Time
}

func (f *piaEndpointFlags) runSend(cmd *cobra.Command, addr string) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	s, err := f.setup(errOut)
	if err != nil {
		return err
	}
	cfg := &s.cfg
	msg, plain, err := f.sendMessage(&s)
	if err != nil {
		return err
	}
	if f.expectAnswer && f.timeout == 0 {
		return f.errorf("--timeout 0: --expect-answer needs a time to wait for each answer")
	}
	peerAddr, err := piaResolve(addr)
	if err != nil {
		return f.errorf("ADDR %q: %w", addr, err)
	}
	local := f.local
	if local == "" {
		if local, err = piaRouteLocal(peerAddr); err != nil {
			return f.errorf("no route to %s: %w", peerAddr, err)
		}
	}
	e, err := pia.Listen(local, *cfg)
	if err != nil {
		return f.listenError("--local", local, err)
	}
	defer e.Close()
	peer := e.AddPeer(peerAddr, s.peer)
	answers := make(chan piaReceived, 16)
	e.Handle(msg.ProtocolType, msg.ProtocolPort, pia.HandlerFunc(func(from *pia.Peer, m *pia.Message) {
		if from != peer {
			return
		}
		r := piaReceived{msg: *m, at: time.Now()}
		r.msg.Payload = slices.Clone(m.Payload)
		select {
		case answers <- r:
		default: // nobody waits for that many: counted in messages in
		}
	}))
	ctx, cancel := context.WithCancel(cmd.Context())
	serveDone := make(chan error, 1)
	go func() { serveDone <- e.Serve(ctx) }()
	stop := sync.OnceValue(func() error { cancel(); return <-serveDone })
	defer stop()

	pr := &piaPrinter{w: out, json: s.json, v: cfg.Version}
	fmt.Fprintf(errOut, "%s: %s -> %s (Pia %s, %s, %s); %s\n", f.name, e.LocalAddr(), peerAddr,
		cfg.Version, cfg.NonceParams.Network, piaEncryption(cfg), piaProtocolName(cfg.Version, s.protocols[0]))
	run := piaSendRun{f: f, e: e, peer: peer, peerAddr: peerAddr, msg: msg, plain: plain, answers: answers, pr: pr}
	failure := run.loop(ctx)
	srtt, samples := peer.RTT()
	pr.summary(run.sent, f.count, f.expectAnswer, run.rtts, srtt, samples)
	serveErr := stop()
	pr.stats(e.Stats())
	if failure != nil {
		return failure
	}
	if serveErr != nil {
		return f.errorf("%w", serveErr)
	}
	return nil
}

// sendMessage builds the message send sends from its flags (protocol, payload,
// relay and zlib flags) and checks the addressing flags against the version. It
// also returns the payload before compression, which an echo carries.
func (f *piaEndpointFlags) sendMessage(s *piaSetup) (pia.Message, []byte, error) {
	v := s.cfg.Version
	ml := v.MessageLayout()
	if len(s.protocols) != 1 {
		return pia.Message{}, nil, f.errorf("--protocol-type and --protocol-port: send takes one of each")
	}
	var payload []byte
	var err error
	switch {
	case f.payload != "" && f.text != "":
		return pia.Message{}, nil, f.errorf("give --payload HEX or --text S, not both")
	case f.payload != "":
		if payload, err = parseHex(f.payload); err != nil {
			return pia.Message{}, nil, f.errorf("--payload: %w", err)
		}
	case f.text != "":
		payload = []byte(f.text)
	default:
		payload = []byte("gamewire")
	}
	if f.count < 1 {
		return pia.Message{}, nil, f.errorf("--count %d: want at least 1", f.count)
	}
	msg := pia.Message{ProtocolType: s.protocols[0].typ, ProtocolPort: s.protocols[0].port, Payload: payload}
	switch {
	case f.multicast && f.broadcast:
		return msg, nil, f.errorf("give --multicast or --broadcast, not both")
	case (f.multicast || f.broadcast) && ml.Flags().Multicast == 0:
		return msg, nil, f.errorf("--multicast/--broadcast: Pia %s messages have no multicast flag (0x01 means \"skip the source variable id check\" there; docs/pia.md)", v)
	case f.multicast && !ml.HasStationBit(s.peer.StationIndex):
		return msg, nil, f.errorf("--multicast needs --peer-station-index, a station with a bit in the %d-bit destination bitmap of Pia %s, not %d", ml.DestinationBits(), v, s.peer.StationIndex)
	}
	if f.relay {
		if s.peer.ConstantID == 0 && !f.multicast && !f.broadcast {
			return msg, nil, f.errorf("--relay needs --peer-constant-id (or --multicast, --broadcast): the station that ADDR is to forward the messages to")
		}
		msg.Flags |= ml.Flags().Relay
	}
	if f.zlib {
		if err := msg.Deflate(payload, pia.ZlibFlag(v)); err != nil {
			return msg, nil, f.errorf("--zlib: %w", err)
		}
	}
	return msg, payload, nil
}

// piaSendRun is one run of send's message loop.
type piaSendRun struct {
	f        *piaEndpointFlags
	e        *pia.Endpoint
	peer     *pia.Peer
	peerAddr netip.AddrPort
	msg      pia.Message
	plain    []byte // msg's payload before --zlib
	answers  chan piaReceived
	pr       *piaPrinter

	sent int
	rtts []time.Duration
}

// loop sends --count messages, each after an optional ping, and with
// --expect-answer waits for each answer. It returns the first failure.
func (r *piaSendRun) loop(ctx context.Context) error {
	f := r.f
	for i := 1; i <= f.count; i++ {
		for len(r.answers) > 0 {
			<-r.answers // an extra answer to an earlier message is not this one's
		}
		// The RTT request goes first, in a packet of its own: its response feeds
		// the endpoint's smoothed RTT, the answer the RTT printed here.
		if f.ping {
			if err := r.e.Ping(r.peer); err != nil {
				return f.errorf("message %d: ping: %w", i, err)
			}
		}
		if err := r.send(); err != nil {
			return f.errorf("message %d: %w", i, err)
		}
		start := time.Now()
		if err := r.e.FlushPeer(r.peer); err != nil {
			return f.errorf("message %d: %w", i, err)
		}
		r.sent++
		if !f.expectAnswer {
			continue
		}
		if err := r.await(ctx, i, start); err != nil {
			return err
		}
	}
	return nil
}

// send queues the message as the addressing flags say.
func (r *piaSendRun) send() error {
	switch {
	case r.f.broadcast:
		return r.e.Broadcast(r.msg)
	case r.f.multicast:
		return r.e.Multicast([]*pia.Peer{r.peer}, r.msg)
	case r.peer.ConstantID() != 0:
		return r.e.SendTo(r.peer, r.msg)
	}
	return r.e.Send(r.peer, r.msg)
}

// await waits for the answer to message i, sent at start, and prints it.
func (r *piaSendRun) await(ctx context.Context, i int, start time.Time) error {
	f := r.f
	t := time.NewTimer(f.timeout)
	defer t.Stop()
	select {
	case a := <-r.answers:
		rtt := a.at.Sub(start)
		r.rtts = append(r.rtts, rtt)
		r.pr.message(r.peerAddr, &a.msg, &piaAnswerInfo{Answer: i, Of: f.count, RTTNS: int64(rtt), Echo: string(a.msg.Payload) == string(r.plain)})
		return nil
	case <-t.C:
		return f.errorf("message %d of %d: no answer from %s within %v (the peer's drops say why: auth for a wrong --pia-key or nonce input)", i, f.count, r.peerAddr, f.timeout)
	case <-ctx.Done():
		return f.errorf("interrupted after %d of %d messages", i-1, f.count)
	}
}

// piaSendSummary is send's closing record before the counters.
type piaSendSummary struct {
	Sent     int  `json:"sent"`
	Of       int  `json:"of"`
	Answered *int `json:"answered,omitempty"`
	// PiaSRTTNS and PiaRTTSamples are the endpoint's own estimate ("RTT
	// Calculation" in the Pia Protocol wiki: header timers up to 5.10, --ping's RTT
	// protocol), present once it has a sample.
	PiaSRTTNS     int64  `json:"pia_srtt_ns,omitempty"`
	PiaRTTSamples int    `json:"pia_rtt_samples,omitempty"`
	RTTNS         *rttNS `json:"rtt_ns,omitempty"`
}

type rttNS struct {
	Min  int64 `json:"min"`
	P50  int64 `json:"p50"`
	Max  int64 `json:"max"`
	Mean int64 `json:"mean"`
}

func (p *piaPrinter) summary(sent, of int, expect bool, rtts []time.Duration, srtt time.Duration, samples int) {
	sum := piaSendSummary{Sent: sent, Of: of, PiaRTTSamples: samples}
	if samples > 0 {
		sum.PiaSRTTNS = int64(srtt)
	}
	if expect {
		n := len(rtts)
		sum.Answered = &n
	}
	if len(rtts) > 0 {
		sorted := slices.Clone(rtts)
		slices.Sort(sorted)
		var total time.Duration
		for _, d := range sorted {
			total += d
		}
		sum.RTTNS = &rttNS{int64(sorted[0]), int64(sorted[len(sorted)/2]), int64(sorted[len(sorted)-1]), int64(total) / int64(len(sorted))}
	}
	if p.json {
		p.writeJSON(struct {
			Summary piaSendSummary `json:"summary"`
		}{sum})
		return
	}
	fmt.Fprintf(p.w, "sent %d of %d", sent, of)
	if sum.Answered != nil {
		fmt.Fprintf(p.w, ", answered %d", *sum.Answered)
	}
	if r := sum.RTTNS; r != nil {
		fmt.Fprintf(p.w, "; rtt min %v p50 %v max %v mean %v", time.Duration(r.Min), time.Duration(r.P50), time.Duration(r.Max), time.Duration(r.Mean))
	}
	if samples > 0 {
		fmt.Fprintf(p.w, "; pia srtt %v (%d samples)", srtt, samples)
	}
	fmt.Fprintln(p.w)
}
