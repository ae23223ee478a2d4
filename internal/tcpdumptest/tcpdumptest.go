// Package tcpdumptest runs tcpdump on the loopback interface for the tests that
// capture gamewire's own traffic (dissect's tcpdump tests, the interop module's
// nex-go and NintendoClients captures).
//
// A capture tool that runs beside the traffic races it twice: at the start (was
// tcpdump listening when the first packet went out?) and at the end (has tcpdump
// read every packet the kernel queued for it before it is told to stop?). tcpdump
// reads its ring buffer only when it is scheduled, and on SIGINT it breaks out of
// its loop without reading what is still queued; on a busy machine the end race
// lost whole conversations ("0 packets captured; 232 packets received by filter").
// Session closes both races with events, not sleeps: tcpdump writes the capture
// to a pipe packet by packet (-U), and a marker datagram, sent on loopback to a
// socket of the session's own that the capture filter also takes, is looked for
// in that stream. Start returns once the start marker has come through (tcpdump
// captures); Stop sends a stop marker and signals tcpdump only once that marker
// has come through. The kernel queues packets for tcpdump in the order they pass
// the capture point, before delivering them, and tcpdump reads that queue in
// order, so every packet that reached its destination socket before Stop was
// called is in the capture (on Linux's loopback also every packet whose send had
// returned: the kernel delivers it within the send, unless it is so loaded that
// it defers the delivery). The markers are taken out of the capture Stop returns.
//
// Start skips the test when tcpdump is missing or may not capture (it needs root
// or CAP_NET_RAW), except under CI (CI=true), where the test fails.
package tcpdumptest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds on the waits (a busy CI machine is slow, but a stuck tcpdump must not
// hang the test run).
const (
	startTimeout  = 30 * time.Second // tcpdump listening and the start marker seen
	markerTimeout = 60 * time.Second // the stop marker seen
	exitTimeout   = 15 * time.Second // tcpdump exits after SIGINT
	markerResend  = time.Second      // a marker is sent again (the kernel may drop one) this often
	maxRecord     = 1 << 20          // a pcap record larger than this is an error, not an allocation
)

// Session is tcpdump capturing on lo until Stop.
type Session struct {
	cmd    *exec.Cmd
	marker *net.UDPConn
	port   uint16 // the marker socket's port

	markers   chan string   // marker payloads as they come through the capture
	readDone  chan struct{} // the capture reader has finished (tcpdump closed its standard output)
	errDone   chan struct{} // the standard error reader has finished
	listening chan struct{} // tcpdump said "listening on"

	mu      sync.Mutex
	stderr  strings.Builder
	capture bytes.Buffer // the pcap stream, markers left out
	readErr error
	stopped bool
}

// Start runs tcpdump on lo with the capture filter (tcpdump's filter syntax) and
// returns once tcpdump is capturing.
func Start(t testing.TB, filter string) *Session {
	t.Helper()
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		skipOrFail(t, fmt.Sprintf("tcpdump is required: %v", err))
	}
	marker, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{
		marker:    marker,
		port:      uint16(marker.LocalAddr().(*net.UDPAddr).Port),
		markers:   make(chan string, 256),
		readDone:  make(chan struct{}),
		errDone:   make(chan struct{}),
		listening: make(chan struct{}),
	}
	go s.drainMarkerSocket()
	full := fmt.Sprintf("(%s) or (udp port %d)", filter, s.port)
	// -U writes each packet to the pipe as it is read; --immediate-mode hands each
	// packet to tcpdump as it arrives; -B 65536 (KiB) is a kernel buffer that a short
	// burst on a busy machine does not overflow.
	s.cmd = exec.Command(bin, "-i", "lo", "--immediate-mode", "-B", "65536", "-U", "-n", "-s", "0", "-w", "-", full)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		marker.Close()
		t.Fatal(err)
	}
	go s.readStderr(stderr)
	go s.readCapture(stdout)
	t.Cleanup(s.kill)

	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	select {
	case <-s.listening:
	case <-s.errDone: // tcpdump exited (or closed stderr) without listening
		s.kill()
		skipOrFail(t, "tcpdump could not capture on lo: "+s.Stderr())
	case <-deadline.C:
		s.kill()
		t.Fatalf("tcpdump did not start listening within %v: %s", startTimeout, s.Stderr())
	}
	if err := s.await("start", deadline.C); err != nil {
		s.kill()
		t.Fatalf("tcpdump listens but its capture does not show the start marker: %v; tcpdump said: %s", err, s.Stderr())
	}
	return s
}

