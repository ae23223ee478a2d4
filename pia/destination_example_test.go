package pia_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gamewire/gamewire/pia"
)

// Three stations of a mesh on loopback: A sends a unicast message to B, a
// multicast one to B and C, and (on purpose) a message for B to C, which C drops.
func ExampleEndpoint_Multicast() {
	key := []byte("0123456789abcdef")
	listen := func(constantID uint64, station uint8) *pia.Endpoint {
		e, err := pia.Listen("127.0.0.1:0", pia.EndpointConfig{
			Version:     pia.Version{Major: 5, Minor: 27},
			NonceParams: pia.NonceParams{Network: pia.NetworkLAN},
			SessionKey:  key,
			ConstantID:  constantID, StationIndex: station,
		})
		if err != nil {
			panic(err)
		}
		return e
	}
	a, b, c := listen(0x1000, 0), listen(0x2000, 1), listen(0x3000, 2)
	pb := a.AddPeer(b.LocalAddr(), pia.PeerConfig{ConstantID: 0x2000, StationIndex: 1})
	pc := a.AddPeer(c.LocalAddr(), pia.PeerConfig{ConstantID: 0x3000, StationIndex: 2})
	b.AddPeer(a.LocalAddr(), pia.PeerConfig{ConstantID: 0x1000, StationIndex: 0})
	c.AddPeer(a.LocalAddr(), pia.PeerConfig{ConstantID: 0x1000, StationIndex: 0})

	got := make(chan string, 8)
	for name, e := range map[string]*pia.Endpoint{"B": b, "C": c} {
		e.Handle(0x68, 5, pia.HandlerFunc(func(_ *pia.Peer, m *pia.Message) {
			got <- fmt.Sprintf("%s got %q (multicast %v, destination %#x)", name, m.Payload, m.Multicast(pia.Message5_27), m.Destination)
		}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, e := range []*pia.Endpoint{a, b, c} {
		go e.Serve(ctx)
	}

	msg := func(s string) pia.Message {
		return pia.Message{ProtocolType: 0x68, ProtocolPort: 5, Payload: []byte(s)}
	}
	misaddressed := msg("for B")
	misaddressed.Destination = 0x2000
	a.Send(pc, misaddressed) // Send writes the destination as given
	a.SendTo(pb, msg("unicast"))
	a.Multicast([]*pia.Peer{pb, pc}, msg("multicast"))
	a.Flush()

	var lines []string
	for len(lines) < 3 {
		select {
		case s := <-got:
			lines = append(lines, s)
		case <-time.After(10 * time.Second):
			fmt.Println("timed out")
			return
		}
	}
	slices.Sort(lines)
	for _, s := range lines {
		fmt.Println(s)
	}
	fmt.Println("C dropped for destination:", c.Drops(pia.DropDestination))
	// Output:
	// B got "multicast" (multicast true, destination 0x6)
	// B got "unicast" (multicast false, destination 0x2000)
	// C got "multicast" (multicast true, destination 0x6)
	// C dropped for destination: 1
}
