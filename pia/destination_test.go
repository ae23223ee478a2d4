package pia

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

// destVersions are versions of every message layout, each of which carries a
// destination (32-bit up to 5.4, 64-bit later; inherited from the previous message
// from 5.18).
var destVersions = []Version{{5, 4}, {5, 8}, {5, 11}, {5, 14}, {5, 18}, {5, 27}}

// meshStation is one endpoint of a test mesh and what its handler received.
type meshStation struct {
	e     *Endpoint
	cid   uint64
	index uint8
	mac   [6]byte

	mu  sync.Mutex
	got []string // payloads, with "!relayed" appended when FlagRelayed is set
	src []uint64 // source constant ids of the received messages
}

func (s *meshStation) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// destType is the protocol type the mesh tests use: 16-bit up to 5.4.
func destType(v Version) uint16 {
	if v.MessageLayout() == MessageUpTo5_4 {
		return 0x2000
	}
	return 0x68
}

func newMeshStation(t *testing.T, v Version, n int, relay bool) *meshStation {
	t.Helper()
	s := &meshStation{cid: uint64(0x1000 * (n + 1)), index: uint8(n), mac: [6]byte{2, 0, 0, 0, 0, byte(0xA + n)}}
	e, err := NewEndpoint(listenLoopback(t), EndpointConfig{
		Version:      v,
		NonceParams:  NonceParams{Network: endpointNetwork(v), NetworkID: 0x19EC1D90, GatheringID: 77},
		SessionKey:   testKey,
		Source:       Source{MAC: s.mac},
		VariableID:   uint32(0x1111 * (n + 1)),
		ConstantID:   s.cid,
		StationIndex: s.index,
		Relay:        relay,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.e = e
	e.Handle(destType(v), 5, HandlerFunc(func(_ *Peer, m *Message) {
		p := string(m.Payload)
		if m.Flags&v.MessageLayout().Flags().Relayed != 0 {
			p += "!relayed"
		}
		s.mu.Lock()
		s.got = append(s.got, p)
		s.src = append(s.src, m.SourceConstantID)
		s.mu.Unlock()
	}))
	return s
}

// newMesh returns n stations (constant ids 0x1000, 0x2000, ..., station indexes
// 0, 1, ...) that know each other as peers when full is set, or only station 0
// and station i otherwise. peers[i][j] is station i's peer for station j.
func newMesh(t *testing.T, v Version, n int, full bool, relay func(i int) bool) ([]*meshStation, [][]*Peer) {
	t.Helper()
	st := make([]*meshStation, n)
	for i := range st {
		st[i] = newMeshStation(t, v, i, relay != nil && relay(i))
	}
	peers := make([][]*Peer, n)
	for i, a := range st {
		peers[i] = make([]*Peer, n)
		for j, b := range st {
			if i == j || (!full && i != 0 && j != 0) {
				continue
			}
			peers[i][j] = a.e.AddPeer(b.e.LocalAddr(), PeerConfig{
				MAC: b.mac, VariableID: uint32(0x1111 * (j + 1)), ConstantID: b.cid, StationIndex: b.index,
			})
		}
	}
	for _, s := range st {
		serve(t, s.e)
	}
	return st, peers
}

// waitUntil polls cond until it holds; the timeout is a failure guard, nothing
// asserts timing.
func waitUntil(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what())
		}
		time.Sleep(time.Millisecond)
	}
}

// waitDelivered waits until s's handler has received n messages and s has
// dropped drops messages for their destination. A station's messages of one
// packet are handled in order, so once the packet's last message is delivered
// the earlier ones were handled too.
func waitDelivered(t *testing.T, s *meshStation, n int, drops uint64) {
	t.Helper()
	waitUntil(t, func() string {
		return fmt.Sprintf("station %d delivered %q, want %d messages; stats %+v", s.index, s.received(), n, s.e.Stats())
	}, func() bool { return len(s.received()) >= n && s.e.Drops(DropDestination) >= drops })
}

