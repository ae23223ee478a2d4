package dissect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// The helpers below build frames with gopacket's own serializers, so the
// dissector's hand-written parsers are checked against an independent encoder.

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// udpIP returns an IPv4 or IPv6 datagram carrying UDP with payload.
func udpIP(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	t.Helper()
	u := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	if src.Addr().Is4() {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		u.SetNetworkLayerForChecksum(ip)
		return serialize(t, ip, u, gopacket.Payload(payload))
	}
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
	u.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, u, gopacket.Payload(payload))
}

// tcpIP returns an IPv4 datagram carrying one TCP segment.
func tcpIP(t testing.TB, src, dst netip.AddrPort, seq, ack uint32, syn, ackf, fin bool, payload []byte) []byte {
	t.Helper()
	tc := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()), Seq: seq, Ack: ack, SYN: syn, ACK: ackf, FIN: fin, PSH: len(payload) > 0, Window: 65535}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
	tc.SetNetworkLayerForChecksum(ip)
	return serialize(t, ip, tc, gopacket.Payload(payload))
}

// wrapLink puts an IP datagram into a frame of the given link type.
func wrapLink(t testing.TB, lt layers.LinkType, ip []byte) []byte {
	t.Helper()
	v6 := ip[0]>>4 == 6
	et := layers.EthernetTypeIPv4
	if v6 {
		et = layers.EthernetTypeIPv6
	}
	switch lt {
	case layers.LinkTypeEthernet:
		return serialize(t, &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: et}, gopacket.Payload(ip))
	case layers.LinkTypeLinuxSLL:
		h := make([]byte, 16)
		binary.BigEndian.PutUint16(h[0:2], 0)   // packet type: to us
		binary.BigEndian.PutUint16(h[2:4], 772) // ARPHRD_LOOPBACK
		binary.BigEndian.PutUint16(h[4:6], 6)   // address length
		binary.BigEndian.PutUint16(h[14:16], uint16(et))
		return append(h, ip...)
	case linkTypeSLL2:
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:2], uint16(et))
		binary.BigEndian.PutUint32(h[4:8], 1) // interface index
		binary.BigEndian.PutUint16(h[8:10], 772)
		h[11] = 6
		return append(h, ip...)
	case layers.LinkTypeNull:
		h := make([]byte, 4)
		af := uint32(2)
		if v6 {
			af = 30
		}
		binary.LittleEndian.PutUint32(h, af)
		return append(h, ip...)
	case layers.LinkTypeRaw:
		return append([]byte(nil), ip...)
	}
	t.Fatalf("no wrapper for %v", lt)
	return nil
}

// pcapFile writes frames as classic pcap with one link type.
func pcapFile(t testing.TB, lt layers.LinkType, frames ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriterNanos(&b)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// collect decodes a capture and returns copies of the JSON records.
func collect(t testing.TB, cfg Config, capture []byte) ([]string, error) {
	t.Helper()
	var out []string
	d := New(cfg)
	err := d.Decode(bytes.NewReader(capture), func(r *Record) error {
		out = append(out, string(r.AppendJSON(nil)))
		return nil
	})
	return out, err
}

var (
	cli = netip.MustParseAddrPort("127.0.0.1:51000")
	srv = netip.MustParseAddrPort("127.0.0.1:60000")
	cl6 = netip.MustParseAddrPort("[::1]:51000")
	sv6 = netip.MustParseAddrPort("[::1]:60000")
)

func TestLinkTypes(t *testing.T) {
	for _, lt := range []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, linkTypeSLL2, layers.LinkTypeNull, layers.LinkTypeRaw} {
		for _, v6 := range []bool{false, true} {
			name := lt.String()
			if lt == linkTypeSLL2 {
				name = "SLL2"
			}
			if v6 {
				name += "/ipv6"
			}
			t.Run(name, func(t *testing.T) {
				s, d := cli, srv
				if v6 {
					s, d = cl6, sv6
				}
				payload := []byte("not a game protocol")
				capture := pcapFile(t, lt, wrapLink(t, lt, udpIP(t, s, d, payload)))
				recs, err := collect(t, Config{}, capture)
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) != 1 {
					t.Fatalf("got %d records, want 1: %q", len(recs), recs)
				}
				for _, want := range []string{`"net_src":"` + s.String() + `"`, `"net_dst":"` + d.String() + `"`, `"protocol":"unknown"`, `"length":19`, `"transport":"udp"`, `"record":"note"`} {
					if !strings.Contains(recs[0], want) {
						t.Errorf("record %s lacks %s", recs[0], want)
					}
				}
			})
		}
	}
}

