package prudp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/wire"
)

// session is the state of one PRUDP connection. It has one owner at a time:
// its shard's loop, or the socket reader running a small datagram to
// completion while holding the shard (see shard.go). Every method takes the
// current time so tests drive it without sleeping. Nothing here touches a
// socket: packets go out through the shard's write function.
type session struct {
	cfg   *Config
	codec codec
	sh    *shard
	conn  *Conn

	client bool
	state  sessionState
	peer   netip.AddrPort
	key    demuxKey

	localPort, remotePort uint16
	localSID, remoteSID   uint8

	sigOut     []byte // connection signature we sign outgoing packets with (the peer's)
	sigIn      []byte // connection signature incoming packets are signed with (ours)
	sessionKey []byte // Kerberos session key, nil on authentication connections
	baseKey    []byte // RC4 key of substream 0

	minor        uint8
	dialect      dialectTraits // what the dialect changes (Lite: no RC4, new-format acks)
	maxSubstream uint8
	supported    uint32

	unrelSendSeq uint16
	unrelKeys    crypt.UnreliableKeys
	pingSeq      uint16
	fragMax      uint32 // highest fragment id before wrapping to 1 (255, or 2^32-1 for Hyperscape)

	// Hyperscape: the key exchange in progress (client) and the DATA
	// transform keyed by it; aes replaces RC4 and compression when set.
	hsClient *hyperscape.Client
	aes      *hyperscape.DataCipher
	// Hyperscape keepalive: PINGs go out every KeepAlive and the connection
	// fails after MaxUnansweredPings in a row.
	lastPing        time.Time
	pingsUnanswered int
	multiAck        bool // the packet being handled asks for ACK|MULTI_ACK

	streams []substream

	rtt        rttEstimator
	cwnd       int
	inflight   int // reliable packets in flight over all substreams
	lastShrink time.Time
	tx         uint64 // counts reliable transmissions (outPacket.tx)

	created, lastRecv, lastSend time.Time
	deadline                    time.Time // when tick must run next (zero: never)
	heapIndex                   int

	// handshake (client): the SYN or CONNECT being retransmitted
	hs       *outPacket
	connectB []byte // server: encoded CONNECT-ACK, resent on duplicate CONNECTs

	acks       []ackItem // acknowledgements to send at the end of the batch
	ackQueued  bool      // s is in the shard's ackPending list
	ackDelayed bool      // acks wait (AckDelay) for a packet to share a datagram with
	ackDue     time.Time // when delayed acks must go out at the latest
	wroteIn    uint64    // the shard batch in which a packet last went out

	check      uint32 // secure CONNECT check value (client)
	closeReq   bool   // graceful close requested: DISCONNECT once the queues drain
	lingerN    uint8  // retransmitted DISCONNECTs seen while lingering
	lingerTill time.Time
	err        error

	scratch []byte
}

type sessionState uint8

const (
	stateSynSent sessionState = iota
	stateConnecting
	stateEstablished
	stateClosing // our DISCONNECT is in flight
	stateLinger  // closed; lingering to re-acknowledge a peer's retransmitted DISCONNECT
	stateClosed
)

type ackItem struct {
	typ       uint8
	substream uint8
	seq       uint16
	fragment  uint32
	times     uint8
	multi     bool // Hyperscape: answer with ACK and MULTI_ACK
	// unreliable marks the ACK of an unreliable packet: its sequence id is
	// in another space than the substream's, so it never joins an aggregate.
	unreliable bool
}

// aggregatable reports whether a is a reliable DATA acknowledgement that an
// aggregate ACK can carry.
func (a *ackItem) aggregatable() bool {
	return a.typ == typeData && a.times <= 1 && !a.unreliable && !a.multi
}

// outPacket is a reliable packet waiting for its acknowledgement. Its bytes
// are encoded (encrypted, signed) once and resent as they are.
type outPacket struct {
	seq       uint16
	substream uint8
	typ       uint8
	buf       []byte
	deadline  time.Time
	retries   int       // retransmissions, fast or timed out (Karn's rule)
	timeouts  int       // retransmissions on a timeout: back-off and MaxRetransmits
	skipped   int       // acknowledgements of packets sent after this one's last transmission
	tx        uint64    // order of its last transmission on the session (see ackOne)
	lastSent  time.Time // its last transmission (the only one while retries is 0: the RTT sample)
	size      int       // message bytes it carries, for the send-queue accounting
}

// substream is one reliable substream's send and receive state.
type substream struct {
	id uint8

	// send side
	sendSeq  uint16       // next sequence id to assign
	inflight []*outPacket // in sequence order
	queue    []sendItem   // messages not yet fully sent (from qHead on)
	qHead    int
	queuePos int      // bytes of queue[0] already fragmented
	nextFrag uint32   // fragment id of the next fragment of queue[0]
	rc       *rc4Pair // RC4 of both directions; nil for Hyperscape (AES) and Lite (none)

	// receive side
	recvNext uint16 // next sequence id to deliver
	reorder  map[uint16]heldPacket
	reasm    reassembler
}

// rc4Pair is the RC4 state of one substream: enc for what we send, dec for
// what we receive. It lives apart from the substream so that Hyperscape
// connections, which use AES, do not carry it.
type rc4Pair struct{ enc, dec crypt.Cipher }

type sendItem struct {
	data []byte
}

type heldPacket struct {
	typ      uint8
	fragment uint32
	payload  []byte
}

