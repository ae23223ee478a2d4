//go:build !linux

package cluster

import "syscall"

// procAttr puts a node in its own process group (a Ctrl-C to the test's group
// does not reach it first: Stop decides).
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
