package lite

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fdLimitChild is the environment variable that makes TestAcceptSurvivesFDLimit run
// its server side (in a child process, since RLIMIT_NOFILE is process-wide).
const fdLimitChild = "GAMEWIRE_TEST_FD_LIMIT_CHILD"

// TestAcceptSurvivesFDLimit reproduces a listener killed by EMFILE: a child process
// serves with RLIMIT_NOFILE a few descriptors above what it has open; this process
// opens 12 raw Lite streams to it, so its Accept fails with EMFILE. The listener must
// count the error, keep accepting, and once the streams are closed, accept a fresh
// one and deliver its packet.
func TestAcceptSurvivesFDLimit(t *testing.T) {
	if os.Getenv(fdLimitChild) == "1" {
		fdLimitServer(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptSurvivesFDLimit$", "-test.v", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), fdLimitChild+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 64)
	var transcript strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(prefix string) string {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("child ended before %q:\n%s\n%s", prefix, transcript.String(), stderr.String())
				}
				transcript.WriteString(l + "\n")
				if rest, found := strings.CutPrefix(l, prefix); found {
					return strings.TrimSpace(rest)
				}
			case <-deadline:
				t.Fatalf("no %q from the child within 30 s:\n%s\n%s", prefix, transcript.String(), stderr.String())
			}
		}
	}
	addr := expect("addr ")
	var conns []net.Conn
	for i := range 12 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write(toPort(t, 1, uint16(i), nil))
	}
	t.Logf("child: %s", expect("emfile "))
	for _, c := range conns {
		c.Close()
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(toPort(t, 1, 0xbeef, nil))
	t.Logf("child: %s", expect("accepted again:"))
	go io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, transcript.String(), stderr.String())
	}
}

// fdLimitServer is the child's side: it listens, lowers its descriptor limit, waits
// for EMFILE, then for the packet with sequence id 0xbeef from a fresh stream.
func fdLimitServer(t *testing.T) {
	logs := &syncBuffer{}
	l, _ := testListener(t, false, Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	p1 := l.Port(1)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := syscall.Rlimit{Cur: uint64(len(fds) + 4), Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("addr %s\n", l.Addr())
	waitFor(t, "an EMFILE from Accept", func() bool { return l.Stats().AcceptErrors["EMFILE"] > 0 })
	st := l.Stats()
	fmt.Printf("emfile %d accept errors, %d streams open, limit %d descriptors\n", st.AcceptErrors["EMFILE"], st.Streams, lim.Cur)
	for {
		b, from := readPacket(t, p1)
		if b[10] == 0xef && b[11] == 0xbe {
			fmt.Printf("accepted again: packet from %v; accept errors %v\n", from, l.Stats().AcceptErrors)
			break
		}
	}
	if err := l.Err(); err != nil {
		t.Fatalf("the accept loop stopped: %v", err)
	}
	if !strings.Contains(logs.String(), "accept failed; retrying") {
		t.Fatalf("no warning logged:\n%s", logs.String())
	}
}
