package main

import (
	"slices"
	"time"
)

// latencies collects round-trip times; each client appends to its own slice.
type latencies []time.Duration

func merge(ls []latencies) latencies {
	var all latencies
	for _, l := range ls {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

// quantile of a sorted slice.
func (l latencies) quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(q * float64(len(l)-1))
	return l[i]
}
