package prudp

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/gamewire/gamewire/prudp/kerberos"
)

// The handshake ("Basic operation" in NintendoClients wiki "PRUDP Protocol"): SYN, SYN-ACK with
// the server's connection signature, CONNECT with the client's, CONNECT-ACK.
// The server keeps nothing between SYN and CONNECT: its connection signature
// is an HMAC of the client's address (wire.ConnectionSignature), which it
// recomputes to verify the CONNECT's packet signature. Negotiation: the minor
// version (low byte of "Supported functions") and the maximum substream id are
// the lower of both ends; the CONNECT carries the values the SYN-ACK settled
// and the CONNECT-ACK repeats them (NintendoClients checks that it does).

func randomBytes(b []byte) {
	_, _ = rand.Read(b) // crypto/rand.Read never fails
}

func randomByte() byte {
	var b [1]byte
	randomBytes(b[:])
	return b[0]
}

// negotiate returns the supported-functions value both ends can use.
func negotiate(ours uint8, theirs uint32) uint32 {
	return uint32(min(ours, uint8(theirs)))
}

// startClient sends the SYN of a new client session.
func (s *session) startClient(now time.Time) error {
	s.state = stateSynSent
	s.localSID = randomByte()
	s.sigIn = make([]byte, s.codec.connSigLen())
	randomBytes(s.sigIn)
	p := pkt{typ: typeSyn, flags: flagNeedAck, supported: uint32(s.cfg.MinorVersion), maxSubstream: s.cfg.MaxSubstreamID}
	b, err := s.write(now, &p)
	if err != nil {
		return err
	}
	s.hs = &outPacket{typ: typeSyn, buf: append([]byte(nil), b...), lastSent: now, deadline: now.Add(s.rtt.rto())}
	return nil
}

// clientHandshake handles the server's answers while the client connects.
func (s *session) clientHandshake(now time.Time, p *pkt) {
	s.lastRecv = now
	if !p.has(flagAck) {
		return // DATA before the CONNECT-ACK (which was lost): the server resends it
	}
	switch {
	case p.typ == typeSyn && s.state == stateSynSent:
		s.onSynAck(now, p)
	case p.typ == typeConnect && s.state == stateConnecting:
		if !s.codec.verify(p, s.keysFor(typeConnect, false)) {
			s.sh.ep.drops[epDropSignature].Add(1)
			s.conn.stats.drop(dropSignature)
			return
		}
		s.onConnectAck(now, p)
	}
}

func (s *session) onSynAck(now time.Time, p *pkt) {
	if s.hs.retries == 0 {
		s.rtt.sample(now.Sub(s.hs.lastSent))
	}
	s.sigOut = append([]byte(nil), p.connSig[:s.codec.connSigLen()]...)
	if s.dialect.negotiates {
		s.supported = negotiate(s.cfg.MinorVersion, p.supported)
		s.minor = uint8(s.supported)
		s.maxSubstream = min(s.cfg.MaxSubstreamID, p.maxSubstream)
	}
	s.state = stateConnecting
	var payload []byte
	if t := s.cfg.Ticket; t != nil {
		var check [4]byte
		randomBytes(check[:])
		s.check = binary.LittleEndian.Uint32(check[:])
		var cid [4]byte
		randomBytes(cid[:])
		var err error
		payload, err = kerberos.AppendConnect(nil, t, kerberos.RequestData{PID: s.cfg.PID, ConnectionID: binary.LittleEndian.Uint32(cid[:]), Check: s.check}, s.cfg.Kerberos)
		if err != nil {
			s.fail(now, fmt.Errorf("%w: building the secure CONNECT: %w", ErrHandshake, err))
			return
		}
	}
	if kx := s.dialect.exchange; kx != nil {
		var err error
		if payload, s.kxFinish, err = kx.hello(s.cfg); err != nil {
			s.fail(now, fmt.Errorf("%w: %w", ErrHandshake, err))
			return
		}
	}
	var usb [2]byte
	randomBytes(usb[:])
	s.unrelSendSeq = binary.LittleEndian.Uint16(usb[:])
	c := pkt{typ: typeConnect, flags: flagReliable | flagNeedAck, seq: 1, supported: s.supported,
		maxSubstream: s.maxSubstream, unreliableSeq: s.unrelSendSeq, payload: payload}
	copy(c.connSig[:], s.sigIn)
	b, err := s.write(now, &c)
	if err != nil {
		s.fail(now, fmt.Errorf("%w: encoding CONNECT: %w", ErrHandshake, err))
		return
	}
	s.hs = &outPacket{typ: typeConnect, buf: append([]byte(nil), b...), lastSent: now, deadline: now.Add(s.rtt.rto())}
}

