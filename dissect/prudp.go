package dissect

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/wire"
	"github.com/gamewire/gamewire/prudp/wire/record"
)

// PRUDP over UDP: recognition, per-connection key state, ordering per
// substream, RC4 decryption, decompression and fragment reassembly.
//
// Records: every PRUDP packet is a "packet" record whose fields are written by
// record.Profile.Fields, the writer `decode --hex` uses; every whole application
// message (the fragments of one reliable substream joined, or one unreliable
// DATA) is a "message" record whose plain_hex holds the message. What differs
// between dialects (layout, signature scheme, encryption, compression) is read
// from the dialect's record.Profile.

func init() {
	for _, n := range []string{wire.NameV0, wire.NameV0Friends, wire.NameV1, wire.NameQuazal, wire.NameHyperscape} {
		handlerMakers[n] = func(d *Dissector, name string, proto uint8) handler {
			if proto != protoUDP {
				return nil
			}
			return newPRUDP(d, name, "", 0)
		}
	}
	handlerMakers[wire.NameLite] = func(d *Dissector, name string, proto uint8) handler {
		if proto != protoTCP {
			return nil
		}
		return newWSHandler(d)
	}
	udpRecognizers = append(udpRecognizers, recognizePRUDP)
	wsInnerMakers[wire.NameLite] = func(d *Dissector) wsMessageHandler {
		k := ""
		if len(d.cfg.Keys.AccessKeys) > 0 {
			k = d.cfg.Keys.AccessKeys[0]
		}
		return newPRUDP(d, wire.NameLite, k, 0)
	}
}

// wsMessage decodes the PRUDP Lite packets in one WebSocket binary message.
func (h *prudpHandler) wsMessage(c *pktCtx, msg []byte) {
	h.udp(c, msg)
}

// prudpMaxPending bounds the reliable packets held per substream while waiting
// for a missing sequence id; past it the gap is given up.
const prudpMaxPending = 512

// recognizePRUDP implements recognition by magic (V1: EA D0) and, for the
// dialects without one, by which checksum verifies under which access key.
func recognizePRUDP(d *Dissector, c *pktCtx, b []byte) handler {
	keys := d.cfg.Keys.accessKeys()
	if len(b) >= 2 && b[0] == 0xea && b[1] == 0xd0 {
		// V1 has no checksum: the SYN's signature (no session key, no connection
		// signature yet) tells the access key when it verifies.
		for _, k := range keys {
			v1 := wire.NewV1(k)
			if _, n, err := v1.Parse(b); err == nil {
				if ok, _ := v1.VerifyPacket(b[:n], nil, nil); ok {
					return newPRUDP(d, wire.NameV1, k, 0)
				}
			}
		}
		return newPRUDP(d, wire.NameV1, keys[0], 0)
	}
	type cand struct {
		name string
		cs   int
	}
	// Every (dialect, key) whose checksum verifies is a candidate; the first
	// is used and the others are kept: the handshake packets of Quazal with a
	// 4-byte checksum under an empty key and of Hyperscape are the same bytes,
	// and the first DATA packet that one of them cannot parse settles it.
	var found []*prudpHandler
	cands := []cand{{wire.NameV0, 1}, {wire.NameQuazal, 1}, {wire.NameQuazal, 4}}
	for _, k := range keys {
		for _, cd := range cands {
			h := newPRUDP(d, cd.name, k, cd.cs)
			if _, _, err := h.dia.Parse(b); err == nil {
				found = append(found, h)
			}
		}
	}
	if h := newPRUDP(d, wire.NameHyperscape, "", 4); parsesWhole(h.dia, b) {
		if len(d.cfg.Keys.HyperscapeKeys) > 0 {
			found = append([]*prudpHandler{h}, found...)
		} else {
			found = append(found, h)
		}
	}
	if len(found) == 0 {
		return nil
	}
	found[0].alts = found[1:]
	return found[0]
}

// parsesWhole reports whether b is a whole number of packets of dia with
// verified checksums.
func parsesWhole(dia wire.Dialect, b []byte) bool {
	for off := 0; off < len(b); {
		_, n, err := dia.Parse(b[off:])
		if err != nil || n <= 0 {
			return false
		}
		off += n
	}
	return len(b) > 0
}

