//go:build !race

// The race detector makes sync.Pool drop items on purpose, so the HMAC states
// prudp/wire pools are reallocated; allocation counts only hold without it.

package dissect

import (
	"bytes"
	"testing"
)

// TestDecodeSteadyStateAllocations checks the zero-allocation promise of the
// hot path: once a flow exists, decoding, verifying, decrypting and
// reassembling more V1 DATA packets allocates nothing per packet (the
// allocations counted are the per-capture and per-flow setup).
func TestDecodeSteadyStateAllocations(t *testing.T) {
	small := benchCapture(t, 10)
	large := benchCapture(t, 100) // ten times the packets
	keys := &Keys{AccessKeys: []string{"6f599f81"}}
	run := func(c []byte) float64 {
		return testing.AllocsPerRun(3, func() {
			d := New(Config{Keys: keys})
			_ = d.Decode(bytes.NewReader(c), func(*Record) error { return nil })
		})
	}
	a, b := run(small), run(large)
	t.Logf("allocations per capture: %.0f (%d bytes), %.0f (%d bytes)", a, len(small), b, len(large))
	if b-a > 20 {
		t.Fatalf("ten times the packets cost %.0f more allocations; the per-packet path allocates", b-a)
	}
}