func TestPcapngMixedLinkTypes(t *testing.T) {
	var b bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&b, pcapgo.NgInterface{Name: "eth0", LinkType: layers.LinkTypeEthernet, SnapLength: 65535}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	lo, err := w.AddInterface(pcapgo.NgInterface{Name: "lo", LinkType: layers.LinkTypeLinuxSLL, SnapLength: 65535})
	if err != nil {
		t.Fatal(err)
	}
	f1 := wrapLink(t, layers.LinkTypeEthernet, udpIP(t, cli, srv, []byte("one")))
	f2 := wrapLink(t, layers.LinkTypeLinuxSLL, udpIP(t, srv, cli, []byte("two!")))
	w.WritePacket(gopacket.CaptureInfo{Timestamp: t0, CaptureLength: len(f1), Length: len(f1)}, f1)
	w.WritePacket(gopacket.CaptureInfo{Timestamp: t0.Add(time.Second), CaptureLength: len(f2), Length: len(f2), InterfaceIndex: lo}, f2)
	w.Flush()
	recs, err := collect(t, Config{}, b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(recs[0], `"length":3`) || !strings.Contains(recs[1], `"length":4`) || !strings.Contains(recs[1], `"net_src":"127.0.0.1:60000"`) {
		t.Fatalf("records: %q", recs)
	}
	// Both directions belong to one flow.
	if !strings.Contains(recs[0], `"flow":1`) || !strings.Contains(recs[1], `"flow":1`) {
		t.Fatalf("directions in different flows: %q", recs)
	}
}

// fragmentIPv4 splits a UDP-in-IPv4 datagram into fragments of at most size payload bytes.
func fragmentIPv4(t testing.TB, dgram []byte, size int) [][]byte {
	t.Helper()
	ihl := int(dgram[0]&0x0f) * 4
	payload := dgram[ihl:]
	var out [][]byte
	for off := 0; off < len(payload); off += size {
		end := min(off+size, len(payload))
		h := append([]byte(nil), dgram[:ihl]...)
		binary.BigEndian.PutUint16(h[2:4], uint16(ihl+end-off))
		fo := uint16(off / 8)
		if end < len(payload) {
			fo |= 0x2000
		}
		binary.BigEndian.PutUint16(h[4:6], 0x4242)
		binary.BigEndian.PutUint16(h[6:8], fo)
		h[10], h[11] = 0, 0
		binary.BigEndian.PutUint16(h[10:12], ^onesSum(h, 0))
		out = append(out, append(h, payload[off:end]...))
	}
	return out
}

// fragmentIPv6 splits a UDP-in-IPv6 datagram with a fragment header.
func fragmentIPv6(t testing.TB, dgram []byte, size int) [][]byte {
	t.Helper()
	payload := dgram[40:]
	var out [][]byte
	for off := 0; off < len(payload); off += size {
		end := min(off+size, len(payload))
		h := append([]byte(nil), dgram[:40]...)
		h[6] = protoFragment
		binary.BigEndian.PutUint16(h[4:6], uint16(8+end-off))
		fh := make([]byte, 8)
		fh[0] = protoUDP
		fo := uint16(off/8) << 3
		if end < len(payload) {
			fo |= 1
		}
		binary.BigEndian.PutUint16(fh[2:4], fo)
		binary.BigEndian.PutUint32(fh[4:8], 0xdeadbeef)
		out = append(out, append(append(h, fh...), payload[off:end]...))
	}
	return out
}

func TestIPFragmentReassembly(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 300) // 4800 bytes
	for _, v6 := range []bool{false, true} {
		name := "ipv4"
		if v6 {
			name = "ipv6"
		}
		t.Run(name, func(t *testing.T) {
			var frags [][]byte
			if v6 {
				frags = fragmentIPv6(t, udpIP(t, cl6, sv6, payload), 1400)
			} else {
				frags = fragmentIPv4(t, udpIP(t, cli, srv, payload), 1400)
			}
			if len(frags) != 4 {
				t.Fatalf("%d fragments", len(frags))
			}
			// Out of order, with a duplicate.
			order := []int{2, 0, 3, 0, 1}
			var frames [][]byte
			for _, i := range order {
				frames = append(frames, wrapLink(t, layers.LinkTypeEthernet, frags[i]))
			}
			recs, err := collect(t, Config{}, pcapFile(t, layers.LinkTypeEthernet, frames...))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || !strings.Contains(recs[0], `"length":4800`) || !strings.Contains(recs[0], `"frame":5`) {
				t.Fatalf("records: %q", recs)
			}
		})
	}
}

