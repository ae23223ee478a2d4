package harness

import (
	"slices"
	"time"
)

// Latencies collects round-trip times; each client appends to its own slice.
type Latencies []time.Duration

// Merge joins the clients' latencies, sorted.
func Merge(ls []Latencies) Latencies {
	var all Latencies
	for _, l := range ls {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

// Quantile of a sorted slice.
func (l Latencies) Quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(q * float64(len(l)-1))
	return l[i]
}
