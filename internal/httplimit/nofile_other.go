//go:build !unix

package httplimit

// nofile is the process's soft descriptor limit, or 0 when unknown.
func nofile() int64 { return 0 }
