// Package tcpdump runs tcpdump on the loopback interface for the interop tests
// that capture real traffic (the committed captures of dissect/testdata/captures
// are made with it).
package tcpdump

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Session is tcpdump running on lo with a filter until Stop is called (as dissect's
// tcpdump tests do).
type Session struct {
	cmd    *exec.Cmd
	path   string
	stderr bytes.Buffer
	done   chan struct{}
}

// Start runs tcpdump on lo with a capture filter and waits until it listens; it
// skips the test when tcpdump is missing or cannot capture (fails under CI).
func Start(t *testing.T, filter string) *Session {
	t.Helper()
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tcpdump is required under CI: %v", err)
		}
		t.Skip("tcpdump not installed")
	}
	s := &Session{path: filepath.Join(t.TempDir(), "capture.pcap"), done: make(chan struct{})}
	s.cmd = exec.Command(bin, "-i", "lo", "--immediate-mode", "-B", "65536", "-U", "-n", "-s", "0", "-w", s.path, filter)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() { // wait for "listening on lo" so no packet is sent before capture starts
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			s.stderr.WriteString(sc.Text() + "\n")
			if !sent && strings.Contains(sc.Text(), "listening on") {
				ready <- true
				sent = true
			}
		}
		if !sent {
			ready <- false
		}
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	select {
	case ok := <-ready:
		if !ok {
			s.cmd.Wait()
			<-s.done
			msg := "tcpdump could not capture on lo: " + s.stderr.String()
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("tcpdump did not start listening within 15 s")
	}
	return s
}

// Stop lets tcpdump flush and exit, and returns the capture.
func (s *Session) Stop(t *testing.T) []byte {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // let the kernel hand over the last packets
	s.cmd.Process.Signal(syscall.SIGINT)
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-exited
	}
	<-s.done
	b, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tcpdump: %s", strings.ReplaceAll(strings.TrimSpace(s.stderr.String()), "\n", "; "))
	return b
}