func newSession(sh *shard, cfg *Config, c codec, client bool, peer netip.AddrPort, now time.Time) *session {
	s := &session{
		cfg:       cfg,
		codec:     c,
		sh:        sh,
		client:    client,
		peer:      peer,
		rtt:       newRTTEstimator(cfg.InitialRTO, cfg.MinRTO, cfg.MaxRTO),
		cwnd:      cfg.InitialWindow,
		created:   now,
		lastRecv:  now,
		lastSend:  now,
		heapIndex: -1,
		dialect:   traitsOf(c),
		fragMax:   255,
	}
	if cfg.Dialect == Hyperscape {
		s.fragMax = 1<<32 - 1
	}
	if cfg.NoEncryption {
		s.dialect.plain = true
	}
	return s
}

// setup prepares the substreams and ciphers once the handshake fixed the
// maximum substream id and the session key. sendStart and recvStart are the
// first sequence ids of substream 0 (the client's CONNECT took id 1).
func (s *session) setup(sendStart, recvStart uint16) {
	s.baseKey = s.cfg.RC4Key
	if len(s.sessionKey) > 0 {
		s.baseKey = s.sessionKey
	}
	s.conn.maxSubstream = s.maxSubstream
	s.conn.minor = s.minor
	s.conn.maxMessage = s.cfg.MaxMessageSize
	s.conn.maxUnreliable = s.cfg.FragmentSize
	if s.cfg.Compression && s.aes == nil {
		s.conn.maxUnreliable--
	}
	s.unrelKeys = crypt.NewUnreliableKeys(s.baseKey)
	s.streams = make([]substream, int(s.maxSubstream)+1)
	k := append([]byte(nil), s.baseKey...)
	for i := range s.streams {
		st := &s.streams[i]
		st.id = uint8(i)
		st.sendSeq, st.recvNext = 1, 1
		if i == 0 {
			st.sendSeq, st.recvNext = sendStart, recvStart
		} else {
			crypt.ModifyKey(k)
		}
		// Key lengths were checked when the connection was configured.
		mode := crypt.ModeStream
		if s.cfg.RC4Mode == RC4PerPacket {
			mode = crypt.ModePerPacket
		}
		if s.aes == nil && !s.dialect.plain {
			st.rc = new(rc4Pair)
			_ = st.rc.enc.Init(k, mode)
			_ = st.rc.dec.Init(k, mode)
		}
		st.reasm.max = s.cfg.MaxMessageSize
		st.reasm.fragMax = s.fragMax
	}
}

// write encodes p and hands the datagram to the shard; it returns the
// encoding (valid until the next write) for packets that must be kept.
func (s *session) write(now time.Time, p *pkt) ([]byte, error) {
	// Encode from the shard's scratch copy: handing p itself to the codec
	// (an interface call) would move every caller's pkt to the heap.
	q := &s.sh.outPkt
	*q = *p
	q.src, q.dst = s.localPort, s.remotePort
	// A SYN carries session id 0, as consoles send it (the published Terraria
	// SYN) and as NintendoClients' server insists ("Received invalid SYN
	// packet" otherwise): the session id is announced by the CONNECT.
	q.sessionID = s.localSID
	if p.typ == typeSyn {
		q.sessionID = 0
	}
	b, err := s.codec.appendPacket(s.scratch[:0], q, s.keysFor(p.typ, true))
	if err != nil {
		return nil, err
	}
	s.scratch = b
	s.sh.writeTo(b, s.peer)
	s.lastSend = now
	s.wroteIn = s.sh.batch
	if s.ackDelayed && !s.ackQueued {
		// Delayed acknowledgements ride along with this packet.
		s.ackQueued = true
		s.sh.ackPending = append(s.sh.ackPending, s)
	}
	s.conn.stats.packetsOut.Add(1)
	s.conn.stats.bytesOut.Add(uint64(len(b)))
	return b, nil
}

// fail ends the session with err and frees its resources.
func (s *session) fail(now time.Time, err error) {
	if s.state == stateClosed {
		return
	}
	if s.err == nil {
		s.err = err
	}
	s.state = stateClosed
	s.release()
	s.conn.finish(s.err)
	s.sh.remove(s)
	s.cfg.Logger.Debug("prudp connection closed", "peer", s.peer, "err", s.err)
}

// release drops buffered packets and messages.
func (s *session) release() {
	for i := range s.streams {
		st := &s.streams[i]
		for _, o := range st.inflight {
			s.sh.putBuf(o.buf)
		}
		for _, o := range st.inflight {
			s.sh.putOut(o)
		}
		st.inflight, st.queue, st.reorder, st.qHead = nil, nil, nil, 0
		st.reasm = reassembler{}
	}
	s.inflight = 0
	s.scratch = nil
	s.hs = nil
}

// queueAck records an acknowledgement to send at the end of the batch.
func (s *session) queueAck(typ uint8, substream uint8, seq uint16, fragment uint32, times uint8) {
	s.acks = append(s.acks, ackItem{typ: typ, substream: substream, seq: seq, fragment: fragment, times: times, multi: s.multiAck})
	if !s.ackQueued {
		s.ackQueued = true
		s.sh.ackPending = append(s.sh.ackPending, s)
	}
}

