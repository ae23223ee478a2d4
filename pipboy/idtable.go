package pipboy

// idTable maps value ids to slots: open addressing with linear probing and
// backward-shift deletion, about three times faster than a Go map for the dense
// sequences of lookups a dump makes. Empty slots hold val -1.
type idTable struct {
	keys  []uint32
	vals  []int32
	n     int
	shift uint // 32 - log2(len(keys))
}

const idTableMin = 16

func (t *idTable) home(k uint32) int { return int((k * 0x9E3779B1) >> t.shift) }

// reset empties the table, sized for about hint entries.
func (t *idTable) reset(hint int) {
	size := idTableMin
	for size < 2*hint {
		size <<= 1
	}
	if len(t.keys) == size {
		if t.n > 0 {
			for i := range t.vals {
				t.vals[i] = -1
			}
		}
		t.n = 0
		return
	}
	t.keys = make([]uint32, size)
	t.vals = make([]int32, size)
	for i := range t.vals {
		t.vals[i] = -1
	}
	t.n = 0
	t.shift = 32
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
}

func (t *idTable) len() int { return t.n }

func (t *idTable) get(k uint32) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := len(t.keys) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		v := t.vals[i]
		if v < 0 {
			return 0, false
		}
		if t.keys[i] == k {
			return v, true
		}
	}
}

// put inserts or updates k. v must not be negative.
func (t *idTable) put(k uint32, v int32) {
	if len(t.keys) == 0 || 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		if t.vals[i] < 0 {
			t.keys[i], t.vals[i] = k, v
			t.n++
			return
		}
		if t.keys[i] == k {
			t.vals[i] = v
			return
		}
	}
}

func (t *idTable) grow() {
	keys, vals := t.keys, t.vals
	t.reset(max(t.n+1, len(keys)))
	for i, v := range vals {
		if v >= 0 {
			t.put(keys[i], v)
		}
	}
}

// del removes k, shifting later entries of its probe run back.
func (t *idTable) del(k uint32) bool {
	if t.n == 0 {
		return false
	}
	mask := len(t.keys) - 1
	i := t.home(k)
	for {
		if t.vals[i] < 0 {
			return false
		}
		if t.keys[i] == k {
			break
		}
		i = (i + 1) & mask
	}
	t.n--
	j := i
	for {
		t.vals[i] = -1
		for {
			j = (j + 1) & mask
			if t.vals[j] < 0 {
				return true
			}
			h := t.home(t.keys[j])
			// The entry at j may move to i unless its home lies cyclically in (i, j].
			if i <= j {
				if i < h && h <= j {
					continue
				}
			} else if i < h || h <= j {
				continue
			}
			break
		}
		t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
		i = j
	}
}

// each calls fn for every entry until it returns false.
func (t *idTable) each(fn func(k uint32, v int32) bool) {
	for i, v := range t.vals {
		if v >= 0 && !fn(t.keys[i], v) {
			return
		}
	}
}
