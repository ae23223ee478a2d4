package prudp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestCollector registers a server's Collector, moves a 256 KiB message and
// an echo over real loopback UDP, and checks the gathered metrics: the open
// connection, packets and bytes both ways, messages, and (where the socket
// segments) the batched system calls.
func TestCollector(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	segments := newOffload(pc) != nil
	srv := &Server{}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	defer func() { srv.Close(); <-done }()
	reg := prometheus.NewRegistry()
	if err := reg.Register(srv.Collector()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, pc.LocalAddr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Abort()
	msg := make([]byte, 256<<10)
	if err := c.Send(ctx, 0, msg); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Recv(ctx); err != nil || len(m.Data) != len(msg) {
		t.Fatalf("echo: %d bytes, %v", len(m.Data), err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "/" + l.GetValue()
			}
			values[name] = metricValue(m)
		}
	}
	for name, min := range map[string]float64{
		"gamewire_prudp_connections":                1,
		"gamewire_prudp_connections_accepted_total": 1,
		"gamewire_prudp_syns_answered_total":        1,
		"gamewire_prudp_datagrams_received_total":   200, // 256 KiB in 1,300-byte fragments
		"gamewire_prudp_packets_total/in":           200,
		"gamewire_prudp_packets_total/out":          200,
		"gamewire_prudp_bytes_total/in":             256 << 10,
		"gamewire_prudp_bytes_total/out":            256 << 10,
		"gamewire_prudp_messages_total/in":          1,
		"gamewire_prudp_messages_total/out":         1,
		"gamewire_prudp_batched_syscalls_total/out": 0,
		"gamewire_prudp_batched_syscalls_total/in":  0,
		"gamewire_prudp_write_errors_total":         0,
	} {
		got, ok := values[name]
		if !ok {
			t.Errorf("metric %s missing; have %v", name, values)
			continue
		}
		if got < min {
			t.Errorf("%s = %v, want at least %v", name, got, min)
		}
	}
	if segments && (values["gamewire_prudp_batched_syscalls_total/out"] == 0 || values["gamewire_prudp_batched_syscalls_total/in"] == 0) {
		t.Errorf("batched system calls out %v, in %v: want both > 0 on a socket that segments",
			values["gamewire_prudp_batched_syscalls_total/out"], values["gamewire_prudp_batched_syscalls_total/in"])
	}
	if v := values["gamewire_prudp_write_errors_total"]; v != 0 {
		t.Errorf("%v write errors", v)
	}
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}