// Stop waits until tcpdump has written every packet sent before the call, stops
// it, and returns the capture (a pcap file, without the session's markers).
func (s *Session) Stop(t testing.TB) []byte {
	t.Helper()
	deadline := time.NewTimer(markerTimeout)
	defer deadline.Stop()
	markerErr := s.await("stop", deadline.C)
	s.cmd.Process.Signal(syscall.SIGINT)
	exit := time.NewTimer(exitTimeout)
	defer exit.Stop()
	for _, done := range []chan struct{}{s.readDone, s.errDone} {
		select {
		case <-done:
		case <-exit.C:
			s.kill()
			t.Fatalf("tcpdump did not exit within %v of SIGINT: %s", exitTimeout, s.Stderr())
		}
	}
	s.kill() // waits for the exit and closes the marker socket
	t.Logf("tcpdump: %s", strings.ReplaceAll(strings.TrimSpace(s.Stderr()), "\n", "; "))
	if markerErr != nil {
		t.Fatalf("tcpdump's capture does not show the stop marker: %v; tcpdump said: %s", markerErr, s.Stderr())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil {
		t.Fatalf("tcpdump's capture stream: %v", s.readErr)
	}
	return bytes.Clone(s.capture.Bytes())
}

// Dropped is the number of packets tcpdump said the kernel dropped (known after Stop).
func (s *Session) Dropped() int {
	for _, line := range strings.Split(s.Stderr(), "\n") {
		if n, ok := strings.CutSuffix(strings.TrimSpace(line), " packets dropped by kernel"); ok {
			v, _ := strconv.Atoi(n)
			return v
		}
	}
	return 0
}

// Stderr is what tcpdump wrote to its standard error so far.
func (s *Session) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// await sends the marker name and waits until it comes through the capture,
// sending it again every markerResend in case the kernel dropped it.
func (s *Session) await(name string, deadline <-chan time.Time) error {
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(s.port)}
	payload := []byte(markerPrefix + name)
	resend := time.NewTicker(markerResend)
	defer resend.Stop()
	if _, err := s.marker.WriteToUDP(payload, to); err != nil {
		return fmt.Errorf("send marker %q: %w", name, err)
	}
	for {
		select {
		case m := <-s.markers:
			if m == name {
				return nil
			}
		case <-resend.C:
			if _, err := s.marker.WriteToUDP(payload, to); err != nil {
				return fmt.Errorf("send marker %q: %w", name, err)
			}
		case <-s.readDone:
			return fmt.Errorf("marker %q: tcpdump closed its capture stream first", name)
		case <-deadline:
			return fmt.Errorf("marker %q: not seen in time", name)
		}
	}
}

// markerPrefix starts every marker datagram's payload.
const markerPrefix = "gamewire tcpdumptest marker "

// drainMarkerSocket reads the markers the socket sends itself, so none is refused.
func (s *Session) drainMarkerSocket() {
	buf := make([]byte, 256)
	for {
		if _, _, err := s.marker.ReadFromUDP(buf); err != nil {
			return
		}
	}
}

// kill ends tcpdump if it still runs, waits for it and its readers, and closes the
// marker socket. It runs from Stop and from the test's cleanup.
func (s *Session) kill() {
	s.mu.Lock()
	stopped := s.stopped
	s.stopped = true
	s.mu.Unlock()
	if stopped {
		return
	}
	s.cmd.Process.Kill() // nothing if it has exited already
	<-s.readDone
	<-s.errDone
	s.cmd.Wait()
	s.marker.Close()
}

