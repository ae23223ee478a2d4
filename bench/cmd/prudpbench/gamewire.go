package main

import (
	"context"
	"errors"
	"net"

	"github.com/gamewire/gamewire/interop/rmcframe"
	"github.com/gamewire/gamewire/prudp"
)

// clientConfig is the configuration of every PRUDP benchmark client.
func clientConfig() *prudp.Config {
	d, err := prudp.ParseDialect(*serveDial)
	if err != nil {
		panic(err)
	}
	return &prudp.Config{Dialect: d, AccessKey: *accessKey}
}

// serveGamewire runs gamewire's PRUDP server with the echo handler.
func serveGamewire(ctx context.Context) (string, error) {
	d, err := prudp.ParseDialect(*serveDial)
	if err != nil {
		return "", err
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return "", err
	}
	srv := &prudp.Server{Config: prudp.Config{Dialect: d, AccessKey: *accessKey}, Handler: prudp.EchoHandler}
	go srv.Serve(pc)
	return pc.LocalAddr().String(), nil
}

// prudpClient is gamewire's client; with rmc set it checks the RMC response nex-go gives
// instead of a byte-for-byte echo.
type prudpClient struct {
	c   *prudp.Conn
	rmc bool
}

func dialGamewire(ctx context.Context, addr string) (requester, error) {
	c, err := prudp.Dial(ctx, addr, clientConfig())
	if err != nil {
		return nil, err
	}
	return &prudpClient{c: c}, nil
}

func dialNexgo(ctx context.Context, addr string) (requester, error) {
	c, err := prudp.Dial(ctx, addr, clientConfig())
	if err != nil {
		return nil, err
	}
	return &prudpClient{c: c, rmc: true}, nil
}

func (p *prudpClient) roundTrip(ctx context.Context, msg []byte) error {
	if err := p.c.Send(ctx, 0, msg); err != nil {
		return err
	}
	m, err := p.c.Recv(ctx)
	if err != nil {
		return err
	}
	if p.rmc {
		return rmcframe.CheckEcho(msg, m.Data)
	}
	if string(m.Data) != string(msg) {
		return errors.New("echo differs from the request")
	}
	return nil
}

func (p *prudpClient) retransmits() uint64 { return p.c.Stats().Retransmits }

func (p *prudpClient) close() { p.c.Abort() }

// benchMessage frames every benchmark message as an RMC request, which nex-go needs and
// gamewire's echo server returns unchanged.
func benchMessage(size int) []byte { return rmcframe.Request(0x66, 1, 1, size, 0) }
