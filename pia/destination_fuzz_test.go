package pia

import (
	"net"
	"testing"
)

// FuzzEndpointDestinations feeds plaintext packets of every test version to a
// relaying endpoint (station 0, constant id 0x1000) with two peers (stations 1 and
// 2) and checks that nothing panics, that every message the handler receives is
// addressed to this station, and that the counters add up. The seeds carry
// unicast, multicast, broadcast and relay-flagged messages.
func FuzzEndpointDestinations(f *testing.F) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatal(err)
	}
	defer conn.Close()
	// Relayed copies and RTT answers go to these sockets, which nobody reads.
	sinkB, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatal(err)
	}
	defer sinkB.Close()
	sinkC, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatal(err)
	}
	defer sinkC.Close()
	addrB := sinkB.LocalAddr().(*net.UDPAddr).AddrPort()
	addrC := sinkC.LocalAddr().(*net.UDPAddr).AddrPort()

	for vi, v := range testVersions {
		c := testCodec(f, v, NetworkLAN, nil)
		typ := destType(v)
		fl := v.MessageLayout().Flags()
		msgs := []Message{
			{ProtocolType: typ, ProtocolPort: 5, Destination: 0x1000, Payload: []byte("self")},
			{ProtocolType: typ, ProtocolPort: 5, Destination: 0x3000, Payload: []byte("other")},
			{ProtocolType: typ, ProtocolPort: 5, Flags: fl.Multicast, Destination: 1<<0 | 1<<2, Payload: []byte("multi")},
			{ProtocolType: typ, ProtocolPort: 5, Flags: fl.Multicast, Destination: BroadcastStations, Payload: []byte("all")},
			{ProtocolType: typ, ProtocolPort: 5, Flags: fl.Relay, Destination: 0x3000, Payload: []byte("relay-c")},
			{ProtocolType: typ, ProtocolPort: 5, Flags: fl.Relay | fl.Multicast, Destination: 1<<1 | 1<<2, Payload: []byte("relay-bc")},
			{ProtocolType: typ, ProtocolPort: 5, Flags: fl.Relayed, Payload: []byte("no-destination")},
		}
		p := Packet{Messages: msgs}
		if c.HeaderLayout().hasConnectionID() {
			p.Header.ConnectionID, p.Header.PacketID = 7, 1
		} else {
			p.Header.PacketID = 1
		}
		b, err := c.Seal(nil, &p, Source{IP: addrB.Addr()})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(vi))
	}

	f.Fuzz(func(t *testing.T, data []byte, vi uint8) {
		v := testVersions[int(vi)%len(testVersions)]
		e, err := NewEndpoint(conn, EndpointConfig{
			Version: v, NonceParams: NonceParams{Network: NetworkLAN},
			ConstantID: 0x1000, StationIndex: 0, Relay: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		e.AddPeer(addrB, PeerConfig{ConstantID: 0x2000, StationIndex: 1})
		e.AddPeer(addrC, PeerConfig{ConstantID: 0x3000, StationIndex: 2})
		delivered := 0
		check := HandlerFunc(func(_ *Peer, m *Message) {
			delivered++
			if err := e.addressed(m); err != nil {
				t.Fatalf("delivered a message for another station: %v", err)
			}
		})
		for _, typ := range []uint16{0x68, 0x2000} {
			for _, port := range []uint32{0, 1, 5} {
				e.Handle(typ, port, check)
			}
		}
		e.HandlePacket(data, addrB)
		s := e.Stats()
		if s.PacketsIn != 1 {
			t.Fatalf("packets in %d, want 1", s.PacketsIn)
		}
		if uint64(delivered) > s.MessagesIn || e.Drops(DropDestination) > s.MessagesIn {
			t.Fatalf("%d delivered, %d dropped for destination, of %d messages", delivered, e.Drops(DropDestination), s.MessagesIn)
		}
	})
}