func (s *Session) readStderr(r io.Reader) {
	defer close(s.errDone)
	sc := bufio.NewScanner(r)
	said := false
	for sc.Scan() {
		s.mu.Lock()
		s.stderr.WriteString(sc.Text() + "\n")
		s.mu.Unlock()
		if !said && strings.Contains(sc.Text(), "listening on") {
			close(s.listening)
			said = true
		}
	}
}

// readCapture copies the pcap stream into s.capture, leaving out and reporting
// the marker datagrams. It reads to the end so tcpdump never blocks on the pipe.
func (s *Session) readCapture(r io.Reader) {
	defer close(s.readDone)
	err := s.copyCapture(bufio.NewReaderSize(r, 64<<10))
	if err != nil {
		io.Copy(io.Discard, r)
		s.mu.Lock()
		s.readErr = err
		s.mu.Unlock()
	}
}

func (s *Session) copyCapture(r io.Reader) error {
	var hdr [24]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil // tcpdump wrote nothing (it could not capture: stderr says why)
		}
		return fmt.Errorf("pcap header: %w", err)
	}
	var order binary.ByteOrder
	switch binary.LittleEndian.Uint32(hdr[:4]) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		order = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		order = binary.BigEndian
	default:
		return fmt.Errorf("pcap header: magic %x is not pcap's", hdr[:4])
	}
	link := order.Uint32(hdr[20:24]) & 0x0fffffff
	s.mu.Lock()
	s.capture.Write(hdr[:])
	s.mu.Unlock()
	var rec [16]byte
	data := make([]byte, 0, 64<<10)
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("pcap record %d header: %w", n, err)
		}
		caplen := order.Uint32(rec[8:12])
		if caplen > maxRecord {
			return fmt.Errorf("pcap record %d: %d bytes (more than %d)", n, caplen, maxRecord)
		}
		data = slices.Grow(data[:0], int(caplen))[:caplen]
		if _, err := io.ReadFull(r, data); err != nil {
			return fmt.Errorf("pcap record %d: %w", n, err)
		}
		if name, ok := s.markerIn(link, data); ok {
			select {
			case s.markers <- name:
			default: // a waiter reads them; only stale resends can fill the channel
			}
			continue
		}
		s.mu.Lock()
		s.capture.Write(rec[:])
		s.capture.Write(data)
		s.mu.Unlock()
	}
}

// errNotMarker is what markerIn's parse says of any other packet.
var errNotMarker = errors.New("not a marker")

// markerIn reports whether a captured frame is a marker datagram of this session
// (UDP from and to its marker port), and the marker's name.
func (s *Session) markerIn(link uint32, frame []byte) (string, bool) {
	ip, err := ipv4Of(link, frame)
	if err != nil || len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != 17 {
		return "", false
	}
	ihl := int(ip[0]&0x0f) * 4
	if ihl < 20 || len(ip) < ihl+8 {
		return "", false
	}
	udp := ip[ihl:]
	if binary.BigEndian.Uint16(udp[0:2]) != s.port || binary.BigEndian.Uint16(udp[2:4]) != s.port {
		return "", false
	}
	name, ok := strings.CutPrefix(string(udp[8:]), markerPrefix)
	return name, ok
}

// ipv4Of returns the IPv4 packet in a frame of the link types tcpdump uses on lo.
func ipv4Of(link uint32, frame []byte) ([]byte, error) {
	switch link {
	case 1: // LINKTYPE_ETHERNET, Linux's lo
		if len(frame) < 14 || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
			return nil, errNotMarker
		}
		return frame[14:], nil
	case 0: // LINKTYPE_NULL (BSD loopback): a host-order family word
		if len(frame) < 4 {
			return nil, errNotMarker
		}
		return frame[4:], nil
	case 101: // LINKTYPE_RAW
		return frame, nil
	case 113: // LINKTYPE_LINUX_SLL
		if len(frame) < 16 || binary.BigEndian.Uint16(frame[14:16]) != 0x0800 {
			return nil, errNotMarker
		}
		return frame[16:], nil
	}
	return nil, errNotMarker
}

// skipOrFail skips the test, or fails it under CI, where tcpdump must work.
func skipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