// TestEndpointDestinations runs three stations on loopback for every message
// layout: unicast (SendTo), multicast (Multicast, MulticastStations), broadcast,
// no destination, and messages deliberately sent to the wrong station with Send;
// each station must deliver exactly what is addressed to it and count the rest
// under DropDestination.
func TestEndpointDestinations(t *testing.T) {
	for _, v := range destVersions {
		t.Run(v.String(), func(t *testing.T) {
			st, peers := newMesh(t, v, 3, true, nil)
			a, b, c := st[0], st[1], st[2]
			pb, pc := peers[0][1], peers[0][2]
			typ := destType(v)
			msg := func(s string) Message { return Message{ProtocolType: typ, ProtocolPort: 5, Payload: []byte(s)} }
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(a.e.SendTo(pb, msg("unicast-b")))
			must(a.e.SendTo(pc, msg("unicast-c")))
			must(a.e.Multicast([]*Peer{pb, pc}, msg("multicast-bc")))
			must(a.e.MulticastStations(1<<b.index, msg("stations-b"))) // queued for B only
			must(a.e.Broadcast(msg("broadcast")))
			must(a.e.Send(pb, msg("no-destination")))
			// Misaddressed on purpose: sent to C's socket, addressed to B.
			must(a.e.Send(pc, Message{ProtocolType: typ, ProtocolPort: 5, Destination: b.cid, Payload: []byte("unicast-for-b-at-c")}))
			must(a.e.Send(pc, Message{ProtocolType: typ, ProtocolPort: 5, Flags: FlagMulticast, Destination: 1 << b.index, Payload: []byte("multicast-for-b-at-c")}))
			// All-ones unicast destination: no constant id can be it, taken as broadcast.
			must(a.e.Send(pc, Message{ProtocolType: typ, ProtocolPort: 5, Destination: allOnes(a.e.destBits), Payload: []byte("all-ones")}))
			// A relay request addressed to C itself is C's (Relay is off everywhere).
			must(a.e.SendTo(pc, Message{ProtocolType: typ, ProtocolPort: 5, Flags: FlagRelay, Payload: []byte("relay-flag-for-c")}))
			must(a.e.Flush())

			wantB := []string{"broadcast", "multicast-bc", "no-destination", "stations-b", "unicast-b"}
			wantC := []string{"all-ones", "broadcast", "multicast-bc", "relay-flag-for-c", "unicast-c"}
			waitDelivered(t, b, len(wantB), 0)
			waitDelivered(t, c, len(wantC), 2)
			for _, tc := range []struct {
				name  string
				s     *meshStation
				want  []string
				drops uint64
			}{{"B", b, wantB, 0}, {"C", c, wantC, 2}} {
				got := tc.s.received()
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s delivered %q, want %q", tc.name, got, tc.want)
				}
				if d := tc.s.e.Drops(DropDestination); d != tc.drops {
					t.Errorf("%s destination drops %d, want %d; stats %+v", tc.name, d, tc.drops, tc.s.e.Stats())
				}
				if s := tc.s.e.Stats(); s.Drops["destination"] != tc.drops || len(s.Drops) > 1 {
					t.Errorf("%s drops %v, want only destination: %d", tc.name, s.Drops, tc.drops)
				}
			}
			if got := a.received(); len(got) != 0 {
				t.Errorf("A delivered %q, sent nothing to itself", got)
			}
		})
	}
}

