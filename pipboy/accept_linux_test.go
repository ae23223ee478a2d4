package pipboy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	var transcript strings.Builder
	lines := make(chan string, 64)
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
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, transcript.String(), stderr.String())
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
