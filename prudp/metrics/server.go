package metrics

import (
	"github.com/gamewire/gamewire/prudp"
	"github.com/prometheus/client_golang/prometheus"
)

// Server returns a Prometheus collector of a PRUDP server's counters
// (connections, packets, bytes, messages, retransmissions, drops by reason,
// ended connections by reason, batched system calls, bytes buffered), read from
// srv.Stats at every scrape.
func Server(srv *prudp.Server) prometheus.Collector { return serverCollector{srv} }

type serverCollector struct{ srv *prudp.Server }

var (
	descConns       = prometheus.NewDesc("gamewire_prudp_connections", "Open PRUDP connections.", nil, nil)
	descSessions    = prometheus.NewDesc("gamewire_prudp_sessions", "Connection states held, lingering ones included.", nil, nil)
	descAccepted    = prometheus.NewDesc("gamewire_prudp_connections_accepted_total", "Connections established.", nil, nil)
	descEnded       = prometheus.NewDesc("gamewire_prudp_connections_ended_total", "Connections ended, by reason.", []string{"reason"}, nil)
	descSyns        = prometheus.NewDesc("gamewire_prudp_syns_answered_total", "SYN-ACKs sent (statelessly).", nil, nil)
	descDatagrams   = prometheus.NewDesc("gamewire_prudp_datagrams_received_total", "Datagrams read from the socket.", nil, nil)
	descPackets     = prometheus.NewDesc("gamewire_prudp_packets_total", "Packets of connections, by direction.", []string{"direction"}, nil)
	descBytes       = prometheus.NewDesc("gamewire_prudp_bytes_total", "Bytes of connections' packets, by direction.", []string{"direction"}, nil)
	descMessages    = prometheus.NewDesc("gamewire_prudp_messages_total", "Whole messages, by direction.", []string{"direction"}, nil)
	descRetransmits = prometheus.NewDesc("gamewire_prudp_retransmissions_total", "Packets sent again.", nil, nil)
	descDrops       = prometheus.NewDesc("gamewire_prudp_drops_total", "Packets dropped, by reason.", []string{"reason"}, nil)
	descWriteErrors = prometheus.NewDesc("gamewire_prudp_write_errors_total", "Failed socket writes.", nil, nil)
	descBatchedIO   = prometheus.NewDesc("gamewire_prudp_batched_syscalls_total", "System calls that sent (segmented) or read (coalesced) several datagrams at once.", []string{"direction"}, nil)
	descBuffered    = prometheus.NewDesc("gamewire_prudp_buffered_bytes", "Bytes held in reorder buffers, unfinished messages and the connections' receive and send queues (the budget is Config.MaxBuffer).", nil, nil)
	descOverruns    = prometheus.NewDesc("gamewire_prudp_inline_overruns_total", "InlineHandler.ServeInline calls that took longer than Server.InlineLimit.", nil, nil)
)

func (serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConns, descSessions, descAccepted, descEnded, descSyns, descDatagrams,
		descPackets, descBytes, descMessages, descRetransmits, descDrops, descWriteErrors, descBatchedIO, descOverruns, descBuffered} {
		ch <- d
	}
}

func (c serverCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.srv.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(descConns, float64(st.Connections))
	gauge(descSessions, float64(st.Sessions))
	gauge(descBuffered, float64(st.Buffered))
	counter(descAccepted, st.Accepted)
	for k, v := range st.Ended {
		counter(descEnded, v, k)
	}
	counter(descSyns, st.SYNsAnswered)
	counter(descDatagrams, st.DatagramsIn)
	counter(descPackets, st.PacketsIn, "in")
	counter(descPackets, st.PacketsOut, "out")
	counter(descBytes, st.BytesIn, "in")
	counter(descBytes, st.BytesOut, "out")
	counter(descMessages, st.MessagesIn, "in")
	counter(descMessages, st.MessagesOut, "out")
	counter(descRetransmits, st.Retransmits)
	for k, v := range st.Drops {
		counter(descDrops, v, k)
	}
	for k, v := range st.ConnDrops {
		counter(descDrops, v, k)
	}
	counter(descWriteErrors, st.WriteErrors)
	counter(descBatchedIO, st.SegmentedWrites, "out")
	counter(descBatchedIO, st.CoalescedReads, "in")
	counter(descOverruns, st.InlineOverruns)
}