// TestEndpointUnknownSelfDeliversAll: a station that knows neither its constant id
// nor its station index (StationIndexInvalid) delivers messages addressed to
// anyone; learning its index with SetStationIndex turns multicast filtering on.
func TestEndpointUnknownSelfDeliversAll(t *testing.T) {
	for _, v := range []Version{{5, 4}, {5, 18}, {5, 27}} {
		t.Run(v.String(), func(t *testing.T) {
			typ := destType(v)
			a := newTestEndpoint(t, v, 0xA, 0x1111)
			b, err := NewEndpoint(listenLoopback(t), EndpointConfig{
				Version:      v,
				NonceParams:  NonceParams{Network: endpointNetwork(v), NetworkID: 0x19EC1D90, GatheringID: 77},
				SessionKey:   testKey,
				Source:       Source{MAC: [6]byte{2, 0, 0, 0, 0, 0xB}},
				VariableID:   0x2222,
				StationIndex: StationIndexInvalid,
			})
			if err != nil {
				t.Fatal(err)
			}
			pb := a.AddPeer(b.LocalAddr(), PeerConfig{MAC: [6]byte{2, 0, 0, 0, 0, 0xB}, VariableID: 0x2222})
			b.AddPeer(a.LocalAddr(), PeerConfig{MAC: [6]byte{2, 0, 0, 0, 0, 0xA}, VariableID: 0x1111})
			var mu sync.Mutex
			var got []string
			b.Handle(typ, 5, HandlerFunc(func(_ *Peer, m *Message) {
				mu.Lock()
				got = append(got, string(m.Payload))
				mu.Unlock()
			}))
			serve(t, a)
			serve(t, b)
			send := func(flags uint8, dest uint64, payload string) {
				t.Helper()
				if err := a.Send(pb, Message{ProtocolType: typ, ProtocolPort: 5, Flags: flags, Destination: dest, Payload: []byte(payload)}); err != nil {
					t.Fatal(err)
				}
				if err := a.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			n := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
			what := func() string { return fmt.Sprintf("%d delivered; stats %+v", n(), b.Stats()) }
			send(0, 0x9999, "unicast-other")
			send(FlagMulticast, 1<<7, "multicast-7")
			waitUntil(t, what, func() bool { return n() >= 2 })
			b.SetStationIndex(3)
			if b.StationIndex() != 3 {
				t.Fatalf("station index %d after SetStationIndex(3)", b.StationIndex())
			}
			send(FlagMulticast, 1<<7, "multicast-7-again") // now for another station
			send(FlagMulticast, 1<<3|1<<7, "multicast-3-7")
			waitUntil(t, what, func() bool { return n() >= 3 && b.Drops(DropDestination) >= 1 })
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"unicast-other", "multicast-7", "multicast-3-7"}; !slices.Equal(got, want) {
				t.Fatalf("delivered %q, want %q", got, want)
			}
			if d := b.Drops(DropDestination); d != 1 {
				t.Fatalf("destination drops %d, want 1", d)
			}
		})
	}
}