func TestDefragmenterBounded(t *testing.T) {
	// Thousands of first fragments that never complete must not grow memory without bound.
	df := newDefragmenter()
	var p ipPacket
	chunk := make([]byte, 1024)
	for i := range 5000 {
		key := fragKey{proto: protoUDP, id: uint32(i)}
		if st, _ := df.add(key, 0, true, chunk, t0, &p); st != ipFragment {
			t.Fatalf("fragment %d: status %v", i, st)
		}
		if len(df.pending) > fragMaxPending || df.bytes > fragMaxBytes {
			t.Fatalf("after %d fragments: %d pending, %d bytes", i, len(df.pending), df.bytes)
		}
	}
	// Old fragments expire by capture time.
	df.add(fragKey{id: 999999}, 0, true, chunk, t0.Add(time.Minute), &p)
	if len(df.pending) != 1 {
		t.Fatalf("%d pending after expiry", len(df.pending))
	}
}

func TestTCPStreamReassembly(t *testing.T) {
	// A plain WebSocket session: the HTTP upgrade, then three text messages.
	// Segments arrive out of order and one is retransmitted.
	c := netip.MustParseAddrPort("127.0.0.1:40000")
	s := netip.MustParseAddrPort("127.0.0.1:8080")
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: NEX\r\n\r\n")
	resp := []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	wsFrame := func(msg string, mask bool) []byte {
		b := []byte{0x81, byte(len(msg))}
		p := []byte(msg)
		if mask {
			b[1] |= 0x80
			m := []byte{1, 2, 3, 4}
			b = append(b, m...)
			for i := range p {
				p[i] ^= m[i&3]
			}
		}
		return append(b, p...)
	}
	m1, m2, m3 := wsFrame("first", true), wsFrame("second message", true), wsFrame("third", true)
	cs, ss := uint32(1000), uint32(5000)
	seg := func(from netip.AddrPort, seq uint32, p []byte) []byte {
		to, ack := s, ss+1
		if from == s {
			to, ack = c, cs+1
		}
		return wrapLink(t, layers.LinkTypeEthernet, tcpIP(t, from, to, seq, ack, false, true, false, p))
	}
	frames := [][]byte{
		wrapLink(t, layers.LinkTypeEthernet, tcpIP(t, c, s, cs, 0, true, false, false, nil)),
		wrapLink(t, layers.LinkTypeEthernet, tcpIP(t, s, c, ss, cs+1, true, true, false, nil)),
		seg(c, cs+1, req),
		seg(s, ss+1, resp),
		seg(c, cs+1+uint32(len(req)+len(m1)), m2),             // out of order
		seg(c, cs+1+uint32(len(req)), m1),                     // fills the hole
		seg(c, cs+1+uint32(len(req)), m1),                     // retransmission
		seg(c, cs+1+uint32(len(req)+len(m1)+len(m2)), m3[:3]), // split frame
		seg(c, cs+1+uint32(len(req)+len(m1)+len(m2)+3), m3[3:]),
	}
	var recs []Record
	d := New(Config{})
	err := d.Decode(bytes.NewReader(pcapFile(t, layers.LinkTypeEthernet, frames...)), func(r *Record) error {
		cp := *r
		cp.Fields = append([]Field(nil), r.Fields...)
		for i := range cp.Fields {
			cp.Fields[i].Bytes = append([]byte(nil), cp.Fields[i].Bytes...)
		}
		recs = append(recs, cp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	retrans := 0
	for _, r := range recs {
		if f, ok := r.Field("text"); ok {
			texts = append(texts, f.Str)
		}
		if r.Retransmission {
			retrans++
			if r.Frame != 7 {
				t.Errorf("retransmission marked on frame %d, want 7", r.Frame)
			}
		}
	}
	if strings.Join(texts, "|") != "first|second message|third" {
		t.Fatalf("messages %q", texts)
	}
	if retrans != 1 {
		t.Fatalf("%d retransmissions marked, want 1", retrans)
	}
	st := d.Flows()
	if len(st) != 1 || st[0].Client != c || st[0].Messages != 3 || st[0].Retransmissions != 1 || st[0].Protocol != "websocket" {
		t.Fatalf("stats %+v", st)
	}
}

func TestTruncatedCaptureEveryPrefix(t *testing.T) {
	frames := [][]byte{
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, cli, srv, []byte("hello"))),
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, srv, cli, []byte("world!"))),
	}
	full := pcapFile(t, layers.LinkTypeEthernet, frames...)
	for n := 0; n < len(full); n++ {
		recs, err := collect(t, Config{}, full[:n])
		switch {
		case n < 24:
			if !errors.Is(err, ErrNotCapture) {
				t.Fatalf("prefix %d: err %v, want ErrNotCapture", n, err)
			}
		case n == 24 || n == 24+16+len(frames[0]):
			if err != nil {
				t.Fatalf("prefix %d ends on a record boundary: %v", n, err)
			}
		default:
			if !errors.Is(err, ErrTruncatedCapture) {
				t.Fatalf("prefix %d: err %v, want ErrTruncatedCapture", n, err)
			}
			if n > 24+16+len(frames[0]) && len(recs) != 1 {
				t.Fatalf("prefix %d: the complete first frame was not decoded: %q", n, recs)
			}
		}
	}
}

