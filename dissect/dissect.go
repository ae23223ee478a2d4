package dissect

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/desc"
	"github.com/gamewire/gamewire/nex/desc/dyn"
	"github.com/gamewire/gamewire/nex/games"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/wire"
)

// Sentinel errors. Callers test them with errors.Is; the messages that wrap
// them name the frame, offset or line.
var (
	// ErrNotCapture: the input starts with neither a pcap nor a pcapng magic number
	// (after gzip, if it is compressed).
	ErrNotCapture = errors.New("dissect: not a pcap or pcapng capture")
	// ErrTruncatedCapture: the capture ends inside a record; every frame before it
	// was decoded.
	ErrTruncatedCapture = errors.New("dissect: capture ends in the middle of a record")
	// ErrCorruptCapture: a record header makes no sense (a length beyond the snap
	// length, a block of an impossible size), so the framing of the rest is lost.
	ErrCorruptCapture = errors.New("dissect: corrupt capture record")
	// ErrKeysFile: a line of the keys file does not parse (ParseKeys names the line).
	ErrKeysFile = errors.New("dissect: bad keys file")
	// ErrDialect: a --dialect value is not PORT=NAME with a known protocol name.
	ErrDialect = errors.New("dissect: bad --dialect override")
)

// DefaultMaxMessage bounds a reassembled application message (PRUDP fragments,
// a Pip-Boy frame, a WebSocket message) when Config.MaxMessage is zero.
const DefaultMaxMessage = 16 << 20

// Config configures a Dissector. The zero value decodes every protocol it can
// recognise without keys.
type Config struct {
	// Keys holds access keys, Kerberos keys, session keys and Pia keys.
	// Nil means none: checksums under an empty access key, no decryption.
	Keys *Keys
	// Dialects maps a port (UDP or TCP, either end) to a protocol name that
	// overrides recognition: a PRUDP dialect (nex-v0, nex-v0-friends, nex-v1,
	// nex-lite, quazal, hyperscape), "pia", "pipboy", "websocket" or "ignore".
	Dialects map[uint16]string
	// MaxMessage bounds reassembled messages; DefaultMaxMessage if zero.
	MaxMessage int
	// Logger receives debug logs; nil logs nothing.
	Logger *slog.Logger
	// Progress, if set, is called now and then with the bytes of input consumed.
	Progress func(consumed int64)
	// Decrypted, if set, receives every frame; UDP payloads that were decrypted
	// are replaced by their plaintext (see WriteDecrypted).
	Decrypted FrameWriter
	// Descriptions name and decode the NEX RMC methods of message records
	// (nex/desc); nil uses the built-in descriptions (desc.Builtin).
	Descriptions *desc.Set
	// NoDescriptions turns decoding by description off: RMC calls keep their ids only.
	NoDescriptions bool
	// Game, if set, is the game of every flow: its variant of the protocols and
	// its NEX version. Nil takes each flow's game from its access key (nex/games).
	Game *games.Game
	// Variant, if set, names the game variant of the protocols to prefer (a
	// protocol name or description file suffix such as "mk8" or "eagle",
	// comma-separated for several; dyn.SelectProtocol), over the game's. A name
	// no description has selects the root protocols: dyn.CheckVariant checks one.
	Variant string
	// NEXVersion, if set, is the NEX version structures are decoded for, over
	// the game's (the settings' NEXVersion when neither says).
	NEXVersion types.Version
	// NEXGates is the reading of the disputed version gates (types.Gates,
	// docs/nex.md "Disputed gates"): GatesAuto (the zero value) starts each
	// flow in auto's reading at its settings and switches it when a message
	// decodes only in the other one, as nex.Server does per connection;
	// GatesConsole and GatesNintendoClients fix it.
	NEXGates types.Gates
}

// FrameWriter receives frames for --write-decrypted.
type FrameWriter interface {
	WriteFrame(f *Frame) error
}

// ParseDialectOverrides parses --dialect values of the form PORT=NAME.
func ParseDialectOverrides(vals []string) (map[uint16]string, error) {
	m := make(map[uint16]string)
	for _, v := range vals {
		port, name, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("%w: %q is not PORT=NAME", ErrDialect, v)
		}
		p, err := strconv.ParseUint(strings.TrimSpace(port), 10, 16)
		if err != nil || p == 0 {
			return nil, fmt.Errorf("%w: %q: port must be 1-65535", ErrDialect, v)
		}
		name = strings.TrimSpace(name)
		if !knownOverride(name) {
			return nil, fmt.Errorf("%w: %q: unknown protocol %q (want one of %s)", ErrDialect, v, name, strings.Join(overrideNames, ", "))
		}
		m[uint16(p)] = name
	}
	return m, nil
}

var overrideNames = []string{"nex-v0", "nex-v0-friends", "nex-v1", "nex-lite", "quazal", "hyperscape", "pia", "pipboy", "websocket", "ignore"}

func knownOverride(n string) bool {
	for _, o := range overrideNames {
		if o == n {
			return true
		}
	}
	return false
}

