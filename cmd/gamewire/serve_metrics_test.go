package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp"
)

// TestServeMetricsCLI runs `serve --echo --metrics ADDR`, echoes a few
// messages and reads the Prometheus text the issue asks for: connections,
// packets, retransmissions and drops, labelled with the server.
func TestServeMetricsCLI(t *testing.T) {
	probe, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	udpAddr := probe.LocalAddr().String()
	probe.Close()
	metricsAddr := freeTCPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--echo", "--listen", udpAddr, "--metrics", metricsAddr)
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
	if rep, err := prudp.EchoProbe(dctx, c, 0, 5, 3000); err != nil || rep.Received != 5 {
		t.Fatalf("echo: %v, %v", rep, err)
	}
	req, _ := http.NewRequestWithContext(dctx, http.MethodGet, "http://"+metricsAddr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v\n%s", err, out)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	text := string(body)
	for _, want := range []string{
		`gamewire_prudp_connections{server="echo"} 1`,
		`gamewire_prudp_messages_total{direction="in",server="echo"} 5`,
		`gamewire_prudp_messages_total{direction="out",server="echo"} 5`,
		`gamewire_prudp_retransmissions_total{server="echo"}`,
		`gamewire_prudp_write_errors_total{server="echo"} 0`,
		`gamewire_prudp_packets_total{direction="in",server="echo"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
}
