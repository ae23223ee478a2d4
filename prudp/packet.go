package prudp

import "github.com/gamewire/gamewire/prudp/wire"

// Packet types and flags ("Type and flags" in NintendoClients wiki "PRUDP Protocol").
const (
	typeSyn        = 0
	typeConnect    = 1
	typeData       = 2
	typeDisconnect = 3
	typePing       = 4
	typeUser       = 5 // Hyperscape's USER stage (wire.TypeUser)

	flagAck      = 0x001
	flagReliable = 0x002
	flagNeedAck  = 0x004
	flagHasSize  = 0x008
	flagMultiAck = 0x200
)

var typeNames = [...]string{"SYN", "CONNECT", "DATA", "DISCONNECT", "PING", "USER"}

func typeName(t uint8) string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type?"
}

// pkt is the engine's view of one packet, independent of the dialect's
// encoding. Slices alias the datagram they were parsed from.
type pkt struct {
	typ           uint8
	flags         uint16
	src, dst      uint16 // virtual ports: stream type << 8 | port (8-bit ports for Lite, see vport)
	sessionID     uint8
	substream     uint8
	seq           uint16
	fragment      uint32   // 1 byte on the wire except Hyperscape (u32)
	connSig       [16]byte // SYN/CONNECT connection signature (V0 uses the first 4 bytes)
	supported     uint32   // supported functions (minor version in the low byte)
	maxSubstream  uint8
	unreliableSeq uint16
	payload       []byte
	raw           []byte // the whole encoded packet, for signature checks
	w             wire.Packet
}

func (p *pkt) has(f uint16) bool { return p.flags&f != 0 }

// keys is what a dialect needs to sign or verify a packet of one connection.
type keys struct {
	sessionKey []byte // nil on an authentication (non-secure) connection
	connSig    []byte // connection signature the packet carries or is signed with
}

// codec is the header part of a dialect (dialectSpec); see codec.go for the
// implementations on top of package prudp/wire.
type codec interface {
	// parse decodes the first packet in b into p, checking the checksum;
	// p's slices alias b. It returns the bytes used.
	parse(b []byte, p *pkt) (int, error)
	// appendPacket encodes p with its packet signature (made with k) and checksum.
	appendPacket(dst []byte, p *pkt, k keys) ([]byte, error)
	// verify checks p's packet signature under k.
	verify(p *pkt, k keys) bool
	// connSigLen is the size of a connection signature (4 for V0, 16 for V1).
	connSigLen() int
}