// flushAcks sends the queued acknowledgements: aggregated per substream when
// the negotiated minor version allows ("Aggregate acknowledgement" in
// specs/prudp-nex.md; minor 1 the old format, minor 2 and up the new one),
// otherwise one ACK packet each.
func (s *session) flushAcks(now time.Time) {
	s.ackQueued, s.ackDelayed, s.ackDue = false, false, time.Time{}
	if s.state == stateClosed {
		s.acks = s.acks[:0]
		return
	}
	acks := s.acks
	aggregate := s.codec.v1() && (s.minor >= 1 || s.dialect.newAcks) && !s.cfg.IndividualAcks
	for i := range acks {
		a := &acks[i]
		if aggregate && a.aggregatable() {
			continue
		}
		for range max(a.times, 1) {
			p := pkt{typ: a.typ, flags: flagAck, substream: a.substream, seq: a.seq, fragment: a.fragment}
			if a.multi {
				p.flags |= flagMultiAck
			}
			_, _ = s.write(now, &p)
			if a.times > 1 {
				// A DISCONNECT is acknowledged three times so that one lost
				// datagram does not lose the acknowledgement: never coalesce
				// the copies into one datagram.
				s.sh.flushWrites()
			}
		}
		s.conn.stats.acksOut.Add(uint64(max(a.times, 1)))
	}
	if aggregate {
		for sub := range s.streams {
			s.sendAggregate(now, uint8(sub), acks)
		}
	}
	s.acks = acks[:0]
}

// ackNow reports whether the queued acknowledgements go out at the end of
// this batch or may wait (AckDelay) for a packet to share a datagram with.
func (s *session) ackNow(now time.Time) bool {
	if s.cfg.AckDelay < 0 || s.wroteIn == s.sh.batch || len(s.acks) >= 2 || s.state != stateEstablished {
		return true
	}
	if !s.ackDue.IsZero() && !now.Before(s.ackDue) {
		return true
	}
	for i := range s.acks {
		if s.acks[i].typ != typeData || s.acks[i].times > 1 {
			return true
		}
	}
	return false
}

// sendAggregate acknowledges every queued DATA ack of one substream in one
// packet: everything up to the last in-order sequence id, plus the ids held
// out of order.
func (s *session) sendAggregate(now time.Time, sub uint8, acks []ackItem) {
	n := 0
	for i := range acks {
		if acks[i].aggregatable() && acks[i].substream == sub {
			n++
		}
	}
	if n == 0 {
		return
	}
	st := &s.streams[sub]
	cum := st.recvNext - 1
	extra := s.sh.ackExtra[:0]
	defer func() { s.sh.ackExtra = extra[:0] }()
	for i := range acks {
		a := &acks[i]
		if a.aggregatable() && a.substream == sub && seqBefore(cum, a.seq) {
			extra = append(extra, a.seq)
		}
	}
	if s.minor < 2 && sub != 0 {
		// The old format has no substream field and peers read it as
		// substream 0: acknowledge other substreams one by one.
		for i := range acks {
			if a := &acks[i]; a.aggregatable() && a.substream == sub {
				ack := pkt{typ: typeData, flags: flagAck, substream: sub, seq: a.seq, fragment: a.fragment}
				_, _ = s.write(now, &ack)
				s.conn.stats.acksOut.Add(1)
			}
		}
		return
	}
	if s.minor < 2 && !s.dialect.newAcks {
		// Old format: the header's sequence id acknowledges everything up to
		// it. The payload, by the spec a list of further ids, carries that
		// same id once: NintendoClients reads an old-format payload as one
		// u16 "acknowledged up to", nex-go as additional ids, and both agree
		// on this. Ids held out of order get ACKs of their own.
		var p pkt
		p.typ, p.flags, p.substream, p.seq = typeData, flagMultiAck, sub, cum
		p.payload = binary.LittleEndian.AppendUint16(s.sh.ackBuf[:0], cum)
		s.sh.ackBuf = p.payload
		_, _ = s.write(now, &p)
		s.conn.stats.acksOut.Add(1)
		for _, q := range extra {
			ack := pkt{typ: typeData, flags: flagAck, substream: sub, seq: q}
			_, _ = s.write(now, &ack)
			s.conn.stats.acksOut.Add(1)
		}
		return
	}
	const maxExtra = 255
	for len(extra) > 0 || n > 0 {
		chunk := extra[:min(len(extra), maxExtra)]
		extra = extra[len(chunk):]
		n = 0
		// New format: header sequence id 0, substream id 1 (how NintendoClients
		// and nex-go tell the formats apart), the real substream in the payload.
		var p pkt
		p.typ, p.flags, p.substream = typeData, flagMultiAck, 1
		buf := append(s.sh.ackBuf[:0], sub, byte(len(chunk)))
		buf = binary.LittleEndian.AppendUint16(buf, cum)
		for _, q := range chunk {
			buf = binary.LittleEndian.AppendUint16(buf, q)
		}
		s.sh.ackBuf = buf
		p.payload = buf
		_, _ = s.write(now, &p)
		s.conn.stats.acksOut.Add(1)
	}
}

