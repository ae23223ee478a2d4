package testutil

import (
	"bytes"
	"testing"
)

func TestUnhex(t *testing.T) {
	got := Unhex(t, "0x32 ab:98\n64")
	if !bytes.Equal(got, []byte{0x32, 0xab, 0x98, 0x64}) {
		t.Fatalf("Unhex = % x", got)
	}
}

// TestProcessCPUAdvances: the reading advances while this process spins (the
// loop waits for that, bounded only so a broken reader fails).
func TestProcessCPUAdvances(t *testing.T) {
	before := ProcessCPU()
	x := 0
	for i := 0; ; i++ {
		for j := 0; j < 1_000_000; j++ {
			x += j
		}
		after := ProcessCPU()
		if before == 0 && after == 0 && i == 1000 {
			t.Skip("no CPU accounting on this system")
		}
		if after > before {
			break
		}
		if i == 100_000 {
			t.Fatalf("CPU time stays %v over 10^11 additions", before)
		}
	}
	_ = x
}
