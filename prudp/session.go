package prudp

import (
	"net/netip"
	"time"
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
	dialect      *dialectSpec // what the dialect changes in the engine
	maxSubstream uint8
	supported    uint32

	unrelSendSeq uint16
	pingSeq      uint16

	// xf is the DATA payload transform (set by setup, or by the dialect's
	// key exchange); kxFinish completes a client's key exchange with the
	// server's CONNECT-ACK payload.
	xf       payloadTransform
	kxFinish func(answer []byte) (payloadTransform, error)
	// With Config.MaxUnansweredPings, PINGs go out every KeepAlive and the
	// connection fails after that many in a row went unanswered.
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

	// Bytes held in the reorder buffers and unfinished messages, charged to
	// the endpoint's budget (Config.MaxBuffer); budgetRefused is when the
	// budget first refused this session's data (zero: not refused since).
	reorderBytes, unfinishedBytes int
	budgetRefused                 time.Time
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

// substream is one reliable substream's send and receive state.
type substream struct {
	id uint8

	// send side
	sendSeq  uint16       // next sequence id to assign
	inflight []*outPacket // in sequence order
	queue    []sendItem   // messages not yet fully sent (from qHead on)
	qHead    int
	queuePos int    // bytes of queue[0] already fragmented
	nextFrag uint32 // fragment id of the next fragment of queue[0]

	// receive side
	recvNext uint16 // next sequence id to deliver
	reorder  map[uint16]heldPacket
	reasm    reassembler
	charged  int // capacity of reasm's buffer charged to the budget
}

type sendItem struct {
	data  []byte
	owned bool // data is one of the shard's message buffers (msgPool)
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
		dialect:   specOf(cfg.Dialect),
	}
	return s
}

// setup prepares the substreams and the payload transform once the
// handshake fixed the maximum substream id and the session key (or the
// dialect's key exchange made the transform). sendStart and recvStart are
// the first sequence ids of substream 0 (the client's CONNECT took id 1).
func (s *session) setup(sendStart, recvStart uint16) {
	s.baseKey = s.cfg.RC4Key
	if len(s.sessionKey) > 0 {
		s.baseKey = s.sessionKey
	}
	n := int(s.maxSubstream) + 1
	if s.xf == nil {
		s.xf = s.dialect.transform(s.cfg, s.baseKey, n)
	}
	s.conn.maxSubstream = s.maxSubstream
	s.conn.minor = s.minor
	s.conn.maxMessage = s.cfg.MaxMessageSize
	s.conn.maxUnreliable = s.xf.room()
	s.streams = make([]substream, n)
	for i := range s.streams {
		st := &s.streams[i]
		st.id = uint8(i)
		st.sendSeq, st.recvNext = 1, 1
		if i == 0 {
			st.sendSeq, st.recvNext = sendStart, recvStart
		}
		st.reasm.max = s.cfg.MaxMessageSize
		st.reasm.fragMax = s.dialect.fragMax
		st.reasm.pool = &s.sh.msgs
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
	s.sh.ep.buffered.Add(-int64(s.reorderBytes + s.unfinishedBytes))
	s.reorderBytes, s.unfinishedBytes = 0, 0
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
		st.charged = 0
	}
	s.inflight = 0
	s.scratch = nil
	s.hs = nil
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
