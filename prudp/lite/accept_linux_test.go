package lite

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
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
	child := testutil.StartChild(t, "TestAcceptSurvivesFDLimit", fdLimitChild)
	expect := child.Expect
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
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, child.Output())
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
