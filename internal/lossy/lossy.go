// Package lossy is an in-memory datagram network for tests: endpoints
// exchange datagrams through a link that loses, duplicates, delays and
// reorders them as configured, with every random choice drawn from one
// seeded generator so that a run can be repeated.
//
// Delays use time.AfterFunc, so inside a testing/synctest bubble they cost
// no wall-clock time: a test can push 100,000 messages through 20% loss and
// second-long retransmission timeouts in the time the CPU needs.
//
// An Endpoint implements the socket methods the PRUDP engine uses
// (ReadFromUDPAddrPort, WriteToUDPAddrPort, LocalAddr, Close).
package lossy

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes the link between every pair of endpoints.
type Config struct {
	// Seed feeds the random generator; equal seeds give equal choices for
	// equal sequences of writes.
	Seed uint64
	// Loss is the probability that a datagram is dropped (0 to 1).
	Loss float64
	// Duplicate is the probability that a datagram is delivered twice.
	Duplicate float64
	// Reorder is the probability that a datagram is held back by
	// ReorderDelay more than the others, so that later ones overtake it.
	Reorder float64
	// Delay is the one-way latency of every datagram; Jitter adds a uniform
	// random part in [0, Jitter).
	Delay, Jitter time.Duration
	// ReorderDelay is the extra delay of reordered datagrams; default 2*Delay+1ms.
	ReorderDelay time.Duration
	// QueueLen is the number of datagrams an endpoint buffers before
	// dropping (as a full socket buffer does); default 4096.
	QueueLen int
	// MaxDatagram is the largest datagram carried; default 65507.
	MaxDatagram int
	// Tamper, if set, may modify each datagram in transit (it gets a copy)
	// and returns the bytes to deliver; tests use it to corrupt packets.
	Tamper func(b []byte, from, to netip.AddrPort) []byte
}

// Stats counts what the link did.
type Stats struct {
	Sent, Lost, Duplicated, Reordered, Delivered, Overflowed uint64
}

// Network is a set of endpoints joined by one link configuration.
type Network struct {
	cfg Config

	mu        sync.Mutex
	rng       *rand.Rand
	endpoints map[netip.AddrPort]*Endpoint
	nextPort  uint16

	sent, lost, duplicated, reordered, delivered, overflowed atomic.Uint64
}

// New returns an empty network.
func New(cfg Config) *Network {
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 4096
	}
	if cfg.MaxDatagram <= 0 {
		cfg.MaxDatagram = 65507
	}
	if cfg.ReorderDelay <= 0 {
		cfg.ReorderDelay = 2*cfg.Delay + time.Millisecond
	}
	return &Network{
		cfg:       cfg,
		rng:       rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		endpoints: make(map[netip.AddrPort]*Endpoint),
		nextPort:  40000,
	}
}

// ErrAddrInUse is returned by Listen for an address already taken.
var ErrAddrInUse = errors.New("lossy: address in use")

// Listen creates an endpoint at addr; a zero port picks a free one.
func (n *Network) Listen(addr netip.AddrPort) (*Endpoint, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if addr.Port() == 0 {
		for {
			n.nextPort++
			a := netip.AddrPortFrom(addr.Addr(), n.nextPort)
			if _, ok := n.endpoints[a]; !ok {
				addr = a
				break
			}
		}
	}
	if _, ok := n.endpoints[addr]; ok {
		return nil, fmt.Errorf("%w: %v", ErrAddrInUse, addr)
	}
	e := &Endpoint{net: n, addr: addr, queue: make(chan datagram, n.cfg.QueueLen), closed: make(chan struct{})}
	n.endpoints[addr] = e
	return e, nil
}

// Stats returns the link's counters.
func (n *Network) Stats() Stats {
	return Stats{
		Sent: n.sent.Load(), Lost: n.lost.Load(), Duplicated: n.duplicated.Load(),
		Reordered: n.reordered.Load(), Delivered: n.delivered.Load(), Overflowed: n.overflowed.Load(),
	}
}

type datagram struct {
	b    []byte
	from netip.AddrPort
}

// Endpoint is one address on the network.
type Endpoint struct {
	net    *Network
	addr   netip.AddrPort
	queue  chan datagram
	closed chan struct{}
	once   sync.Once
}

// LocalAddr returns the endpoint's address as a *net.UDPAddr.
func (e *Endpoint) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(e.addr) }

// AddrPort returns the endpoint's address.
func (e *Endpoint) AddrPort() netip.AddrPort { return e.addr }

// Close removes the endpoint; blocked and later reads return net.ErrClosed.
func (e *Endpoint) Close() error {
	e.once.Do(func() {
		close(e.closed)
		e.net.mu.Lock()
		delete(e.net.endpoints, e.addr)
		e.net.mu.Unlock()
	})
	return nil
}

// ReadFromUDPAddrPort waits for the next datagram.
func (e *Endpoint) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	select {
	case d := <-e.queue:
		return copy(b, d.b), d.from, nil
	case <-e.closed:
		return 0, netip.AddrPort{}, net.ErrClosed
	}
}

// WriteToUDPAddrPort sends b to addr through the link. Datagrams to an
// address nobody listens on vanish, as on UDP.
func (e *Endpoint) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	select {
	case <-e.closed:
		return 0, net.ErrClosed
	default:
	}
	n := e.net
	if len(b) > n.cfg.MaxDatagram {
		return 0, fmt.Errorf("lossy: datagram of %d bytes exceeds %d", len(b), n.cfg.MaxDatagram)
	}
	n.sent.Add(1)
	n.mu.Lock()
	lost := n.rng.Float64() < n.cfg.Loss
	copies := 1
	if n.rng.Float64() < n.cfg.Duplicate {
		copies = 2
	}
	var delays [2]time.Duration
	reordered := false
	for i := range copies {
		d := n.cfg.Delay
		if n.cfg.Jitter > 0 {
			d += time.Duration(n.rng.Int64N(int64(n.cfg.Jitter)))
		}
		if n.rng.Float64() < n.cfg.Reorder {
			d += n.cfg.ReorderDelay
			reordered = true
		}
		delays[i] = d
	}
	n.mu.Unlock()
	if lost {
		n.lost.Add(1)
		return len(b), nil
	}
	if copies == 2 {
		n.duplicated.Add(1)
	}
	if reordered {
		n.reordered.Add(1)
	}
	for i := range copies {
		d := datagram{b: append([]byte(nil), b...), from: e.addr}
		if n.cfg.Tamper != nil {
			d.b = n.cfg.Tamper(d.b, e.addr, addr)
		}
		if delays[i] <= 0 {
			n.deliver(addr, d)
		} else {
			time.AfterFunc(delays[i], func() { n.deliver(addr, d) })
		}
	}
	return len(b), nil
}

// Inject delivers b to addr as if sent from an arbitrary (spoofed) source,
// bypassing loss and delay.
func (n *Network) Inject(b []byte, from, to netip.AddrPort) {
	n.sent.Add(1)
	n.deliver(to, datagram{b: append([]byte(nil), b...), from: from})
}

func (n *Network) deliver(to netip.AddrPort, d datagram) {
	n.mu.Lock()
	e := n.endpoints[to]
	n.mu.Unlock()
	if e == nil {
		n.lost.Add(1)
		return
	}
	select {
	case e.queue <- d:
		n.delivered.Add(1)
	default:
		n.overflowed.Add(1)
	}
}
