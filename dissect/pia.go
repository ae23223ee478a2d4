package dissect

import (
	"errors"
	"strconv"

	"github.com/gopacket/gopacket/layers"

	"github.com/gamewire/gamewire/pia"
)

// Pia (the Pia Protocol wiki) over UDP, recognised by its magic 32 AB 98 64. Decoding
// needs the Pia version and network from the keys file (pia-version,
// pia-network); decryption needs a session key (pia-key) and the nonce inputs
// of the network (pia-network-id, pia-gathering-id). Every Pia packet is a
// record with protocol "pia"; every message in it is a "message" record.

func init() {
	handlerMakers["pia"] = func(d *Dissector, name string, proto uint8) handler {
		if proto != protoUDP {
			return nil
		}
		return newPiaHandler(d)
	}
	udpRecognizers = append([]func(*Dissector, *pktCtx, []byte) handler{recognizePia}, udpRecognizers...)
}

func recognizePia(d *Dissector, c *pktCtx, b []byte) handler {
	if len(b) >= 4 && [4]byte(b[:4]) == pia.Magic {
		return newPiaHandler(d)
	}
	return nil
}

type piaHandler struct {
	d          *Dissector
	configured bool
	codecs     []*pia.Codec // one per configured session key (or one without a key)
	chosen     *pia.Codec   // the codec that opened a packet of this flow
	setup      string       // why the flow cannot be decoded, if it cannot
	version    string
	network    string
	pkt        pia.Packet
	inflate    []byte

	plainCodec *pia.Codec // seals the decrypted packet for --write-decrypted
	rewrite    []byte
	rewriteOK  bool
}

// rewritten implements udpRewriter: the packet re-encoded unencrypted (the
// encryption bit cleared, the messages in the clear, the footer kept).
func (h *piaHandler) rewritten() []byte {
	if !h.rewriteOK {
		return nil
	}
	return h.rewrite
}

func newPiaHandler(d *Dissector) *piaHandler {
	return &piaHandler{d: d, version: d.cfg.Keys.Pia.Version, network: d.cfg.Keys.Pia.Network}
}

// configure builds the codecs on the first packet: the version comes from the
// keys file or, from 5.11 on, from the packet's version bits.
func (h *piaHandler) configure(first []byte) {
	k := h.d.cfg.Keys.Pia
	if k.Network == "" {
		h.setup = "Pia packets need pia-network (nex, ldn, lan or npln) in the keys file"
		return
	}
	var v pia.Version
	var err error
	if k.Version != "" {
		v, err = pia.ParseVersion(k.Version)
	} else {
		v, err = pia.DetectVersion(first)
	}
	if err != nil {
		h.setup = err.Error() + " (give pia-version in the keys file)"
		return
	}
	h.version = v.String()
	nw, err := pia.ParseNetwork(k.Network)
	if err != nil {
		h.setup = err.Error()
		return
	}
	np := pia.NonceParams{Network: nw, NetworkID: k.NetworkID, GatheringID: k.GatheringID}
	keys, err := k.sessionKeys()
	if err != nil {
		h.setup = err.Error()
		return
	}
	if len(keys) == 0 {
		keys = [][]byte{nil}
	}
	for _, sk := range keys {
		cd, err := pia.NewCodec(pia.Config{Version: v, NonceParams: np, SessionKey: sk, AllowPlaintext: true})
		if err != nil {
			h.setup = err.Error()
			return
		}
		h.codecs = append(h.codecs, cd)
	}
	h.plainCodec, _ = pia.NewCodec(pia.Config{Version: v, NonceParams: np})
}

func (h *piaHandler) protocol() string                       { return "pia" }
func (h *piaHandler) stream(c *pktCtx, data []byte, gap int) {}

func (h *piaHandler) fillStats(s *FlowStats) {
	if h.version != "" {
		s.Dialect = "pia " + h.version
	}
}

