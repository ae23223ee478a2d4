// Package acceptretry is what a server's accept loop needs to survive running out of
// file descriptors: which Accept errors are worth waiting out, and a backoff between
// the retries, as net/http's Server.Serve does (5 ms, doubling, at most 1 s).
//
// A listener that returns from its loop on EMFILE stops accepting for good while the
// process looks healthy; one that retries without a pause spins on the CPU, since the
// pending connection keeps the socket readable.
package acceptretry

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// Backoff bounds.
const (
	FirstDelay = 5 * time.Millisecond
	MaxDelay   = time.Second
)

// Temporary reports whether an Accept error is worth retrying: a timeout, or an errno
// that ends when descriptors, buffers or memory are freed (EMFILE, ENFILE, ENOBUFS,
// ENOMEM) or that concerns only the connection being accepted (ECONNABORTED,
// ECONNRESET, EINTR, EAGAIN). A closed listener is not temporary.
func Temporary(err error) bool {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		_, known := errnoNames[errno]
		return known || errno.Temporary()
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Reason names an Accept error for a counter: the errno's name ("EMFILE"), "timeout",
// or "other".
func Reason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name, ok := errnoNames[errno]; ok {
			return name
		}
		return "errno"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "other"
}

var errnoNames = map[syscall.Errno]string{
	syscall.EMFILE:       "EMFILE",
	syscall.ENFILE:       "ENFILE",
	syscall.ENOBUFS:      "ENOBUFS",
	syscall.ENOMEM:       "ENOMEM",
	syscall.ECONNABORTED: "ECONNABORTED",
	syscall.ECONNRESET:   "ECONNRESET",
	syscall.EINTR:        "EINTR",
	syscall.EAGAIN:       "EAGAIN",
}

// Backoff is the pause between retries of a failing Accept. The zero value is ready;
// call Reset after a successful Accept.
type Backoff struct{ d time.Duration }

// Next returns the pause before the next retry: 5 ms, then twice the last, at most 1 s.
func (b *Backoff) Next() time.Duration {
	if b.d == 0 {
		b.d = FirstDelay
	} else {
		b.d = min(2*b.d, MaxDelay)
	}
	return b.d
}

// Reset starts the next run of failures at 5 ms again.
func (b *Backoff) Reset() { b.d = 0 }

// WaitFor sleeps for pause (from Next), or returns false at once when done is
// closed first.
func (b *Backoff) WaitFor(pause time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
