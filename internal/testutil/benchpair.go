package testutil

import (
	"slices"
	"testing"
	"time"
)

// BenchPair measures an operation done two ways, a hand-written peer and the code
// that replaced it, in the same run. It runs three sub-benchmarks:
//
//   - "handwritten" and "generated": each way alone, with allocations reported
//     (their B/op and allocs/op are the ones to quote; their ns/op suffers from
//     whatever else the machine does while each runs).
//   - "interleaved": the two ways in alternating blocks of iterations (a block
//     takes about 10 µs; which way goes first alternates between pairs of blocks),
//     so that the load swings of a shared machine fall on both alike. It reports
//     "hand-ns/op" and "gen-ns/op" (each way's mean over all its blocks) and
//     "hand/gen", the median over the pairs of blocks of the ratio of the two
//     blocks' times: above 1, the generated way is faster. Its own ns/op is the
//     time of one pair of blocks.
//
// An operation returns an error only when it went wrong; that fails the benchmark.
func BenchPair(b *testing.B, hand, gen func() error) {
	b.Helper()
	for _, w := range []struct {
		name string
		op   func() error
	}{{"handwritten", hand}, {"generated", gen}} {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := w.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		k := max(blockSize(b, hand), blockSize(b, gen))
		var th, tg time.Duration
		var ratios []float64
		for b.Loop() {
			var dh, dg time.Duration
			if len(ratios)%2 == 0 {
				dh, dg = timeBlock(b, hand, k), timeBlock(b, gen, k)
			} else {
				dg, dh = timeBlock(b, gen, k), timeBlock(b, hand, k)
			}
			th += dh
			tg += dg
			ratios = append(ratios, float64(dh)/float64(max(dg, 1)))
		}
		n := float64(len(ratios) * k)
		slices.Sort(ratios)
		b.ReportMetric(float64(th)/n, "hand-ns/op")
		b.ReportMetric(float64(tg)/n, "gen-ns/op")
		b.ReportMetric(ratios[len(ratios)/2], "hand/gen")
	})
}

// blockSize returns how many calls of op take about 10 µs (8 to 4096).
func blockSize(b *testing.B, op func() error) int {
	const calls = 64
	d := timeBlock(b, op, calls)
	per := max(d/calls, 1)
	return min(max(int(10*time.Microsecond/per), 8), 4096)
}

// timeBlock returns the time k calls of op take.
func timeBlock(b *testing.B, op func() error, k int) time.Duration {
	start := time.Now()
	for range k {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}
