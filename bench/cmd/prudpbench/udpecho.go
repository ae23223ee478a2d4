package main

import (
	"context"
	"errors"
	"net"
	"time"
)

// serveUDPEcho is the ceiling: a plain UDP echo server, one goroutine per core.
func serveUDPEcho(ctx context.Context) (string, error) {
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
				c.WriteToUDPAddrPort(buf[:n], a)
			}
		}()
	}
	return c.LocalAddr().String(), nil
}

type udpEchoClient struct {
	c   *net.UDPConn
	buf []byte
}

func dialUDPEcho(ctx context.Context, addr string) (requester, error) {
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUDP("udp", nil, a)
	if err != nil {
		return nil, err
	}
	return &udpEchoClient{c: c, buf: make([]byte, 65536)}, nil
}

// roundTrip resends after 200 ms: a plain UDP echo has no reliability of its own.
func (u *udpEchoClient) roundTrip(ctx context.Context, msg []byte) error {
	for try := 0; try < 25; try++ {
		if _, err := u.c.Write(msg); err != nil {
			return err
		}
		u.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := u.c.Read(u.buf)
		if err == nil && n == len(msg) {
			return nil
		}
	}
	return errors.New("udp echo: no reply after 25 tries")
}

func (u *udpEchoClient) retransmits() uint64 { return 0 }

func (u *udpEchoClient) close() { u.c.Close() }
