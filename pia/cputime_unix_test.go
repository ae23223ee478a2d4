//go:build unix

package pia

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the process, so benchmarks can
// report throughput per CPU second on a machine shared with other work.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
