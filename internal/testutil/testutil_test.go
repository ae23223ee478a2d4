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

func TestProcessCPUAdvances(t *testing.T) {
	before := ProcessCPU()
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i
	}
	_ = x
	after := ProcessCPU()
	if before == 0 && after == 0 {
		t.Skip("no CPU accounting on this system")
	}
	if after <= before {
		t.Fatalf("CPU time did not advance over a busy loop: %v then %v", before, after)
	}
}
