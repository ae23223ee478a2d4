package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/prudp"
)

// gamewireProcess starts `gamewire args...` as a child process, stopped
// (SIGTERM, then killed) when the test ends. Its output lines reach lines.
type gamewireProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
}

func startGamewire(t *testing.T, args ...string) *gamewireProcess {
	t.Helper()
	return startGamewireCmd(t, exec.Command(os.Args[0], args...), args)
}

// startGamewireCmd is startGamewire with the command that runs the test
// binary given (through a shell, ...); args name it in the log.
func startGamewireCmd(t *testing.T, cmd *exec.Cmd, args []string) *gamewireProcess {
	t.Helper()
	p := &gamewireProcess{cmd: cmd, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "GAMEWIRE_TEST_MAIN=1")
	r, w := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	go func() { p.cmd.Wait(); w.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(5 * time.Second)
		if t.Failed() {
			t.Logf("gamewire %s:\n%s", strings.Join(args, " "), p.output())
		}
	})
	return p
}

func (p *gamewireProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop ends the process gracefully (SIGTERM), killing it after grace.
func (p *gamewireProcess) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process at once, as a crash does (no withdrawal).
func (p *gamewireProcess) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

func (p *gamewireProcess) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.output(), s); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q from gamewire after 30 s:\n%s", s, p.output())
		}
	}
}

// TestServeRolesProcesses: one `serve --role auth` and three `serve --role
// secure` processes on one data directory. Logins spread over the three nodes
// within 10%; a killed node (no withdrawal) stops getting logins within three
// heartbeats while the others carry on.
func TestServeRolesProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four processes")
	}
	dir := t.TempDir()
	// Create the store (and its guest account) once, before the processes race to.
	st, _, err := accounts.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	const beat = "200ms"
	authAddr := freeUDPAddr(t)
	authP := startGamewire(t, "serve", "--role", "auth", "--listen", authAddr, "--data", dir, "--heartbeat", beat)
	var nodes []*gamewireProcess
	var ports []string
	for i := 0; i < 3; i++ {
		sec := freeUDPAddr(t)
		p := startGamewire(t, "serve", "--role", "secure", "--listen", freeUDPAddr(t), "--secure-listen", sec,
			"--datastore-listen", freeTCPAddr(t), "--data", dir, "--heartbeat", beat, "--node-id", fmt.Sprintf("node%d", i))
		nodes = append(nodes, p)
		ports = append(ports, sec[strings.LastIndex(sec, ":")+1:])
	}
	authP.waitFor(t, "role auth")
	for _, p := range nodes {
		p.waitFor(t, "role secure")
	}
	// Wait until all three have announced themselves.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, _, err := accounts.OpenWith(context.Background(), dir, &accounts.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		ns, err := st.Nodes(context.Background())
		st.Close()
		if err == nil && len(ns) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes registered: %v (%v), want 3", ns, err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := prudp.Config{Dialect: prudp.NEXV1, AccessKey: defaultAccessKey, InitialRTO: 100 * time.Millisecond, MaxRetransmits: 3}
	var sessions []*nex.Session
	defer func() {
		for _, s := range sessions {
			cctx, c := context.WithTimeout(context.Background(), time.Second)
			s.Close(cctx)
			c()
		}
	}()
	logins := func(n int) map[string]int {
		t.Helper()
		got := map[string]int{}
		for i := 0; i < n; i++ {
			s, err := nex.Login(ctx, authAddr, nex.LoginConfig{User: "guest", Password: auth.GuestPassword, Config: cfg})
			if err != nil {
				t.Fatalf("login %d: %v", i, err)
			}
			sessions = append(sessions, s)
			port, _ := s.SecureURL.Get("port")
			got[port]++
		}
		return got
	}
	got := logins(30)
	for _, port := range ports {
		if got[port] < 9 || got[port] > 11 {
			t.Fatalf("30 logins over three nodes: %v (node ports %v), want 10 each within 10%%", got, ports)
		}
	}
	nodes[0].kill()
	time.Sleep(3*200*time.Millisecond + 400*time.Millisecond)
	got = logins(12)
	if got[ports[0]] != 0 || got[ports[1]]+got[ports[2]] != 12 {
		t.Fatalf("logins after node0 was killed: %v (its port %s)", got, ports[0])
	}
}
