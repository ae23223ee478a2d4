package prudp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// fakeOffload records segmented writes (or refuses them with err) and reads
// nothing; it lets the tests look at the runs rawWrite builds.
type fakeOffload struct {
	writes []segWrite
	err    error
	refuse bool
}

type segWrite struct {
	b    []byte
	size int
	to   netip.AddrPort
}

func (f *fakeOffload) writeSegments(b, _ []byte, size int, to netip.AddrPort) error {
	if f.err != nil {
		return f.err
	}
	f.writes = append(f.writes, segWrite{append([]byte(nil), b...), size, to})
	return nil
}

func (f *fakeOffload) coalesces() bool { return false }

func (f *fakeOffload) read([]byte, []byte) (int, int, netip.AddrPort, error) {
	return 0, 0, netip.AddrPort{}, net.ErrClosed
}

func (f *fakeOffload) refused(error) bool { return f.refuse }

func newOffloadShard(t *testing.T, f *fakeOffload) (*shard, *capture) {
	t.Helper()
	c := &capture{addr: netip.MustParseAddrPort("127.0.0.1:60000"), keep: true}
	cfg := &Config{}
	ep, err := newEndpoint(c, cfg.resolved(), 1)
	if err != nil {
		t.Fatal(err)
	}
	ep.off = f
	ep.segMax.Store(maxSegmentBytes)
	return ep.shards[0], c
}

// datagram i of the test sequences: its size and a recognisable content.
func testDatagram(i, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(i*7 + j)
	}
	binary.BigEndian.PutUint32(b, uint32(i))
	return b
}

// TestSegmentRuns checks which datagrams rawWrite puts in one segmented
// write: only consecutive ones to one peer, every one of the run's size but
// a shorter last, at most maxSegments and maxSegmentBytes; and that what
// reaches the socket, split back at the segment size, is exactly the
// datagrams written, in order.
func TestSegmentRuns(t *testing.T) {
	a := netip.MustParseAddrPort("127.0.0.1:5000")
	b := netip.MustParseAddrPort("127.0.0.1:5001")
	type dg struct {
		size int
		to   netip.AddrPort
	}
	var seq []dg
	for range 3 {
		seq = append(seq, dg{1000, a}) // a run of 3 ...
	}
	seq = append(seq, dg{400, a})  // ... closed by a shorter one
	seq = append(seq, dg{1000, a}) // a new run
	seq = append(seq, dg{1000, b}) // another peer
	seq = append(seq, dg{1000, b})
	seq = append(seq, dg{1200, b}) // larger: a new run
	for range 70 {
		seq = append(seq, dg{100, a}) // more than maxSegments
	}
	for range 60 {
		seq = append(seq, dg{1400, b}) // more than maxSegmentBytes
	}
	seq = append(seq, dg{300, a}) // a lone datagram: a plain write

	f := &fakeOffload{}
	sh, c := newOffloadShard(t, f)
	for i, d := range seq {
		sh.rawWrite(testDatagram(i, d.size), d.to)
	}
	sh.flushWrites()

	// Every segmented write is a valid run; expand all writes back into datagrams.
	var got []datagramOut
	for _, w := range f.writes {
		n := (len(w.b) + w.size - 1) / w.size
		if n < 2 || n > maxSegments || len(w.b) > maxSegmentBytes {
			t.Fatalf("segmented write of %d bytes in %d-byte segments", len(w.b), w.size)
		}
		for p := w.b; len(p) > 0; {
			k := min(w.size, len(p))
			got = append(got, datagramOut{p[:k], w.to})
			p = p[k:]
		}
	}
	// The plain writes went to the capture; merge by the index in each datagram.
	got = append(got, c.out...)
	if len(got) != len(seq) {
		t.Fatalf("%d datagrams reached the socket, want %d", len(got), len(seq))
	}
	byIndex := make([]*datagramOut, len(seq))
	for i := range got {
		idx := binary.BigEndian.Uint32(got[i].b)
		if int(idx) >= len(seq) || byIndex[idx] != nil {
			t.Fatalf("datagram index %d twice or out of range", idx)
		}
		byIndex[idx] = &got[i]
	}
	for i, d := range seq {
		g := byIndex[i]
		if g == nil || g.to != d.to || !bytes.Equal(g.b, testDatagram(i, d.size)) {
			t.Fatalf("datagram %d (%d bytes to %v) did not arrive intact", i, d.size, d.to)
		}
	}
	// 3+1 | 1 plain | 2 | 1 plain | 64 + 6 | 46 + 14 | 1 plain.
	if len(f.writes) != 6 || len(c.out) != 3 {
		t.Errorf("%d segmented and %d plain writes, want 6 and 3", len(f.writes), len(c.out))
	}
}

