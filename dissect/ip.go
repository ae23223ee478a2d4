package dissect

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// IP protocol numbers (IANA "Assigned Internet Protocol Numbers").
const (
	protoHopByHop = 0
	protoTCP      = 6
	protoUDP      = 17
	protoRouting  = 43
	protoFragment = 44
	protoAH       = 51
	protoNoNext   = 59
	protoDstOpts  = 60
)

// ipPacket is a decoded IPv4 or IPv6 datagram. Payload aliases the frame or, for
// a reassembled datagram, the defragmenter's buffer.
type ipPacket struct {
	src, dst    netip.Addr
	proto       uint8
	payload     []byte
	reassembled bool // built from several IP fragments
	fragments   int
}

// ipStatus says what became of a frame at the IP layer.
type ipStatus int

const (
	ipComplete ipStatus = iota // payload holds the whole transport segment
	ipFragment                 // a fragment was stored; the datagram is not complete yet
	ipBad                      // reason says why
)

// decodeIPv4 implements RFC 791 section 3.1. Bytes after the total length
// (Ethernet padding) are ignored; a datagram cut by the snaplen is reported.
func decodeIPv4(b []byte, now time.Time, df *defragmenter, p *ipPacket) (ipStatus, string) {
	if len(b) < 20 {
		return ipBad, "ipv4 header truncated: " + strconv.Itoa(len(b)) + " of 20 bytes"
	}
	if b[0]>>4 != 4 {
		return ipBad, "ipv4 version field is " + strconv.Itoa(int(b[0]>>4))
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:4]))
	if ihl < 20 || len(b) < ihl {
		return ipBad, "ipv4 header length " + strconv.Itoa(ihl) + " invalid at offset 0"
	}
	if total < ihl {
		if total == 0 { // TCP segmentation offload leaves 0 in captures of outgoing packets
			total = len(b)
		} else {
			return ipBad, "ipv4 total length " + strconv.Itoa(total) + " shorter than its header"
		}
	}
	if total > len(b) {
		return ipBad, "ipv4 datagram cut by snaplen: " + strconv.Itoa(len(b)) + " of " + strconv.Itoa(total) + " bytes captured"
	}
	p.src = netip.AddrFrom4([4]byte(b[12:16]))
	p.dst = netip.AddrFrom4([4]byte(b[16:20]))
	p.proto = b[9]
	p.reassembled, p.fragments = false, 0
	frag := binary.BigEndian.Uint16(b[6:8])
	more := frag&0x2000 != 0
	off := int(frag&0x1fff) * 8
	payload := b[ihl:total]
	if !more && off == 0 {
		p.payload = payload
		return ipComplete, ""
	}
	key := fragKey{v6: false, proto: p.proto, id: uint32(binary.BigEndian.Uint16(b[4:6])), src: p.src.As16(), dst: p.dst.As16()}
	return df.add(key, off, more, payload, now, p)
}

// decodeIPv6 implements RFC 8200 sections 3, 4 and 4.5 (the fragment header).
// Extension headers before the transport header are skipped.
func decodeIPv6(b []byte, now time.Time, df *defragmenter, p *ipPacket) (ipStatus, string) {
	if len(b) < 40 {
		return ipBad, "ipv6 header truncated: " + strconv.Itoa(len(b)) + " of 40 bytes"
	}
	if b[0]>>4 != 6 {
		return ipBad, "ipv6 version field is " + strconv.Itoa(int(b[0]>>4))
	}
	plen := int(binary.BigEndian.Uint16(b[4:6]))
	if plen == 0 { // jumbogram or offloaded: take what was captured
		plen = len(b) - 40
	}
	if 40+plen > len(b) {
		return ipBad, "ipv6 datagram cut by snaplen: " + strconv.Itoa(len(b)) + " of " + strconv.Itoa(40+plen) + " bytes captured"
	}
	p.src = netip.AddrFrom16([16]byte(b[8:24]))
	p.dst = netip.AddrFrom16([16]byte(b[24:40]))
	p.reassembled, p.fragments = false, 0
	next := b[6]
	rest := b[40 : 40+plen]
	off := 40
	for {
		switch next {
		case protoHopByHop, protoRouting, protoDstOpts:
			if len(rest) < 8 {
				return ipBad, "ipv6 extension header truncated at offset " + strconv.Itoa(off)
			}
			n := (int(rest[1]) + 1) * 8
			if n > len(rest) {
				return ipBad, "ipv6 extension header length " + strconv.Itoa(n) + " overruns the datagram at offset " + strconv.Itoa(off)
			}
			next, rest, off = rest[0], rest[n:], off+n
		case protoAH:
			if len(rest) < 8 {
				return ipBad, "ipv6 AH header truncated at offset " + strconv.Itoa(off)
			}
			n := (int(rest[1]) + 2) * 4
			if n > len(rest) {
				return ipBad, "ipv6 AH length overruns the datagram at offset " + strconv.Itoa(off)
			}
			next, rest, off = rest[0], rest[n:], off+n
		case protoFragment:
			if len(rest) < 8 {
				return ipBad, "ipv6 fragment header truncated at offset " + strconv.Itoa(off)
			}
			fo := binary.BigEndian.Uint16(rest[2:4])
			key := fragKey{v6: true, proto: rest[0], id: binary.BigEndian.Uint32(rest[4:8]), src: p.src.As16(), dst: p.dst.As16()}
			p.proto = rest[0]
			fragOff := int(fo>>3) * 8
			more := fo&1 != 0
			if fragOff == 0 && !more { // atomic fragment (RFC 6946)
				p.payload = rest[8:]
				return ipComplete, ""
			}
			return df.add(key, fragOff, more, rest[8:], now, p)
		case protoNoNext:
			return ipBad, "ipv6 datagram without a transport header"
		default:
			p.proto = next
			p.payload = rest
			return ipComplete, ""
		}
	}
}

