package dissect

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
	wsPing         = 0x9
	wsPong         = 0xa
)

// isHTTPUpgrade reports whether a TCP flow starts with an HTTP request or
// response that upgrades to WebSocket (RFC 6455 section 4).
func isHTTPUpgrade(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("GET ")) && !bytes.HasPrefix(b, []byte("HTTP/1.1 101")) {
		return false
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		end = len(b)
	}
	return bytes.Contains(bytes.ToLower(b[:end]), []byte("upgrade: websocket"))
}

// wsMessageHandler receives whole WebSocket binary messages.
type wsMessageHandler interface {
	wsMessage(c *pktCtx, msg []byte)
	protocol() string
}

// wsHandler follows the HTTP upgrade and then the WebSocket frames of both
// directions, unmasks them, joins fragmented messages and hands binary
// messages to inner (PRUDP Lite when that dialect is registered).
type wsHandler struct {
	inner     wsMessageHandler
	innerUsed bool
	dir       [2]wsDirection
	max       int
}

type wsDirection struct {
	headerDone bool
	broken     bool // framing lost (gap or bad frame); the rest of this direction is skipped
	buf        []byte
	msg        []byte
	msgOp      byte
	inMsg      bool
	header     string // request line or status line
}

func newWSHandler(d *Dissector) *wsHandler {
	h := &wsHandler{max: d.cfg.MaxMessage}
	if mk, ok := wsInnerMakers["nex-lite"]; ok {
		h.inner = mk(d)
	}
	return h
}

// wsInnerMakers lets the Lite decoder register itself as the WebSocket payload decoder.
var wsInnerMakers = map[string]func(d *Dissector) wsMessageHandler{}

func init() {
	handlerMakers["websocket"] = func(d *Dissector, name string, proto uint8) handler {
		if proto != protoTCP {
			return nil
		}
		return newWSHandler(d)
	}
}

func (h *wsHandler) protocol() string {
	if h.innerUsed {
		return h.inner.protocol()
	}
	return "websocket"
}

func (h *wsHandler) fillStats(s *FlowStats) {
	if st, ok := h.inner.(statser); ok && h.innerUsed {
		st.fillStats(s)
	}
}

func (h *wsHandler) udp(c *pktCtx, b []byte) {}

func (h *wsHandler) stream(c *pktCtx, data []byte, gap int) {
	st := &h.dir[c.dir]
	if gap > 0 && !st.broken {
		st.broken = true
		c.note("websocket", strconv.Itoa(gap)+" bytes missing from the capture; WebSocket framing lost for the rest of this direction")
	}
	if st.broken {
		return
	}
	st.buf = append(st.buf, data...)
	if !st.headerDone {
		end := bytes.Index(st.buf, []byte("\r\n\r\n"))
		if end < 0 {
			if len(st.buf) > 64<<10 {
				st.broken = true
				c.note("websocket", "HTTP header longer than 64 KiB")
			}
			return
		}
		line, _, _ := bytes.Cut(st.buf[:end], []byte("\r\n"))
		st.header = string(line)
		r := c.record("websocket")
		r.Summary = st.header
		r.addString("http", st.header)
		c.emit(r)
		st.headerDone = true
		st.buf = st.buf[:copy(st.buf, st.buf[end+4:])]
	}
	n := 0
	for {
		used, ok := h.frame(c, st, st.buf[n:])
		if !ok {
			break
		}
		n += used
		if st.broken {
			return
		}
	}
	st.buf = st.buf[:copy(st.buf, st.buf[n:])]
}

// frame decodes one WebSocket frame (RFC 6455 section 5.2) from b. ok is false
// when b does not hold a whole frame yet.
func (h *wsHandler) frame(c *pktCtx, st *wsDirection, b []byte) (used int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	fin := b[0]&0x80 != 0
	op := b[0] & 0x0f
	masked := b[1]&0x80 != 0
	n := uint64(b[1] & 0x7f)
	off := 2
	switch n {
	case 126:
		if len(b) < 4 {
			return 0, false
		}
		n, off = uint64(binary.BigEndian.Uint16(b[2:4])), 4
	case 127:
		if len(b) < 10 {
			return 0, false
		}
		n, off = binary.BigEndian.Uint64(b[2:10]), 10
	}
	if n > uint64(h.max) {
		st.broken = true
		c.note("websocket", "frame length "+strconv.FormatUint(n, 10)+" exceeds the "+strconv.Itoa(h.max)+"-byte message limit; framing abandoned")
		return 0, false
	}
	var mask [4]byte
	if masked {
		if len(b) < off+4 {
			return 0, false
		}
		copy(mask[:], b[off:off+4])
		off += 4
	}
	if len(b) < off+int(n) {
		return 0, false
	}
	payload := b[off : off+int(n)]
	if masked {
		for i := range payload {
			payload[i] ^= mask[i&3]
		}
	}
	used = off + int(n)
	switch op {
	case wsContinuation:
		if !st.inMsg {
			c.note("websocket", "continuation frame without a message in progress")
			return used, true
		}
		if len(st.msg)+len(payload) > h.max {
			st.inMsg = false
			st.msg = st.msg[:0]
			c.note("websocket", "fragmented message exceeds the "+strconv.Itoa(h.max)+"-byte limit")
			return used, true
		}
		st.msg = append(st.msg, payload...)
	case wsText, wsBinary:
		if st.inMsg {
			c.note("websocket", "new message before the previous one finished; previous dropped")
		}
		st.msgOp = op
		st.inMsg = true
		st.msg = append(st.msg[:0], payload...)
	case wsClose, wsPing, wsPong:
		r := c.record("websocket")
		r.Summary = map[byte]string{wsClose: "Close", wsPing: "Ping", wsPong: "Pong"}[op]
		r.addString("opcode", r.Summary)
		r.addHex("payload_hex", payload)
		c.emit(r)
		return used, true
	default:
		c.note("websocket", "reserved opcode "+strconv.Itoa(int(op)))
		return used, true
	}
	if fin && st.inMsg {
		st.inMsg = false
		if st.msgOp == wsBinary && h.inner != nil {
			h.innerUsed = true
			h.inner.wsMessage(c, st.msg)
		} else {
			r := c.record("websocket")
			r.Kind = KindMessage
			if st.msgOp == wsText {
				r.Summary = "text message, " + strconv.Itoa(len(st.msg)) + " bytes"
				r.addString("text", string(st.msg))
			} else {
				r.Summary = "binary message, " + strconv.Itoa(len(st.msg)) + " bytes"
				r.addHex("payload_hex", st.msg)
			}
			c.emit(r)
		}
		st.msg = st.msg[:0]
	}
	return used, true
}

// finish reports a frame or message the capture ended inside of, then lets
// the inner decoder report what it holds.
func (h *wsHandler) finish(c *pktCtx) {
	for dir := range h.dir {
		st := &h.dir[dir]
		if st.broken || (len(st.buf) == 0 && !st.inMsg) {
			continue
		}
		c.towards(dir).note("websocket", "capture ended inside a WebSocket frame or message ("+strconv.Itoa(len(st.buf)+len(st.msg))+" bytes held)")
	}
	if f, ok := h.inner.(finisher); ok && h.innerUsed {
		f.finish(c)
	}
}