// adoptAlternative switches to another candidate dialect of recognition when
// the current one cannot parse a datagram that the other parses whole.
func (h *prudpHandler) adoptAlternative(b []byte) bool {
	for i, a := range h.alts {
		if parsesWhole(a.dia, b) {
			h.rx, h.accessKey, h.dia = a.rx, a.accessKey, a.dia
			h.v0, h.v0f, h.v1, h.liteDia = a.v0, a.v0f, a.v1, a.liteDia
			h.alts = append(h.alts[:i:i], h.alts[i+1:]...)
			return true
		}
	}
	return false
}

type prudpHandler struct {
	d          *Dissector
	rx         *record.Profile // the dialect's receive path; rx.Name is reported
	accessKey  string
	dia        wire.Dialect
	v0         *wire.V0 // the dialects' own signature checks (rx.Signature says which)
	v0f        *wire.V0 // friends mode, tried when games-mode signatures fail
	v1         *wire.V1
	liteDia    *wire.Lite
	alts       []*prudpHandler // other dialects whose checksums verified on the first datagram
	compressed bool            // payloads of this flow carry the compression-ratio byte

	connSig    [2][]byte // connection signature each direction sent (dir 0 in CONNECT, dir 1 in SYN-ACK)
	sessionKey []byte    // nil: authentication connection, RC4 key "CD&ML"
	keyNote    string    // why the session key is unknown, for notes
	secure     bool
	dir        [2]prudpDirection

	handshake string
	synTime   time.Time
	rtt       time.Duration

	hsCipher     *hyperscape.DataCipher
	facts        record.Facts // of the packet being emitted (a field: no allocation per packet)
	cur, drained wire.Packet
	pktOff       int // offset of the packet in hand within its datagram

	rewrite    []byte
	rewriteOK  bool
	packetsOut int

	rmc rmcFlow // RMC calls by description (nexrmc.go)
}

type prudpDirection struct {
	subs  map[uint8]*prudpSubstream
	sig   record.SignatureState // what signature checks of this direction know
	unrel *crypt.UnreliableKeys
}

// prudpSubstream is one direction of one reliable substream.
type prudpSubstream struct {
	started   bool
	next      uint16
	pending   map[uint16]*prudpPending
	cipher    crypt.Cipher
	keyed     bool
	broken    string // why payloads can no longer be decrypted
	fromStart bool   // the capture holds the substream from its first packet
	msg       []byte
	frags     int
	msgSeq    uint16
	over      bool // message exceeded MaxMessage; skip to its last fragment
}

type prudpPending struct {
	raw   []byte
	off   int
	frame uint64
	time  time.Time
	ctx   pktCtx
}

func newPRUDP(d *Dissector, name, accessKey string, checksum int) *prudpHandler {
	h := &prudpHandler{d: d, rx: record.ProfileOf(name), accessKey: accessKey}
	h.dia = h.rx.NewDialect(accessKey, wire.QuazalOptions{ChecksumSize: checksum})
	h.v1, _ = h.dia.(*wire.V1)
	h.liteDia, _ = h.dia.(*wire.Lite)
	if h.v0, _ = h.dia.(*wire.V0); h.v0 != nil {
		// The other signature mode, tried when this one's signatures fail.
		other := wire.NameV0Friends
		if name == wire.NameV0Friends {
			other = wire.NameV0
		}
		h.v0f = record.ProfileOf(other).NewDialect(accessKey, wire.QuazalOptions{}).(*wire.V0)
	}
	if name == wire.NameQuazal && checksum == 0 {
		checksum = 1
	}
	if accessKey == "" && len(d.cfg.Keys.AccessKeys) > 0 && name != wire.NameHyperscape && name != wire.NameQuazal && checksum == 0 {
		// Chosen by --dialect override: take the first configured key.
		return newPRUDP(d, name, d.cfg.Keys.AccessKeys[0], checksum)
	}
	return h
}

func (h *prudpHandler) protocol() string                       { return "prudp" }
func (h *prudpHandler) stream(c *pktCtx, data []byte, gap int) {}

func (h *prudpHandler) fillStats(s *FlowStats) {
	s.Dialect = h.rx.Name
	if h.handshake != "" {
		s.Handshake = h.handshake
	}
	if h.rtt > 0 {
		s.RTT = h.rtt
	}
}

// rewritten implements udpRewriter: the datagram with every packet's payload
// replaced by its plaintext, when all of them were decrypted right away.
func (h *prudpHandler) rewritten() []byte {
	if !h.rewriteOK || h.packetsOut == 0 {
		return nil
	}
	return h.rewrite
}