func (s *session) onConnectAck(now time.Time, p *pkt) {
	if s.dialect.negotiates && (p.supported != s.supported || p.maxSubstream != s.maxSubstream) {
		s.fail(now, fmt.Errorf("%w: CONNECT-ACK says supported functions %#x and max substream %d, negotiated %#x and %d",
			ErrHandshake, p.supported, p.maxSubstream, s.supported, s.maxSubstream))
		return
	}
	if s.cfg.Ticket != nil {
		if err := kerberos.CheckConnectResponse(p.payload, s.check); err != nil {
			s.fail(now, fmt.Errorf("%w: %w", ErrHandshake, err))
			return
		}
		s.sessionKey = s.cfg.Ticket.SessionKey
	}
	if s.kxFinish != nil {
		xf, err := s.kxFinish(p.payload)
		if err != nil {
			s.fail(now, fmt.Errorf("%w: %w", ErrHandshake, err))
			return
		}
		s.kxFinish, s.xf = nil, xf
	}
	if s.hs.retries == 0 {
		s.rtt.sample(now.Sub(s.hs.lastSent))
	}
	s.hs = nil
	s.remoteSID = p.sessionID
	s.setup(2, 1) // the CONNECT took sequence id 1 of substream 0
	s.state = stateEstablished
	s.lastSend = now
	if s.dialect.userStage {
		// Hyperscape's "User" stage: a reliable USER the server acknowledges,
		// ordered before our first DATA (it takes sequence id 2).
		st := &s.streams[0]
		u := pkt{typ: typeUser, flags: flagReliable | flagNeedAck, seq: st.sendSeq}
		s.transmitNew(now, st, &u, 0)
		if s.state == stateClosed {
			return
		}
	}
	s.conn.established()
}

