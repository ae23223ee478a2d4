package dissect

import (
	"net/netip"
	"time"
)

// flowKey identifies a conversation independent of direction: the lower
// endpoint (by address, then port) comes first.
type flowKey struct {
	proto uint8
	a, b  [16]byte
	ap    uint16
	bp    uint16
}

func makeFlowKey(proto uint8, src, dst netip.AddrPort) flowKey {
	sa, da := src.Addr().As16(), dst.Addr().As16()
	k := flowKey{proto: proto, a: sa, b: da, ap: src.Port(), bp: dst.Port()}
	if c := compare16(sa, da); c > 0 || (c == 0 && src.Port() > dst.Port()) {
		k.a, k.b, k.ap, k.bp = da, sa, dst.Port(), src.Port()
	}
	return k
}

func compare16(a, b [16]byte) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// FlowStats describes one flow for --stats.
type FlowStats struct {
	ID              int
	Transport       string // "udp" or "tcp"
	Client, Server  netip.AddrPort
	Protocol        string // "prudp", "pia", "pipboy", "websocket", "unknown"
	Dialect         string // the PRUDP dialect, or "" for other protocols
	Packets         int64  // frames of this flow
	Messages        int64  // application messages decoded
	Retransmissions int64
	Bytes           int64 // transport payload bytes
	Errors          int64 // notes emitted for this flow
	Handshake       string
	RTT             time.Duration // handshake round trip; 0 if not seen
	First, Last     time.Time
}

// flow is the state of one conversation.
type flow struct {
	id             int
	key            flowKey
	client, server netip.AddrPort
	handler        handler
	tcp            [2]tcpStream
	stats          FlowStats
	last           time.Time
	synTime        time.Time // TCP SYN, for the handshake RTT
	done           bool      // finishFlow ran
}

func (fl *flow) transport() string {
	if fl.key.proto == protoTCP {
		return "tcp"
	}
	return "udp"
}

// handler decodes the payloads of one flow. UDP flows get udp calls; TCP
// flows get stream calls with in-order bytes per direction.
type handler interface {
	protocol() string
	udp(c *pktCtx, payload []byte)
	stream(c *pktCtx, data []byte, gap int)
}

// finisher is implemented by handlers holding state to report at the end.
type finisher interface {
	finish(c *pktCtx)
}

// udpRewriter is implemented by handlers that can give the decrypted form of
// the datagram just handled, for --write-decrypted. rewritten returns nil when
// the datagram should be written unchanged.
type udpRewriter interface {
	rewritten() []byte
}

// statser lets a handler fill protocol-specific stats.
type statser interface {
	fillStats(s *FlowStats)
}

// lookup finds or creates the flow of a packet and returns its direction.
func (d *Dissector) lookup(proto uint8, src, dst netip.AddrPort) (*flow, int) {
	k := makeFlowKey(proto, src, dst)
	fl := d.flows[k]
	if fl == nil {
		fl = &flow{id: len(d.order) + 1, key: k, client: src, server: dst}
		if proto == protoTCP && d.tcp.flags&(tcpSYN|tcpACK) == tcpSYN|tcpACK {
			fl.client, fl.server = dst, src // we saw the SYN-ACK first
		}
		fl.stats.First = d.frame.Time
		d.flows[k] = fl
		d.order = append(d.order, fl)
		fl.handler = d.recognize(fl, proto, src, dst)
	}
	if src == fl.client {
		return fl, 0
	}
	return fl, 1
}

// Flows returns the statistics of every flow, in order of first appearance.
func (d *Dissector) Flows() []FlowStats {
	out := make([]FlowStats, 0, len(d.order))
	for _, fl := range d.order {
		s := fl.stats
		s.ID = fl.id
		s.Transport = fl.transport()
		s.Client, s.Server = fl.client, fl.server
		s.Protocol = fl.handler.protocol()
		s.Last = fl.last
		if st, ok := fl.handler.(statser); ok {
			st.fillStats(&s)
		}
		out = append(out, s)
	}
	return out
}

// Well-known ports ("Pip-Boy" spec: TCP 27000 stream, UDP 28000 discovery).
const (
	portPipboyTCP = 27000
	portPipboyUDP = 28000
)

// recognize picks the handler of a new flow from the override table, its
// ports, and the first payload. Handlers that need more than one packet to
// decide (PRUDP by checksum) start as a probing handler.
func (d *Dissector) recognize(fl *flow, proto uint8, src, dst netip.AddrPort) handler {
	name := ""
	for _, p := range []uint16{dst.Port(), src.Port()} {
		if n, ok := d.cfg.Dialects[p]; ok {
			name = n
			break
		}
	}
	if name != "" {
		return d.handlerFor(name, proto)
	}
	if proto == protoTCP {
		if src.Port() == portPipboyTCP || dst.Port() == portPipboyTCP {
			if src.Port() == portPipboyTCP {
				fl.client, fl.server = dst, src
			}
			return d.handlerFor("pipboy", proto)
		}
		return &probeTCP{d: d}
	}
	if src.Port() == portPipboyUDP || dst.Port() == portPipboyUDP {
		return d.handlerFor("pipboy", proto)
	}
	return &probeUDP{d: d}
}

