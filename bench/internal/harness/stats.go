package harness

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
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

// Run drives one closed loop per op for d against server child c: each loop calls
// its op again as soon as the previous call returns. It returns the latencies of
// the calls that completed (sorted), the wall time, and c's CPU time over the run.
// The first error an op returns stops its loop and is returned once all loops end.
func Run(c *Child, ops []func() error, d time.Duration) (lat Latencies, elapsed, cpu time.Duration, err error) {
	var stop atomic.Bool
	var failed atomic.Value
	per := make([]Latencies, len(ops))
	cpu0 := c.CPU()
	start := time.Now()
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				t := time.Now()
				if err := op(); err != nil {
					failed.Store(err)
					return
				}
				per[i] = append(per[i], time.Since(t))
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	elapsed, cpu = time.Since(start), c.CPU()-cpu0
	if e, ok := failed.Load().(error); ok {
		return nil, elapsed, cpu, e
	}
	lat = Merge(per)
	if len(lat) == 0 {
		return nil, elapsed, cpu, errors.New("no operation completed")
	}
	return lat, elapsed, cpu, nil
}
