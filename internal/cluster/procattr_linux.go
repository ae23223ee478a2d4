package cluster

import "syscall"

// procAttr puts a node in its own process group (a Ctrl-C to the test's group
// does not reach it first: Stop decides) and has the kernel kill it when the
// process that started it dies without stopping it (a test binary killed by
// its timeout), so no node outlives its test.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