// TestAddressed is the receive filter's table: which destinations a station with a
// given constant id and station index takes as its own.
func TestAddressed(t *testing.T) {
	const self = 0x0000_00C0_FFEE_0000
	tests := []struct {
		name    string
		v       Version
		cid     uint64
		index   uint8
		flags   uint8
		dest    uint64
		deliver bool
	}{
		{"unicast to self", Version{5, 27}, self, 1, 0, self, true},
		{"unicast to other", Version{5, 27}, self, 1, 0, self + 1, false},
		{"unicast no destination", Version{5, 27}, self, 1, 0, 0, true},
		{"unicast all ones 64", Version{5, 27}, self, 1, 0, ^uint64(0), true},
		{"unicast low 32 ones is not broadcast in 64-bit", Version{5, 27}, self, 1, 0, 0xFFFFFFFF, false},
		{"unicast self unknown", Version{5, 27}, 0, 1, 0, 0x1234, true},
		{"unicast with relay flag to self", Version{5, 27}, self, 1, FlagRelay, self, true},
		{"unicast with relay flag to other", Version{5, 27}, self, 1, FlagRelay, 0x1234, false},
		{"relayed to self", Version{5, 27}, self, 1, FlagRelayed, self, true},
		{"multicast with own bit", Version{5, 27}, self, 5, FlagMulticast, 1 << 5, true},
		{"multicast without own bit", Version{5, 27}, self, 5, FlagMulticast, 1<<4 | 1<<6, false},
		{"multicast station 0", Version{5, 27}, self, 0, FlagMulticast, 1, true},
		{"multicast station 0 missing", Version{5, 27}, self, 0, FlagMulticast, 2, false},
		{"multicast station 63", Version{5, 27}, self, 63, FlagMulticast, 1 << 63, true},
		{"multicast broadcast bitmap", Version{5, 27}, self, 31, FlagMulticast, BroadcastStations, true},
		{"multicast broadcast bitmap, station 32", Version{5, 27}, self, 32, FlagMulticast, BroadcastStations, false},
		{"multicast empty bitmap", Version{5, 27}, self, 5, FlagMulticast, 0, true},
		{"multicast index invalid", Version{5, 27}, self, StationIndexInvalid, FlagMulticast, 1 << 4, true},
		{"multicast index host", Version{5, 27}, self, StationIndexHost, FlagMulticast, 1 << 4, true},
		{"multicast index broadcast", Version{5, 27}, self, StationIndexBroadcast, FlagMulticast, 1 << 4, true},
		{"multicast index beyond 64 bits", Version{5, 27}, self, 100, FlagMulticast, 1 << 4, true},
		{"multicast is judged by bitmap, not constant id", Version{5, 27}, self, 2, FlagMulticast, self, false},
		{"5.4 unicast to self", Version{5, 4}, 0xC0FFEE, 1, 0, 0xC0FFEE, true},
		{"5.4 unicast to other", Version{5, 4}, 0xC0FFEE, 1, 0, 0xC0FFEF, false},
		{"5.4 unicast all ones 32", Version{5, 4}, 0xC0FFEE, 1, 0, 0xFFFFFFFF, true},
		{"5.4 multicast own bit 31", Version{5, 4}, 0xC0FFEE, 31, FlagMulticast, 1 << 31, true},
		{"5.4 multicast other bit", Version{5, 4}, 0xC0FFEE, 30, FlagMulticast, 1 << 31, false},
		{"5.4 station 32 has no bit", Version{5, 4}, 0xC0FFEE, 32, FlagMulticast, 1 << 31, true},
		{"5.18 unicast to other", Version{5, 18}, self, 1, FlagNoBundle, 7, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEndpoint(listenLoopback(t), EndpointConfig{
				Version: tc.v, NonceParams: NonceParams{Network: NetworkLAN}, ConstantID: tc.cid, StationIndex: tc.index,
			})
			if err != nil {
				t.Fatal(err)
			}
			m := Message{Flags: tc.flags, Destination: tc.dest}
			err = e.addressed(&m)
			if (err == nil) != tc.deliver {
				t.Fatalf("addressed(flags 0x%x, destination 0x%x) = %v, want deliver=%v", tc.flags, tc.dest, err, tc.deliver)
			}
		})
	}
}