// handle processes one verified packet addressed to this session.
func (s *session) handle(now time.Time, p *pkt) {
	s.lastRecv = now
	s.conn.stats.packetsIn.Add(1)
	s.conn.stats.bytesIn.Add(uint64(len(p.raw)))
	if s.state == stateClosed {
		return
	}
	if s.connectB != nil && p.typ != typeConnect {
		s.connectB = nil // the client has our CONNECT-ACK
	}
	if s.state == stateLinger {
		if p.typ == typeDisconnect && p.has(flagNeedAck) {
			s.queueAck(typeDisconnect, p.substream, p.seq, 0, 3)
			// The peer is still retransmitting: our acknowledgements were
			// lost, and its next retransmission comes after a backoff twice
			// as long as the last; linger that much longer too.
			if s.lingerN < 8 {
				s.lingerN++
			}
			s.lingerTill = now.Add(s.lingerTime())
		}
		return
	}
	if s.cfg.Dialect == Hyperscape && p.has(flagMultiAck) {
		// "Multi Ack" in specs/prudp-hyperscape.md: no aggregate
		// acknowledgements here; a packet needing an ACK with this flag is
		// answered with ACK and MULTI_ACK both set.
		p.flags &^= flagMultiAck
		if !p.has(flagAck) {
			s.multiAck = true
			defer func() { s.multiAck = false }()
		}
	}
	if p.has(flagAck) || p.has(flagMultiAck) {
		s.handleAck(now, p)
		return
	}
	switch p.typ {
	case typeSyn:
		// A retransmitted SYN on an established connection: the server answers
		// SYNs statelessly in the shard, so nothing reaches here.
	case typeConnect:
		if !s.client && s.connectB != nil {
			// Our CONNECT-ACK was lost: send the same one again.
			s.sh.writeTo(s.connectB, s.peer)
			s.conn.stats.duplicates.Add(1)
		}
	case typeData:
		if p.has(flagReliable) {
			s.handleReliable(now, p)
		} else {
			s.handleUnreliable(now, p)
		}
	case typeUser:
		// Hyperscape's USER stage: acknowledged, nothing to deliver. A
		// reliable USER takes its place in the ordering.
		if p.has(flagReliable) {
			s.handleReliable(now, p)
		} else if p.has(flagNeedAck) {
			s.queueAck(typeUser, 0, p.seq, 0, 1)
		}
	case typePing:
		if p.has(flagReliable) {
			// NintendoClients numbers its PINGs on substream 0's reliable
			// counter; they must pass through ordering or the window stalls.
			s.handleReliable(now, p)
		} else if p.has(flagNeedAck) {
			s.queueAck(typePing, 0, p.seq, 0, 1)
		}
	case typeDisconnect:
		switch {
		case p.has(flagReliable):
			s.handleReliable(now, p)
		case p.has(flagNeedAck):
			s.queueAck(typeDisconnect, p.substream, p.seq, 0, 3)
			s.peerClosed(now, ErrPeerClosed)
		default:
			s.fail(now, ErrPeerReset)
		}
	default:
		s.conn.stats.drop(dropType)
	}
}

func (s *session) substreamOf(p *pkt) (*substream, bool) {
	if int(p.substream) >= len(s.streams) {
		s.conn.stats.drop(dropSubstream)
		return nil, false
	}
	return &s.streams[p.substream], true
}

// handleReliable orders a reliable packet: in-order packets are delivered at
// once along with whatever they unblock, early ones are held in the bounded
// reorder buffer, duplicates are dropped but acknowledged again (the earlier
// ACK may be what was lost).
func (s *session) handleReliable(now time.Time, p *pkt) {
	st, ok := s.substreamOf(p)
	if !ok {
		return
	}
	times := uint8(1)
	if p.typ == typeDisconnect {
		times = 3
	}
	d := seqDiff(st.recvNext, p.seq)
	switch {
	case d < 0:
		s.conn.stats.duplicates.Add(1)
		s.queueAck(p.typ, p.substream, p.seq, p.fragment, times)
		return
	case d >= s.cfg.ReorderWindow:
		s.conn.stats.drop(dropWindow)
		return
	case p.typ == typeData && s.conn.inboxBytes.Load() > int64(s.cfg.MaxRecvQueue):
		// Receive-side flow control: refuse, unacknowledged, until the
		// application reads; the peer's retransmissions bring it back.
		s.conn.stats.drop(dropRecvQueue)
		return
	}
	if s.aes != nil && p.typ == typeData && !s.openData(p) {
		return // refused unacknowledged: an intact copy may still come
	}
	if p.has(flagNeedAck) {
		s.queueAck(p.typ, p.substream, p.seq, p.fragment, times)
	}
	if d > 0 {
		if st.reorder == nil {
			st.reorder = make(map[uint16]heldPacket)
		}
		if _, dup := st.reorder[p.seq]; dup {
			s.conn.stats.duplicates.Add(1)
			return
		}
		st.reorder[p.seq] = heldPacket{typ: p.typ, fragment: p.fragment, payload: append([]byte(nil), p.payload...)}
		s.conn.stats.reordered.Add(1)
		return
	}
	s.deliverReliable(now, st, p.typ, p.fragment, p.payload)
	st.recvNext++
	for len(st.reorder) > 0 && s.state != stateClosed {
		h, ok := st.reorder[st.recvNext]
		if !ok {
			break
		}
		delete(st.reorder, st.recvNext)
		s.deliverReliable(now, st, h.typ, h.fragment, h.payload)
		st.recvNext++
	}
}