// Dissector turns a capture into records. It is not safe for concurrent use;
// one Dissector decodes one capture.
type Dissector struct {
	cfg     Config
	flows   map[flowKey]*flow
	order   []*flow
	defrag  *defragmenter
	rec     Record
	emitFn  func(*Record) error
	emitErr error
	frame   *Frame
	start   time.Time
	summary Summary

	ip     ipPacket
	udp    udpDatagram
	tcp    tcpSegment
	ctxBuf pktCtx

	rewriteBuf    []byte
	scratchBuf    []byte
	flagNameCache map[wire.Flags][]string
	targets       []kerberosTarget // Kerberos keys to try on tickets
	learned       []learnedTicket  // tickets passwords opened in authentication exchanges

	descs       *desc.Set // Config.Descriptions or the built-in set, loaded once
	descsLoaded bool
	// gateLo, gateHi: the NEX versions [lo, hi) where the descriptions'
	// disputed gates read differently (0, 0: none), set with descs.
	gateLo, gateHi types.Version
	protoCache     map[protoKey]*desc.Protocol
	dynScratch     dyn.Scratch // memory of the values of one message's decoding
}

// Summary counts what the dissector saw in the whole capture.
type Summary struct {
	Format      string // "pcap" or "pcapng"
	Frames      uint64
	Bytes       int64 // captured bytes of all frames
	Skipped     uint64
	Notes       uint64
	Truncated   bool // the capture ended in the middle of a record
	FirstFrame  time.Time
	LastFrame   time.Time
	FragDropped int // IP datagrams whose fragments never all arrived
}

// New returns a Dissector for cfg.
func New(cfg Config) *Dissector {
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.Keys == nil {
		cfg.Keys = &Keys{}
	}
	return &Dissector{cfg: cfg, flows: make(map[flowKey]*flow), defrag: newDefragmenter()}
}

// Decode reads the capture from r and calls emit with each record in order.
// A bad frame produces a note record and decoding goes on; a capture cut
// short ends decoding with an error wrapping ErrTruncatedCapture after every
// complete frame was decoded; a record header that makes no sense ends it with
// an error wrapping ErrCorruptCapture. An error returned by emit stops decoding and is
// returned. The record passed to emit is reused: copy what must outlive the call.
func (d *Dissector) Decode(r io.Reader, emit func(*Record) error) error {
	cr, err := openCapture(r)
	if err != nil {
		return err
	}
	d.summary.Format = cr.format
	d.emitFn = emit
	var f Frame
	var lastProgress int64
	for {
		err := cr.next(&f)
		if err == io.EOF {
			break
		}
		if err != nil {
			d.summary.Truncated = true
			d.finish()
			if d.emitErr != nil {
				return d.emitErr
			}
			return err
		}
		d.frameIn(&f)
		if d.emitErr != nil {
			return d.emitErr
		}
		if d.cfg.Progress != nil && cr.offset()-lastProgress >= 1<<20 {
			lastProgress = cr.offset()
			d.cfg.Progress(lastProgress)
		}
	}
	d.finish()
	if d.cfg.Progress != nil {
		d.cfg.Progress(cr.offset())
	}
	return d.emitErr
}

// Summary reports totals for the capture decoded so far.
func (d *Dissector) Summary() Summary {
	s := d.summary
	s.FragDropped = d.defrag.dropped
	return s
}

// frameIn decodes one frame down to its transport and hands it to its flow.
func (d *Dissector) frameIn(f *Frame) {
	d.frame = f
	d.summary.Frames++
	d.summary.Bytes += int64(len(f.Data))
	if d.start.IsZero() {
		d.start = f.Time
		d.summary.FirstFrame = f.Time
	}
	d.summary.LastFrame = f.Time
	writeOriginal := true
	defer func() {
		if writeOriginal && d.cfg.Decrypted != nil && d.emitErr == nil {
			if err := d.cfg.Decrypted.WriteFrame(f); err != nil {
				d.emitErr = err
			}
		}
	}()

	proto, b, reason := linkDecode(f.Link, f.Data)
	if proto == netUnknown {
		d.skip(reason)
		return
	}
	var st ipStatus
	if proto == netIPv4 {
		st, reason = decodeIPv4(b, f.Time, d.defrag, &d.ip)
	} else {
		st, reason = decodeIPv6(b, f.Time, d.defrag, &d.ip)
	}
	switch st {
	case ipBad:
		d.skip(reason)
		return
	case ipFragment:
		return
	}
	switch d.ip.proto {
	case protoUDP:
		if reason := parseUDP(d.ip.payload, &d.udp); reason != "" {
			d.skip(reason)
			return
		}
		src := netip.AddrPortFrom(d.ip.src, d.udp.srcPort)
		dst := netip.AddrPortFrom(d.ip.dst, d.udp.dstPort)
		fl, dir := d.lookup(protoUDP, src, dst)
		fl.stats.Packets++
		fl.stats.Bytes += int64(len(d.udp.payload))
		fl.last = f.Time
		c := &d.ctxBuf
		*c = pktCtx{d: d, fl: fl, dir: dir, src: src, dst: dst}
		if _, ok := fl.handler.(*probeUDP); ok { // recognise now, so the rewriter is known
			fl.handler = d.recognizeUDP(c, d.udp.payload)
		}
		if rw, ok := fl.handler.(udpRewriter); ok && d.cfg.Decrypted != nil {
			writeOriginal = false
			fl.handler.udp(c, d.udp.payload)
			d.writeRewritten(f, rw.rewritten())
			return
		}
		fl.handler.udp(c, d.udp.payload)
	case protoTCP:
		if reason := parseTCP(d.ip.payload, &d.tcp); reason != "" {
			d.skip(reason)
			return
		}
		src := netip.AddrPortFrom(d.ip.src, d.tcp.srcPort)
		dst := netip.AddrPortFrom(d.ip.dst, d.tcp.dstPort)
		fl, dir := d.lookup(protoTCP, src, dst)
		if d.tcp.flags&(tcpSYN|tcpACK) == tcpSYN && fl.tcp[dir].started && fl.tcp[dir].next != d.tcp.seq+1 {
			// A new connection reusing the addresses and ports of an old one
			// (a new initial sequence number): a flow of its own.
			d.finishFlow(fl)
			delete(d.flows, fl.key)
			fl, dir = d.lookup(protoTCP, src, dst)
		}
		fl.stats.Packets++
		fl.stats.Bytes += int64(len(d.tcp.payload))
		fl.last = f.Time
		d.tcpIn(fl, dir, src, dst)
	default:
		d.skip("ip protocol " + strconv.Itoa(int(d.ip.proto)) + " is neither UDP nor TCP")
	}
}

