package pipboy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DiscoveryRequest is what an app broadcasts to UDP port 28000 ("Discover" in the Pip-Boy PROTOCOL.md).
const DiscoveryRequest = `{"cmd":"autodiscover"}`

// DiscoveryReply is a game's answer to discovery.
type DiscoveryReply struct {
	IsBusy      bool   `json:"IsBusy"`
	MachineType string `json:"MachineType"` // "PC" or "PS4"
}

// ParseDiscoveryRequest checks that b is an autodiscover request.
func ParseDiscoveryRequest(b []byte) error {
	var req struct {
		Cmd string `json:"cmd"`
	}
	if err := strictUnmarshal(b, &req); err != nil {
		return fmt.Errorf("pipboy: discovery request: %w: %w", ErrBadJSON, err)
	}
	if req.Cmd != "autodiscover" {
		return fmt.Errorf("pipboy: discovery request: %w: cmd is %q, want \"autodiscover\"", ErrBadJSON, req.Cmd)
	}
	return nil
}

// ParseDiscoveryReply parses a game's discovery answer.
func ParseDiscoveryReply(b []byte) (DiscoveryReply, error) {
	var raw struct {
		IsBusy      *bool   `json:"IsBusy"`
		MachineType *string `json:"MachineType"`
	}
	if err := strictUnmarshal(b, &raw); err != nil {
		return DiscoveryReply{}, fmt.Errorf("pipboy: discovery reply: %w: %w", ErrBadJSON, err)
	}
	if raw.IsBusy == nil || raw.MachineType == nil {
		return DiscoveryReply{}, fmt.Errorf("pipboy: discovery reply: %w: missing \"IsBusy\" or \"MachineType\"", ErrBadJSON)
	}
	return DiscoveryReply{IsBusy: *raw.IsBusy, MachineType: *raw.MachineType}, nil
}

// Responder answers discovery requests on behalf of a game (or emulator, or relay).
// The zero value answers on 127.0.0.1:28000 as an idle PC.
type Responder struct {
	// Addr is the UDP address to listen on; default "127.0.0.1:28000". Use ":28000"
	// to answer apps on the network.
	Addr string
	// MachineType is sent in replies; default "PC".
	MachineType string
	// Busy reports whether an app is connected; default never.
	Busy func() bool
	// Logger receives bad requests; default none.
	Logger *slog.Logger

	mu     sync.Mutex
	pc     net.PacketConn
	closed bool
}

// Listen opens the UDP socket, so callers can learn the port before Serve.
func (r *Responder) Listen() (net.PacketConn, error) {
	return net.ListenPacket("udp", loopbackAddr(r.Addr, DiscoveryPort))
}

// ListenAndServe listens on Addr and answers until Close.
func (r *Responder) ListenAndServe() error {
	pc, err := r.Listen()
	if err != nil {
		return err
	}
	return r.Serve(pc)
}

// Serve answers requests arriving on pc until Close. A malformed request is logged
// and ignored; the responder keeps answering others.
func (r *Responder) Serve(pc net.PacketConn) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		pc.Close()
		return ErrServerClosed
	}
	r.pc = pc
	r.mu.Unlock()
	log := loggerOr(r.Logger)
	buf := make([]byte, 2048)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			r.mu.Lock()
			closed := r.closed
			r.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			return err
		}
		if err := ParseDiscoveryRequest(buf[:n]); err != nil {
			log.Warn("pipboy: ignoring datagram on the discovery port", "from", from, "err", err)
			continue
		}
		reply := DiscoveryReply{MachineType: r.MachineType}
		if reply.MachineType == "" {
			reply.MachineType = "PC"
		}
		if r.Busy != nil {
			reply.IsBusy = r.Busy()
		}
		b, _ := json.Marshal(reply)
		if _, err := pc.WriteTo(b, from); err != nil {
			log.Info("pipboy: discovery reply", "to", from, "err", err)
		}
	}
}

// LocalAddr returns the responder's address once it listens.
func (r *Responder) LocalAddr() net.Addr {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pc == nil {
		return nil
	}
	return r.pc.LocalAddr()
}

// Close stops the responder.
func (r *Responder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.pc != nil {
		return r.pc.Close()
	}
	return nil
}

// Game is one game that answered discovery.
type Game struct {
	Addr netip.Addr // where the answer came from; connect to it on StreamPort
	DiscoveryReply
}

// DefaultBroadcast is where Discover sends by default.
const DefaultBroadcast = "255.255.255.255:28000"

// Discover sends the autodiscover request to target (default DefaultBroadcast; any
// host:port works, e.g. a subnet's broadcast address or 127.0.0.1:port in tests),
// collects answers for wait (default 2 s) or until ctx ends, and returns each game once,
// in the order they answered. Malformed answers are skipped and reported in the
// returned error only if no game answered properly.
func Discover(ctx context.Context, target string, wait time.Duration) ([]Game, error) {
	if target == "" {
		target = DefaultBroadcast
	}
	if wait <= 0 {
		wait = 2 * time.Second
	}
	to, err := net.ResolveUDPAddr("udp4", target)
	if err != nil {
		return nil, err
	}
	var local *net.UDPAddr
	if to.IP.IsLoopback() {
		local = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	}
	conn, err := net.ListenUDP("udp4", local) // Go enables SO_BROADCAST on UDP sockets
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := conn.WriteToUDP([]byte(DiscoveryRequest), to); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()
	var games []Game
	var bad error
	seen := map[netip.Addr]bool{}
	buf := make([]byte, 2048)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			return games, err
		}
		reply, err := ParseDiscoveryReply(buf[:n])
		if err != nil {
			bad = fmt.Errorf("from %s: %w", from, err)
			continue
		}
		a := from.Addr().Unmap()
		if !seen[a] {
			seen[a] = true
			games = append(games, Game{Addr: a, DiscoveryReply: reply})
		}
	}
	if len(games) == 0 && bad != nil {
		return nil, bad
	}
	return games, nil
}
