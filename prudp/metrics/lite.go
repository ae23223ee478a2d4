package metrics

import (
	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/prometheus/client_golang/prometheus"
)

// Lite returns a Prometheus collector of a Lite listener's counters (open
// streams, streams opened by kind and closed by reason, refused
// connections, packets, bytes, writes, drops), read from l.Stats at every
// scrape; it goes next to the engine's own (Server) in
// `gamewire serve --dialect nex-lite --metrics`.
func Lite(l *lite.Listener) prometheus.Collector { return liteCollector{l} }

type liteCollector struct{ l *lite.Listener }

var (
	liteDescStreams = prometheus.NewDesc("gamewire_lite_streams", "Open Lite streams (WebSocket, TCP, TLS).", nil, nil)
	liteDescOpened  = prometheus.NewDesc("gamewire_lite_streams_opened_total", "Streams opened, by kind.", []string{"kind"}, nil)
	liteDescClosed  = prometheus.NewDesc("gamewire_lite_streams_closed_total", "Streams closed, by reason.", []string{"reason"}, nil)
	liteDescRefused = prometheus.NewDesc("gamewire_lite_connections_refused_total", "Connections refused before they became streams, by reason.", []string{"reason"}, nil)
	liteDescPackets = prometheus.NewDesc("gamewire_lite_packets_total", "Lite packets, by direction.", []string{"direction"}, nil)
	liteDescBytes   = prometheus.NewDesc("gamewire_lite_bytes_total", "Stream bytes, by direction.", []string{"direction"}, nil)
	liteDescWrites  = prometheus.NewDesc("gamewire_lite_writes_total", "Writes to streams (WebSocket messages).", nil, nil)
	liteDescDrops   = prometheus.NewDesc("gamewire_lite_drops_total", "Received packets not handed to the engine, by reason.", []string{"reason"}, nil)
	liteDescAccept  = prometheus.NewDesc("gamewire_lite_accept_errors_total", "Accept errors the listener waited out (out of descriptors, ...), by errno.", []string{"errno"}, nil)
	liteAllDescs    = []*prometheus.Desc{liteDescStreams, liteDescOpened, liteDescClosed, liteDescRefused, liteDescPackets, liteDescBytes, liteDescWrites, liteDescDrops, liteDescAccept}
	counterValue    = prometheus.CounterValue
)

func (liteCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range liteAllDescs {
		ch <- d
	}
}

func (c liteCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.l.Stats()
	ch <- prometheus.MustNewConstMetric(liteDescStreams, prometheus.GaugeValue, float64(st.Streams))
	labelled := func(d *prometheus.Desc, m map[string]uint64) {
		for k, v := range m {
			ch <- prometheus.MustNewConstMetric(d, counterValue, float64(v), k)
		}
	}
	labelled(liteDescOpened, st.Accepted)
	labelled(liteDescClosed, st.Closed)
	labelled(liteDescRefused, st.Refused)
	labelled(liteDescDrops, st.Drops)
	labelled(liteDescAccept, st.AcceptErrors)
	ch <- prometheus.MustNewConstMetric(liteDescPackets, counterValue, float64(st.PacketsIn), "in")
	ch <- prometheus.MustNewConstMetric(liteDescPackets, counterValue, float64(st.PacketsOut), "out")
	ch <- prometheus.MustNewConstMetric(liteDescBytes, counterValue, float64(st.BytesIn), "in")
	ch <- prometheus.MustNewConstMetric(liteDescBytes, counterValue, float64(st.BytesOut), "out")
	ch <- prometheus.MustNewConstMetric(liteDescWrites, counterValue, float64(st.Writes))
}
