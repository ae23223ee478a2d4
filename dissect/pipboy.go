package dissect

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gamewire/gamewire/pipboy"
)

// Pip-Boy ("Data Stream Format" and "Discovery" in the Pip-Boy PROTOCOL.md): TCP 27000
// carries framed messages both ways; UDP 28000 carries the discovery JSON.
// Every message is a record with protocol "pipboy"; the game-to-app messages
// are also applied to a database per flow (see Dissector.PipboyStates), so a
// capture decodes to the same database as `gamewire pipboy decode`.

func init() {
	handlerMakers["pipboy"] = func(d *Dissector, name string, proto uint8) handler {
		return &pipboyHandler{state: pipboy.NewGameState()}
	}
}

type pipboyHandler struct {
	dir   [2]framer
	state *pipboy.GameState // what the game (the server end) sent
}

func (h *pipboyHandler) protocol() string { return "pipboy" }

func (h *pipboyHandler) fillStats(s *FlowStats) {
	if h.state.HelloSeen {
		s.Handshake = "hello " + h.state.Hello.Version
	}
}

// PipboyStates returns, per TCP flow id, what the game sent on Pip-Boy flows:
// the greeting, the database and the latest map frame.
func (d *Dissector) PipboyStates() map[int]*pipboy.GameState {
	out := map[int]*pipboy.GameState{}
	for _, fl := range d.order {
		if h, ok := fl.handler.(*pipboyHandler); ok && fl.key.proto == protoTCP {
			out[fl.id] = h.state
		}
	}
	return out
}

// udp decodes a discovery datagram.
func (h *pipboyHandler) udp(c *pktCtx, b []byte) {
	r := c.record("pipboy")
	r.addString("type", "Discovery")
	if err := pipboy.ParseDiscoveryRequest(b); err == nil {
		r.Summary = "discovery request"
		r.addString("direction", "app-to-game")
	} else if rep, err2 := pipboy.ParseDiscoveryReply(b); err2 == nil {
		r.Summary = "discovery reply: " + rep.MachineType + " busy=" + strconv.FormatBool(rep.IsBusy)
		r.addString("direction", "game-to-app")
		r.addString("machine_type", rep.MachineType)
		r.addBool("busy", rep.IsBusy)
	} else {
		r.Kind = KindNote
		r.Error = "not a Pip-Boy discovery datagram: " + err2.Error()
		c.fl.stats.Errors++
	}
	if json.Valid(b) {
		r.addJSON("json", bytes.TrimSpace(b))
	} else {
		r.addHex("payload_hex", b)
	}
	c.emit(r)
}

// stream frames the TCP bytes of one direction into messages.
func (h *pipboyHandler) stream(c *pktCtx, data []byte, gap int) {
	h.dir[c.dir].feed(c, "pipboy", "message", data, gap, func(b []byte, off int64) (int, error) {
		m, used, err := pipboy.ParseMessage(b, c.d.cfg.MaxMessage)
		if errors.Is(err, pipboy.ErrTruncated) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		h.message(c, m, off)
		return used, nil
	})
}

func (h *pipboyHandler) message(c *pktCtx, m pipboy.Message, off int64) {
	fromGame := c.dir == 1
	r := c.record("pipboy")
	r.Kind = KindMessage
	if fromGame {
		r.addString("direction", "game-to-app")
	} else {
		r.addString("direction", "app-to-game")
	}
	r.addString("type", m.Type.String())
	r.addInt("type_id", int64(m.Type))
	r.addInt("stream_offset", off)
	r.addInt("length", int64(len(m.Content)))
	r.Summary = pipboy.Summary(m)
	switch m.Type {
	case pipboy.TypeNewConnection, pipboy.TypeCommandRequest, pipboy.TypeCommandResponse:
		if t := bytes.TrimSpace(m.Content); json.Valid(t) {
			r.addJSON("json", t)
		} else {
			r.addHex("content_hex", m.Content)
		}
	case pipboy.TypeHeartbeat, pipboy.TypeBusy:
	default:
		r.addHex("content_hex", m.Content)
	}
	if fromGame {
		if err := h.state.Handle(m); err != nil {
			r.Error = err.Error()
			c.fl.stats.Errors++
		}
	} else if m.Type == pipboy.TypeCommandRequest {
		if _, err := pipboy.ParseCommand(m.Content); err != nil {
			r.Error = err.Error()
		}
	}
	c.emit(r)
}

// finish reports a message the capture ended inside of.
func (h *pipboyHandler) finish(c *pktCtx) {
	for dir := range h.dir {
		h.dir[dir].finish(c, dir, "pipboy", "message")
	}
}
