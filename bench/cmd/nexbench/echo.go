package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/bench/internal/harness"
	"github.com/gamewire/gamewire/interop/rmcframe"
	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

// echoProtocol is the RMC protocol id of the echo calls: gamewire's server registers a
// handler that returns the parameters for it; nex-go's echo endpoint echoes any call.
const echoProtocol = 0x66

// echoMethod is the method id of the echo calls.
const echoMethod = 1

// echoTable measures, for each client count and RMC message size, gamewire's RMC echo
// on secure connections (nex.Server's Mux, the handler declared non-blocking: answered
// inline), nex-go's echo endpoint with the same requests, and a plain UDP echo of
// datagrams of the same size, and prints the ratios of each cell.
func echoTable(counts, sizes []int) {
	key := kerberos.DeriveKey(auth.GuestPassword, uint64(auth.PIDGuest))
	fmt.Println("\n| server | clients | size | rate | p50 | p99 | server CPU per call | client retransmissions |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	type cell struct{ gw, ng, udp figure }
	var cells []cell
	for _, n := range counts {
		*clients = n
		for _, size := range sizes {
			req := rmcframe.Request(echoProtocol, 1, echoMethod, size, 0)
			params := req[rmcframe.HeaderSize:]
			label := func(s string) string { return fmt.Sprintf("%s | %d | %d", s, n, size) }
			gw := row(label("gamewire nex.Server, RMC echo on the Mux (inline)"), "calls/s", func(c *harness.Child) (op, error) {
				s, err := nex.Login(context.Background(), c.Addr, nex.LoginConfig{User: "guest", Key: key[:], Config: prudp.Config{AccessKey: accessKey}})
				if err != nil {
					return nil, err
				}
				rowConns = append(rowConns, s.Conn)
				return func(ctx context.Context) error {
					out, err := s.RMC.Call(ctx, echoProtocol, echoMethod, params)
					if err != nil {
						return err
					}
					if string(out) != string(params) {
						return errors.New("rmc echo: the response's parameters differ from the request's")
					}
					return nil
				}, nil
			}, "gamewire")
			ng := row(label("nex-go v2.3.1 echo endpoint"), "calls/s", func(c *harness.Child) (op, error) {
				conn, err := dialNexgoSecure(c.Addr)
				if err != nil {
					return nil, err
				}
				rowConns = append(rowConns, conn)
				var call atomic.Uint32
				return func(ctx context.Context) error {
					r := rmcframe.Request(echoProtocol, call.Add(1), echoMethod, size, 0)
					if err := conn.Send(ctx, 0, r); err != nil {
						return err
					}
					m, err := conn.Recv(ctx)
					if err != nil {
						return err
					}
					return rmcframe.CheckEcho(r, m.Data)
				}, nil
			}, "nexgo")
			udp := row(label("plain UDP echo"), "req/s", func(c *harness.Child) (op, error) {
				return dialUDPEcho(c.Addr, size)
			}, "udpecho")
			cells = append(cells, cell{gw, ng, udp})
		}
	}
	fmt.Println("\n| clients | size | gamewire / nex-go calls/s | gamewire / UDP echo req/s | gamewire / UDP echo CPU per request | gamewire / nex-go CPU per call | gamewire p99 | UDP echo p99 | gamewire p99 / UDP echo p99 |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	i := 0
	for _, n := range counts {
		for _, size := range sizes {
			c := cells[i]
			i++
			fmt.Printf("| %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", n, size,
				ratio(c.gw.rate, c.ng.rate), ratio(c.gw.rate, c.udp.rate),
				ratio(float64(c.gw.cpu), float64(c.udp.cpu)), ratio(float64(c.gw.cpu), float64(c.ng.cpu)),
				c.gw.p99, c.udp.p99, ratio(float64(c.gw.p99), float64(c.udp.p99)))
		}
	}
}

// ratio formats a/b, or "-" when either figure is missing.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// serveUDPEcho is the ceiling: a plain UDP echo server, one goroutine per core.
func serveUDPEcho() (string, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	for range 2 {
		go func() {
			buf := make([]byte, 65536)
			for {
				n, a, err := c.ReadFromUDPAddrPort(buf)
				if err != nil {
					return
				}
				_, _ = c.WriteToUDPAddrPort(buf[:n], a)
			}
		}()
	}
	return c.LocalAddr().String(), nil
}

// dialUDPEcho returns a closed-loop operation against the UDP echo: one datagram of
// size bytes out, the same back, resent after 200 ms (a plain UDP echo has no
// reliability of its own).
func dialUDPEcho(addr string, size int) (op, error) {
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUDP("udp", nil, a)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, size)
	buf := make([]byte, 65536)
	return func(ctx context.Context) error {
		for range 25 {
			if _, err := c.Write(msg); err != nil {
				return err
			}
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if n, err := c.Read(buf); err == nil && n == len(msg) {
				return nil
			}
		}
		return errors.New("udp echo: no reply after 25 tries")
	}, nil
}

// ints parses a comma-separated list of positive integers.
func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// loadAverage returns the machine's 1-minute load average, read from /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
