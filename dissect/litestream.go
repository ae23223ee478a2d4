package dissect

import (
	"errors"

	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/gamewire/gamewire/prudp/wire"
)

// PRUDP Lite on a raw TCP stream (the Switch servers accept it beside
// WebSocket, "Lite over WebSocket" in docs/peers.md): packets back to back,
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
	dir [2]framer
}

func newLiteStream(d *Dissector) *liteStreamHandler {
	k := ""
	if len(d.cfg.Keys.AccessKeys) > 0 {
		k = d.cfg.Keys.AccessKeys[0]
	}
	return &liteStreamHandler{prudpHandler: newPRUDP(d, wire.NameLite, k, 0)}
}

func (h *liteStreamHandler) stream(c *pktCtx, data []byte, gap int) {
	h.dir[c.dir].feed(c, "prudp", "Lite packet", data, gap, func(b []byte, _ int64) (int, error) {
		size, err := lite.PacketLen(b)
		switch {
		case err != nil:
			return 0, err
		case size > h.d.cfg.MaxMessage:
			return 0, errLiteTooLarge
		case size == 0 || size > len(b):
			return 0, nil
		}
		h.prudpHandler.udp(c, b[:size])
		return size, nil
	})
}

var errLiteTooLarge = errors.New("packet larger than the message limit")

// finish reports a packet the capture ended inside of.
func (h *liteStreamHandler) finish(c *pktCtx) {
	for dir := range h.dir {
		h.dir[dir].finish(c, dir, "prudp", "Lite packet")
	}
	h.prudpHandler.finish(c)
}