// TestSegmentRunsKeepOrder checks the order datagrams reach the socket in
// when runs and plain writes mix (a plain write ends the run before it).
func TestSegmentRunsKeepOrder(t *testing.T) {
	a := netip.MustParseAddrPort("127.0.0.1:5000")
	f := &fakeOffload{}
	sh, c := newOffloadShard(t, f)
	var log []int // index of each datagram as it reaches the fake socket
	// drain moves what reached the socket since the last call into log: the
	// segmented writes, then the plain ones (within one rawWrite a segmented
	// write, the run it ends, always precedes a plain one).
	drain := func() {
		for _, w := range f.writes {
			for p := w.b; len(p) > 0; p = p[min(w.size, len(p)):] {
				log = append(log, int(binary.BigEndian.Uint32(p)))
			}
		}
		for _, d := range c.out {
			log = append(log, int(binary.BigEndian.Uint32(d.b)))
		}
		f.writes, c.out = f.writes[:0], c.out[:0]
	}
	sizes := []int{800, 800, 800, 9000, 800, 800, 500, 800}
	sh.ep.segMax.Store(5000) // 9000 goes plain
	for i, n := range sizes {
		sh.rawWrite(testDatagram(i, n), a)
		drain()
	}
	sh.flushWrites()
	drain()
	if fmt.Sprint(log) != "[0 1 2 3 4 5 6 7]" {
		t.Fatalf("datagrams reached the socket in the order %v", log)
	}
}

// TestSegmentWriteRefused: when the kernel refuses a segmented write (a
// route whose MTU is below the segment size, a device without checksum
// offload), the run's datagrams go out one by one and that size is never
// segmented again; any other error sends them one by one too but keeps the
// offload.
func TestSegmentWriteRefused(t *testing.T) {
	a := netip.MustParseAddrPort("127.0.0.1:5000")
	for _, refuse := range []bool{true, false} {
		f := &fakeOffload{err: errors.New("refused"), refuse: refuse}
		sh, c := newOffloadShard(t, f)
		for i := range 5 {
			sh.rawWrite(testDatagram(i, 1000), a)
		}
		sh.flushWrites()
		if len(c.out) != 5 {
			t.Fatalf("refuse=%v: %d datagrams sent one by one, want 5", refuse, len(c.out))
		}
		for i, d := range c.out {
			if !bytes.Equal(d.b, testDatagram(i, 1000)) {
				t.Fatalf("refuse=%v: datagram %d changed", refuse, i)
			}
		}
		want := int32(maxSegmentBytes)
		if refuse {
			want = 999
		}
		if got := sh.ep.segMax.Load(); got != want {
			t.Fatalf("refuse=%v: segMax %d, want %d", refuse, got, want)
		}
		// Smaller datagrams are still segmented.
		f.err = nil
		for i := range 3 {
			sh.rawWrite(testDatagram(i, 500), a)
		}
		sh.flushWrites()
		if len(f.writes) != 1 {
			t.Fatalf("refuse=%v: %d segmented writes of smaller datagrams, want 1", refuse, len(f.writes))
		}
	}
}

// TestOffloadLoopback sends 32 distinct 64 KiB messages over real loopback
// UDP (V1: RC4 and signatures; and V0) with the offload on and off, and
// checks that every one arrives intact and in order, and that with the
// offload the V1 fragments left in segmented writes and arrived in coalesced
// reads, while V0 (packets without a size field) never segments.
func TestOffloadLoopback(t *testing.T) {
	probe, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	supported := newOffload(probe) != nil
	probe.Close()
	for _, d := range []Dialect{NEXV1, NEXV0} {
		for _, off := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v/offload=%v", d, off), func(t *testing.T) {
				if off && !supported {
					t.Skip("no UDP segmentation offload on this platform")
				}
				testOffloadLoopback(t, Config{Dialect: d, DisableOffload: !off}, off && d == NEXV1)
			})
		}
	}
}

func testOffloadLoopback(t *testing.T, cfg Config, off bool) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	setSocketBuffers(pc)
	const n = 32
	msg := func(i int) []byte { return testDatagram(i, 64<<10) }
	got := make(chan []byte, n)
	srv := &Server{Config: cfg, Handler: HandlerFunc(func(c *Conn, m Message) { got <- m.Data })}
	go srv.Serve(pc)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, pc.LocalAddr().String(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Abort()
	for i := range n {
		if err := c.Send(ctx, 0, msg(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		select {
		case m := <-got:
			if !bytes.Equal(m, msg(i)) {
				t.Fatalf("message %d arrived changed (%d bytes, index %d)", i, len(m), binary.BigEndian.Uint32(m))
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d messages arrived", i, n)
		}
	}
	seg, gro := c.sh.ep.segmentedWrites.Load(), srv.ep.coalescedReads.Load()
	t.Logf("segmented writes %d, coalesced reads %d, retransmits %d", seg, gro, c.Stats().Retransmits)
	if off && (seg == 0 || gro == 0) {
		t.Errorf("offload on: %d segmented writes, %d coalesced reads; want both > 0", seg, gro)
	}
	if off && (!srv.ep.off.coalesces() || c.sh.ep.off.coalesces()) {
		// A client's reader would hold a 64 KiB buffer per connection.
		t.Errorf("coalesced reads on the server %v, on the client %v; want true, false", srv.ep.off.coalesces(), c.sh.ep.off.coalesces())
	}
	if !off && seg+gro != 0 {
		t.Errorf("offload off: %d segmented writes, %d coalesced reads", seg, gro)
	}
}
