//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// ProcessCPU returns the CPU time (user + system) this process has used; 0 where
// the system cannot say.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
