package dissect

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/gamewire/gamewire/prudp/wire"
)

// FuzzCapture feeds arbitrary bytes as a capture file: decoding must never
// panic, and every record must serialise to JSON.
func FuzzCapture(f *testing.F) {
	c := newConvo(f, wire.NewV1("6f599f81"), "6f599f81", 100)
	c.handshake()
	c.message(0, testMessage(0, 250), false)
	f.Add(c.pcap())
	f.Add(pcapFile(f, layers.LinkTypeNull, wrapLink(f, layers.LinkTypeNull, udpIP(f, cl6, sv6, []byte{0x32, 0xab, 0x98, 0x64, 1, 2}))))
	f.Add(pcapFile(f, layers.LinkTypeRaw, fragmentIPv4(f, udpIP(f, cli, srv, make([]byte, 3000)), 1000)...))
	f.Add([]byte{0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a})
	keys := &Keys{AccessKeys: []string{"6f599f81"}}
	f.Fuzz(func(t *testing.T, capture []byte) {
		d := New(Config{Keys: keys, MaxMessage: 1 << 16})
		_ = d.Decode(bytes.NewReader(capture), func(r *Record) error {
			r.AppendJSON(nil)
			r.AppendText(nil, d.Summary().FirstFrame)
			r.AppendTree(nil)
			return nil
		})
		d.Flows()
	})
}

// FuzzRecognize feeds arbitrary bytes as the payload of UDP datagrams of one
// flow (and as TCP stream data) through recognition and every protocol
// handler: no panic, and the flow ends up with a protocol.
func FuzzRecognize(f *testing.F) {
	c := newConvo(f, wire.NewQuazal("8dtRv2oj", wire.QuazalOptions{}), "8dtRv2oj", 100)
	c.handshake()
	c.message(0, testMessage(0, 150), false)
	for _, fr := range c.frames {
		f.Add(fr[14+20+8:], uint16(60000), false)
	}
	f.Add([]byte{0xea, 0xd0, 1, 0, 0, 0, 0xaf, 0xa1, 0x40, 0, 0, 0, 0, 0}, uint16(60000), false)
	f.Add([]byte(`{"cmd":"autodiscover"}`), uint16(28000), false)
	f.Add([]byte("\x05\x00\x00\x00\x01{}\n\n\n"), uint16(27000), true)
	f.Add([]byte("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x82\x05\x80\x00\x00\x00\x00"), uint16(8080), true)
	liteSyn, _ := wire.NewLite("").Append(nil, &wire.Packet{Type: wire.TypeSyn, Flags: wire.FlagNeedAck, Src: wire.VPort{Stream: 10, Port: 31}, Dst: wire.VPort{Stream: 10, Port: 1}})
	f.Add(liteSyn, uint16(443), true)
	keys := &Keys{AccessKeys: []string{"8dtRv2oj", "6f599f81"}}
	f.Fuzz(func(t *testing.T, payload []byte, port uint16, tcp bool) {
		if port == 0 {
			port = 1
		}
		d := New(Config{Keys: keys, MaxMessage: 1 << 16})
		d.frame = &Frame{Number: 1, Time: t0}
		s := cli
		dst := srv
		dst = netip.AddrPortFrom(dst.Addr(), port)
		for i := range 3 {
			from, to := s, dst
			if i == 1 {
				from, to = dst, s
			}
			if tcp {
				d.tcp = tcpSegment{srcPort: from.Port(), dstPort: to.Port(), seq: uint32(1000 + i*len(payload)), flags: tcpACK, payload: payload}
				fl, dir := d.lookup(protoTCP, from, to)
				d.tcpIn(fl, dir, from, to)
			} else {
				fl, dir := d.lookup(protoUDP, from, to)
				cx := &d.ctxBuf
				*cx = pktCtx{d: d, fl: fl, dir: dir, src: from, dst: to}
				fl.handler.udp(cx, append([]byte(nil), payload...))
			}
		}
		d.finish()
		for _, fs := range d.Flows() {
			if fs.Protocol == "" {
				t.Fatal("flow without protocol")
			}
		}
	})
}