// skip reports a frame that was not decoded.
func (d *Dissector) skip(reason string) {
	d.summary.Skipped++
	r := d.newRecord(nil, 0, netip.AddrPort{}, netip.AddrPort{})
	r.Kind = KindNote
	r.Error = reason
	d.emit(r)
}

func (d *Dissector) newRecord(fl *flow, dir int, src, dst netip.AddrPort) *Record {
	r := &d.rec
	r.reset()
	r.Kind = KindPacket
	if d.frame != nil {
		r.Frame = d.frame.Number
		r.Time = d.frame.Time
	}
	if fl != nil {
		r.Flow = fl.id
		r.Transport = fl.transport()
		r.NetSrc, r.NetDst = src, dst
	}
	return r
}

func (d *Dissector) emit(r *Record) {
	if d.emitErr != nil {
		return
	}
	if r.Kind == KindNote {
		d.summary.Notes++
	}
	if d.emitFn != nil {
		d.emitErr = d.emitFn(r)
	}
}

// finish flushes stream reassembly at the end of the capture.
func (d *Dissector) finish() {
	for _, fl := range d.order {
		d.finishFlow(fl)
	}
}

// finishFlow flushes what a flow still holds (at the end of the capture, or
// when its addresses and ports are reused by a new connection).
func (d *Dissector) finishFlow(fl *flow) {
	if fl.done {
		return
	}
	fl.done = true
	saved := d.ctxBuf
	defer func() { d.ctxBuf = saved }()
	c := &d.ctxBuf
	if fl.key.proto == protoTCP {
		for dir := 0; dir < 2; dir++ {
			src, dst := fl.client, fl.server
			if dir == 1 {
				src, dst = dst, src
			}
			*c = pktCtx{d: d, fl: fl, dir: dir, src: src, dst: dst}
			fl.tcp[dir].flush(func(data []byte, gap int) { d.streamData(c, data, gap) })
		}
	}
	if fh, ok := fl.handler.(finisher); ok {
		*c = pktCtx{d: d, fl: fl, src: fl.client, dst: fl.server}
		fh.finish(c)
	}
}

// pktCtx is what a protocol handler knows about the packet in hand.
type pktCtx struct {
	d        *Dissector
	fl       *flow
	dir      int // 0: client to server, 1: server to client
	src, dst netip.AddrPort
}

// record starts a record for the packet in hand.
func (c *pktCtx) record(protocol string) *Record {
	r := c.d.newRecord(c.fl, c.dir, c.src, c.dst)
	r.Protocol = protocol
	return r
}

func (c *pktCtx) emit(r *Record) {
	switch r.Kind {
	case KindMessage:
		c.fl.stats.Messages++
	}
	if r.Retransmission {
		c.fl.stats.Retransmissions++
	}
	c.d.emit(r)
}

// note emits a note record for the packet in hand.
func (c *pktCtx) note(protocol, reason string) {
	r := c.record(protocol)
	r.Kind = KindNote
	r.Error = reason
	c.fl.stats.Errors++
	c.d.emit(r)
}

func (c *pktCtx) now() time.Time { return c.d.frame.Time }

// towards returns a copy of c for direction dir of the same flow (0: client to
// server, 1: server to client): a flow's finish runs once, not per direction.
func (c *pktCtx) towards(dir int) *pktCtx {
	cc := *c
	cc.dir, cc.src, cc.dst = dir, c.fl.client, c.fl.server
	if dir == 1 {
		cc.src, cc.dst = cc.dst, cc.src
	}
	return &cc
}