// udp decodes every PRUDP packet in one datagram.
func (h *prudpHandler) udp(c *pktCtx, b []byte) {
	h.rewrite = h.rewrite[:0]
	h.rewriteOK = h.d.cfg.Decrypted != nil
	h.packetsOut = 0
	if len(h.alts) > 0 && !parsesWhole(h.dia, b) {
		h.adoptAlternative(b)
	}
	for off := 0; off < len(b); {
		p, n, err := h.dia.Parse(b[off:])
		checksumOK := true
		if err != nil {
			if !errors.Is(err, wire.ErrBadChecksum) || n == 0 {
				r := c.record("prudp")
				r.Kind = KindNote
				r.addString("dialect", h.rx.Name)
				r.addHex("payload_hex", b[off:])
				r.Error = err.Error()
				c.fl.stats.Errors++
				c.emit(r)
				h.rewriteOK = false
				return
			}
			checksumOK = false
		}
		raw := b[off : off+n]
		off += n
		h.cur = p // a field, so the packet does not escape to the heap per datagram
		h.pktOff = off - n
		h.packet(c, &h.cur, raw, checksumOK)
	}
}

// packet handles one parsed packet in capture order.
func (h *prudpHandler) packet(c *pktCtx, p *wire.Packet, raw []byte, checksumOK bool) {
	ack := p.Flags.Has(wire.FlagAck) || p.Flags.Has(wire.FlagMultiAck)
	if p.Type == wire.TypeSyn && !ack && c.dir == 1 && h.handshake == "" && h.dir[0].subs == nil && h.dir[1].subs == nil {
		// The capture began with the server's side: the SYN's sender is the client.
		c.fl.client, c.fl.server = c.fl.server, c.fl.client
		c.dir = 0
	}
	dir := c.dir
	switch p.Type {
	case wire.TypeSyn:
		h.noteMinor(dir, p)
		if !ack {
			h.synTime = c.now()
			if h.handshake == "" {
				h.handshake = "syn"
			}
		} else {
			if !h.synTime.IsZero() && h.rtt == 0 {
				h.rtt = c.now().Sub(h.synTime)
			}
			h.connSig[dir] = h.connSigOf(p)
			if h.handshake == "syn" || h.handshake == "" {
				h.handshake = "syn-ack"
			}
		}
	case wire.TypeConnect:
		h.noteMinor(dir, p)
		if !ack {
			h.connSig[dir] = h.connSigOf(p)
			if len(p.Payload) > 0 && h.rx.TicketConnect {
				h.secure = true
				h.findSessionKey(p.Payload)
			}
		} else {
			h.handshake = "connected"
			if h.secure && h.sessionKey != nil {
				h.handshake = "connected (secure)"
			}
		}
	case wire.TypeDisconnect:
		h.handshake = "disconnected"
	}
	if p.Flags.Has(wire.FlagReliable) && !ack {
		h.reliable(c, p, raw, checksumOK)
		return
	}
	var plain []byte
	decoded := false
	errText := ""
	if p.Type == wire.TypeData && !ack && len(p.Payload) > 0 {
		plain, errText = h.decryptUnreliable(dir, p)
		decoded = errText == ""
	}
	h.emitPacket(c, p, raw, checksumOK, plain, decoded, errText, false)
	if decoded {
		h.emitMessage(c, p.SubstreamID, p.Seq, 1, plain, false)
	}
}

// connSigOf returns the connection signature a SYN-ACK or CONNECT carries.
func (h *prudpHandler) connSigOf(p *wire.Packet) []byte {
	return bytes.Clone(h.rx.ConnSignature(p))
}

