package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp"
)

// TestServeLimitFlags: serve --max-conns caps the echo server's
// connections (a second client gets no answer), and bad --max-buffer and
// --max-conns values are refused with the flag named.
func TestServeLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-buffer", "0"}, "--max-buffer 0: must be positive"},
		{[]string{"--max-buffer", "lots"}, `invalid argument "lots" for "--max-buffer"`},
		{[]string{"--max-conns", "-1"}, "--max-conns -1: must be positive"},
	} {
		err := runCLIContext(t, context.Background(), &syncWriter{}, append([]string{"serve", "--echo", "--listen", "127.0.0.1:1"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}

	probe, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	udpAddr := probe.LocalAddr().String()
	probe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--echo", "--listen", udpAddr, "--max-conns", "1", "--max-buffer", "1MiB")
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out)
		}
	}()
	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer dcancel()
	var c *prudp.Conn
	for c == nil {
		hctx, hcancel := context.WithTimeout(dctx, 500*time.Millisecond)
		c, err = prudp.Dial(hctx, udpAddr, &prudp.Config{AccessKey: defaultAccessKey})
		hcancel()
		if err != nil && dctx.Err() != nil {
			t.Fatalf("dial: %v\n%s", err, out)
		}
	}
	defer c.Abort()
	if rep, err := prudp.EchoProbe(dctx, c, 0, 3, 100); err != nil || rep.Received != 3 {
		t.Fatalf("echo: %v, %v", rep, err)
	}
	hctx, hcancel := context.WithTimeout(dctx, 2*time.Second)
	defer hcancel()
	if c2, err := prudp.Dial(hctx, udpAddr, &prudp.Config{AccessKey: defaultAccessKey}); err == nil {
		c2.Abort()
		t.Fatal("a second connection was accepted with --max-conns 1")
	}
}
