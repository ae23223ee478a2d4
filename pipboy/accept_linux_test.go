package pipboy

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

// fdLimitChild makes TestAcceptSurvivesFDLimit run its server side (in a child
// process, since the descriptor limit is process-wide).
const fdLimitChild = "GAMEWIRE_TEST_PIPBOY_FD_LIMIT_CHILD"

// TestAcceptSurvivesFDLimit reproduces an emulator killed by EMFILE: a child process
// serves with RLIMIT_NOFILE lowered and every remaining descriptor taken, so its
// Accept fails with EMFILE when this process connects. The server must log and count
// the error and keep going; once the child frees its descriptors, the pending app is
// accepted and greeted.
func TestAcceptSurvivesFDLimit(t *testing.T) {
	if os.Getenv(fdLimitChild) == "1" {
		fdLimitServer(t)
		return
	}
	child := testutil.StartChild(t, "TestAcceptSurvivesFDLimit", fdLimitChild)
	expect := child.Expect
	addr := expect("addr ")
	expect("full")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Logf("child: %s", expect("emfile "))
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	m, err := NewReader(c).ReadMessage()
	if err != nil || m.Type != TypeNewConnection {
		t.Fatalf("after EMFILE the app got %v, %v; want the greeting", m.Type, err)
	}
	c.Close()
	t.Logf("child: %s", expect("served "))
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, child.Output())
	}
}

// lockedBuffer is a log sink for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// fdLimitServer is the child's side.
func fdLimitServer(t *testing.T) {
	logs := &lockedBuffer{}
	srv := &Server{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(logs, nil))}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("addr %s\n", ln.Addr())
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: uint64(len(fds) + 8), Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	var hold []*os.File
	for len(hold) < 64 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatal(err)
			}
			break
		}
		hold = append(hold, f)
	}
	fmt.Printf("full: %d descriptors taken\n", len(hold))
	deadline := time.Now().Add(20 * time.Second)
	for srv.AcceptErrors() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no Accept error within 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("emfile %d accept errors\n", srv.AcceptErrors())
	for _, f := range hold {
		f.Close()
	}
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "app disconnected") && !strings.Contains(logs.String(), "app connected") {
		if time.Now().After(deadline) {
			t.Fatalf("the app was not served:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned: %v", err)
	default:
	}
	if !strings.Contains(logs.String(), "accept failed; retrying") {
		t.Fatalf("no warning logged:\n%s", logs.String())
	}
	fmt.Printf("served an app after %d accept errors\n", srv.AcceptErrors())
	srv.Close()
}