func TestBadFramesDoNotStopDecoding(t *testing.T) {
	good := wrapLink(t, layers.LinkTypeEthernet, udpIP(t, cli, srv, []byte("fine, and long enough to need no ethernet padding")))
	cut := good[:len(good)-2] // as if the snaplen cut it
	garbage := []byte{0xff, 0xee, 0xdd}
	notIP := serialize(t, &layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeARP}, gopacket.Payload(make([]byte, 28)))
	badIHL := append([]byte(nil), good...)
	badIHL[14] = 0x41
	frames := [][]byte{garbage, cut, notIP, badIHL, good}
	recs, err := collect(t, Config{}, pcapFile(t, layers.LinkTypeEthernet, frames...))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records: %q", len(recs), recs)
	}
	wants := []string{"ethernet header truncated", "cut by snaplen", "not IP (ethertype 0x0806)", "ipv4 header length 4 invalid", `"length":49`}
	for i, w := range wants {
		if !strings.Contains(recs[i], w) {
			t.Errorf("record %d = %s, want it to mention %q", i, recs[i], w)
		}
	}
}

func TestNotACapture(t *testing.T) {
	for _, in := range []string{"", "abc", "this is not a capture file at all"} {
		if _, err := collect(t, Config{}, []byte(in)); !errors.Is(err, ErrNotCapture) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestDialectOverrides(t *testing.T) {
	m, err := ParseDialectOverrides([]string{"60000=nex-v1", "27001=pipboy"})
	if err != nil || m[60000] != "nex-v1" || m[27001] != "pipboy" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"60000", "x=nex-v1", "0=nex-v1", "70000=nex-v1", "1=klingon"} {
		if _, err := ParseDialectOverrides([]string{bad}); !errors.Is(err, ErrDialect) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// "ignore" silences a flow.
	capture := pcapFile(t, layers.LinkTypeRaw, udpIP(t, cli, srv, []byte("x")))
	recs, err := collect(t, Config{Dialects: map[uint16]string{60000: "ignore"}}, capture)
	if err != nil || len(recs) != 0 {
		t.Fatalf("%q %v", recs, err)
	}
}

func TestDecryptedWriterCopiesFrames(t *testing.T) {
	frames := [][]byte{
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, cli, srv, []byte("hello"))),
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, srv, cli, []byte("world!"))),
	}
	var out bytes.Buffer
	dw := NewDecryptedWriter(&out)
	if _, err := collect(t, Config{Decrypted: dw}, pcapFile(t, layers.LinkTypeEthernet, frames...)); err != nil {
		t.Fatal(err)
	}
	dw.Flush()
	r, err := pcapgo.NewNgReader(&out, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range frames {
		got, _, err := r.ReadPacketData()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %x %v", i, got, err)
		}
	}
}

