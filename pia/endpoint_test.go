package pia

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

const testWait = 10 * time.Second // failure guard only; nothing asserts timing

func listenLoopback(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func endpointNetwork(v Version) Network {
	if v.Major >= 6 {
		return NetworkNPLN
	}
	return NetworkLDN
}

func newTestEndpoint(t *testing.T, v Version, mac byte, vid uint32) *Endpoint {
	t.Helper()
	e, err := NewEndpoint(listenLoopback(t), EndpointConfig{
		Version:     v,
		NonceParams: NonceParams{Network: endpointNetwork(v), NetworkID: 0x19EC1D90, GatheringID: 77},
		SessionKey:  testKey,
		Source:      Source{MAC: [6]byte{2, 0, 0, 0, 0, mac}},
		VariableID:  vid,
		ConstantID:  uint64(vid),
		MTU:         300,
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func serve(t *testing.T, e *Endpoint) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// TestEndpointsExchange runs two endpoints on loopback for every test version: A
// sends bundled messages to B, B answers each, and both measure RTT.
func TestEndpointsExchange(t *testing.T) {
	for _, v := range testVersions {
		t.Run(v.String(), func(t *testing.T) {
			a := newTestEndpoint(t, v, 0xA, 0x1111)
			b := newTestEndpoint(t, v, 0xB, 0x2222)
			pb := a.AddPeer(b.LocalAddr(), PeerConfig{MAC: [6]byte{2, 0, 0, 0, 0, 0xB}, VariableID: 0x2222})
			pa := b.AddPeer(a.LocalAddr(), PeerConfig{MAC: [6]byte{2, 0, 0, 0, 0, 0xA}, VariableID: 0x1111})

			typ := uint16(0x68)
			if v.MessageLayout() == MessageUpTo5_4 {
				typ = 0x2000
			}
			gotB := make(chan string, 100)
			gotA := make(chan string, 100)
			b.Handle(typ, 5, HandlerFunc(func(from *Peer, m *Message) {
				gotB <- string(m.Payload)
				if err := b.Send(from, Message{ProtocolType: typ, ProtocolPort: 5, Payload: append([]byte("re:"), m.Payload...)}); err != nil {
					t.Error(err)
				}
				if err := b.FlushPeer(from); err != nil {
					t.Error(err)
				}
			}))
			a.Handle(typ, 5, HandlerFunc(func(from *Peer, m *Message) { gotA <- string(m.Payload) }))
			serve(t, a)
			serve(t, b)

			const n = 12
			for i := 0; i < n; i++ {
				m := Message{ProtocolType: typ, ProtocolPort: 5, Payload: fmt.Appendf(nil, "msg %02d %s", i, "payload-padding-to-40-bytes.....")}
				if i == n-1 {
					m.Flags = v.MessageLayout().Flags().NoBundle
				}
				if err := a.Send(pb, m); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for i := 0; i < n; i++ {
				select {
				case s := <-gotB:
					seen[s] = true
				case <-time.After(testWait):
					t.Fatalf("B received %d of %d messages; stats A %+v B %+v", i, n, a.Stats(), b.Stats())
				}
			}
			if len(seen) != n {
				t.Fatalf("B saw %d distinct messages, want %d", len(seen), n)
			}
			for i := 0; i < n; i++ {
				select {
				case <-gotA:
				case <-time.After(testWait):
					t.Fatalf("A received %d of %d answers", i, n)
				}
			}
			// 12 messages of ~48 bytes with MTU 300: bundled into a few packets, the
			// no-bundle message alone.
			if out := a.Stats().PacketsOut; out < 3 || out >= n {
				t.Fatalf("A sent %d packets for %d messages: not bundled", out, n)
			}
			for i := 0; i < 5; i++ {
				if err := a.Ping(pb); err != nil {
					t.Fatal(err)
				}
				if err := b.Ping(pa); err != nil {
					t.Fatal(err)
				}
			}
			waitRTT(t, pb, 5)
			waitRTT(t, pa, 5)
			if s := b.Stats(); len(s.Drops) != 0 {
				t.Fatalf("B dropped: %v", s.Drops)
			}
			if s := a.Stats(); len(s.Drops) != 0 {
				t.Fatalf("A dropped: %v", s.Drops)
			}
		})
	}
}

func waitRTT(t *testing.T, p *Peer, samples int) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		rtt, n := p.RTT()
		if n >= samples {
			if rtt < 0 {
				t.Fatalf("negative RTT %v", rtt)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no RTT sample after %v", testWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestEndpointDropsTamperedTruncatedReplayed feeds B a captured packet from A
// directly, then altered copies, and checks each is dropped with its reason.
func TestEndpointDropsTamperedTruncatedReplayed(t *testing.T) {
	for _, v := range []Version{{5, 6}, {5, 11}, {5, 27}, {6, 16}} {
		t.Run(v.String(), func(t *testing.T) {
			a := newTestEndpoint(t, v, 0xA, 0x1111)
			b := newTestEndpoint(t, v, 0xB, 0x2222)
			sniff := listenLoopback(t)
			snAddr := sniff.LocalAddr().(*net.UDPAddr).AddrPort()
			pb := a.AddPeer(snAddr, PeerConfig{VariableID: 0x2222})
			b.AddPeer(a.LocalAddr(), PeerConfig{MAC: [6]byte{2, 0, 0, 0, 0, 0xA}, VariableID: 0x1111})
			var mu sync.Mutex
			var got []string
			b.Handle(0x68, 5, HandlerFunc(func(_ *Peer, m *Message) {
				mu.Lock()
				got = append(got, string(m.Payload))
				mu.Unlock()
			}))
			if v.MessageLayout() == MessageUpTo5_4 {
				t.Fatal("use a version with 8-bit protocol types")
			}
			capture := func(payload string) []byte {
				if err := a.Send(pb, Message{ProtocolType: 0x68, ProtocolPort: 5, Payload: []byte(payload)}); err != nil {
					t.Fatal(err)
				}
				if err := a.FlushPeer(pb); err != nil {
					t.Fatal(err)
				}
				return sniffPacket(t, sniff)
			}
			from := a.LocalAddr()
			p1 := capture("one")
			p2 := capture("two")

			b.HandlePacket(p1, from)
			b.HandlePacket(p1, from) // replay
			tampered := append([]byte(nil), p2...)
			tampered[len(tampered)-1] ^= 0x40 // last byte: ciphertext or HMAC
			b.HandlePacket(tampered, from)
			b.HandlePacket(p2[:len(p2)-3], from) // truncated
			b.HandlePacket(p2[:3], from)         // truncated inside the magic
			b.HandlePacket(p2, from)
			b.HandlePacket(p2, from) // replay
			// A replay with an edited (unauthenticated) packet id is caught by its nonce.
			if v.HeaderLayout() != HeaderUpTo5_6 {
				edited := append([]byte(nil), p1...)
				off := map[HeaderLayout]int{Header5_11: 7, Header5_27: 14, Header6_16: 10}[v.HeaderLayout()]
				edited[off] += 100
				b.HandlePacket(edited, from)
			}
			b.HandlePacket(p1, netAddr(t, "127.0.0.1:9")) // unknown peer

			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(got) != "[one two]" {
				t.Fatalf("delivered %q, want [one two]", got)
			}
			wantReplay := uint64(2)
			if v.HeaderLayout() != HeaderUpTo5_6 {
				wantReplay = 3
			}
			if b.Drops(DropReplay) != wantReplay {
				t.Errorf("replay drops %d, want %d", b.Drops(DropReplay), wantReplay)
			}
			if b.Drops(DropAuth) < 1 {
				t.Errorf("auth drops %d, want >= 1 (tampered)", b.Drops(DropAuth))
			}
			if b.Drops(DropAuth)+b.Drops(DropMalformed) != 3 {
				t.Errorf("auth %d + malformed %d drops, want 3 (tampered, two truncated)", b.Drops(DropAuth), b.Drops(DropMalformed))
			}
			if b.Drops(DropUnknownPeer) != 1 {
				t.Errorf("unknown-peer drops %d, want 1", b.Drops(DropUnknownPeer))
			}
		})
	}
}

func TestListen(t *testing.T) {
	e, err := Listen("127.0.0.1:0", EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLAN}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if a := e.LocalAddr(); !a.Addr().IsLoopback() || a.Port() == 0 {
		t.Fatalf("bound %v", a)
	}
	if _, err := Listen("127.0.0.1:0", EndpointConfig{}); err == nil {
		t.Fatal("endpoint without a version accepted")
	}
}

func TestEndpointRefusesOversizedMessage(t *testing.T) {
	a := newTestEndpoint(t, Version{5, 27}, 1, 1)
	p := a.AddPeer(netAddr(t, "127.0.0.1:9"), PeerConfig{})
	if err := a.Send(p, Message{ProtocolType: 0x68, Payload: make([]byte, 400)}); err == nil {
		t.Fatal("message above the MTU accepted")
	}
}

func TestReplayWindow(t *testing.T) {
	var p Peer
	h := Header{Layout: Header5_11}
	accept := func(id uint16) bool { h.PacketID = id; return p.acceptLocked(&h) }
	for _, tc := range []struct {
		id   uint16
		want bool
	}{{10, true}, {10, false}, {12, true}, {11, true}, {11, false}, {9, true}, {200, true}, {12, false}, {199, true}, {65535, false}, {30200, true}, {62000, true}, {3, true}, {3, false}, {62000, false}} {
		if got := accept(tc.id); got != tc.want {
			t.Fatalf("packet id %d: accepted %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestRTTSpecExample reproduces the worked example of "RTT Calculation" in
// the Pia Protocol wiki: A's timer reads 234 when it sends, the packet takes 2 ms, B
// answers 10 ms later with 244, which reaches A 2 ms later when A reads 248: 4 ms.
func TestRTTSpecExample(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := SessionTimer{Start: t0.Add(-234 * time.Millisecond)}
	sendA := t0
	if a.Value(sendA) != 234 {
		t.Fatalf("A's timer %d, want 234", a.Value(sendA))
	}
	var bSeesA PeerClock
	arriveB := sendA.Add(2 * time.Millisecond)
	bSeesA.Observe(a.Value(sendA), arriveB)
	sendB := arriveB.Add(10 * time.Millisecond)
	rttField, ok := bSeesA.Estimate(sendB)
	if !ok || rttField != 244 {
		t.Fatalf("B's RTT timer field %d, want 244", rttField)
	}
	arriveA := sendB.Add(2 * time.Millisecond)
	if a.Value(arriveA) != 248 {
		t.Fatalf("A's timer at arrival %d, want 248", a.Value(arriveA))
	}
	if got := RTTFromTimers(a.Value(arriveA), rttField); got != 4*time.Millisecond {
		t.Fatalf("RTT %v, want 4ms", got)
	}
	// Wrapping: the 16-bit timers wrap without disturbing the difference.
	if got := RTTFromTimers(3, 65533); got != 6*time.Millisecond {
		t.Fatalf("wrapped RTT %v, want 6ms", got)
	}
}

func TestRTTEstimatorConverges(t *testing.T) {
	var r RTTEstimator
	r.Add(100 * time.Millisecond)
	for i := 0; i < 60; i++ {
		r.Add(20 * time.Millisecond)
	}
	if d := r.SRTT() - 20*time.Millisecond; d < 0 || d > time.Millisecond {
		t.Fatalf("SRTT %v after 60 samples of 20ms, want within 1ms of 20ms", r.SRTT())
	}
	if r.RTTVar() > time.Millisecond {
		t.Fatalf("RTTVAR %v, want under 1ms", r.RTTVar())
	}
}

func netAddr(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEndpointInflatesAndFlushesPeriodically sends a zlib-compressed message through
// an endpoint whose Serve flushes on its own, and a message to a peer added only
// by its first packet (AcceptUnknownPeers).
func TestEndpointInflatesAndFlushesPeriodically(t *testing.T) {
	v := Version{6, 16}
	mk := func(accept bool) *Endpoint {
		e, err := NewEndpoint(listenLoopback(t), EndpointConfig{
			Version: v, NonceParams: NonceParams{Network: NetworkLAN}, SessionKey: testKey,
			FlushInterval: time.Millisecond, AcceptUnknownPeers: accept,
		})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := mk(false), mk(true)
	pb := a.AddPeer(b.LocalAddr(), PeerConfig{})
	got := make(chan string, 1)
	b.Handle(0x68, 9, HandlerFunc(func(_ *Peer, m *Message) { got <- string(m.Payload) }))
	serve(t, a)
	serve(t, b)
	var m Message
	m.ProtocolType, m.ProtocolPort = 0x68, 9
	text := "compressed compressed compressed compressed"
	if err := m.Deflate([]byte(text), ZlibFlag(v)); err != nil {
		t.Fatal(err)
	}
	if err := a.Send(pb, m); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != text {
			t.Fatalf("delivered %q, want the inflated text", s)
		}
	case <-time.After(testWait):
		t.Fatalf("nothing delivered; stats A %+v B %+v", a.Stats(), b.Stats())
	}
	if _, ok := b.Peer(a.LocalAddr()); !ok {
		t.Fatal("B did not add A as a peer")
	}
}

// TestEndpointDropsPartial: the endpoint drops a packet whose messages break, as
// consoles do, delivers none of it and counts it under DropMessages.
func TestEndpointDropsPartial(t *testing.T) {
	e, err := NewEndpoint(listenLoopback(t), EndpointConfig{Version: Version{5, 27}, NonceParams: NonceParams{Network: NetworkLAN}})
	if err != nil {
		t.Fatal(err)
	}
	from := netip.MustParseAddrPort("127.0.0.1:9")
	e.AddPeer(from, PeerConfig{})
	delivered := 0
	e.Handle(0x68, 1, HandlerFunc(func(*Peer, *Message) { delivered++ }))
	e.HandlePacket(partialPacket(t), from)
	if delivered != 0 || e.Drops(DropMessages) != 1 || e.Drops(DropMalformed) != 0 || DropMessages.String() != "messages" {
		t.Fatalf("delivered %d, drops %v", delivered, e.Stats().Drops)
	}
}
