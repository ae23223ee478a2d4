package pia

import (
	"net/netip"
	"testing"
)

// TestDestinationFilterZeroAlloc holds the receive path to zero allocations with
// the destination filter on: packets of a unicast message to this station and a
// multicast one with its bit, opened, checked and delivered.
func TestDestinationFilterZeroAlloc(t *testing.T) {
	for _, v := range []Version{{5, 18}, {5, 27}} {
		t.Run(v.String(), func(t *testing.T) {
			cfg := EndpointConfig{Version: v, NonceParams: NonceParams{Network: NetworkLAN}, SessionKey: testKey, ConstantID: 0xC0FFEE, StationIndex: 3}
			e, err := NewEndpoint(listenLoopback(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			from := netip.MustParseAddrPort("127.0.0.1:9")
			e.AddPeer(from, PeerConfig{ConnectionID: 9, PeerConnectionID: 7})
			delivered := 0
			e.Handle(0x68, 5, HandlerFunc(func(*Peer, *Message) { delivered++ }))
			c := testCodec(t, v, NetworkLAN, testKey)
			const runs = 100
			pkts := make([][]byte, runs+1)
			for i := range pkts {
				p := Packet{Messages: []Message{
					{ProtocolType: 0x68, ProtocolPort: 5, Destination: 0xC0FFEE, Payload: []byte("unicast")},
					{ProtocolType: 0x68, ProtocolPort: 5, Flags: FlagMulticast, Destination: 1<<3 | 1<<5, Payload: []byte("multicast")},
				}}
				p.Header.Encrypted = true
				p.Header.PacketID = uint16(i + 1)
				if c.HeaderLayout().hasConnectionID() {
					p.Header.ConnectionID = 7
				}
				p.Header.Nonce[7], p.Header.Nonce[6] = byte(i), byte(i>>8)
				if pkts[i], err = c.Seal(nil, &p, Source{IP: from.Addr()}); err != nil {
					t.Fatal(err)
				}
			}
			e.HandlePacket(pkts[0], from) // warm the receive buffers
			next := 1
			allocs := testing.AllocsPerRun(runs-1, func() {
				e.HandlePacket(pkts[next], from)
				next++
			})
			if allocs != 0 {
				t.Errorf("%.1f allocations per packet", allocs)
			}
			if s := e.Stats(); delivered != 2*len(pkts) || len(s.Drops) != 0 {
				t.Fatalf("delivered %d of %d messages; stats %+v", delivered, 2*len(pkts), s)
			}
		})
	}
}