// deliverReliable decrypts, decompresses and reassembles one in-order packet.
// payload may be modified in place.
func (s *session) deliverReliable(now time.Time, st *substream, typ uint8, fragment uint32, payload []byte) {
	switch typ {
	case typePing:
		return
	case typeDisconnect:
		s.peerClosed(now, ErrPeerClosed)
		return
	case typeData:
	default:
		return
	}
	if s.aes == nil && !s.dialect.plain {
		// Hyperscape payloads were opened on arrival (handleReliable); Lite has no RC4.
		st.rc.dec.XORPacket(payload, payload)
	}
	if s.cfg.Compression && s.aes == nil {
		plain, err := crypt.Decompress(payload, s.cfg.FragmentSize*256)
		if err != nil {
			s.conn.stats.drop(dropDecompress)
			s.cfg.Logger.Warn("prudp: bad compressed payload", "peer", s.peer, "substream", st.id, "err", err)
			// The stream is ordered: a lost fragment would corrupt the message,
			// so refuse the message being built.
			st.reasm.reset(fragment != 0)
			return
		}
		payload = plain
	}
	msg, err := st.reasm.add(fragment, payload)
	if err != nil {
		s.conn.stats.drop(dropReassembly)
		s.cfg.Logger.Warn("prudp: message refused", "peer", s.peer, "substream", st.id, "err", err)
		return
	}
	if msg != nil {
		if _, echo := s.conn.handler.(echoHandler); echo {
			// The echo service answers on the shard goroutine: no goroutine
			// and no queue between a request and its reply.
			s.conn.stats.messagesIn.Add(1)
			s.conn.stats.messagesOut.Add(1)
			if err := s.conn.reserveNow(len(msg)); err == nil {
				_ = s.send(now, st.id, msg)
			} else {
				s.conn.stats.drop(dropEchoQueue)
			}
			return
		}
		s.conn.deliver(Message{Substream: st.id, Reliable: true, Data: msg})
	}
}

// openData decrypts a Hyperscape DATA payload (AES-CBC, ratio byte,
// sequence id suffix) into the shard's buffer and points p.payload at the
// fragment. A payload that does not open is counted, logged and refused.
func (s *session) openData(p *pkt) bool {
	plain, err := s.aes.Open(s.sh.plainBuf[:0], p.payload, p.seq, s.cfg.FragmentSize*256)
	if err != nil {
		s.conn.stats.drop(dropDecrypt)
		s.cfg.Logger.Warn("prudp: DATA payload refused", "peer", s.peer, "seq", p.seq, "err", err)
		return false
	}
	s.sh.plainBuf = plain
	p.payload = plain
	return true
}

// handleUnreliable decrypts an unreliable DATA packet with its own key and
// delivers it at once.
func (s *session) handleUnreliable(now time.Time, p *pkt) {
	if s.aes != nil && !s.openData(p) {
		return
	}
	if p.has(flagNeedAck) {
		s.queueAck(typeData, p.substream, p.seq, p.fragment, 1)
		s.acks[len(s.acks)-1].unreliable = true
	}
	if s.state != stateEstablished && s.state != stateClosing {
		return
	}
	payload := p.payload
	if s.aes == nil && !s.dialect.plain {
		s.unrelKeys.XORPacket(p.payload, p.payload, p.seq, p.sessionID)
	}
	if s.cfg.Compression && s.aes == nil {
		plain, err := crypt.Decompress(payload, s.cfg.FragmentSize*256)
		if err != nil {
			s.conn.stats.drop(dropDecompress)
			return
		}
		payload = plain
	}
	if _, echo := s.conn.handler.(echoHandler); echo {
		s.conn.stats.messagesIn.Add(1)
		s.conn.stats.messagesOut.Add(1)
		_ = s.sendUnreliable(now, append([]byte(nil), payload...))
		return
	}
	s.conn.deliver(Message{Unreliable: true, Data: append([]byte(nil), payload...)})
}

// peerClosed handles the peer's DISCONNECT once every message before it was
// delivered: the acknowledgements are queued; the session lingers long
// enough to acknowledge retransmissions of it.
func (s *session) peerClosed(now time.Time, err error) {
	if s.err == nil {
		s.err = err
	}
	s.release() // the acknowledgements already queued still go out
	s.state = stateLinger
	s.lingerTill = now.Add(s.lingerTime())
	s.conn.finish(s.err)
}

// lingerTime is how long a session closed by its peer stays to acknowledge
// retransmissions of the peer's DISCONNECT: two backed-off timeouts of ours,
// and at least twice the initial timeout, since the peer's may still be that
// (a peer whose handshake was retransmitted has no RTT sample). Every
// retransmission received restarts it, doubled as the peer's backoff
// doubles, up to twice the maximum timeout.
func (s *session) lingerTime() time.Duration {
	base := max(2*s.rtt.backoff(1), 2*s.cfg.InitialRTO)
	d := base << s.lingerN
	if s.cfg.MaxRTO > 0 && d > 2*s.cfg.MaxRTO {
		d = max(base, 2*s.cfg.MaxRTO)
	}
	return d
}

// handleAck processes ACK and aggregate-ACK packets.
func (s *session) handleAck(now time.Time, p *pkt) {
	s.conn.stats.acksIn.Add(1)
	switch p.typ {
	case typeSyn, typeConnect:
		// Late duplicates of the handshake acknowledgements.
		return
	case typePing:
		// Keepalive answered; lastRecv is already updated.
		s.pingsUnanswered = 0
	case typeData, typeDisconnect, typeUser:
		if s.state < stateEstablished {
			return
		}
		if p.has(flagMultiAck) {
			s.handleAggregateAck(now, p)
		} else if st, ok := s.substreamOf(p); ok {
			s.ackOne(now, st, p.seq)
		}
	}
	s.pump(now)
	s.publish()
}

