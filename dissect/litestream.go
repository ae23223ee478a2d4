package dissect

import (
	"strconv"

	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/gamewire/gamewire/prudp/wire"
)

// PRUDP Lite on a raw TCP stream (the Switch servers accept it beside
// WebSocket, "Lite over WebSocket" in FIELD-NOTES.md): packets back to back,
// each framed by its own header (lite.PacketLen). Recognised when a TCP flow
// starts with a whole Lite packet.

// isLiteStream reports whether b starts with one whole, valid Lite packet.
func isLiteStream(b []byte) bool {
	n, err := lite.PacketLen(b)
	if err != nil || n == 0 || n > len(b) {
		return false
	}
	_, used, err := wire.NewLite("").Parse(b[:n])
	return err == nil && used == n
}

type liteStreamHandler struct {
	*prudpHandler
	dir [2]struct {
		buf    []byte
		broken bool
		off    int64
	}
}

func newLiteStream(d *Dissector) *liteStreamHandler {
	k := ""
	if len(d.cfg.Keys.AccessKeys) > 0 {
		k = d.cfg.Keys.AccessKeys[0]
	}
	return &liteStreamHandler{prudpHandler: newPRUDP(d, wire.NameLite, k, 0)}
}

func (h *liteStreamHandler) stream(c *pktCtx, data []byte, gap int) {
	st := &h.dir[c.dir]
	if gap > 0 && !st.broken {
		st.broken = true
		c.note("prudp", strconv.Itoa(gap)+" bytes missing from the capture; Lite packet framing lost for the rest of this direction")
	}
	if st.broken {
		return
	}
	st.buf = append(st.buf, data...)
	n := 0
	for n < len(st.buf) {
		size, err := lite.PacketLen(st.buf[n:])
		if err != nil || size > h.d.cfg.MaxMessage {
			st.broken = true
			reason := "packet larger than the message limit"
			if err != nil {
				reason = err.Error()
			}
			c.note("prudp", "Lite stream offset "+strconv.FormatInt(st.off+int64(n), 10)+": "+reason+"; framing lost for the rest of this direction")
			st.buf = nil
			return
		}
		if size == 0 || n+size > len(st.buf) {
			break
		}
		h.prudpHandler.udp(c, st.buf[n:n+size])
		n += size
	}
	st.off += int64(n)
	st.buf = st.buf[:copy(st.buf, st.buf[n:])]
}

// finish reports a packet the capture ended inside of.
func (h *liteStreamHandler) finish(c *pktCtx) {
	for dir := range h.dir {
		if st := &h.dir[dir]; len(st.buf) > 0 && !st.broken {
			c.towards(dir).note("prudp", "capture ended inside a Lite packet: "+strconv.Itoa(len(st.buf))+" bytes of it")
		}
	}
	h.prudpHandler.finish(c)
}