// findSessionKey learns the session key of a secure connection from the
// CONNECT payload: from the ticket when a Kerberos key or password opens it, or
// from a given session key that opens the request data.
func (h *prudpHandler) findSessionKey(payload []byte) {
	keys := h.d.cfg.Keys
	req, _, err := kerberos.ParseConnectRequest(payload)
	if err != nil {
		h.keyNote = "secure CONNECT payload: " + err.Error()
		return
	}
	settings := []kerberos.Settings{kerberos.NEX3DS, kerberos.Friends, kerberos.Switch}
	for _, tk := range h.d.kerberosTargets() {
		for _, s := range settings {
			if info, err := kerberos.OpenInternal(req.Ticket, tk.key, s); err == nil {
				h.sessionKey = append([]byte(nil), info.SessionKey...)
				return
			}
		}
	}
	// A ticket a player's password opened in the authentication exchange
	// (learnTicket) carries this internal ticket and its session key.
	for _, l := range h.d.learned {
		if bytes.Equal(l.internal, req.Ticket) {
			h.sessionKey = l.sessionKey
			return
		}
	}
	for _, sk := range keys.SessionKeys {
		for _, s := range settings {
			if _, err := kerberos.OpenRequestData(req.Request, sk, s); err == nil {
				h.sessionKey = sk
				return
			}
		}
	}
	h.keyNote = "secure connection: no --keys entry opens the ticket or the request data (give session-key, the server's kerberos-key, " +
		"or the player's password with the capture of their login)"
}

// rc4Key returns the key of substream 0, or nil when it is unknown.
func (h *prudpHandler) rc4Key() []byte {
	if h.secure {
		return h.sessionKey
	}
	return []byte(crypt.DefaultKey)
}

// reliable orders reliable packets per direction and substream; packets are
// decoded in sequence order, retransmissions are marked and not decoded again.
func (h *prudpHandler) reliable(c *pktCtx, p *wire.Packet, raw []byte, checksumOK bool) {
	dd := &h.dir[c.dir]
	if dd.subs == nil {
		dd.subs = map[uint8]*prudpSubstream{}
	}
	ss := dd.subs[p.SubstreamID]
	if ss == nil {
		ss = &prudpSubstream{pending: map[uint16]*prudpPending{}}
		dd.subs[p.SubstreamID] = ss
	}
	if !ss.started {
		ss.started, ss.next = true, p.Seq
		// RC4 streams run from the first reliable packet of the substream:
		// the CONNECT (seq 1) on substream 0, seq 1 on the others. A capture
		// that starts later cannot know the stream position.
		ss.fromStart = p.Seq <= 1 || (p.SubstreamID == 0 && p.Seq == 2)
	}
	diff := int16(p.Seq - ss.next)
	_, held := ss.pending[p.Seq]
	switch {
	case diff < 0 || held:
		h.emitPacket(c, p, raw, checksumOK, nil, false, "", true)
		return
	case diff > 0:
		if !checksumOK {
			h.emitPacket(c, p, raw, false, nil, false, "checksum mismatch; not held for reordering", false)
			return
		}
		h.rewriteOK = false
		ss.pending[p.Seq] = &prudpPending{raw: append([]byte(nil), raw...), off: h.pktOff, frame: c.d.frame.Number, time: c.d.frame.Time, ctx: *c}
		for len(ss.pending) > prudpMaxPending {
			h.skipGap(c, ss, p.SubstreamID)
		}
		return
	}
	h.deliver(c, ss, p, raw, checksumOK)
	h.drain(ss, p.SubstreamID)
}

// skipGap gives up on the missing sequence id before the lowest held packet.
func (h *prudpHandler) skipGap(c *pktCtx, ss *prudpSubstream, sub uint8) {
	lowest, found := uint16(0), false
	for s := range ss.pending {
		if !found || int16(s-ss.next) < int16(lowest-ss.next) {
			lowest, found = s, true
		}
	}
	if !found {
		return
	}
	missing := int(uint16(lowest - ss.next))
	c.note("prudp", "reliable substream "+strconv.Itoa(int(sub))+": "+strconv.Itoa(missing)+" packet(s) from seq "+strconv.Itoa(int(ss.next))+" never captured; RC4 stream position lost")
	if ss.broken == "" {
		ss.broken = "RC4 stream position lost: packets before seq " + strconv.Itoa(int(lowest)) + " missing from the capture"
	}
	ss.msg, ss.frags = ss.msg[:0], 0
	ss.next = lowest
	h.drain(ss, sub)
}

// drain delivers held packets that have become next in sequence.
func (h *prudpHandler) drain(ss *prudpSubstream, sub uint8) {
	for {
		pp, ok := ss.pending[ss.next]
		if !ok {
			return
		}
		delete(ss.pending, ss.next)
		p, n, err := h.dia.Parse(pp.raw)
		if err != nil && n == 0 {
			ss.next++
			continue
		}
		h.drained = p
		h.pktOff = pp.off
		c := &pp.ctx
		saved := h.d.frame
		f := *saved
		f.Number, f.Time = pp.frame, pp.time
		h.d.frame = &f
		h.deliver(c, ss, &h.drained, pp.raw[:n], err == nil)
		h.d.frame = saved
	}
}