// handleAggregateAck reads both formats: the new one (minor >= 2, header
// substream id 1, sequence id 0; NintendoClients' rule) and the old one.
func (s *session) handleAggregateAck(now time.Time, p *pkt) {
	var a wire.AggregateAck
	var err error
	if s.dialect.newAcks || (p.substream == 1 && p.seq == 0) {
		// New format, as nex-go and NintendoClients recognise it: header
		// substream id 1, the real substream in the payload.
		a, err = wire.ParseAggregateAck(p.payload)
	} else {
		a, err = wire.ParseAggregateAckOld(p.payload, p.seq)
		a.SubstreamID = p.substream
	}
	if err != nil {
		s.conn.stats.drop(dropMalformed)
		s.cfg.Logger.Debug("prudp: bad aggregate ACK", "peer", s.peer, "err", err)
		return
	}
	if int(a.SubstreamID) >= len(s.streams) {
		s.conn.stats.drop(dropSubstream)
		return
	}
	st := &s.streams[a.SubstreamID]
	s.ackUpTo(now, st, a.Seq)
	for i := range a.Len() {
		s.ackOne(now, st, a.At(i))
	}
}

// ackUpTo acknowledges every in-flight packet at or before seq.
func (s *session) ackUpTo(now time.Time, st *substream, seq uint16) {
	for len(st.inflight) > 0 && !seqBefore(seq, st.inflight[0].seq) {
		s.ackOne(now, st, st.inflight[0].seq)
	}
}

// ackOne removes an acknowledged packet from flight, takes an RTT sample if
// it was sent only once (Karn's rule), grows the window, and counts the ack
// against older packets still in flight (fast retransmit after three).
func (s *session) ackOne(now time.Time, st *substream, seq uint16) {
	idx := -1
	for i, o := range st.inflight {
		if o.seq == seq {
			idx = i
			break
		}
		if seqBefore(seq, o.seq) {
			break
		}
	}
	if idx < 0 {
		return // duplicate or stale acknowledgement
	}
	o := st.inflight[idx]
	copy(st.inflight[idx:], st.inflight[idx+1:])
	st.inflight[len(st.inflight)-1] = nil
	st.inflight = st.inflight[:len(st.inflight)-1]
	s.inflight--
	if o.retries == 0 {
		s.rtt.sample(now.Sub(o.lastSent))
	}
	if s.cwnd < s.cfg.MaxWindow {
		s.cwnd++
	}
	s.conn.releaseQueued(o.size)
	for i := 0; i < idx && i < len(st.inflight); i++ {
		// An acknowledgement of a packet sent after e's last transmission
		// counts against e; after three, e is taken as lost and resent at
		// once. A retransmission too, since its own loss would otherwise wait
		// for the timeout (50 ms at least) with the window stuck behind it;
		// but then only packets sent a quarter of a round trip after it count
		// (as RACK's reordering window, RFC 8985), so that reordering does
		// not resend it again and again.
		e := st.inflight[i]
		if e.tx > o.tx || (e.retries > 0 && o.lastSent.Sub(e.lastSent) < s.rtt.srtt/4) {
			continue
		}
		e.skipped++
		if e.skipped >= 3 {
			s.retransmit(now, e, true)
		}
	}
	if o.typ == typeDisconnect && s.state == stateClosing {
		s.sh.putBuf(o.buf)
		s.sh.putOut(o)
		s.state = stateClosed
		s.err = ErrClosed
		s.release()
		s.conn.finish(ErrClosed)
		s.sh.remove(s)
		return
	}
	s.sh.putBuf(o.buf)
	s.sh.putOut(o)
}

// send queues a reliable message on a substream (or the DISCONNECT marker).
func (s *session) send(now time.Time, sub uint8, data []byte) error {
	if int(sub) >= len(s.streams) {
		return fmt.Errorf("%w: %d (negotiated maximum %d)", ErrBadSubstream, sub, s.maxSubstream)
	}
	st := &s.streams[sub]
	if st.qHead > 1024 && 2*st.qHead > len(st.queue) {
		// Slide a long backlog down so the array does not grow forever.
		n := copy(st.queue, st.queue[st.qHead:])
		clear(st.queue[n:])
		st.queue, st.qHead = st.queue[:n], 0
	}
	st.queue = append(st.queue, sendItem{data: data})
	s.pump(now)
	return nil
}

// pump sends queued fragments while the window allows.
func (s *session) pump(now time.Time) {
	if s.state != stateEstablished && s.state != stateClosing {
		return
	}
	for s.inflight < s.cwnd {
		sent := false
		for i := range s.streams {
			if s.inflight >= s.cwnd {
				break
			}
			st := &s.streams[i]
			// The window also bounds the span of sequence ids from the oldest
			// unacknowledged packet, so that a packet stuck in loss never lets
			// the sender run past the receiver's reorder buffer.
			if len(st.inflight) > 0 && seqDiff(st.inflight[0].seq, st.sendSeq) >= s.cwnd {
				continue
			}
			if s.sendFragment(now, st) {
				sent = true
			}
		}
		if !sent {
			break
		}
	}
	if s.closeReq && s.state == stateEstablished && s.idle() {
		s.sendDisconnect(now)
	}
}

// idle reports whether nothing is queued or in flight.
func (s *session) idle() bool {
	for i := range s.streams {
		if s.streams[i].qHead < len(s.streams[i].queue) || len(s.streams[i].inflight) > 0 {
			return false
		}
	}
	return true
}

