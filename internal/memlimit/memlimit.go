// Package memlimit chooses the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit) for a server process from the buffer budget
// of its PRUDP servers (prudp.Config.MaxBuffer), for `gamewire serve`.
//
// The budget bounds what attackers can make the servers hold, but not the
// Go heap: with the default GOGC=100 the collector lets the heap grow to
// about twice what is live before it collects, and an attack keeps the
// budget live while every packet it sends leaves garbage. A server whose
// budget is full therefore sits near twice the budget. A soft limit of
// the budget plus a small allowance makes the collector run when the heap
// reaches it instead, which keeps the process near its idle size plus the
// budget (issue 18's goal: resident memory under twice the idle server's
// plus the budget); see docs/security.md, "PRUDP engine".
//
// Nothing here changes the process until Choice.Apply is called: the
// process-wide limit is its owner's decision (the command line), never a
// library's.
package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Allowance is what Auto adds to the budget: the runtime's own memory
// (stacks, collector metadata, the heap of an idle server: about 3 MB
// anonymous memory in an idle `gamewire serve`) and room for the garbage
// the collector has not yet reclaimed and for the connections' state,
// which the budget does not count (about 2.7 KB per idle connection).
// It is kept small because issue 18's target leaves only about the idle
// server's size (19 MB, most of it the binary's pages) beyond the budget.
const Allowance = 16 << 20

// Auto returns the soft limit for a process whose servers together hold at
// most budget bytes of received data: budget + Allowance (saturating).
func Auto(budget int64) int64 {
	budget = max(budget, 0)
	if budget > math.MaxInt64-Allowance {
		return math.MaxInt64
	}
	return budget + Allowance
}

// Choice is what a process does about its soft memory limit.
type Choice struct {
	// Limit is the limit to set in bytes; 0 leaves the runtime's as it is
	// (no limit, or the one GOMEMLIMIT set at start).
	Limit int64
	// Why says where the decision comes from, for a log line.
	Why string
}

// Choose decides the soft limit of a process from setting, the user's
// choice ("auto", "off", or a size in GOMEMLIMIT's syntax: an integer with
// an optional unit B, KiB, MiB, GiB or TiB, at least Allowance), budget (the bytes the
// process's servers may hold together, for "auto") and env, the
// GOMEMLIMIT environment variable ("" when unset). The environment wins:
// the runtime has applied it at start, and an operator who set it meant it
// for this process.
func Choose(setting string, budget int64, env string) (Choice, error) {
	var c Choice
	s := strings.TrimSpace(setting)
	var explicit int64
	switch s {
	case "auto", "off":
	default:
		n, err := ParseSize(s)
		if err != nil {
			return c, err
		}
		if n < Allowance {
			return c, fmt.Errorf("%q is below %s, less than an idle server needs (off disables the limit)", setting, FormatSize(Allowance))
		}
		explicit = n
	}
	switch {
	case env != "":
		c.Why = "from GOMEMLIMIT=" + env
		if s != "auto" {
			c.Why += " (the environment wins over " + s + ")"
		}
	case s == "off":
		c.Why = "off"
	case s == "auto":
		c.Limit = Auto(budget)
		c.Why = fmt.Sprintf("%s: the budget %s + %s", FormatSize(c.Limit), FormatSize(budget), FormatSize(Allowance))
	default:
		c.Limit = explicit
		c.Why = FormatSize(c.Limit)
		if explicit < budget {
			c.Why += fmt.Sprintf(", below the budget %s: the collector runs often while it is full", FormatSize(budget))
		}
	}
	return c, nil
}

// Apply sets the runtime's soft memory limit when c has one, and returns
// a function that puts the limit from before back once every Apply
// overlapping it has been undone too (for commands run in-process, as
// tests do, several at once).
func (c Choice) Apply() (restore func()) {
	if c.Limit <= 0 {
		return func() {}
	}
	applied.Lock()
	if applied.n == 0 {
		applied.before = debug.SetMemoryLimit(-1)
	}
	applied.n++
	debug.SetMemoryLimit(c.Limit)
	applied.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			applied.Lock()
			defer applied.Unlock()
			if applied.n--; applied.n == 0 {
				debug.SetMemoryLimit(applied.before)
			}
		})
	}
}

// applied counts the Apply calls not yet restored and keeps the limit
// from before the first.
var applied struct {
	sync.Mutex
	n      int
	before int64
}

// units are GOMEMLIMIT's size suffixes (runtime package documentation).
var units = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// ParseSize reads a size in GOMEMLIMIT's syntax: a non-negative integer
// with an optional unit, B, KiB, MiB, GiB or TiB ("96MiB", "100000000").
func ParseSize(s string) (int64, error) {
	num, shift := s, uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			num, shift = rest, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size (an integer with an optional unit B, KiB, MiB, GiB or TiB, e.g. 96MiB), auto or off", s)
	}
	return n << shift, nil
}

// FormatSize writes n in the largest of GOMEMLIMIT's units that divides it
// ("80MiB"), so that what is printed can be given back.
func FormatSize(n int64) string {
	for _, u := range units {
		if u.shift > 0 && n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
