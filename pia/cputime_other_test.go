//go:build !unix

package pia

import "time"

func processCPU() time.Duration { return 0 }
