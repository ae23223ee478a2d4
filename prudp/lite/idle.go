package lite

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrPacketTimeout: a packet's first bytes arrived and the rest did not follow within
// Config.PacketTimeout; its stream was closed.
var ErrPacketTimeout = errors.New("prudp lite: packet incomplete")

// reasonPacketTimeout counts streams closed by ErrPacketTimeout in Stats.Closed.
const reasonPacketTimeout = "packet_timeout"

// streamClock holds the two read deadlines of a stream: IdleTimeout since the last
// complete packet (bytes that complete no packet do not count: a peer trickling one
// byte every few seconds is idle), and PacketTimeout since the first byte of the
// packet being received. One timer per stream, reset lazily: a packet that moves the
// deadline later only records the time, and the timer, when it fires early,
// rearms itself for the deadline it finds.
type streamClock struct {
	s             *stream
	idle, partial time.Duration

	mu         sync.Mutex
	lastPacket time.Time // the last complete packet, or the stream's start
	started    time.Time // the first byte of the packet being received; zero: none
	due        time.Time // when the timer fires
	timer      *time.Timer
}

func newStreamClock(s *stream, now time.Time) *streamClock {
	c := &streamClock{s: s, idle: s.h.cfg.IdleTimeout, partial: s.h.cfg.PacketTimeout, lastPacket: now}
	c.due = now.Add(c.idle)
	c.timer = time.AfterFunc(c.idle, c.fire)
	return c
}

func (c *streamClock) stop() { c.timer.Stop() }

// deadline returns the earlier of the two deadlines and the error it closes with.
func (c *streamClock) deadline() (time.Time, string) {
	at := c.lastPacket.Add(c.idle)
	if !c.started.IsZero() {
		if p := c.started.Add(c.partial); p.Before(at) {
			return p, reasonPacketTimeout
		}
	}
	return at, reasonIdle
}

// closeError is the error a stream closed for reason ends with.
func (c *streamClock) closeError(reason string) error {
	if reason == reasonPacketTimeout {
		return fmt.Errorf("%w: a packet from %v started %v ago is still incomplete", ErrPacketTimeout, c.s.peer, c.partial)
	}
	return fmt.Errorf("%w: no complete packet from %v for %v", ErrIdle, c.s.peer, c.idle)
}

// rearm moves the timer earlier when the deadline moved earlier; c.mu is held.
func (c *streamClock) rearm(now time.Time) {
	if at, _ := c.deadline(); at.Before(c.due) {
		c.due = at
		c.timer.Reset(at.Sub(now))
	}
}

// bytesIn notes that bytes arrived: the first of a packet starts its PacketTimeout.
func (c *streamClock) bytesIn() {
	c.mu.Lock()
	if c.started.IsZero() {
		now := time.Now()
		c.started = now
		c.rearm(now)
	}
	c.mu.Unlock()
}

// packetDone notes a complete packet; more says whether bytes of the next one have
// already arrived.
func (c *streamClock) packetDone(more bool) {
	now := time.Now()
	c.mu.Lock()
	c.lastPacket = now
	c.started = time.Time{}
	if more {
		c.started = now
	}
	c.rearm(now)
	c.mu.Unlock()
}

// fire closes the stream if a deadline passed, or rearms the timer for the deadline
// that moved later meanwhile.
func (c *streamClock) fire() {
	now := time.Now()
	c.mu.Lock()
	at, reason := c.deadline()
	if at.After(now) {
		c.due = at
		c.timer.Reset(at.Sub(now))
		c.mu.Unlock()
		return
	}
	err := c.closeError(reason)
	c.mu.Unlock()
	c.s.close(err, reason)
}

// clockReader tells the stream's clock when bytes arrive.
type clockReader struct {
	r     io.Reader
	clock *streamClock
}

func (r clockReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.clock.bytesIn()
	}
	return n, err
}