// handlerFor returns the handler registered for a protocol name.
func (d *Dissector) handlerFor(name string, proto uint8) handler {
	if mk, ok := handlerMakers[name]; ok {
		if h := mk(d, name, proto); h != nil {
			return h
		}
	}
	if name == "ignore" {
		return ignoreHandler{}
	}
	transport := "UDP"
	if proto == protoTCP {
		transport = "TCP"
	}
	return &unknownHandler{reason: "--dialect " + name + " does not run over " + transport}
}

// handlerMakers maps protocol names to constructors; each protocol file
// registers itself from init.
var handlerMakers = map[string]func(d *Dissector, name string, proto uint8) handler{}

// tcpIn runs TCP reassembly for one segment of a flow.
func (d *Dissector) tcpIn(fl *flow, dir int, src, dst netip.AddrPort) {
	s := &d.tcp
	c := &d.ctxBuf
	*c = pktCtx{d: d, fl: fl, dir: dir, src: src, dst: dst}
	if s.flags&tcpSYN != 0 {
		if s.flags&tcpACK == 0 {
			fl.synTime = d.frame.Time
		} else if !fl.synTime.IsZero() && fl.stats.RTT == 0 {
			fl.stats.RTT = d.frame.Time.Sub(fl.synTime)
			fl.stats.Handshake = "tcp established"
		}
	}
	if s.flags&tcpRST != 0 {
		fl.stats.Handshake = "tcp reset"
	}
	retrans := fl.tcp[dir].add(s, func(data []byte, gap int) { d.streamData(c, data, gap) })
	if retrans {
		r := c.record(fl.handler.protocol())
		r.Retransmission = true
		r.Summary = "TCP retransmission, " + itoa(len(s.payload)) + " bytes (not decoded again)"
		r.addInt("tcp_seq", int64(s.seq))
		r.addInt("length", int64(len(s.payload)))
		c.emit(r)
	}
}

// streamData hands in-order stream bytes to the flow's handler, recognising
// the protocol first if needed.
func (d *Dissector) streamData(c *pktCtx, data []byte, gap int) {
	if gap > 0 {
		c.fl.stats.Errors++
	}
	c.fl.handler.stream(c, data, gap)
	if p, ok := c.fl.handler.(*probeTCP); ok && p.decided != nil {
		c.fl.handler = p.decided
	}
}

// probeTCP recognises a TCP flow from its first bytes.
type probeTCP struct {
	d       *Dissector
	decided handler
}

func (p *probeTCP) protocol() string        { return "unknown" }
func (p *probeTCP) udp(c *pktCtx, b []byte) {}
func (p *probeTCP) stream(c *pktCtx, data []byte, gap int) {
	if p.decided != nil {
		p.decided.stream(c, data, gap)
		return
	}
	if isHTTPUpgrade(data) {
		h := p.d.handlerFor("websocket", protoTCP)
		p.decided = h
		if c.dir == 1 { // the server spoke first; swap roles
			c.fl.client, c.fl.server = c.fl.server, c.fl.client
			c.dir = 0
		}
		h.stream(c, data, gap)
		return
	}
	if isLiteStream(data) {
		h := newLiteStream(p.d)
		p.decided = h
		h.stream(c, data, gap)
		return
	}
	h := &unknownHandler{reason: "no known protocol recognised in the first bytes of this TCP flow"}
	p.decided = h
	h.stream(c, data, gap)
}

// probeUDP recognises a UDP flow from its first datagram.
type probeUDP struct {
	d *Dissector
}

func (p *probeUDP) protocol() string                       { return "unknown" }
func (p *probeUDP) stream(c *pktCtx, data []byte, gap int) {}
func (p *probeUDP) udp(c *pktCtx, b []byte) {
	h := p.d.recognizeUDP(c, b)
	c.fl.handler = h
	h.udp(c, b)
}

// udpRecognizers are tried in order on the first datagram of an unknown UDP
// flow; each protocol file registers itself from init.
var udpRecognizers []func(d *Dissector, c *pktCtx, b []byte) handler

func (d *Dissector) recognizeUDP(c *pktCtx, b []byte) handler {
	for _, r := range udpRecognizers {
		if h := r(d, c, b); h != nil {
			return h
		}
	}
	return &unknownHandler{reason: "no known protocol recognised in this UDP flow"}
}

// unknownHandler reports each payload of an unrecognised flow and skips it.
type unknownHandler struct {
	reason string
}

func (u *unknownHandler) protocol() string { return "unknown" }
func (u *unknownHandler) udp(c *pktCtx, b []byte) {
	u.report(c, len(b))
}
func (u *unknownHandler) stream(c *pktCtx, data []byte, gap int) {
	u.report(c, len(data))
}
func (u *unknownHandler) report(c *pktCtx, n int) {
	r := c.record("unknown")
	r.Kind = KindNote
	r.Summary = itoa(n) + " bytes skipped"
	r.addInt("length", int64(n))
	r.Error = u.reason
	c.fl.stats.Errors++
	c.d.summary.Skipped++
	c.d.emit(r)
}

// ignoreHandler drops a flow silently, as the user asked with PORT=ignore.
type ignoreHandler struct{}

func (ignoreHandler) protocol() string            { return "ignored" }
func (ignoreHandler) udp(*pktCtx, []byte)         {}
func (ignoreHandler) stream(*pktCtx, []byte, int) {}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