// Defragmentation limits: a datagram is at most 64 KiB (the IPv4 total length
// and the IPv6 fragment offset both stop there), partial datagrams older than
// fragTimeout in capture time are dropped (RFC 791 suggests 15 s, Linux uses
// 30 s), and at most fragMaxPending datagrams and fragMaxBytes bytes wait at once.
const (
	fragMaxDatagram = 65535
	fragTimeout     = 30 * time.Second
	fragMaxPending  = 256
	fragMaxBytes    = 4 << 20
)

type fragKey struct {
	v6       bool
	proto    uint8
	id       uint32
	src, dst [16]byte
}

type fragPiece struct {
	off  int
	data []byte
}

type fragDatagram struct {
	first  time.Time
	pieces []fragPiece
	total  int // -1 until the last fragment arrives
	bytes  int
}

// defragmenter reassembles IPv4 and IPv6 fragments with bounded memory. It
// copies fragment bytes because frames do not outlive a read.
type defragmenter struct {
	pending map[fragKey]*fragDatagram
	bytes   int
	out     []byte
	dropped int // datagrams given up for age or memory
}

func newDefragmenter() *defragmenter {
	return &defragmenter{pending: make(map[fragKey]*fragDatagram)}
}

func (df *defragmenter) add(key fragKey, off int, more bool, data []byte, now time.Time, p *ipPacket) (ipStatus, string) {
	if off+len(data) > fragMaxDatagram {
		return ipBad, "ip fragment at offset " + strconv.Itoa(off) + " runs past 65535 bytes"
	}
	if more && len(data)%8 != 0 {
		return ipBad, "ip fragment of " + strconv.Itoa(len(data)) + " bytes (not the last) is not a multiple of 8"
	}
	df.expire(now)
	d := df.pending[key]
	if d == nil {
		for len(df.pending) >= fragMaxPending || df.bytes+len(data) > fragMaxBytes {
			if !df.evictOldest() {
				break
			}
		}
		d = &fragDatagram{first: now, total: -1}
		df.pending[key] = d
	}
	if !more {
		if d.total >= 0 && d.total != off+len(data) {
			df.drop(key, d)
			return ipBad, "ip fragments disagree on the datagram length"
		}
		d.total = off + len(data)
		for _, pc := range d.pieces {
			if pc.off+len(pc.data) > d.total {
				df.drop(key, d)
				return ipBad, "ip fragment at offset " + strconv.Itoa(pc.off) + " runs past the last fragment's end " + strconv.Itoa(d.total)
			}
		}
	} else if d.total >= 0 && off+len(data) > d.total {
		df.drop(key, d)
		return ipBad, "ip fragment at offset " + strconv.Itoa(off) + " runs past the last fragment's end " + strconv.Itoa(d.total)
	}
	d.pieces = append(d.pieces, fragPiece{off: off, data: append([]byte(nil), data...)})
	d.bytes += len(data)
	df.bytes += len(data)
	if d.total < 0 {
		return ipFragment, ""
	}
	// Complete when the pieces, sorted by offset, cover [0, total) without a hole.
	slices.SortFunc(d.pieces, func(a, b fragPiece) int { return a.off - b.off })
	covered := 0
	for _, pc := range d.pieces {
		if pc.off > covered {
			return ipFragment, ""
		}
		if end := pc.off + len(pc.data); end > covered {
			covered = end
		}
	}
	if covered < d.total {
		return ipFragment, ""
	}
	if cap(df.out) < d.total {
		df.out = make([]byte, d.total)
	}
	out := df.out[:d.total]
	for _, pc := range d.pieces { // later offsets overwrite overlaps, as Linux does
		copy(out[pc.off:], pc.data)
	}
	p.payload = out
	p.reassembled = true
	p.fragments = len(d.pieces)
	df.drop(key, d)
	return ipComplete, ""
}

func (df *defragmenter) drop(key fragKey, d *fragDatagram) {
	df.bytes -= d.bytes
	delete(df.pending, key)
}

func (df *defragmenter) expire(now time.Time) {
	for k, d := range df.pending {
		if now.Sub(d.first) > fragTimeout {
			df.drop(k, d)
			df.dropped++
		}
	}
}

func (df *defragmenter) evictOldest() bool {
	var (
		oldK  fragKey
		oldD  *fragDatagram
		found bool
	)
	for k, d := range df.pending {
		if !found || d.first.Before(oldD.first) {
			oldK, oldD, found = k, d, true
		}
	}
	if found {
		df.drop(oldK, oldD)
		df.dropped++
	}
	return found
}
