package pia

import (
	"context"
	"net"
	"testing"
)

// BenchmarkEndpointRoundTrip measures one request/response of a 64-byte message
// between two encrypted endpoints on loopback (Pia 6.16, LAN nonces), next to
// BenchmarkUDPEchoRoundTrip, a plain UDP echo of the same size in the same run.
func BenchmarkEndpointRoundTrip(b *testing.B) {
	mk := func() *Endpoint {
		e, err := Listen("127.0.0.1:0", EndpointConfig{Version: Version{6, 16}, NonceParams: NonceParams{Network: NetworkLAN}, SessionKey: testKey})
		if err != nil {
			b.Fatal(err)
		}
		return e
	}
	a, c := mk(), mk()
	pc := a.AddPeer(c.LocalAddr(), PeerConfig{})
	c.AddPeer(a.LocalAddr(), PeerConfig{})
	c.Handle(0x68, 1, HandlerFunc(func(from *Peer, m *Message) {
		c.Send(from, Message{ProtocolType: 0x68, ProtocolPort: 2, Payload: m.Payload})
		c.FlushPeer(from)
	}))
	done := make(chan struct{}, 1)
	a.Handle(0x68, 2, HandlerFunc(func(*Peer, *Message) { done <- struct{}{} }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Serve(ctx)
	go c.Serve(ctx)
	payload := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Send(pc, Message{ProtocolType: 0x68, ProtocolPort: 1, Payload: payload}); err != nil {
			b.Fatal(err)
		}
		if err := a.FlushPeer(pc); err != nil {
			b.Fatal(err)
		}
		<-done
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
