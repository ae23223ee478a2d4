package lite

import "github.com/prometheus/client_golang/prometheus"

// Collector returns a Prometheus collector of the transport's counters
// (open streams, streams opened by kind and closed by reason, refused
// connections, packets, bytes, writes, drops), next to the engine's own
// (prudp.Server.Collector) in `gamewire serve --dialect nex-lite --metrics`.
func (l *Listener) Collector() prometheus.Collector { return collector{l.h} }

type collector struct{ h *hub }

var (
	descStreams  = prometheus.NewDesc("gamewire_lite_streams", "Open Lite streams (WebSocket, TCP, TLS).", nil, nil)
	descOpened   = prometheus.NewDesc("gamewire_lite_streams_opened_total", "Streams opened, by kind.", []string{"kind"}, nil)
	descClosed   = prometheus.NewDesc("gamewire_lite_streams_closed_total", "Streams closed, by reason.", []string{"reason"}, nil)
	descRefused  = prometheus.NewDesc("gamewire_lite_connections_refused_total", "Connections refused before they became streams, by reason.", []string{"reason"}, nil)
	descPackets  = prometheus.NewDesc("gamewire_lite_packets_total", "Lite packets, by direction.", []string{"direction"}, nil)
	descBytes    = prometheus.NewDesc("gamewire_lite_bytes_total", "Stream bytes, by direction.", []string{"direction"}, nil)
	descWrites   = prometheus.NewDesc("gamewire_lite_writes_total", "Writes to streams (WebSocket messages).", nil, nil)
	descDrops    = prometheus.NewDesc("gamewire_lite_drops_total", "Received packets not handed to the engine, by reason.", []string{"reason"}, nil)
	descAccept   = prometheus.NewDesc("gamewire_lite_accept_errors_total", "Accept errors the listener waited out (out of descriptors, ...), by errno.", []string{"errno"}, nil)
	allDescs     = []*prometheus.Desc{descStreams, descOpened, descClosed, descRefused, descPackets, descBytes, descWrites, descDrops, descAccept}
	counterValue = prometheus.CounterValue
)

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st := c.h.stats()
	ch <- prometheus.MustNewConstMetric(descStreams, prometheus.GaugeValue, float64(st.Streams))
	labelled := func(d *prometheus.Desc, m map[string]uint64) {
		for k, v := range m {
			ch <- prometheus.MustNewConstMetric(d, counterValue, float64(v), k)
		}
	}
	labelled(descOpened, st.Accepted)
	labelled(descClosed, st.Closed)
	labelled(descRefused, st.Refused)
	labelled(descDrops, st.Drops)
	labelled(descAccept, st.AcceptErrors)
	ch <- prometheus.MustNewConstMetric(descPackets, counterValue, float64(st.PacketsIn), "in")
	ch <- prometheus.MustNewConstMetric(descPackets, counterValue, float64(st.PacketsOut), "out")
	ch <- prometheus.MustNewConstMetric(descBytes, counterValue, float64(st.BytesIn), "in")
	ch <- prometheus.MustNewConstMetric(descBytes, counterValue, float64(st.BytesOut), "out")
	ch <- prometheus.MustNewConstMetric(descWrites, counterValue, float64(st.Writes))
}
