//go:build linux

package prudp

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

const (
	udpSegment = 103 // UDP_SEGMENT (linux/udp.h), level IPPROTO_UDP
	udpGRO     = 104 // UDP_GRO
)

// udpOffload is UDP GSO and GRO on a Linux socket.
type udpOffload struct {
	c         *net.UDPConn
	connected bool // a client's socket connected to its server: no address on write
	gro       bool // UDP_GRO is on
}

// newOffload enables batched I/O on pc if it is a UDP socket whose kernel
// segments datagrams (Linux 4.18 and later); else it returns nil. A
// server's socket also reads runs (UDP_GRO); a client's (connected) socket
// does not: a coalesced read needs a 64 KiB buffer held by every blocked
// reader, 64 KiB per client connection where a process may hold thousands
// (the kernel then hands a server's runs to the client one by one).
func newOffload(pc PacketConn) offload {
	u := &udpOffload{}
	switch c := pc.(type) {
	case *net.UDPConn:
		u.c = c
	case connectedConn:
		u.c, u.connected = c.UDPConn, true
	default:
		return nil
	}
	rc, err := u.c.SyscallConn()
	if err != nil {
		return nil
	}
	ok := false
	if err := rc.Control(func(fd uintptr) {
		if _, err := syscall.GetsockoptInt(int(fd), syscall.IPPROTO_UDP, udpSegment); err != nil {
			return
		}
		ok = true
		// Without GRO the kernel still takes our runs; it just hands the
		// peer's ones to us datagram by datagram.
		if !u.connected {
			u.gro = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_UDP, udpGRO, 1) == nil
		}
	}); err != nil || !ok {
		return nil
	}
	return u
}

var cmsgHdrLen = syscall.CmsgLen(0)

func (u *udpOffload) writeSegments(b, oob []byte, size int, to netip.AddrPort) error {
	n := syscall.CmsgSpace(2)
	oob = oob[:n]
	clear(oob)
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level = syscall.IPPROTO_UDP
	h.Type = udpSegment
	h.SetLen(syscall.CmsgLen(2))
	binary.NativeEndian.PutUint16(oob[cmsgHdrLen:], uint16(size))
	if u.connected {
		to = netip.AddrPort{}
	}
	_, _, err := u.c.WriteMsgUDPAddrPort(b, oob, to)
	return err
}

func (u *udpOffload) coalesces() bool { return u.gro }

func (u *udpOffload) read(b, oob []byte) (n, seg int, from netip.AddrPort, err error) {
	n, oobn, _, from, err := u.c.ReadMsgUDPAddrPort(b, oob)
	if err != nil {
		return 0, 0, from, err
	}
	return n, groSegment(oob[:oobn]), from, nil
}

// groSegment finds the UDP_GRO control message, the size of the datagrams
// the kernel coalesced into one read, in the control messages of a read.
func groSegment(oob []byte) int {
	for len(oob) >= cmsgHdrLen {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < cmsgHdrLen || l > len(oob) {
			return 0
		}
		if h.Level == syscall.IPPROTO_UDP && h.Type == udpGRO {
			switch d := oob[cmsgHdrLen:l]; len(d) {
			case 2:
				return int(binary.NativeEndian.Uint16(d))
			case 4:
				return int(binary.NativeEndian.Uint32(d))
			}
			return 0
		}
		next := syscall.CmsgSpace(l - cmsgHdrLen)
		if next > len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}

func (u *udpOffload) refused(err error) bool {
	return errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.EMSGSIZE) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENOPROTOOPT)
}