// sendFragment sends the next fragment of st's queue, if any.
func (s *session) sendFragment(now time.Time, st *substream) bool {
	if st.qHead == len(st.queue) {
		return false
	}
	item := &st.queue[st.qHead]
	rest := item.data[st.queuePos:]
	chunk := s.cfg.FragmentSize
	if s.cfg.Compression && s.aes == nil {
		chunk-- // room for the ratio byte
	}
	frag := uint32(0)
	if len(rest) > chunk {
		rest = rest[:chunk]
		if st.nextFrag == 0 {
			st.nextFrag = 1
		}
		frag = st.nextFrag
		st.nextFrag++
		if st.nextFrag > s.fragMax {
			st.nextFrag = 1 // ids 1..fragMax, then wrap past the terminator id 0
		}
	}
	st.queuePos += len(rest)
	last := frag == 0
	if last {
		st.queue[st.qHead] = sendItem{}
		st.qHead++
		if st.qHead == len(st.queue) {
			// Empty: keep a small backing array for the next message, let a
			// large one (after a burst) go.
			st.qHead = 0
			st.queue = st.queue[:0]
			if cap(st.queue) > 64 {
				st.queue = nil
			}
		}
		st.queuePos, st.nextFrag = 0, 0
	}
	payload := s.sh.payloadBuf[:0]
	switch {
	case s.aes != nil:
		payload = s.aes.Seal(payload, rest, st.sendSeq, s.cfg.Compression)
	case s.cfg.Compression:
		payload = compressPayload(payload, rest)
	default:
		payload = append(payload, rest...)
	}
	if s.aes == nil && !s.dialect.plain {
		st.rc.enc.XORPacket(payload, payload)
	}
	s.sh.payloadBuf = payload
	p := pkt{typ: typeData, flags: flagReliable | flagNeedAck, substream: st.id, seq: st.sendSeq, fragment: frag, payload: payload}
	s.transmitNew(now, st, &p, len(rest))
	return true
}

// compressPayload appends src compressed with its ratio byte, or with ratio 0
// and uncompressed when zlib would not make it smaller.
func compressPayload(dst, src []byte) []byte {
	start := len(dst)
	dst = crypt.Compress(dst, src)
	if len(dst)-start-1 >= len(src) {
		dst = append(dst[:start], 0)
		dst = append(dst, src...)
	}
	return dst
}

// transmitNew sends a new reliable packet and keeps it until acknowledged.
func (s *session) transmitNew(now time.Time, st *substream, p *pkt, size int) {
	st.sendSeq++
	b, err := s.write(now, p)
	if err != nil {
		s.fail(now, fmt.Errorf("prudp: encoding %s: %w", typeName(p.typ), err))
		return
	}
	o := s.sh.getOut()
	s.tx++
	*o = outPacket{seq: p.seq, substream: st.id, typ: p.typ, buf: append(s.sh.getBuf(), b...), lastSent: now, size: size, tx: s.tx}
	o.deadline = now.Add(s.rtt.rto())
	st.inflight = append(st.inflight, o)
	s.inflight++
}

// retransmit resends o: on a timeout with its timer backed off, or fast
// (three later packets acknowledged) with a fresh timer.
func (s *session) retransmit(now time.Time, o *outPacket, fast bool) {
	o.retries++
	if !fast {
		o.timeouts++
	}
	o.skipped = 0
	s.tx++
	o.tx, o.lastSent = s.tx, now
	if fast {
		o.deadline = now.Add(s.rtt.recheck())
	} else {
		o.deadline = now.Add(s.rtt.backoff(o.timeouts))
	}
	s.sh.writeTo(o.buf, s.peer)
	s.lastSend = now
	s.conn.stats.retransmits.Add(1)
	s.conn.stats.packetsOut.Add(1)
	s.conn.stats.bytesOut.Add(uint64(len(o.buf)))
	// Multiplicative decrease, at most once per round trip: the losses of
	// one window are one congestion event.
	if now.Sub(s.lastShrink) > s.rtt.srtt {
		s.cwnd = max(s.cwnd/2, 2)
		s.lastShrink = now
	}
}

// sendDisconnect starts a graceful close: a reliable DISCONNECT on
// substream 0, acknowledged (three times) by the peer.
func (s *session) sendDisconnect(now time.Time) {
	st := &s.streams[0]
	s.state = stateClosing
	p := pkt{typ: typeDisconnect, flags: flagReliable | flagNeedAck, seq: st.sendSeq}
	s.transmitNew(now, st, &p, 0)
}

// abort sends an unreliable DISCONNECT (a forced close) and ends the session.
//
// A server session lingering after the peer's DISCONNECT has already ended
// for the application and is left to linger: dropping it would discard the
// acknowledgements of that DISCONNECT still queued in this batch and leave
// the peer's retransmissions unanswered, so the peer's graceful Close would
// wait for its context (an application that aborts every connection once
// Done is closed did exactly that). A lingering client session sends its
// queued acknowledgements and is dropped, since Abort promises to release
// the client's socket at once.
func (s *session) abort(now time.Time) {
	if s.state == stateLinger {
		if !s.client {
			return
		}
		// A client's Abort releases its socket, which nothing could answer
		// from afterwards: send what this batch queued, then go.
		s.flushAcks(now)
		s.sh.flushWrites()
	}
	if s.state >= stateEstablished && s.state < stateLinger {
		p := pkt{typ: typeDisconnect}
		_, _ = s.write(now, &p)
	}
	s.fail(now, ErrClosed)
}

