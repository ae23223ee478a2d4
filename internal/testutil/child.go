package testutil

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Child is the test binary re-run as a child process for one test (for what is
// process-wide, such as RLIMIT_NOFILE). The child runs the same test with env=1
// set; the parent reads its standard output line by line with Expect.
type Child struct {
	Cmd *exec.Cmd

	t          testing.TB
	lines      chan string
	mu         sync.Mutex
	transcript strings.Builder
	stderr     strings.Builder
}

// StartChild re-runs the test named test (the parent's own) in a child process
// with env=1 in its environment; the child is killed when t ends.
func StartChild(t testing.TB, test, env string) *Child {
	t.Helper()
	c := &Child{t: t, lines: make(chan string, 64)}
	c.Cmd = exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.timeout=60s")
	c.Cmd.Env = append(os.Environ(), env+"=1")
	out, err := c.Cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Cmd.Stderr = &syncWriter{mu: &c.mu, b: &c.stderr}
	if err := c.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.Cmd.ProcessState == nil {
			c.Cmd.Process.Kill()
			c.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// Expect waits (30 s at most) for a line starting with prefix and returns the
// rest of it, trimmed; it fails t with everything the child printed otherwise.
func (c *Child) Expect(prefix string) string {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("child ended before %q:\n%s", prefix, c.Output())
			}
			c.mu.Lock()
			c.transcript.WriteString(l + "\n")
			c.mu.Unlock()
			if rest, found := strings.CutPrefix(l, prefix); found {
				return strings.TrimSpace(rest)
			}
		case <-deadline:
			c.t.Fatalf("no %q from the child within 30 s:\n%s", prefix, c.Output())
		}
	}
}

// Wait reads the rest of the child's output and waits for it to exit.
func (c *Child) Wait() error {
	for l := range c.lines {
		c.mu.Lock()
		c.transcript.WriteString(l + "\n")
		c.mu.Unlock()
	}
	return c.Cmd.Wait()
}

// Output is what the child printed so far: the lines Expect read, then its
// standard error.
func (c *Child) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transcript.String() + "\n" + c.stderr.String()
}

type syncWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