// TestVectorBroadcastFiltered feeds the published 5.27 packet (a multicast message
// with bitmap 0xFFFFFFFF, protocol 0x68 port 0) to stations of several indexes.
func TestVectorBroadcastFiltered(t *testing.T) {
	vec := loadVectors(t).Packets[0]
	raw := testutil.Unhex(t, vec.Hex)
	var mac [6]byte
	copy(mac[:], testutil.Unhex(t, vec.SrcMACHex))
	for _, tc := range []struct {
		index   uint8
		deliver bool
	}{{0, true}, {3, true}, {31, true}, {32, false}, {63, false}, {StationIndexInvalid, true}, {StationIndexHost, true}} {
		t.Run(fmt.Sprint(tc.index), func(t *testing.T) {
			e, err := NewEndpoint(listenLoopback(t), EndpointConfig{
				Version:      Version{5, 27},
				NonceParams:  NonceParams{Network: NetworkLDN, NetworkID: mustU32(t, vec.NetworkIDU32)},
				SessionKey:   testutil.Unhex(t, vec.SessionKeyHex),
				ConstantID:   0x1234,
				StationIndex: tc.index,
			})
			if err != nil {
				t.Fatal(err)
			}
			from := netip.MustParseAddrPort("127.0.0.1:9")
			e.AddPeer(from, PeerConfig{MAC: mac})
			var got []*Message
			e.Handle(0x68, 0, HandlerFunc(func(_ *Peer, m *Message) { mm := *m; got = append(got, &mm) }))
			e.HandlePacket(raw, from)
			if s := e.Stats(); s.MessagesIn != 1 {
				t.Fatalf("stats %+v, want one message in", s)
			}
			if tc.deliver {
				if len(got) != 1 || !got[0].Multicast(Message5_27) || got[0].Destination != BroadcastStations {
					t.Fatalf("delivered %+v, want the multicast message to 0xFFFFFFFF", got)
				}
				if d := e.Drops(DropDestination); d != 0 {
					t.Fatalf("destination drops %d", d)
				}
			} else if len(got) != 0 || e.Drops(DropDestination) != 1 {
				t.Fatalf("delivered %d, destination drops %d; want the message dropped", len(got), e.Drops(DropDestination))
			}
		})
	}
}

// sniffPacket reads the next datagram an endpoint sent to c, a plain UDP socket on loopback.
func sniffPacket(t *testing.T, c *net.UDPConn) []byte {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(testWait))
	n, _, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// TestSendHelpersHeaderFields sends with each helper to sockets that are not Pia
