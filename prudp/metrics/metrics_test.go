package metrics

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/gamewire/gamewire/prudp/wire"
)

// gather registers c and returns every metric's value by name and labels
// ("gamewire_prudp_packets_total/in").
func gather(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
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
	return values
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

// TestCollector registers a server's collector, moves a 256 KiB message and
// an echo over real loopback UDP, and checks the gathered metrics against
// the server's Stats taken just before (counters only grow): the open
// connection, packets and bytes both ways, messages, the batched system
// calls.
func TestCollector(t *testing.T) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &prudp.Server{}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	defer func() { srv.Close(); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := prudp.Dial(ctx, pc.LocalAddr().String(), nil)
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
	st := srv.Stats()
	values := gather(t, Server(srv))
	for name, min := range map[string]uint64{
		"gamewire_prudp_connections":                1,
		"gamewire_prudp_sessions":                   1,
		"gamewire_prudp_connections_accepted_total": st.Accepted,
		"gamewire_prudp_syns_answered_total":        st.SYNsAnswered,
		"gamewire_prudp_datagrams_received_total":   max(st.DatagramsIn, 200), // 256 KiB in 1,300-byte fragments
		"gamewire_prudp_packets_total/in":           max(st.PacketsIn, 200),
		"gamewire_prudp_packets_total/out":          max(st.PacketsOut, 200),
		"gamewire_prudp_bytes_total/in":             max(st.BytesIn, 256<<10),
		"gamewire_prudp_bytes_total/out":            max(st.BytesOut, 256<<10),
		"gamewire_prudp_messages_total/in":          max(st.MessagesIn, 1),
		"gamewire_prudp_messages_total/out":         max(st.MessagesOut, 1),
		"gamewire_prudp_retransmissions_total":      st.Retransmits,
		"gamewire_prudp_batched_syscalls_total/out": st.SegmentedWrites,
		"gamewire_prudp_batched_syscalls_total/in":  st.CoalescedReads,
		"gamewire_prudp_write_errors_total":         0,
		"gamewire_prudp_inline_overruns_total":      0,
	} {
		got, ok := values[name]
		if !ok {
			t.Errorf("metric %s missing; have %v", name, values)
			continue
		}
		if got < float64(min) {
			t.Errorf("%s = %v, want at least %v", name, got, min)
		}
	}
	if v := values["gamewire_prudp_write_errors_total"]; v != 0 {
		t.Errorf("%v write errors", v)
	}
}

// TestLiteCollector: the Lite collector reports the transport's counters.
func TestLiteCollector(t *testing.T) {
	l, err := lite.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p1 := l.Port(1)
	c, err := lite.DialStream(context.Background(), "ws://"+l.Addr().String()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := wire.Packet{Src: wire.VPort{Stream: 10, Port: 0x1f}, Dst: wire.VPort{Stream: 10, Port: 1},
		Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 1}
	b, err := wire.NewLite("").Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, _, err := p1.ReadFromUDPAddrPort(make([]byte, 4096))
		read <- err
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no packet within 20 s")
	}
	found := gather(t, Lite(l))
	for name, want := range map[string]float64{
		"gamewire_lite_streams":                 1,
		"gamewire_lite_streams_opened_total/ws": 1,
		"gamewire_lite_packets_total/in":        1,
	} {
		if found[name] != want {
			t.Errorf("%s = %v, want %v (all: %v)", name, found[name], want, found)
		}
	}
}
