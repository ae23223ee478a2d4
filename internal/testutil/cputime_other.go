//go:build !unix

package testutil

import "time"

// ProcessCPU returns 0: this system has no getrusage.
func ProcessCPU() time.Duration { return 0 }
