package main

import (
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/prometheus/client_golang/prometheus"
)

// natCollector exports how many auto-matchmakes NAT-aware matchmaking steered
// (matchmaking.Server.NATStats; docs/nex.md "NAT-aware matchmaking"), read at
// every scrape.
type natCollector struct{ mm *matchmaking.Server }

var descNATChoices = prometheus.NewDesc("gamewire_nex_nat_matchmaking_total",
	"Auto-matchmakes NAT-aware matchmaking steered, by choice: preferred (joined a session other than the usual first, for a better reachability), refused (strict left unreachable sessions out and created one).",
	[]string{"choice"}, nil)

func (natCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descNATChoices }

func (c natCollector) Collect(ch chan<- prometheus.Metric) {
	preferred, refused := c.mm.NATStats()
	ch <- prometheus.MustNewConstMetric(descNATChoices, prometheus.CounterValue, float64(preferred), "preferred")
	ch <- prometheus.MustNewConstMetric(descNATChoices, prometheus.CounterValue, float64(refused), "refused")
}
