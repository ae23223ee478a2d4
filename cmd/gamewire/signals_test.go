package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLongRunningCommandsStopOnSignals: every long-running command stops on
// SIGINT and on SIGTERM and exits 0: decode reading a standard input that
// stays open, the dashboard while it waits for a game, the relay, pia
// listen. Each runs as a process of its own (the test binary as gamewire),
// gets the signal once it has said it runs, and must exit (bounded
// generously, against a hang; no timing is asserted).
func TestLongRunningCommandsStopOnSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, c := range []struct {
		name  string
		args  []string
		stdin bool   // give it a standard input that stays open
		ready string // what it prints once it runs
	}{
		{"decode stdin", []string{"decode", "-", "--stats"}, true, "PRUDP nex-v1 SYN"},
		{"pipboy dashboard", []string{"pipboy", "dashboard", "--server", freeTCPAddr(t), "--listen", "127.0.0.1:0", "--retry", "50ms"}, false, "waiting for the game"},
		{"pipboy relay", []string{"pipboy", "relay", "--server", freeTCPAddr(t), "--listen", "127.0.0.1:0", "--discovery", ""}, false, "relay listening"},
		{"pia listen", []string{"pia", "listen", "--listen", "127.0.0.1:0", "--pia-version", "5.27", "--pia-network", "lan", "--accept-unknown"}, false, "listening on"},
	} {
		for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
			t.Run(c.name+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(os.Args[0], c.args...)
				cmd.Env = append(os.Environ(), "GAMEWIRE_TEST_MAIN=1")
				out := &syncWriter{}
				cmd.Stdout, cmd.Stderr = out, out
				var stdin io.WriteCloser
				if c.stdin {
					var err error
					if stdin, err = cmd.StdinPipe(); err != nil {
						t.Fatal(err)
					}
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				defer func() {
					select {
					case <-done:
					default:
						cmd.Process.Kill()
						<-done
					}
				}()
				if c.stdin {
					// The start of a capture; the input then stays open.
					b, err := os.ReadFile("../../dissect/testdata/captures/tcpdump-nex-v1.pcap")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := stdin.Write(b[:200]); err != nil {
						t.Fatal(err)
					}
					defer stdin.Close()
				}
				for deadline := time.Now().Add(60 * time.Second); !strings.Contains(out.String(), c.ready); time.Sleep(10 * time.Millisecond) {
					select {
					case err := <-done:
						done <- err
						t.Fatalf("ended before it ran: %v\n%s", err, out)
					default:
					}
					if time.Now().After(deadline) {
						t.Fatalf("no %q:\n%s", c.ready, out)
					}
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-done:
					done <- err // for the deferred check
					if err != nil {
						t.Errorf("after %v: %v\n%s", sig, err, out)
					}
				case <-time.After(60 * time.Second):
					t.Errorf("still running 60 s after %v\n%s", sig, out)
				}
			})
		}
	}
}
