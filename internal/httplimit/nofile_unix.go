//go:build unix

package httplimit

import "syscall"

// nofile is the process's soft descriptor limit, or 0 when unknown.
func nofile() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<31 {
		return 0
	}
	return int64(r.Cur)
}
