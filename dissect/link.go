package dissect

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
)

// Network-layer protocols a link layer can carry.
const (
	netUnknown = iota
	netIPv4
	netIPv6
)

// EtherTypes and link types handled here (IEEE 802.3, tcpdump.org "Link-Layer
// Header Types").
const (
	etherTypeIPv4  = 0x0800
	etherTypeIPv6  = 0x86dd
	etherTypeVLAN  = 0x8100
	etherTypeQinQ  = 0x88a8
	linkTypeSLL2   = 276
	linkTypeRawAlt = 12 // DLT_RAW on OpenBSD and some older libpcaps
	linkTypeRaw14  = 14 // DLT_RAW on BSD/OS
	linkTypeIPv4   = 228
	linkTypeIPv6   = 229
	linkTypeLoop   = 108 // OpenBSD loopback, AF value in network byte order
)

// BSD loopback address families for IPv6 differ per operating system.
func nullFamily(af uint32) int {
	switch af {
	case 2:
		return netIPv4
	case 24, 28, 30: // NetBSD/OpenBSD, FreeBSD, Darwin
		return netIPv6
	case 10: // Linux AF_INET6, seen in some converted captures
		return netIPv6
	}
	return netUnknown
}

// linkDecode strips the link-layer header of a frame and returns the network
// protocol and the bytes that follow. reason names what was not understood when
// proto is netUnknown.
func linkDecode(lt layers.LinkType, b []byte) (proto int, payload []byte, reason string) {
	switch lt {
	case layers.LinkTypeEthernet:
		if len(b) < 14 {
			return netUnknown, nil, "ethernet header truncated"
		}
		et := binary.BigEndian.Uint16(b[12:14])
		b = b[14:]
		for et == etherTypeVLAN || et == etherTypeQinQ {
			if len(b) < 4 {
				return netUnknown, nil, "802.1Q tag truncated"
			}
			et = binary.BigEndian.Uint16(b[2:4])
			b = b[4:]
		}
		return etherProto(et, b)
	case layers.LinkTypeLinuxSLL:
		if len(b) < 16 {
			return netUnknown, nil, "linux cooked (SLL) header truncated"
		}
		return etherProto(binary.BigEndian.Uint16(b[14:16]), b[16:])
	case linkTypeSLL2:
		if len(b) < 20 {
			return netUnknown, nil, "linux cooked (SLL2) header truncated"
		}
		return etherProto(binary.BigEndian.Uint16(b[0:2]), b[20:])
	case layers.LinkTypeNull, linkTypeLoop:
		if len(b) < 4 {
			return netUnknown, nil, "loopback header truncated"
		}
		af := binary.LittleEndian.Uint32(b[:4])
		if lt == linkTypeLoop || af > 0xffff { // written in the other byte order
			af = binary.BigEndian.Uint32(b[:4])
		}
		p := nullFamily(af)
		if p == netUnknown {
			return netUnknown, nil, "loopback address family not IP"
		}
		return p, b[4:], ""
	case layers.LinkTypeRaw, linkTypeRawAlt, linkTypeRaw14, linkTypeIPv4, linkTypeIPv6:
		if len(b) < 1 {
			return netUnknown, nil, "empty raw IP frame"
		}
		switch b[0] >> 4 {
		case 4:
			return netIPv4, b, ""
		case 6:
			return netIPv6, b, ""
		}
		return netUnknown, nil, "raw frame is not IPv4 or IPv6"
	}
	return netUnknown, nil, "unsupported link type " + lt.String()
}

func etherProto(et uint16, b []byte) (int, []byte, string) {
	switch et {
	case etherTypeIPv4:
		return netIPv4, b, ""
	case etherTypeIPv6:
		return netIPv6, b, ""
	}
	return netUnknown, nil, "not IP (ethertype 0x" + hex16(et) + ")"
}

func hex16(v uint16) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15]})
}
