package pipboy

import (
	"math/rand/v2"
	"testing"
)

// TestIDTable checks the table against a Go map under random inserts and deletes,
// with keys crowded into few home slots so probe runs wrap and shift.
func TestIDTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab idTable
	ref := map[uint32]int32{}
	for step := range 200000 {
		k := r.Uint32N(3000)
		if step%7 == 0 {
			k = r.Uint32() // some spread-out keys too
		}
		switch r.IntN(3) {
		case 0, 1:
			v := int32(r.IntN(1 << 30))
			tab.put(k, v)
			ref[k] = v
		case 2:
			_, inRef := ref[k]
			if got := tab.del(k); got != inRef {
				t.Fatalf("step %d: del(%d) = %v, want %v", step, k, got, inRef)
			}
			delete(ref, k)
		}
		if step%5000 == 0 {
			if tab.len() != len(ref) {
				t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(ref))
			}
			for k, v := range ref {
				if got, ok := tab.get(k); !ok || got != v {
					t.Fatalf("step %d: get(%d) = %d %v, want %d", step, k, got, ok, v)
				}
			}
			n := 0
			tab.each(func(k uint32, v int32) bool {
				if ref[k] != v {
					t.Fatalf("each: %d -> %d, want %d", k, v, ref[k])
				}
				n++
				return true
			})
			if n != len(ref) {
				t.Fatalf("each visited %d, want %d", n, len(ref))
			}
		}
	}
	tab.reset(0)
	if _, ok := tab.get(5); ok || tab.len() != 0 {
		t.Fatal("reset left entries")
	}
}