// stateless handles packets of unknown connections on a server: it answers
// SYNs without remembering them, and creates a connection only for a CONNECT
// whose signature proves the client received our SYN-ACK.
func (srv *Server) stateless(sh *shard, now time.Time, p *pkt, from netip.AddrPort, key demuxKey) {
	ep := sh.ep
	cfg := &ep.cfg
	if p.has(flagAck) || p.has(flagMultiAck) || (p.typ != typeSyn && p.typ != typeConnect) {
		ep.drops[epDropUnknown].Add(1)
		return
	}
	if p.dst != vport(cfg.StreamType, cfg.Port) || p.src>>8 != uint16(cfg.StreamType) {
		ep.drops[epDropHandshake].Add(1)
		return
	}
	sig := sh.connSig(from)
	sigLen := ep.codec.connSigLen()
	if p.typ == typeSyn {
		// Checked before answering, still without keeping state: a SYN
		// signed without the access key gets nothing back, so the server
		// cannot be used to reflect SYN-ACKs at forged addresses by anyone
		// not holding the key.
		if ep.dialect.signedSyn && !ep.codec.verify(p, keys{}) {
			ep.drops[epDropSynSignature].Add(1)
			return
		}
		srv.synsAnswered.Add(1)
		r := pkt{typ: typeSyn, flags: flagAck | flagHasSize, src: p.dst, dst: p.src, connSig: sig}
		if ep.dialect.negotiates {
			r.supported = negotiate(cfg.MinorVersion, p.supported)
			r.maxSubstream = min(cfg.MaxSubstreamID, p.maxSubstream)
		}
		b, err := ep.codec.appendPacket(sh.outBuf[:0], &r, keys{})
		if err == nil {
			sh.outBuf = b
			sh.writeTo(b, from)
		}
		return
	}
	// CONNECT: signed with our connection signature, never with a session key.
	if !ep.codec.verify(p, keys{connSig: sig[:sigLen]}) {
		if ep.dialect.liteSignature {
			ep.drops[epDropLiteSig].Add(1)
			cfg.Logger.Warn("prudp: CONNECT refused: bad Lite signature (wrong access key, or not an answer to our SYN-ACK)", "peer", from)
			return
		}
		ep.drops[epDropSignature].Add(1)
		return
	}
	var supported uint32
	var maxSub uint8
	if ep.dialect.negotiates {
		supported = negotiate(cfg.MinorVersion, p.supported)
		maxSub = min(cfg.MaxSubstreamID, p.maxSubstream)
	}
	var sessionKey, response []byte
	var pid uint64
	if srv.ServerKey != nil {
		a, err := kerberos.AcceptConnect(p.payload, srv.ServerKey, cfg.Kerberos, now, srv.MaxTicketAge)
		if err != nil {
			ep.drops[epDropHandshake].Add(1)
			cfg.Logger.Warn("prudp: secure CONNECT refused", "peer", from, "err", err)
			return
		}
		sessionKey = a.Info.SessionKey
		pid = a.Info.SourcePID
		response = kerberos.AppendConnectResponse(nil, a.Request.Check)
	}
	var xf payloadTransform
	if kx := ep.dialect.exchange; kx != nil {
		var err error
		if response, xf, err = kx.answer(cfg, p.payload); err != nil {
			ep.drops[epDropHandshake].Add(1)
			cfg.Logger.Warn("prudp: CONNECT refused: key exchange failed", "dialect", cfg.Dialect, "peer", from, "err", err)
			return
		}
	}
	old := sh.sessions[key]
	if old == nil && cfg.MaxConns > 0 && ep.sessionsOpen.Load() >= int64(cfg.MaxConns) {
		ep.drops[epDropConnLimit].Add(1)
		return
	}
	if old != nil {
		old.fail(now, fmt.Errorf("%w: replaced by a new connection from the same address and port", ErrPeerReset))
	}
	s := newSession(sh, cfg, ep.codec, false, from, now)
	s.key = key
	s.localPort, s.remotePort = p.dst, p.src
	s.localSID = randomByte()
	s.remoteSID = p.sessionID
	s.sigIn = append([]byte(nil), sig[:sigLen]...)
	s.sigOut = append([]byte(nil), p.connSig[:sigLen]...)
	s.sessionKey = sessionKey
	s.xf = xf
	s.supported, s.minor, s.maxSubstream = supported, uint8(supported), maxSub
	s.unrelSendSeq = p.unreliableSeq
	s.conn = newConn(sh, from, cfg.MaxSendQueue)
	s.conn.s = s
	s.conn.srv = srv
	s.conn.pid = pid
	s.conn.handler = srv.handler()
	s.conn.inline, _ = s.conn.handler.(InlineHandler)
	s.setup(1, p.seq+1)
	s.state = stateEstablished
	ack := pkt{typ: typeConnect, flags: flagAck | flagHasSize, seq: p.seq, supported: supported,
		maxSubstream: maxSub, unreliableSeq: p.unreliableSeq, payload: response}
	b, err := s.write(now, &ack)
	if err != nil {
		ep.drops[epDropHandshake].Add(1)
		return
	}
	s.connectB = append([]byte(nil), b...)
	s.lastRecv = now
	sh.add(s)
	srv.connStarted(s.conn)
}
