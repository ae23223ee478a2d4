package dissect

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// TCP header flags (RFC 9293 section 3.1).
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
)

// tcpSegment is a parsed TCP header (RFC 9293 section 3.1); payload aliases the datagram.
type tcpSegment struct {
	srcPort, dstPort uint16
	seq, ack         uint32
	flags            uint8
	payload          []byte
}

func parseTCP(b []byte, s *tcpSegment) string {
	if len(b) < 20 {
		return "tcp header truncated: " + strconv.Itoa(len(b)) + " of 20 bytes"
	}
	hl := int(b[12]>>4) * 4
	if hl < 20 || hl > len(b) {
		return "tcp data offset " + strconv.Itoa(hl) + " invalid for a " + strconv.Itoa(len(b)) + "-byte segment"
	}
	s.srcPort = binary.BigEndian.Uint16(b[0:2])
	s.dstPort = binary.BigEndian.Uint16(b[2:4])
	s.seq = binary.BigEndian.Uint32(b[4:8])
	s.ack = binary.BigEndian.Uint32(b[8:12])
	s.flags = b[13]
	s.payload = b[hl:]
	return ""
}

// udpDatagram is a parsed UDP header (RFC 768); payload aliases the datagram.
type udpDatagram struct {
	srcPort, dstPort uint16
	payload          []byte
}

func parseUDP(b []byte, u *udpDatagram) string {
	if len(b) < 8 {
		return "udp header truncated: " + strconv.Itoa(len(b)) + " of 8 bytes"
	}
	u.srcPort = binary.BigEndian.Uint16(b[0:2])
	u.dstPort = binary.BigEndian.Uint16(b[2:4])
	n := int(binary.BigEndian.Uint16(b[4:6]))
	switch {
	case n == 0 || n == len(b): // 0: offloaded or jumbo; take what the IP layer gave
		u.payload = b[8:]
	case n < 8:
		return "udp length " + strconv.Itoa(n) + " shorter than its header"
	case n > len(b):
		return "udp length " + strconv.Itoa(n) + " but the IP payload holds " + strconv.Itoa(len(b)) + " bytes"
	default:
		u.payload = b[8:n]
	}
	return ""
}

// tcpMaxBuffered bounds the out-of-order bytes held per direction; past it the
// reassembler declares the missing bytes lost and moves on.
const tcpMaxBuffered = 1 << 20

type tcpPending struct {
	seq  uint32
	data []byte
}

// tcpStream reassembles one direction of a TCP connection in sequence order.
// Bytes seen twice are reported as retransmissions and delivered once.
type tcpStream struct {
	started  bool
	next     uint32
	pending  []tcpPending
	buffered int
	finished bool
}

// tcpSink receives in-order stream bytes. gap > 0 says that many bytes were
// missing from the capture just before data.
type tcpSink func(data []byte, gap int)

// add feeds one segment. It returns whether the segment repeated bytes already
// delivered (a retransmission, wholly or in part).
func (ts *tcpStream) add(s *tcpSegment, sink tcpSink) (retrans bool) {
	seq := s.seq
	data := s.payload
	if s.flags&tcpSYN != 0 {
		if !ts.started {
			ts.started, ts.next = true, seq+1
		} else if seq+1 == ts.next {
			retrans = len(data) == 0
		}
		seq++
	}
	if !ts.started {
		if len(data) == 0 {
			return false
		}
		ts.started, ts.next = true, seq // capture began mid-connection
	}
	if len(data) > 0 {
		d := int32(seq - ts.next)
		switch {
		case d < 0:
			end := int32(seq + uint32(len(data)) - ts.next)
			if end <= 0 {
				return true
			}
			retrans = true
			data = data[len(data)-int(end):]
			fallthrough
		case d == 0:
			ts.next += uint32(len(data))
			sink(data, 0)
			ts.drain(sink)
		default:
			if ts.buffer(seq, data) {
				retrans = true
			}
			for ts.buffered > tcpMaxBuffered {
				ts.skipGap(sink)
			}
		}
	}
	if s.flags&(tcpFIN|tcpRST) != 0 {
		ts.finished = true
	}
	return retrans
}

// buffer stores an out-of-order segment; it reports a duplicate of one already held.
func (ts *tcpStream) buffer(seq uint32, data []byte) (dup bool) {
	i, found := slices.BinarySearchFunc(ts.pending, seq, func(p tcpPending, s uint32) int { return int(int32(p.seq - s)) })
	if found && len(ts.pending[i].data) >= len(data) {
		return true
	}
	cp := append([]byte(nil), data...)
	if found {
		ts.buffered += len(cp) - len(ts.pending[i].data)
		ts.pending[i].data = cp
		return true
	}
	ts.pending = slices.Insert(ts.pending, i, tcpPending{seq: seq, data: cp})
	ts.buffered += len(cp)
	return false
}

// drain delivers buffered segments that have become contiguous.
func (ts *tcpStream) drain(sink tcpSink) {
	for len(ts.pending) > 0 {
		p := ts.pending[0]
		d := int32(p.seq - ts.next)
		if d > 0 {
			return
		}
		ts.pending = ts.pending[1:]
		ts.buffered -= len(p.data)
		end := int32(p.seq + uint32(len(p.data)) - ts.next)
		if end <= 0 {
			continue
		}
		data := p.data[len(p.data)-int(end):]
		ts.next += uint32(len(data))
		sink(data, 0)
	}
}

// skipGap gives up on the bytes missing before the first buffered segment.
func (ts *tcpStream) skipGap(sink tcpSink) {
	if len(ts.pending) == 0 {
		return
	}
	p := ts.pending[0]
	gap := int(p.seq - ts.next)
	ts.pending = ts.pending[1:]
	ts.buffered -= len(p.data)
	ts.next = p.seq + uint32(len(p.data))
	sink(p.data, gap)
	ts.drain(sink)
}

// flush delivers whatever is still buffered at the end of the capture, with gaps.
func (ts *tcpStream) flush(sink tcpSink) {
	for len(ts.pending) > 0 {
		ts.skipGap(sink)
	}
}