// finish reports packets still waiting for a gap at the end of the capture.
func (h *prudpHandler) finish(c *pktCtx) {
	for dir := range h.dir {
		c := c.towards(dir)
		for sub, ss := range h.dir[dir].subs {
			for len(ss.pending) > 0 {
				h.skipGap(c, ss, sub)
			}
			if ss.frags > 0 {
				c.note("prudp", "capture ended inside a "+strconv.Itoa(ss.frags)+"-fragment message on substream "+strconv.Itoa(int(sub)))
			}
		}
	}
}

// deliver decodes a reliable packet that is next in sequence.
func (h *prudpHandler) deliver(c *pktCtx, ss *prudpSubstream, p *wire.Packet, raw []byte, checksumOK bool) {
	ss.next = p.Seq + 1
	if p.Type != wire.TypeData || len(p.Payload) == 0 {
		h.emitPacket(c, p, raw, checksumOK, nil, false, "", false)
		return
	}
	switch {
	case h.rx.Encryption == record.EncryptNone: // Lite: TLS protects the WebSocket
		h.emitPacket(c, p, raw, checksumOK, p.Payload, true, "", false)
		h.reassemble(c, ss, p, p.Payload)
		return
	case h.rx.Encryption == record.EncryptAESCBC:
		plain, errText := h.openHyperscape(p)
		if errText != "" {
			h.emitPacket(c, p, raw, checksumOK, nil, false, errText, false)
			return
		}
		h.emitPacket(c, p, raw, checksumOK, plain, true, "", false)
		h.reassemble(c, ss, p, plain)
		return
	case !h.rx.Encrypted(p):
		// Quazal DO (Duplicated Objects) payloads are compressed, not RC4-encrypted.
		plain, err := h.decompress(p.Payload)
		if err != nil {
			h.emitPacket(c, p, raw, checksumOK, nil, false, "not decompressed: "+err.Error(), false)
			return
		}
		h.emitPacket(c, p, raw, checksumOK, plain, true, "", false)
		h.reassemble(c, ss, p, plain)
		return
	}
	if !ss.keyed && ss.broken == "" && !ss.fromStart && h.rx.Encryption == record.EncryptRC4Stream {
		ss.broken = "the capture starts in the middle of this RC4 stream (first reliable seq " + strconv.Itoa(int(ss.next-1)) + "), so its position is unknown"
	}
	if !ss.keyed && ss.broken == "" {
		key := h.rc4Key()
		if key == nil {
			ss.broken = h.keyNote
			if ss.broken == "" {
				ss.broken = "session key unknown"
			}
		} else {
			key = crypt.SubstreamKey(key, p.SubstreamID)
			if err := ss.cipher.Init(key, h.rx.RC4Mode()); err != nil {
				ss.broken = err.Error()
			} else {
				ss.keyed = true
			}
		}
	}
	if ss.broken != "" {
		h.emitPacket(c, p, raw, checksumOK, nil, false, "not decrypted: "+ss.broken, false)
		return
	}
	buf := h.d.scratch(len(p.Payload))
	ss.cipher.XORPacket(buf, p.Payload)
	plain, err := h.decompress(buf)
	if err != nil {
		h.emitPacket(c, p, raw, checksumOK, buf, true, err.Error(), false)
		return
	}
	h.emitPacket(c, p, raw, checksumOK, plain, true, "", false)
	h.reassemble(c, ss, p, plain)
}

// reassemble joins the fragments of one reliable substream.
func (h *prudpHandler) reassemble(c *pktCtx, ss *prudpSubstream, p *wire.Packet, plain []byte) {
	// Fragment reassembly: ids 1, 2, ... then 0 for the last ("Fragment id").
	if ss.frags == 0 {
		ss.msgSeq = p.Seq
		ss.over = false
	}
	ss.frags++
	if !ss.over {
		if len(ss.msg)+len(plain) > h.d.cfg.MaxMessage {
			ss.over = true
			c.note("prudp", "message from seq "+strconv.Itoa(int(ss.msgSeq))+" exceeds the "+strconv.Itoa(h.d.cfg.MaxMessage)+"-byte limit; skipped")
			ss.msg = ss.msg[:0]
		} else {
			ss.msg = append(ss.msg, plain...)
		}
	}
	if p.FragmentID == 0 {
		if !ss.over {
			h.emitMessage(c, p.SubstreamID, ss.msgSeq, ss.frags, ss.msg, true)
		}
		ss.msg, ss.frags = ss.msg[:0], 0
	}
}