func (h *piaHandler) udp(c *pktCtx, b []byte) {
	h.rewriteOK = false
	if !h.configured {
		h.configured = true
		h.configure(b)
	}
	r := c.record("pia")
	r.addString("version", h.version)
	r.addString("network", h.network)
	if h.setup != "" {
		r.Kind = KindNote
		r.addHex("payload_hex", b)
		r.Error = h.setup
		c.fl.stats.Errors++
		c.emit(r)
		return
	}
	src := pia.Source{IP: c.src.Addr().Unmap()}
	if f := c.d.frame; f != nil && f.Link == layers.LinkTypeEthernet && len(f.Data) >= 12 {
		copy(src.MAC[:], f.Data[6:12])
	}
	var err error
	var partial *pia.MessageError // authenticated, but the messages break
	opened := false
	if h.chosen != nil {
		err = h.chosen.Open(&h.pkt, b, src)
		opened = err == nil || errors.As(err, &partial)
	}
	if !opened {
		for _, cd := range h.codecs {
			if cd == h.chosen {
				continue
			}
			if e := cd.Open(&h.pkt, b, src); e == nil || errors.As(e, &partial) {
				h.chosen, opened, err = cd, true, e
				break
			} else if err == nil {
				err = e
			}
		}
	}
	if !opened {
		r.Kind = KindNote
		r.addHex("payload_hex", b)
		r.Error = err.Error()
		c.fl.stats.Errors++
		c.emit(r)
		return
	}
	hd := &h.pkt.Header
	if hd.Encrypted && partial == nil && h.plainCodec != nil && c.d.cfg.Decrypted != nil {
		q := pia.Packet{Header: *hd, Messages: h.pkt.Messages, Footer: h.pkt.Footer}
		q.Header.Encrypted = false
		if out, err := h.plainCodec.Seal(h.rewrite[:0], &q, src); err == nil {
			h.rewrite, h.rewriteOK = out, true
		}
	}
	r.addBool("encrypted", hd.Encrypted)
	r.addString("layout", hd.Layout.String())
	r.addInt("connection_id", int64(hd.ConnectionID))
	r.addInt("packet_id", int64(hd.PacketID))
	r.addInt("source_variable_id", int64(hd.SourceVariableID))
	r.addInt("destination_variable_id", int64(hd.DestinationVariableID))
	r.addHex("nonce_hex", hd.Nonce[:])
	r.addInt("messages", int64(len(h.pkt.Messages)))
	if len(h.pkt.Footer) > 0 {
		r.addHex("footer_hex", h.pkt.Footer)
	}
	r.addHex("payload_hex", b)
	r.Summary = "Pia " + h.version + " packet " + strconv.Itoa(int(hd.PacketID)) + ", " + strconv.Itoa(len(h.pkt.Messages)) + " message(s)"
	if hd.Encrypted {
		r.Summary += ", decrypted"
	}
	if partial != nil {
		// Show what did parse: a console drops the packet, an analyst wants to see it.
		r.addBool("partial", true)
		r.addInt("error_offset", int64(partial.Offset))
		r.addHex("rest_hex", h.pkt.Rest)
		r.addString("note", "fields inherited from the previous message can make a misplaced message boundary look valid: the messages before the break are not proven right either")
		r.Error = err.Error()
		r.Summary += ", partial: " + partial.Error()
		c.fl.stats.Errors++
	}
	c.emit(r)
	v := h.chosen.Version()
	for i := range h.pkt.Messages {
		m := &h.pkt.Messages[i]
		mr := c.record("pia")
		mr.Kind = KindMessage
		mr.addInt("packet_id", int64(hd.PacketID))
		mr.addInt("index", int64(i))
		mr.addInt("flags", int64(m.Flags))
		mr.addInt("protocol_type", int64(m.ProtocolType))
		mr.addInt("protocol_port", int64(m.ProtocolPort))
		mr.addInt("destination", int64(m.Destination))
		mr.addInt("source_constant_id", int64(m.SourceConstantID))
		plain := m.Payload
		if m.Compressed(v) {
			out, err := m.Inflate(h.inflate[:0])
			if err != nil {
				mr.Error = err.Error()
			} else {
				h.inflate = out
				plain = out
				mr.addBool("compressed", true)
			}
		}
		mr.addHex("plain_hex", plain)
		mr.Summary = "Pia message type " + strconv.Itoa(int(m.ProtocolType)) + " port " + strconv.Itoa(int(m.ProtocolPort)) + ", " + strconv.Itoa(len(plain)) + " bytes"
		c.emit(mr)
	}
}
