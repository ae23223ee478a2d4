package memlimit

import (
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestAuto(t *testing.T) {
	for _, tc := range []struct{ budget, want int64 }{
		{64 << 20, 80 << 20},
		{1 << 30, 1<<30 + 16<<20},
		{0, 16 << 20},
		{-5, 16 << 20},
		{math.MaxInt64 - 1, math.MaxInt64},
	} {
		if got := Auto(tc.budget); got != tc.want {
			t.Errorf("Auto(%d) = %d, want %d", tc.budget, got, tc.want)
		}
	}
}

func TestChoose(t *testing.T) {
	const budget = 64 << 20
	for _, tc := range []struct {
		name, setting, env string
		limit              int64
		why                string // a part of Why
	}{
		{"auto", "auto", "", 80 << 20, "80MiB: the budget 64MiB + 16MiB"},
		{"off", "off", "", 0, "off"},
		{"size", "96MiB", "", 96 << 20, "96MiB"},
		{"bytes", "100000000", "", 100000000, "100000000B"},
		{"below the budget", "32MiB", "", 32 << 20, "below the budget 64MiB"},
		{"environment over auto", "auto", "120MiB", 0, "from GOMEMLIMIT=120MiB"},
		{"environment over a size", "96MiB", "off", 0, "the environment wins over 96MiB"},
		{"environment over off", "off", "120MiB", 0, "the environment wins over off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Choose(tc.setting, budget, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.Limit != tc.limit || !strings.Contains(c.Why, tc.why) {
				t.Errorf("Choose(%q, %d, %q) = %+v, want limit %d and why containing %q", tc.setting, budget, tc.env, c, tc.limit, tc.why)
			}
		})
	}
}

func TestChooseRefuses(t *testing.T) {
	for _, s := range []string{"", "0", "0MiB", "12", "15MiB", "-1", "96M", "96 MiB", "1.5GiB", "lots", "9999999TiB", "AUTO"} {
		if c, err := Choose(s, 64<<20, ""); err == nil {
			t.Errorf("Choose(%q) = %+v, want an error", s, c)
		} else if !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Errorf("Choose(%q): error %q does not name the value", s, err)
		}
	}
}

func TestParseFormatSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int64
		back string
	}{
		{"96MiB", 96 << 20, "96MiB"},
		{"1024KiB", 1 << 20, "1MiB"},
		{"2GiB", 2 << 30, "2GiB"},
		{"1TiB", 1 << 40, "1TiB"},
		{"1500B", 1500, "1500B"},
		{"4096", 4096, "4KiB"},
	} {
		n, err := ParseSize(tc.in)
		if err != nil || n != tc.n {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", tc.in, n, err, tc.n)
		}
		if got := FormatSize(n); got != tc.back {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, tc.back)
		}
	}
}

// TestApply: Apply sets the runtime's limit only when the choice has one,
// and its restore puts the previous one back.
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	debug.SetMemoryLimit(math.MaxInt64)
	restore := (Choice{Why: "off"}).Apply()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("Apply without a limit: limit %d, want none", got)
	}
	restore()
	restore = (Choice{Limit: 80 << 20}).Apply()
	if got := debug.SetMemoryLimit(-1); got != 80<<20 {
		t.Errorf("Apply(80MiB): limit %d", got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after restore: limit %d, want none again", got)
	}

	// Two overlapping: the limit from before comes back when both are undone.
	ra := (Choice{Limit: 80 << 20}).Apply()
	rb := (Choice{Limit: 96 << 20}).Apply()
	ra()
	ra() // twice: counted once
	if got := debug.SetMemoryLimit(-1); got != 96<<20 {
		t.Errorf("one of two undone: limit %d, want the other's", got)
	}
	rb()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("both undone: limit %d, want none again", got)
	}
}
