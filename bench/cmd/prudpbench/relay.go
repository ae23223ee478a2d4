package main

import (
	"math/rand/v2"
	"net"
	"net/netip"
	"sync/atomic"
)

// lossyRelay forwards datagrams between one client and a server over loopback and
// drops each with probability loss, in both directions (seeded, so runs are alike). Both
// bulk transfers go through it with -bulk-loss: the relay's cost is the same for both.
type lossyRelay struct {
	front  *net.UDPConn // the clients' side
	back   *net.UDPConn // connected to the server
	client atomic.Pointer[netip.AddrPort]
}

func startRelay(server string, loss float64, seed uint64) (*lossyRelay, error) {
	sa, err := net.ResolveUDPAddr("udp", server)
	if err != nil {
		return nil, err
	}
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	back, err := net.DialUDP("udp", nil, sa)
	if err != nil {
		front.Close()
		return nil, err
	}
	setBuffers(front)
	setBuffers(back)
	r := &lossyRelay{front: front, back: back}
	go func() { // client -> server
		rng := rand.New(rand.NewPCG(seed, 1))
		buf := make([]byte, 1<<16)
		for {
			n, from, err := front.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if c := r.client.Load(); c == nil || *c != from {
				r.client.Store(&from)
			}
			if rng.Float64() < loss {
				continue
			}
			_, _ = back.Write(buf[:n])
		}
	}()
	go func() { // server -> client
		rng := rand.New(rand.NewPCG(seed, 2))
		buf := make([]byte, 1<<16)
		for {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			c := r.client.Load()
			if c == nil || rng.Float64() < loss {
				continue
			}
			_, _ = front.WriteToUDPAddrPort(buf[:n], *c)
		}
	}()
	return r, nil
}

// addr is where clients send.
func (r *lossyRelay) addr() string { return r.front.LocalAddr().String() }

func (r *lossyRelay) close() {
	r.front.Close()
	r.back.Close()
}

// via returns the address a bulk client dials: the server's, or with -bulk-loss a relay's
// in front of it (closed by the returned func).
func via(server string) (string, func(), error) {
	if *bulkLoss <= 0 {
		return server, func() {}, nil
	}
	r, err := startRelay(server, *bulkLoss, 1)
	if err != nil {
		return "", nil, err
	}
	return r.addr(), r.close, nil
}