// decryptUnreliable decrypts an unreliable DATA payload with its own key.
func (h *prudpHandler) decryptUnreliable(dir int, p *wire.Packet) ([]byte, string) {
	switch h.rx.Encryption {
	case record.EncryptNone:
		return p.Payload, ""
	case record.EncryptAESCBC:
		return h.openHyperscape(p)
	}
	buf := h.d.scratch(len(p.Payload))
	switch {
	case !h.rx.Encrypted(p):
		copy(buf, p.Payload) // Quazal DO payloads are compressed, not encrypted
	case h.rx.Encryption == record.EncryptRC4PerPacket:
		var c crypt.Cipher
		if err := c.Init([]byte(crypt.DefaultKey), crypt.ModePerPacket); err != nil {
			return nil, err.Error()
		}
		c.XORPacket(buf, p.Payload)
	default: // EncryptRC4Stream: unreliable packets have keys of their own
		key := h.rc4Key()
		if key == nil {
			return nil, "not decrypted: " + h.keyNote
		}
		dd := &h.dir[dir]
		if dd.unrel == nil {
			u := crypt.NewUnreliableKeys(key)
			dd.unrel = &u
		}
		dd.unrel.XORPacket(buf, p.Payload, p.Seq, p.SessionID)
	}
	plain, err := h.decompress(buf)
	if err != nil {
		return nil, err.Error()
	}
	return plain, ""
}

// decompress undoes "Compression" (NintendoClients wiki "PRUDP Protocol") when the payload
// carries the ratio byte. Quazal payloads always carry it. NEX payloads carry
// it only when the connection enabled compression: the keys file says so
// ("compression on"), or the flow showed it with a payload that is a
// non-zero ratio followed by a zlib header (RFC 1950: CMF 0x78, CMF*256+FLG a
// multiple of 31); from then on every payload of the flow is taken to carry
// the byte (a ratio of 0 marks one sent uncompressed).
func (h *prudpHandler) decompress(b []byte) ([]byte, error) {
	mode := h.d.cfg.Keys.Compression
	if h.rx.Compression == record.CompressAlways || mode == "on" || h.compressed {
		return crypt.Decompress(b, h.d.cfg.MaxMessage)
	}
	if mode == "off" {
		return b, nil
	}
	if len(b) >= 3 && b[0] != 0 && b[1] == 0x78 && (uint16(b[1])<<8|uint16(b[2]))%31 == 0 {
		if out, err := crypt.Decompress(b, h.d.cfg.MaxMessage); err == nil {
			h.compressed = true
			return out, nil
		}
	}
	return b, nil
}

// Signature verification outcomes.
const (
	sigUnknown = record.Unchecked // cannot be checked with what the connection knows
	sigOK      = record.Verified
	sigBad     = record.Failed
)

// verifySignature checks a packet's signature with what the connection knows
// (record.Profile.VerifySignature). A V0 DATA packet that verifies in the other
// signature mode switches the flow to it.
func (h *prudpHandler) verifySignature(dir int, p *wire.Packet, raw []byte) record.Verdict {
	dd := &h.dir[dir]
	dd.sig.SessionKey, dd.sig.PeerConnSig = h.sessionKey, h.connSig[1-dir]
	dd.sig.KeyUnknown = h.secure && h.sessionKey == nil
	v := h.rx.VerifySignature(h.dia, p, raw, &dd.sig)
	if v != sigOK && h.v0f != nil && p.Type == wire.TypeData &&
		record.ProfileOf(h.v0f.Name()).VerifySignature(h.v0f, p, raw, &dd.sig) == sigOK {
		h.v0, h.v0f = h.v0f, h.v0 // the other signature mode is the one in use
		h.dia = h.v0
		h.rx = record.ProfileOf(h.v0.Name())
		return sigOK
	}
	return v
}

