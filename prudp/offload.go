package prudp

import (
	"net/netip"
)

// Batched datagram I/O. Where the socket supports it (Linux UDP sockets, see
// offload_linux.go; on dialects whose packets carry their size, see
// newEndpoint) the engine hands the kernel a run of datagrams to one
// peer in one system call (UDP generic segmentation offload, UDP_SEGMENT)
// and reads runs that arrive that way in one call too (UDP_GRO): a bulk
// transfer's fragments then cost one sendmsg and one recvmsg per up to 44
// datagrams instead of one each, which is most of its CPU over loopback.
// Every datagram is still a datagram of its own on the wire; a peer without
// GRO receives them one by one as before.

// offload is a socket's batched I/O; nil where the platform or the
// PacketConn has none (the Lite transport, the lossy link of the tests).
type offload interface {
	// writeSegments sends b as datagrams of size bytes each (the last may be
	// shorter) to the peer in one call; oob is the caller's scratch.
	writeSegments(b, oob []byte, size int, to netip.AddrPort) error
	// coalesces reports whether reads may return runs (UDP_GRO is on); the
	// read buffer must then hold maxCoalescedRead bytes.
	coalesces() bool
	// read reads one datagram, or a run of datagrams of seg bytes each
	// (seg 0: b[:n] is one datagram); oob is the caller's scratch.
	read(b, oob []byte) (n, seg int, from netip.AddrPort, err error)
	// refused reports whether a writeSegments error means the socket or
	// route cannot segment datagrams of that size (as opposed to an error
	// the same datagrams sent one by one would meet too).
	refused(err error) bool
}

const (
	// maxSegments is the most datagrams in one segmented write (the
	// kernel's UDP_MAX_SEGMENTS is 64 before Linux 6.9, 128 after).
	maxSegments = 64
	// maxSegmentBytes bounds one segmented write: the payload of one IP
	// packet (65,535 bytes less the IPv6 and UDP headers).
	maxSegmentBytes = 65535 - 40 - 8
	// maxCoalescedRead is the read buffer of a socket with GRO.
	maxCoalescedRead = 1 << 16
	// oobScratch holds one control message of the offload (UDP_SEGMENT on
	// write, UDP_GRO on read) and room for another the kernel may add.
	oobScratch = 64
)

// rawWrite sends one datagram. With offload, datagrams to one peer of one
// size wait in the shard's segment run and leave together when the run
// ends: at a datagram for another peer or of another size, when it is full,
// and at the end of every batch (flushWrites), so nothing waits longer than
// the batch that wrote it.
func (sh *shard) rawWrite(b []byte, to netip.AddrPort) {
	off := sh.ep.off
	if off == nil || len(b) > int(sh.ep.segMax.Load()) {
		sh.flushSegments()
		sh.writeOne(b, to)
		return
	}
	if sh.segN > 0 && (to != sh.segTo || len(b) > sh.segSize || sh.segShort ||
		sh.segN == maxSegments || len(sh.seg)+len(b) > maxSegmentBytes) {
		sh.flushSegments()
	}
	if sh.segN == 0 {
		sh.segTo, sh.segSize = to, len(b)
	}
	sh.seg = append(sh.seg, b...)
	sh.segN++
	sh.segShort = len(b) < sh.segSize
}

// flushSegments sends the segment run, if any.
func (sh *shard) flushSegments() {
	switch sh.segN {
	case 0:
		return
	case 1:
		sh.writeOne(sh.seg, sh.segTo)
	default:
		if sh.oob == nil {
			sh.oob = make([]byte, oobScratch)
		}
		err := sh.ep.off.writeSegments(sh.seg, sh.oob, sh.segSize, sh.segTo)
		if err == nil {
			sh.ep.segmentedWrites.Add(1)
			break
		}
		if sh.ep.off.refused(err) {
			// Never again at this size or above on this socket (the route's
			// MTU, or a device without checksum offload).
			sh.ep.segMax.Store(int32(sh.segSize - 1))
			sh.ep.cfg.Logger.Debug("prudp: segmented write refused; sending datagrams one by one",
				"segment", sh.segSize, "err", err)
		}
		for b := sh.seg; len(b) > 0; {
			k := min(sh.segSize, len(b))
			sh.writeOne(b[:k], sh.segTo)
			b = b[k:]
		}
	}
	sh.seg = sh.seg[:0]
	sh.segN = 0
	sh.segShort = false
}

func (sh *shard) writeOne(b []byte, to netip.AddrPort) {
	if _, err := sh.ep.pc.WriteToUDPAddrPort(b, to); err != nil {
		sh.ep.writeErrors.Add(1)
	}
}
