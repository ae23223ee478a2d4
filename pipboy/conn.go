package pipboy

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Default timings ("Type 0: Heartbeat" in the Pip-Boy PROTOCOL.md and docs/peers.md: the app
// sends a heartbeat about once a second, the game closes after 10-20 s of silence).
const (
	DefaultHeartbeatInterval = time.Second
	DefaultIdleTimeout       = 20 * time.Second
	defaultWriteTimeout      = 10 * time.Second
	// StreamPort is the game's TCP port; DiscoveryPort its UDP discovery port.
	StreamPort    = 27000
	DiscoveryPort = 28000
)

// msgConn is one framed TCP connection shared by the client, the emulator and the
// relay: one reader (the owner's loop), writes serialised by a mutex, and the heartbeat
// rules (send one every interval; answer a received one unless one went out recently,
// so two peers that both answer never ping-pong).
type msgConn struct {
	c            net.Conn
	r            *Reader
	idle         time.Duration
	interval     time.Duration
	wmu          sync.Mutex
	wbuf         []byte
	lastHB       atomic.Int64 // UnixNano of the last heartbeat sent
	closeOnce    sync.Once
	closed       chan struct{}
	writeTimeout time.Duration
	workers      sync.WaitGroup // goroutines serving this connection (heartbeats, replay)
}

// goWorker runs fn in a goroutine that wait waits for.
func (m *msgConn) goWorker(fn func()) {
	m.workers.Add(1)
	go func() {
		defer m.workers.Done()
		fn()
	}()
}

// wait waits for the connection's workers; call it after close.
func (m *msgConn) wait() { m.workers.Wait() }

func newMsgConn(c net.Conn, maxSize int, idle, interval time.Duration) *msgConn {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if interval <= 0 {
		interval = DefaultHeartbeatInterval
	}
	m := &msgConn{c: c, r: NewReader(c), idle: idle, interval: interval, closed: make(chan struct{}), writeTimeout: defaultWriteTimeout}
	m.r.MaxSize = maxSize
	return m
}

// read reads the next message, allowing idle time of silence.
func (m *msgConn) read() (Message, error) {
	_ = m.c.SetReadDeadline(time.Now().Add(m.idle))
	return m.r.ReadMessage()
}

// write sends one message.
func (m *msgConn) write(typ MessageType, content []byte) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	b, err := Message{Type: typ, Content: content}.Append(m.wbuf[:0])
	if err != nil {
		return err
	}
	if cap(b) <= 1<<20 {
		m.wbuf = b
	}
	_ = m.c.SetWriteDeadline(time.Now().Add(m.writeTimeout))
	_, err = m.c.Write(b)
	if err == nil && typ == TypeHeartbeat {
		m.lastHB.Store(time.Now().UnixNano())
	}
	return err
}

// answerHeartbeat replies to a received heartbeat unless one was sent within half an interval.
func (m *msgConn) answerHeartbeat() error {
	if time.Since(time.Unix(0, m.lastHB.Load())) < m.interval/2 {
		return nil
	}
	return m.write(TypeHeartbeat, nil)
}

// heartbeats sends a heartbeat every interval until the connection closes or ctx ends.
func (m *msgConn) heartbeats(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.closed:
			return
		case <-t.C:
			if err := m.write(TypeHeartbeat, nil); err != nil {
				log.Debug("pipboy: heartbeat", "remote", m.c.RemoteAddr(), "err", err)
				m.close()
				return
			}
		}
	}
}

func (m *msgConn) close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.closed)
		err = m.c.Close()
	})
	return err
}

// discardLogger is used when no logger is given: libraries log nothing unless asked.
var discardLogger = slog.New(slog.DiscardHandler)

func loggerOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return discardLogger
	}
	return l
}
