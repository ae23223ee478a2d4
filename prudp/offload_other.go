//go:build !linux

package prudp

// newOffload returns nil: batched datagram I/O is implemented on Linux only.
func newOffload(PacketConn) offload { return nil }
