package acceptretry

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestTemporary(t *testing.T) {
	wrap := func(e error) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", e)}
	}
	for _, tc := range []struct {
		err    error
		temp   bool
		reason string
	}{
		{wrap(syscall.EMFILE), true, "EMFILE"},
		{wrap(syscall.ENFILE), true, "ENFILE"},
		{wrap(syscall.ECONNABORTED), true, "ECONNABORTED"},
		{wrap(syscall.ENOBUFS), true, "ENOBUFS"},
		{wrap(syscall.ENOMEM), true, "ENOMEM"},
		{wrap(os.ErrDeadlineExceeded), true, "timeout"},
		{wrap(net.ErrClosed), false, "other"},
		{fmt.Errorf("x: %w", net.ErrClosed), false, "other"},
		{wrap(syscall.EINVAL), false, "errno"},
		{errors.New("other"), false, "other"},
		{nil, false, "other"},
	} {
		if got := Temporary(tc.err); got != tc.temp {
			t.Errorf("Temporary(%v) = %v, want %v", tc.err, got, tc.temp)
		}
		if tc.err == nil {
			continue
		}
		if got := Reason(tc.err); got != tc.reason {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.reason)
		}
	}
}

func TestBackoff(t *testing.T) {
	var b Backoff
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i, w := range want {
		if got := b.Next(); got != w*time.Millisecond {
			t.Fatalf("step %d: %v, want %v", i, got, w*time.Millisecond)
		}
	}
	b.Reset()
	if got := b.Next(); got != FirstDelay {
		t.Fatalf("after Reset: %v", got)
	}
	done := make(chan struct{})
	close(done)
	if b.WaitFor(time.Hour, done) {
		t.Fatal("Wait returned true with done closed")
	}
}