func TestCorruptRecordHeader(t *testing.T) {
	frames := [][]byte{
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, cli, srv, []byte("hello"))),
		wrapLink(t, layers.LinkTypeEthernet, udpIP(t, srv, cli, []byte("world!"))),
	}
	capture := pcapFile(t, layers.LinkTypeEthernet, frames...)
	// The second record's captured length becomes 0x7fffffff.
	off := 24 + 16 + len(frames[0])
	binary.LittleEndian.PutUint32(capture[off+8:], 0x7fffffff)
	recs, err := collect(t, Config{}, capture)
	if !errors.Is(err, ErrCorruptCapture) || !strings.Contains(err.Error(), "frame 2") {
		t.Fatalf("err %v", err)
	}
	if len(recs) != 1 {
		t.Fatalf("the first frame was not decoded: %q", recs)
	}
}

// TestCorruptFirstRecordOffset checks that an error names the offset of the record
// header at fault (24, right after the pcap file header), not how far the reader's
// buffer had read ahead.
func TestCorruptFirstRecordOffset(t *testing.T) {
	frames := [][]byte{wrapLink(t, layers.LinkTypeEthernet, udpIP(t, cli, srv, []byte("hello")))}
	for range 200 { // well beyond one 64 KiB buffer
		frames = append(frames, frames[0])
	}
	capture := pcapFile(t, layers.LinkTypeEthernet, frames...)
	binary.LittleEndian.PutUint32(capture[24+8:], 0x7fffffff)
	_, err := collect(t, Config{}, capture)
	if !errors.Is(err, ErrCorruptCapture) || !strings.Contains(err.Error(), "frame 1 at file offset 24:") {
		t.Fatalf("err %v", err)
	}
	// The third record, after two of 16+len bytes.
	capture = pcapFile(t, layers.LinkTypeEthernet, frames...)
	off := 24 + 2*(16+len(frames[0]))
	binary.LittleEndian.PutUint32(capture[off+8:], 0x7fffffff)
	_, err = collect(t, Config{}, capture)
	if want := "frame 3 at file offset " + strconv.Itoa(off) + ":"; !strings.Contains(fmt.Sprint(err), want) {
		t.Fatalf("err %v, want %q", err, want)
	}
}
