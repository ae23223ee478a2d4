// Package harness runs benchmark servers as child processes of the benchmark binary, so
// their CPU time and memory are read from /proc apart from the load generator's, and
// summarises latencies.
package harness

import (
	"bufio"
	"fmt"
	"io"
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
	// stat and status stay open from the start: the idle-connection measurement dials
	// tens of thousands of client sockets, after which opening a file may fail with
	// EMFILE (it printed "0.0 MiB after"); procfs files are re-read from offset 0.
	stat, status *os.File
}

// StartChild runs this binary with -serve kind and the extra arguments, and waits for the
// line "listening ADDR" on its standard output.
func StartChild(kind string, extra ...string) (*Child, error) {
	return StartChildTimeout(kind, 10*time.Second, extra...)
}

// StartChildTimeout is StartChild for a child that takes up to wait to start
// (one that loads data first).
func StartChildTimeout(kind string, wait time.Duration, extra ...string) (*Child, error) {
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
		c := &Child{cmd: cmd, Addr: a}
		pid := cmd.Process.Pid
		if c.stat, err = os.Open(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			c.status, err = os.Open(fmt.Sprintf("/proc/%d/status", pid))
		}
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("server %s: %w", kind, err)
		}
		return c, nil
	case <-time.After(wait):
		cmd.Process.Kill()
		return nil, fmt.Errorf("server %s did not start", kind)
	}
}

// Stop kills the child.
func (c *Child) Stop() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
	for _, f := range []*os.File{c.stat, c.status} {
		if f != nil {
			f.Close()
		}
	}
}

// Signal sends sig to the child.
func (c *Child) Signal(sig os.Signal) error { return c.cmd.Process.Signal(sig) }

// read returns a procfs file's current contents.
func read(f *os.File) ([]byte, error) {
	buf := make([]byte, 0, 4096)
	for {
		n, err := f.ReadAt(buf[len(buf):cap(buf)], int64(len(buf)))
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// CPU returns the process's user+system CPU time so far.
func (c *Child) CPU() time.Duration {
	b, err := read(c.stat)
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
	b, err := read(c.status)
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
