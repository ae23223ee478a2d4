// Package harness runs benchmark servers as child processes of the benchmark binary, so
// their CPU time and memory are read from /proc apart from the load generator's, and
// summarises latencies.
package harness

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Child is a server process started from this binary, so its CPU time and memory can be
// read from /proc without counting the load generator's.
type Child struct {
	cmd *exec.Cmd
	// Addr is the address the child printed after "listening ".
	Addr string
}

// StartChild runs this binary with -serve kind and the extra arguments, and waits for the
// line "listening ADDR" on its standard output.
func StartChild(kind string, extra ...string) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-serve", kind}, extra...)
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(out)
	ready := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if a, ok := strings.CutPrefix(lines.Text(), "listening "); ok {
				ready <- a
			}
		}
	}()
	select {
	case a := <-ready:
		return &Child{cmd: cmd, Addr: a}, nil
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("server %s did not start", kind)
	}
}

// Stop kills the child.
func (c *Child) Stop() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// CPU returns the process's user+system CPU time so far.
func (c *Child) CPU() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz
}

// RSS returns the process's resident set size in bytes.
func (c *Child) RSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
