package pia

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strings"
)

// Network is the kind of network a Pia session runs on; it decides the nonce and
// the session key ("Nonce" and "Session Key" in the Pia Protocol wiki).
type Network uint8

// The networks.
const (
	NetworkNEX  Network = iota + 1 // online through NEX matchmaking (up to 5.44)
	NetworkLDN                     // local wireless (LDN)
	NetworkLAN                     // LAN mode
	NetworkNPLN                    // NPLN online (6.x)
)

// AllNetworks lists every network.
var AllNetworks = []Network{NetworkNEX, NetworkLDN, NetworkLAN, NetworkNPLN}

func (n Network) String() string {
	switch n {
	case NetworkNEX:
		return "nex"
	case NetworkLDN:
		return "ldn"
	case NetworkLAN:
		return "lan"
	case NetworkNPLN:
		return "npln"
	}
	return fmt.Sprintf("network(%d)", uint8(n))
}

// ParseNetwork parses "nex", "ldn", "lan" or "npln".
func ParseNetwork(s string) (Network, error) {
	for _, n := range AllNetworks {
		if strings.EqualFold(s, n.String()) {
			return n, nil
		}
	}
	return 0, fmt.Errorf("pia: network %q: %w (want nex, ldn, lan or npln)", s, ErrUnsupported)
}

// Source describes the sender of a packet where a nonce depends on it: its MAC
// address (LDN up to 5.44) and its IP address (LDN 6.x, LAN).
type Source struct {
	MAC [6]byte
	IP  netip.Addr
}

// NonceParams are the session-wide inputs of the nonce.
type NonceParams struct {
	Network Network
	// GatheringID is the NEX gathering id (NEX).
	GatheringID uint32
	// NetworkID is the LDN session id (up to 5.44, "session id" of the LDN
	// application data, hashed little-endian), the LDN/LAN network id (6.x) or
	// the NPLN network id.
	NetworkID uint32
	// OverrideConnectionID makes the nonce use ConnectionID instead of the header's
	// connection byte (see Header.ConnectionByte), for captures whose peers differ.
	OverrideConnectionID bool
	ConnectionID         uint8
}

func (p *NonceParams) connectionByte(h *Header) uint8 {
	if p.OverrideConnectionID {
		return p.ConnectionID
	}
	return h.ConnectionByte()
}

// NonceSupported reports whether the nonce of network n is defined for header
// layout l (NEX up to 5.44, NPLN from 6.16; LDN and LAN everywhere from 5.7).
func NonceSupported(n Network, l HeaderLayout) bool {
	if l == HeaderUpTo5_6 {
		return n == NetworkNEX || n == NetworkLDN || n == NetworkLAN // AES-ECB: no nonce
	}
	switch n {
	case NetworkNEX:
		return l != Header6_16
	case NetworkNPLN:
		return l == Header6_16
	case NetworkLDN, NetworkLAN:
		return true
	}
	return false
}

// LDNNonceCRC returns the CRC-32 of LE32(sessionID) || source MAC, whose first
// three big-endian bytes start the LDN nonce up to 5.44 ("Nonce" in the Pia Protocol wiki).
func LDNNonceCRC(sessionID uint32, mac [6]byte) uint32 {
	var in [10]byte
	binary.LittleEndian.PutUint32(in[:], sessionID)
	copy(in[4:], mac[:])
	return crcIEEE(in[:])
}

// crcIEEE is crc32.ChecksumIEEE for the few bytes of a nonce; the table loop keeps
// the input on the stack (the library's assembly entry point makes it escape).
func crcIEEE(b []byte) uint32 {
	crc := ^uint32(0)
	for _, x := range b {
		crc = crc32.IEEETable[byte(crc)^x] ^ crc>>8
	}
	return ^crc
}

// ipv4Word returns the source address as a 32-bit word: the IPv4 address, or for
// IPv6 the CRC-32 of its 16 bytes ("LAN (6.16 - 6.30)" in the Pia Protocol wiki).
func ipv4Word(ip netip.Addr) (uint32, bool, error) {
	if !ip.IsValid() {
		return 0, false, fmt.Errorf("pia nonce: %w: the source IP address is needed", ErrBadField)
	}
	ip = ip.Unmap()
	if ip.Is4() {
		a := ip.As4()
		return binary.BigEndian.Uint32(a[:]), false, nil
	}
	a := ip.As16()
	return crcIEEE(a[:]), true, nil
}

// BuildNonce implements "Nonce" in the Pia Protocol wiki: the 12-byte AES-GCM nonce of a
// packet with header h sent by src.
func BuildNonce(p NonceParams, h *Header, src Source) ([12]byte, error) {
	var n [12]byte
	l := h.Layout
	if !NonceSupported(p.Network, l) {
		return n, fmt.Errorf("pia nonce: %w: %s network with the %s layout", ErrUnsupported, p.Network, l)
	}
	pre6 := l != Header6_16
	switch p.Network {
	case NetworkNEX:
		binary.BigEndian.PutUint32(n[:], p.GatheringID&0xFFFFFF)
		n[0] = p.connectionByte(h)
		copy(n[4:], h.Nonce[:])
	case NetworkLDN:
		if pre6 {
			crc := LDNNonceCRC(p.NetworkID, src.MAC)
			binary.BigEndian.PutUint32(n[:], crc)
			n[3] = p.connectionByte(h)
		} else {
			ip, v6, err := ipv4Word(src.IP)
			if err != nil {
				return n, err
			}
			if v6 {
				return n, fmt.Errorf("pia nonce: %w: LDN 6.x needs an IPv4 source", ErrBadField)
			}
			binary.BigEndian.PutUint32(n[:], p.NetworkID^ip)
		}
		copy(n[4:], h.Nonce[:])
	case NetworkLAN:
		ip, v6, err := ipv4Word(src.IP)
		if err != nil {
			return n, err
		}
		if pre6 {
			if v6 {
				return n, fmt.Errorf("pia nonce: %w: LAN up to 5.44 needs an IPv4 source", ErrBadField)
			}
			binary.BigEndian.PutUint32(n[:], ip)
			n[4] = p.connectionByte(h)
			copy(n[5:], h.Nonce[1:])
		} else {
			binary.BigEndian.PutUint32(n[:], ip)
			copy(n[4:], h.Nonce[:])
		}
	case NetworkNPLN:
		binary.BigEndian.PutUint32(n[:], p.NetworkID)
		copy(n[4:], h.Nonce[:])
	}
	return n, nil
}

// LDNNetworkIDFromSSID derives an LDN 6.x network id as the CRC-32 of SSID bytes
// 1 to 15. This is not in the specs: public LDN research on recent Pokemon titles
// derives it so (docs/peers.md); prefer the network id observed in the session.
func LDNNetworkIDFromSSID(ssid [16]byte) uint32 { return crc32.ChecksumIEEE(ssid[1:16]) }