// emitPacket writes the packet record: the fields record.Profile.Fields writes (the
// keys of decode --hex), then the aggregate ack's, the error and the summary. plain is
// the decrypted payload when decoded; errText says why it is not (or a checksum
// mismatch).
func (h *prudpHandler) emitPacket(c *pktCtx, p *wire.Packet, raw []byte, checksumOK bool, plain []byte, decoded bool, errText string, retrans bool) {
	r := c.record("prudp")
	r.Retransmission = retrans
	h.facts = record.Facts{Offset: h.pktOff, Length: len(raw), Flags: h.d.flagNames(p.Flags),
		ChecksumOK: checksumOK, Signature: h.verifySignature(c.dir, p, raw), Plain: plain, Decoded: decoded}
	if errText != "" && (decoded || strings.HasPrefix(errText, "not decrypted")) {
		h.facts.PlainError = errText
	}
	h.rx.Fields((*fieldSink)(r), p, &h.facts)
	if p.Flags.Has(wire.FlagMultiAck) && p.Type == wire.TypeData {
		if a, err := wire.ParseAggregateAck(p.Payload); err == nil && p.Seq == 0 {
			r.addInt("ack_substream_id", int64(a.SubstreamID))
			r.addInt("ack_seq", int64(a.Seq))
		}
	}
	if !checksumOK && errText == "" {
		errText = "checksum mismatch"
		c.fl.stats.Errors++
	}
	if h.facts.Signature == sigBad && errText == "" {
		// V1 and Lite have no checksum: a wrong access key shows only here.
		errText = "signature mismatch (wrong access key, or a session key not known)"
		c.fl.stats.Errors++
	}
	r.Error = errText
	r.info = h.d.prudpSummary(r.info[:0], h.rx.Name, p, decoded && h.rx.Encrypted(p))
	c.emit(r)
	h.rewritePacket(p, plain, decoded, retrans)
}

// rewritePacket adds p to the datagram --write-decrypted writes (rewritten), with its
// plaintext when decoded; a retransmission or a DATA payload left encrypted spoils the
// datagram, which is then written as captured.
func (h *prudpHandler) rewritePacket(p *wire.Packet, plain []byte, decoded, retrans bool) {
	if retrans || !decoded && p.Type == wire.TypeData && len(p.Payload) > 0 && !p.Flags.Has(wire.FlagAck) && !p.Flags.Has(wire.FlagMultiAck) {
		h.rewriteOK = false
	}
	if !h.rewriteOK {
		return
	}
	q := *p
	if decoded {
		q.Payload = plain
	}
	var err error
	if h.rewrite, err = h.dia.Append(h.rewrite, &q); err != nil {
		h.rewriteOK = false
	}
	h.packetsOut++
}

func (d *Dissector) prudpSummary(b []byte, dialect string, p *wire.Packet, decoded bool) []byte {
	b = append(b, dialect...)
	b = append(b, ' ')
	b = append(b, p.Type.String()...)
	if p.Flags != 0 {
		b = append(b, " ["...)
		for i, n := range d.flagNames(p.Flags) {
			if i > 0 {
				b = append(b, '|')
			}
			b = append(b, n...)
		}
		b = append(b, ']')
	}
	b = append(b, ' ')
	b = appendVPort(b, p.Src)
	b = append(b, "→"...)
	b = appendVPort(b, p.Dst)
	b = append(b, " seq="...)
	b = strconv.AppendInt(b, int64(p.Seq), 10)
	if p.Type == wire.TypeData {
		b = append(b, " frag="...)
		b = strconv.AppendInt(b, int64(p.FragmentID), 10)
	}
	b = append(b, " len="...)
	b = strconv.AppendInt(b, int64(len(p.Payload)), 10)
	if decoded {
		b = append(b, " decrypted"...)
	}
	return b
}

// appendVPort appends "stream:port" as wire.VPort.String does, without allocating.
func appendVPort(b []byte, v wire.VPort) []byte {
	b = append(b, v.Stream.String()...)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(v.Port), 10)
}

// flagNames caches Flags.Names, which allocates, per distinct value.
func (d *Dissector) flagNames(f wire.Flags) []string {
	if n, ok := d.flagNameCache[f]; ok {
		return n
	}
	n := f.Names()
	if d.flagNameCache == nil {
		d.flagNameCache = map[wire.Flags][]string{}
	}
	d.flagNameCache[f] = n
	return n
}

