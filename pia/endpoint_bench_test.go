package pia

import (
	"context"
	"net"
	"testing"
)

// BenchmarkEndpointRoundTrip measures one request/response of a 64-byte message
// between two encrypted endpoints on loopback (Pia 6.16, LAN nonces), next to
// BenchmarkUDPEchoRoundTrip, a plain UDP echo of the same size in the same run.
func BenchmarkEndpointRoundTrip(b *testing.B) { benchEndpointRoundTrip(b, false) }

// BenchmarkEndpointRoundTripAddressed is BenchmarkEndpointRoundTrip with
// addressing: the request goes out with SendTo and the answer with Multicast, and
// both endpoints know their constant id and station index, so every message passes
// the destination filter.
func BenchmarkEndpointRoundTripAddressed(b *testing.B) { benchEndpointRoundTrip(b, true) }

func benchEndpointRoundTrip(b *testing.B, addressed bool) {
	mk := func(cid uint64, idx uint8) *Endpoint {
		cfg := EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLAN}, SessionKey: testKey}
		if addressed {
			cfg.ConstantID, cfg.StationIndex = cid, idx
		}
		e, err := Listen("127.0.0.1:0", cfg)
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	a, c := mk(0xA, 1), mk(0xC, 2)
	var pcfg, acfg PeerConfig
	if addressed {
		pcfg, acfg = PeerConfig{ConstantID: 0xC, StationIndex: 2}, PeerConfig{ConstantID: 0xA, StationIndex: 1}
	}
	pc := a.AddPeer(c.LocalAddr(), pcfg)
	pa := c.AddPeer(a.LocalAddr(), acfg)
	toA := []*Peer{pa}
	c.Handle(0x68, 1, HandlerFunc(func(from *Peer, m *Message) {
		answer := Message{ProtocolType: 0x68, ProtocolPort: 2, Payload: m.Payload}
		if addressed {
			c.Multicast(toA, answer)
		} else {
			c.Send(from, answer)
		}
		c.FlushPeer(from)
	}))
	done := make(chan struct{}, 1)
	a.Handle(0x68, 2, HandlerFunc(func(*Peer, *Message) { done <- struct{}{} }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Serve(ctx)
	go c.Serve(ctx)
	payload := make([]byte, 64)
	request := Message{ProtocolType: 0x68, ProtocolPort: 1, Payload: payload}
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if addressed {
			err = a.SendTo(pc, request)
		} else {
			err = a.Send(pc, request)
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := a.FlushPeer(pc); err != nil {
			b.Fatal(err)
		}
		<-done
	}
	b.StopTimer()
	if d := a.Drops(DropDestination) + c.Drops(DropDestination); d != 0 {
		b.Fatalf("%d messages dropped for their destination", d)
	}
}

func BenchmarkUDPEchoRoundTrip(b *testing.B) {
	listen := func() *net.UDPConn {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	srv, cli := listen(), listen()
	defer srv.Close()
	defer cli.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, addr, err := srv.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			srv.WriteToUDPAddrPort(buf[:n], addr)
		}
	}()
	to := srv.LocalAddr().(*net.UDPAddr).AddrPort()
	msg := make([]byte, 64+28) // a Pia 6.x header plus the message and padding
	buf := make([]byte, 2048)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cli.WriteToUDPAddrPort(msg, to); err != nil {
			b.Fatal(err)
		}
		if _, _, err := cli.ReadFromUDPAddrPort(buf); err != nil {
			b.Fatal(err)
		}
	}
}