// endpoints, decodes what arrives with a Codec and checks the message flags and
// destination, for every test version.
func TestSendHelpersHeaderFields(t *testing.T) {
	for _, v := range testVersions {
		t.Run(v.String(), func(t *testing.T) {
			typ := destType(v)
			cfg := EndpointConfig{
				Version:     v,
				NonceParams: NonceParams{Network: endpointNetwork(v), NetworkID: 0x19EC1D90, GatheringID: 77},
				SessionKey:  testKey,
				Source:      Source{MAC: [6]byte{2, 0, 0, 0, 0, 0xA}},
				VariableID:  0x1111, ConstantID: 0xAAAA, StationIndex: 0,
			}
			a, err := NewEndpoint(listenLoopback(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := NewCodec(Config{Version: v, NonceParams: cfg.NonceParams, SessionKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			aSrc := Source{MAC: cfg.Source.MAC, IP: a.LocalAddr().Addr()}
			s1, s2 := listenLoopback(t), listenLoopback(t)
			p1 := a.AddPeer(s1.LocalAddr().(*net.UDPAddr).AddrPort(), PeerConfig{VariableID: 0x2222, ConstantID: 0xBBBB, StationIndex: 1})
			p2 := a.AddPeer(s2.LocalAddr().(*net.UDPAddr).AddrPort(), PeerConfig{VariableID: 0x3333, ConstantID: 0xCCCC, StationIndex: 7})
			msg := func(flags uint8, s string) Message {
				return Message{Flags: flags, ProtocolType: typ, ProtocolPort: 5, Payload: []byte(s)}
			}
			read := func(c *net.UDPConn) []Message {
				t.Helper()
				var pkt Packet
				if err := dec.Open(&pkt, sniffPacket(t, c), aSrc); err != nil {
					t.Fatal(err)
				}
				return slices.Clone(pkt.Messages)
			}
			type field struct {
				flags uint8
				dest  uint64
			}
			check := func(what string, ms []Message, want ...field) {
				t.Helper()
				if len(ms) != len(want) {
					t.Fatalf("%s: %d messages, want %d", what, len(ms), len(want))
				}
				for i, m := range ms {
					if m.Flags != want[i].flags || m.Destination != want[i].dest {
						t.Errorf("%s: message %d flags 0x%x destination 0x%x, want 0x%x 0x%x", what, i, m.Flags, m.Destination, want[i].flags, want[i].dest)
					}
					if m.ProtocolType != typ || m.ProtocolPort != 5 {
						t.Errorf("%s: message %d protocol 0x%x/%d", what, i, m.ProtocolType, m.ProtocolPort)
					}
					if v.MessageLayout().carriesSourceConstantID() && m.SourceConstantID != 0xAAAA {
						t.Errorf("%s: source constant id 0x%x, want 0xAAAA", what, m.SourceConstantID)
					}
				}
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			// A multicast flag given to SendTo is cleared; other flags stay.
			fl := v.MessageLayout().Flags()
			if fl.Multicast == 0 {
				// 6.16-6.30: no multicast flag, so the bitmap helpers refuse;
				// SendTo keeps 0x01 (skip the source variable id check).
				for name, err := range map[string]error{
					"Multicast":         a.Multicast([]*Peer{p1, p2}, msg(0, "multi")),
					"MulticastStations": a.MulticastStations(1<<7, msg(0, "stations")),
					"Broadcast":         a.Broadcast(msg(0, "all")),
				} {
					if !errors.Is(err, ErrUnaddressable) {
						t.Errorf("%s in %s: %v, want ErrUnaddressable", name, v, err)
					}
				}
				must(a.SendTo(p1, msg(fl.SkipSourceCheck|fl.NoBundle, "to-1")))
				must(a.FlushPeer(p1))
				check("SendTo (skip-source-check, no-bundle)", read(s1), field{fl.SkipSourceCheck | fl.NoBundle, 0xBBBB})
				return
			}
			must(a.SendTo(p1, msg(fl.Multicast|fl.NoBundle, "to-1")))
			must(a.SendTo(p1, msg(0, "to-1-again")))
			must(a.Multicast([]*Peer{p1, p2}, msg(0, "multi")))
			must(a.MulticastStations(1<<7|1<<9, msg(0, "stations")))
			must(a.Broadcast(msg(fl.Relay, "all")))
			must(a.Send(p2, Message{ProtocolType: typ, ProtocolPort: 5, Destination: 0x42, Payload: []byte("raw")}))
			must(a.FlushPeer(p1))
			check("SendTo (no-bundle)", read(s1), field{fl.NoBundle, 0xBBBB})
			// The rest share one packet: unicast, multicast, broadcast (5.18+ inherit fields).
			check("to p1", read(s1), field{0, 0xBBBB}, field{fl.Multicast, 1<<1 | 1<<7}, field{fl.Multicast | fl.Relay, BroadcastStations})
			must(a.FlushPeer(p2))
			check("to p2", read(s2), field{fl.Multicast, 1<<1 | 1<<7}, field{fl.Multicast, 1<<7 | 1<<9}, field{fl.Multicast | fl.Relay, BroadcastStations}, field{0, 0x42})
			if s := a.Stats(); s.PacketsOut != 3 || s.MessagesOut != 8 {
				t.Fatalf("stats %+v, want 3 packets, 8 messages", s)
			}
		})
	}
}

// TestSendHelpersRefuse checks that a helper that cannot address its message
// returns ErrUnaddressable naming the problem and queues nothing.
func TestSendHelpersRefuse(t *testing.T) {
	for _, v := range []Version{{5, 4}, {5, 27}} {
		t.Run(v.String(), func(t *testing.T) {
			typ := destType(v)
			a, err := NewEndpoint(listenLoopback(t), EndpointConfig{Version: v, NonceParams: NonceParams{Network: NetworkLAN}})
			if err != nil {
				t.Fatal(err)
			}
			m := Message{ProtocolType: typ, ProtocolPort: 5, Payload: []byte("x")}
			if err := a.Broadcast(m); !errors.Is(err, ErrUnaddressable) {
				t.Fatalf("Broadcast without peers: %v", err)
			}
			noID := a.AddPeer(netip.MustParseAddrPort("127.0.0.1:9"), PeerConfig{StationIndex: 1})
			s1 := a.AddPeer(netip.MustParseAddrPort("127.0.0.1:10"), PeerConfig{ConstantID: 0x1_0000_0000, StationIndex: 1})
			s40 := a.AddPeer(netip.MustParseAddrPort("127.0.0.1:11"), PeerConfig{ConstantID: 5, StationIndex: 40})
			inv := a.AddPeer(netip.MustParseAddrPort("127.0.0.1:12"), PeerConfig{ConstantID: 6, StationIndex: StationIndexInvalid})
			is32 := v.MessageLayout() == MessageUpTo5_4
			for _, tc := range []struct {
				name   string
				err    error
				refuse bool
				text   string
			}{
				{"SendTo without constant id", a.SendTo(noID, m), true, "no constant id"},
				{"SendTo with a 33-bit constant id", a.SendTo(s1, m), is32, "does not fit"},
				{"Multicast to no peers", a.Multicast(nil, m), true, "no peers"},
				{"Multicast with a shared station index", a.Multicast([]*Peer{noID, s1}, m), true, "both have station index 1"},
				{"Multicast to station 40", a.Multicast([]*Peer{s40}, m), is32, "station index 40"},
				{"Multicast to an invalid station", a.Multicast([]*Peer{inv, s40}, m), true, "station index 253"},
				{"MulticastStations to no known station", a.MulticastStations(1<<3, m), true, "no known peer"},
				{"MulticastStations with a shared station", a.MulticastStations(1<<1, m), true, "two peers have station index 1"},
				{"MulticastStations above 32 bits", a.MulticastStations(1<<40, m), is32, "does not fit"},
			} {
				if tc.refuse != (tc.err != nil) {
					t.Errorf("%s: err %v, want refused=%v", tc.name, tc.err, tc.refuse)
					continue
				}
				if tc.err != nil && (!errors.Is(tc.err, ErrUnaddressable) || !strings.Contains(tc.err.Error(), tc.text)) {
					t.Errorf("%s: err %q, want ErrUnaddressable saying %q", tc.name, tc.err, tc.text)
				}
			}
			// Only the accepted calls queued anything: on 5.4 none, on 5.27 the
			// SendTo to s1 and the two multicasts to s40.
			a.sendMu.Lock()
			queued := len(noID.queue) + len(s1.queue) + len(s40.queue) + len(inv.queue)
			a.sendMu.Unlock()
			want := 3
			if is32 {
				want = 0
			}
			if queued != want {
				t.Fatalf("%d messages queued, want %d", queued, want)
			}
		})
	}
	if _, err := NewEndpoint(listenLoopback(t), EndpointConfig{Version: Version{5, 4}, NonceParams: NonceParams{Network: NetworkLAN}, ConstantID: 1 << 32}); !errors.Is(err, ErrBadField) {
		t.Fatalf("5.4 endpoint with a 33-bit constant id: %v", err)
	}
}

// TestEndpointRelay runs B -> A -> C on loopback (B and C know only A): B sends A
// messages with FlagRelay. With EndpointConfig.Relay, A forwards each to the
// stations its destination names (never back to B), marked FlagRelayed, and
// delivers only what is addressed to A as well; without it, A drops relay
// requests for others and forwards nothing.
func TestEndpointRelay(t *testing.T) {
	for _, v := range []Version{{5, 4}, {5, 18}, {5, 27}} {
		fl := v.MessageLayout().Flags()
		for _, relay := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/relay=%v", v, relay), func(t *testing.T) {
				st, peers := newMesh(t, v, 3, false, func(i int) bool { return i == 0 && relay })
				a, b, c := st[0], st[1], st[2]
				pa := peers[1][0] // B's peer for A
				typ := destType(v)
				send := func(flags uint8, dest uint64, payload string) {
					t.Helper()
					if err := b.e.Send(pa, Message{ProtocolType: typ, ProtocolPort: 5, Flags: flags, Destination: dest, Payload: []byte(payload)}); err != nil {
						t.Fatal(err)
					}
				}
				send(fl.Relay, c.cid, "unicast-c")
				send(fl.Relay|fl.Multicast, 1<<a.index|1<<c.index, "multicast-a-c")
				send(fl.Relay|fl.Multicast, 1<<b.index|1<<c.index, "multicast-b-c")
				send(fl.Relay, 0x9999, "unicast-unknown")
				send(fl.Relay, a.cid, "unicast-a")
				if err := b.e.Flush(); err != nil {
					t.Fatal(err)
				}
				// The five messages share one packet; unicast-a, the last, is delivered
				// after the others were handled (and forwarded: relaying is synchronous).
				wantA := []string{"multicast-a-c", "unicast-a"}
				wantC := []string{"multicast-a-c!relayed", "multicast-b-c!relayed", "unicast-c!relayed"}
				wantDrops := uint64(1) // unicast-unknown
				if !relay {
					wantC = nil
					wantDrops = 3 // unicast-c, multicast-b-c, unicast-unknown
				}
				waitDelivered(t, a, len(wantA), wantDrops)
				waitDelivered(t, c, len(wantC), 0)
				gotA, gotC := a.received(), c.received()
				slices.Sort(gotA)
				slices.Sort(gotC)
				if !slices.Equal(gotA, wantA) {
					t.Errorf("A delivered %q, want %q", gotA, wantA)
				}
				if !slices.Equal(gotC, wantC) {
					t.Errorf("C delivered %q, want %q", gotC, wantC)
				}
				if got := b.received(); len(got) != 0 {
					t.Errorf("B got %q back", got)
				}
				if d := a.e.Drops(DropDestination); d != wantDrops {
					t.Errorf("A destination drops %d, want %d; stats %+v", d, wantDrops, a.e.Stats())
				}
				if n, want := a.e.Stats().MessagesRelayed, uint64(len(wantC)); n != want {
					t.Errorf("A relayed %d messages, want %d", n, want)
				}
				// Up to 5.26 the source constant id still names B after the relay.
				if relay && v.MessageLayout().carriesSourceConstantID() {
					c.mu.Lock()
					for _, src := range c.src {
						if src != b.cid {
							t.Errorf("C saw source constant id 0x%x, want B's 0x%x", src, b.cid)
						}
					}
					c.mu.Unlock()
				}
			})
		}
	}
}

// TestDestinationDropLogged checks that a message for another station is logged at
// debug level with its reason and both ids, like every other drop.
func TestDestinationDropLogged(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	v := Version{6, 16}
	e, err := NewEndpoint(listenLoopback(t), EndpointConfig{Version: v, NonceParams: NonceParams{Network: NetworkLAN}, ConstantID: 0xC0FFEE, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	from := netip.MustParseAddrPort("127.0.0.1:9")
	e.AddPeer(from, PeerConfig{})
	c := testCodec(t, v, NetworkLAN, nil)
	p := Packet{Messages: []Message{{ProtocolType: 0x68, ProtocolPort: 5, Destination: 0xBEEF, Payload: []byte("x")}}}
	p.Header.PacketID = 1
	raw, err := c.Seal(nil, &p, Source{IP: from.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	e.HandlePacket(raw, from)
	mu.Lock()
	defer mu.Unlock()
	out := buf.String()
	for _, want := range []string{"level=DEBUG", "reason=destination", "unicast to constant id 0xbeef, this station is 0xc0ffee"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	if e.Drops(DropDestination) != 1 || DropDestination.String() != "destination" {
		t.Fatalf("destination drops %d (%s)", e.Drops(DropDestination), DropDestination)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
