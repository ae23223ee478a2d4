package tcpdumptest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestStopKeepsEveryPacket sends a burst of datagrams and stops at once: tcpdump
// has had no time to read them when Stop is called, which is the race that once
// lost a whole conversation (SIGINT makes tcpdump drop what it has not read).
// Every datagram must be in the capture, in order, and no marker.
func TestStopKeepsEveryPacket(t *testing.T) {
	a, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n, window = 300, 32 // at most window datagrams in flight: the socket buffer holds them
	arrived := make(chan struct{}, n)
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := b.ReadFromUDP(buf); err != nil {
				return
			}
			arrived <- struct{}{}
		}
	}()
	wait := func() {
		t.Helper()
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("a datagram did not arrive on loopback within 30 s")
		}
	}
	td := Start(t, fmt.Sprintf("udp port %d", b.LocalAddr().(*net.UDPAddr).Port))
	var sent [][]byte
	for i := range n {
		p := fmt.Appendf(nil, "datagram %04d %s", i, bytes.Repeat([]byte{'x'}, i%700))
		sent = append(sent, p)
		if _, err := a.WriteToUDP(p, b.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		if i >= window {
			wait()
		}
	}
	for range min(n, window) { // every datagram has reached its socket, so it has passed the capture
		wait()
	}
	capture := td.Stop(t)
	if d := td.Dropped(); d != 0 {
		t.Skipf("the kernel dropped %d packets (machine too busy): %s", d, td.Stderr())
	}
	got := udpPayloads(t, capture)
	if len(got) != n {
		t.Fatalf("%d datagrams in the capture, %d sent; tcpdump said: %s", len(got), n, td.Stderr())
	}
	for i := range got {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("datagram %d of the capture is %.20q, sent %.20q", i, got[i], sent[i])
		}
	}
}

// udpPayloads returns the UDP payloads of an Ethernet pcap, failing on a marker.
func udpPayloads(t *testing.T, capture []byte) [][]byte {
	t.Helper()
	if len(capture) < 24 || binary.LittleEndian.Uint32(capture) != 0xa1b2c3d4 {
		t.Fatalf("not a little-endian pcap: % x", capture[:min(len(capture), 24)])
	}
	var out [][]byte
	for rest := capture[24:]; len(rest) > 0; {
		if len(rest) < 16 {
			t.Fatalf("truncated record header")
		}
		n := binary.LittleEndian.Uint32(rest[8:12])
		frame := rest[16 : 16+n]
		rest = rest[16+n:]
		ip := frame[14:]
		udp := ip[int(ip[0]&0x0f)*4:]
		payload := udp[8:binary.BigEndian.Uint16(udp[4:6])]
		if bytes.HasPrefix(payload, []byte(markerPrefix)) {
			t.Fatalf("a marker is left in the capture: %q", payload)
		}
		out = append(out, payload)
	}
	return out
}

// TestMarkersLeftOut runs the capture reader on a pcap stream made here (no
// tcpdump): the session's markers are reported and left out, other records are
// kept byte for byte, and a record claiming more than maxRecord bytes is an error.
func TestMarkersLeftOut(t *testing.T) {
	const port = 40000
	s := &Session{port: port, markers: make(chan string, 8), readDone: make(chan struct{})}
	frame := func(src, dst uint16, payload string) []byte {
		f := make([]byte, 14, 64)
		binary.BigEndian.PutUint16(f[12:], 0x0800)
		ip := make([]byte, 20)
		ip[0], ip[9] = 0x45, 17
		binary.BigEndian.PutUint16(ip[2:], uint16(min(20+8+len(payload), 0xffff)))
		udp := make([]byte, 8)
		binary.BigEndian.PutUint16(udp[0:], src)
		binary.BigEndian.PutUint16(udp[2:], dst)
		binary.BigEndian.PutUint16(udp[4:], uint16(min(8+len(payload), 0xffff)))
		return append(append(append(f, ip...), udp...), payload...)
	}
	record := func(f []byte) []byte {
		h := make([]byte, 16)
		binary.LittleEndian.PutUint32(h[8:], uint32(len(f)))
		binary.LittleEndian.PutUint32(h[12:], uint32(len(f)))
		return append(h, f...)
	}
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint32(hdr[20:], 1)
	keep1 := record(frame(1234, 5678, string(bytes.Repeat([]byte("large "), 20000)))) // more than the reader's first buffer
	keep2 := record(frame(port, 5678, markerPrefix+"stop"))                           // not to itself: not a marker
	stream := bytes.Join([][]byte{hdr, record(frame(port, port, markerPrefix+"start")), keep1, keep2,
		record(frame(port, port, markerPrefix+"stop"))}, nil)
	if err := s.copyCapture(bytes.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join([][]byte{hdr, keep1, keep2}, nil); !bytes.Equal(s.capture.Bytes(), want) {
		t.Fatalf("capture\n% x\nwant\n% x", s.capture.Bytes(), want)
	}
	for _, want := range []string{"start", "stop"} {
		if got := <-s.markers; got != want {
			t.Fatalf("marker %q, want %q", got, want)
		}
	}

	huge := make([]byte, 16)
	binary.LittleEndian.PutUint32(huge[8:], maxRecord+1)
	s = &Session{port: port, markers: make(chan string, 8)}
	if err := s.copyCapture(bytes.NewReader(append(bytes.Clone(hdr), huge...))); err == nil {
		t.Fatal("a record of more than maxRecord bytes was accepted")
	}
}