// emitMessage writes the record of one whole application message.
func (h *prudpHandler) emitMessage(c *pktCtx, sub uint8, firstSeq uint16, frags int, msg []byte, reliable bool) {
	r := c.record("prudp")
	r.Kind = KindMessage
	r.addString("dialect", h.rx.Name)
	if h.rx.Layout == record.LayoutV1 {
		r.addInt("substream_id", int64(sub))
	}
	r.addBool("reliable", reliable)
	r.addInt("seq", int64(firstSeq))
	r.addInt("fragments", int64(frags))
	r.addInt("length", int64(len(msg)))
	r.addHex("plain_hex", msg)
	b := append(r.info[:0], h.rx.Name...)
	b = h.appendRMC(c, r, b, msg)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(len(msg)), 10)
	b = append(b, " bytes in "...)
	b = strconv.AppendInt(b, int64(frags), 10)
	b = append(b, " fragment(s) from seq "...)
	r.info = strconv.AppendInt(b, int64(firstSeq), 10)
	c.emit(r)
}

// scratch returns a reusable buffer of n bytes for one decryption.
func (d *Dissector) scratch(n int) []byte {
	if cap(d.scratchBuf) < n {
		d.scratchBuf = make([]byte, n)
	}
	return d.scratchBuf[:n]
}

// kerberosTargets returns the keys that may open tickets: the given Kerberos
// keys and the keys derived from the given passwords (both derivations),
// computed once per capture since the 3DS/Wii U derivation iterates MD5 65000
// times. A password's key opens the ticket the authentication server sends
// that player (learnTicket); a server's key the internal ticket of a secure
// CONNECT.
func (d *Dissector) kerberosTargets() []kerberosTarget {
	if d.targets != nil {
		return d.targets
	}
	keys := d.cfg.Keys
	targets := []kerberosTarget{}
	for pid, k := range keys.KerberosKeys {
		targets = append(targets, kerberosTarget{key: k, pid: pid})
	}
	for pid, pw := range keys.Passwords {
		k := kerberos.DeriveKey(pw, pid)
		k2 := kerberos.DeriveKeySwitch(pw, pid)
		targets = append(targets, kerberosTarget{key: k[:], pid: pid, password: true},
			kerberosTarget{key: k2[:], pid: pid, password: true})
	}
	d.targets = targets
	return targets
}

// kerberosTarget is a Kerberos key of a keys file: given, or derived from a
// password.
type kerberosTarget struct {
	key      []byte
	pid      uint64
	password bool
}

// openHyperscape decrypts a Hyperscape DATA payload ("Packet: DATA",
// "Compression", "Encryption" in the Hyperscape "PRUDP" wiki page) with the flow's
// shared key: the first hyperscape-key under which a payload opens is kept.
func (h *prudpHandler) openHyperscape(p *wire.Packet) ([]byte, string) {
	if h.hsCipher == nil {
		keys := h.d.cfg.Keys.HyperscapeKeys
		if len(keys) == 0 {
			return nil, "not decrypted: Hyperscape payloads need the connection's shared key (hyperscape-key in the keys file)"
		}
		var firstErr error
		for _, k := range keys {
			dc, err := hyperscape.NewDataCipher(hyperscape.SharedKey(k))
			if err != nil {
				continue
			}
			out, err := dc.Open(h.d.scratch(0), p.Payload, p.Seq, h.d.cfg.MaxMessage)
			if err == nil {
				h.hsCipher = dc
				h.d.scratchBuf = out[:0]
				return out, ""
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		return nil, "not decrypted: no hyperscape-key opens this payload: " + firstErr.Error()
	}
	out, err := h.hsCipher.Open(h.d.scratch(0), p.Payload, p.Seq, h.d.cfg.MaxMessage)
	if err != nil {
		return nil, "not decrypted: " + err.Error()
	}
	h.d.scratchBuf = out[:0]
	return out, ""
}

// appendRMCCall adds the kind and ids of an RMC call to the "rmc" object just
// begun in r, and the same in a few words to the summary b.
func appendRMCCall(r *Record, b []byte, kind string, protocol uint16, method, callID uint32) []byte {
	r.addString("kind", kind)
	r.addInt("protocol_id", int64(protocol))
	r.addInt("method_id", int64(method))
	r.addInt("call_id", int64(callID))
	b = append(b, ", RMC "...)
	b = append(b, kind...)
	b = append(b, " protocol "...)
	b = strconv.AppendInt(b, int64(protocol), 10)
	b = append(b, " method "...)
	b = strconv.AppendInt(b, int64(method), 10)
	b = append(b, " call "...)
	return strconv.AppendInt(b, int64(callID), 10)
}