// sendUnreliable sends one unreliable DATA packet with its per-packet key.
func (s *session) sendUnreliable(now time.Time, data []byte) error {
	seq := s.unrelSendSeq
	payload := s.sh.payloadBuf[:0]
	switch {
	case s.aes != nil:
		if len(data) > s.cfg.FragmentSize {
			return fmt.Errorf("%w: unreliable message of %d bytes exceeds the fragment size %d", ErrMessageTooLarge, len(data), s.cfg.FragmentSize)
		}
		payload = s.aes.Seal(payload, data, seq, s.cfg.Compression)
	case s.cfg.Compression:
		payload = compressPayload(payload, data)
	default:
		payload = append(payload, data...)
	}
	if s.aes == nil {
		if len(payload) > s.cfg.FragmentSize {
			return fmt.Errorf("%w: unreliable message of %d bytes exceeds the fragment size %d", ErrMessageTooLarge, len(payload), s.cfg.FragmentSize)
		}
		if !s.dialect.plain {
			s.unrelKeys.XORPacket(payload, payload, seq, s.localSID)
		}
	}
	s.unrelSendSeq++
	s.sh.payloadBuf = payload
	p := pkt{typ: typeData, seq: seq, payload: payload}
	_, err := s.write(now, &p)
	return err
}

// tick runs the timers: retransmissions, keepalive, dead-peer detection,
// lingering. It returns the next time it must run.
func (s *session) tick(now time.Time) {
	switch s.state {
	case stateClosed:
		return
	case stateLinger:
		if !now.Before(s.lingerTill) {
			s.state = stateClosed
			s.sh.remove(s)
		}
		return
	case stateSynSent, stateConnecting:
		if s.hs != nil && !now.Before(s.hs.deadline) {
			if s.hs.retries >= s.cfg.MaxRetransmits {
				s.fail(now, fmt.Errorf("%w: no answer to %s after %d retransmissions", ErrHandshake, typeName(s.hs.typ), s.hs.retries))
				return
			}
			s.hs.retries++
			s.hs.deadline = now.Add(s.rtt.backoff(s.hs.retries))
			s.sh.writeTo(s.hs.buf, s.peer)
			s.conn.stats.retransmits.Add(1)
		}
		return
	}
	if s.ackDelayed && !now.Before(s.ackDue) {
		s.flushAcks(now)
	}
	if now.Sub(s.lastRecv) >= s.cfg.IdleTimeout {
		s.fail(now, fmt.Errorf("%w: nothing received for %v", ErrPeerDead, now.Sub(s.lastRecv).Round(time.Millisecond)))
		return
	}
	for i := range s.streams {
		st := &s.streams[i]
		for _, o := range st.inflight {
			if now.Before(o.deadline) {
				continue
			}
			if o.timeouts >= s.cfg.MaxRetransmits {
				s.fail(now, fmt.Errorf("%w: %s seq %d on substream %d unacknowledged after %d timeouts (%d retransmissions)", ErrTimeout, typeName(o.typ), o.seq, st.id, o.timeouts, o.retries))
				return
			}
			s.retransmit(now, o, false)
		}
	}
	if s.cfg.MaxUnansweredPings > 0 {
		// Hyperscape: a PING every KeepAlive, busy or not; the connection is
		// dead once MaxUnansweredPings in a row went unanswered.
		if s.lastPing.IsZero() {
			s.lastPing = s.created
		}
		if now.Sub(s.lastPing) >= s.cfg.KeepAlive {
			if s.pingsUnanswered >= s.cfg.MaxUnansweredPings {
				s.fail(now, fmt.Errorf("%w: %d PINGs in a row unanswered", ErrPeerDead, s.pingsUnanswered))
				return
			}
			s.sendPing(now)
			s.lastPing = now
			s.pingsUnanswered++
		}
	} else if now.Sub(s.lastSend) >= s.cfg.KeepAlive {
		s.sendPing(now)
	}
	s.pump(now)
}

func (s *session) sendPing(now time.Time) {
	p := pkt{typ: typePing, flags: flagNeedAck, seq: s.pingSeq}
	s.pingSeq++
	_, _ = s.write(now, &p)
}

// nextDeadline computes when tick must run next.
func (s *session) nextDeadline() time.Time {
	switch s.state {
	case stateClosed:
		return time.Time{}
	case stateLinger:
		return s.lingerTill
	case stateSynSent, stateConnecting:
		if s.hs != nil {
			return s.hs.deadline
		}
		return time.Time{}
	}
	d := s.lastRecv.Add(s.cfg.IdleTimeout)
	ping := s.lastSend
	if s.cfg.MaxUnansweredPings > 0 {
		ping = s.lastPing
		if ping.IsZero() {
			ping = s.created
		}
	}
	if k := ping.Add(s.cfg.KeepAlive); k.Before(d) {
		d = k
	}
	if s.ackDelayed && s.ackDue.Before(d) {
		d = s.ackDue
	}
	for i := range s.streams {
		for _, o := range s.streams[i].inflight {
			if o.deadline.Before(d) {
				d = o.deadline
			}
		}
	}
	return d
}

// publish copies the RTT estimate and window into the Conn's counters.
func (s *session) publish() {
	st := &s.conn.stats
	st.srtt.Store(int64(s.rtt.srtt))
	st.rttvar.Store(int64(s.rtt.rttvar))
	st.latest.Store(int64(s.rtt.latest))
	st.rto.Store(int64(s.rtt.rto()))
	st.samples.Store(s.rtt.samples)
	st.window.Store(int64(s.cwnd))
}
