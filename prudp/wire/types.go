package wire

import (
	"encoding/binary"
	"strconv"
)

// PacketType is the logical packet type, independent of how a dialect numbers it on the
// wire ("Type and flags" in NintendoClients wiki "PRUDP Protocol", "Packet Type Flags" in
// GROBackendWV wiki "PRUDP packet format", "Enum: Packet Type" in the Hyperscape "PRUDP" wiki page).
// SYN to PING are 0 to 4 in every dialect; the others differ:
//
//	          nex-v0/v1/lite  quazal 2012  quazal 2006  hyperscape
//	USER      5               5            5            6
//	ROUTE     6               6            -            -
//	RAW       7               7            -            -
//	ACK       -               -            6            -
//	RESET     -               -            7            -
type PacketType uint8

// Packet types. The values of TypeSyn to TypeRaw equal the NEX wire numbers; TypeAck and
// TypeReset are the 2006 Quazal types 6 and 7.
const (
	TypeSyn        PacketType = 0
	TypeConnect    PacketType = 1
	TypeData       PacketType = 2
	TypeDisconnect PacketType = 3
	TypePing       PacketType = 4
	TypeUser       PacketType = 5
	TypeRoute      PacketType = 6
	TypeRaw        PacketType = 7
	TypeAck        PacketType = 8 // Quazal 2006 type 6
	TypeReset      PacketType = 9 // Quazal 2006 type 7
)

var typeNames = [...]string{"SYN", "CONNECT", "DATA", "DISCONNECT", "PING", "USER", "ROUTE", "RAW", "ACK", "RESET"}

// String returns the spec's name of t ("SYN", "CONNECT", ...).
func (t PacketType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "TYPE(" + strconv.Itoa(int(t)) + ")"
}

// Flags are the packet flags in NEX numbering ("Type and flags" in NintendoClients wiki "PRUDP Protocol").
// The 1-byte encodings of Quazal and Hyperscape carry 5 flag bits; their fifth bit (0x10 on
// the 5-bit field) is FLAG_MULTI_ACK (the Hyperscape "PRUDP" wiki page, "Structure: Type and Flags")
// and is mapped to [FlagMultiAck] so that code never depends on the dialect's numbering.
type Flags uint16

// Flag bits.
const (
	FlagAck      Flags = 0x001
	FlagReliable Flags = 0x002
	FlagNeedAck  Flags = 0x004
	FlagHasSize  Flags = 0x008
	FlagMultiAck Flags = 0x200
)

var flagNames = [...]struct {
	f    Flags
	name string
}{
	{FlagAck, "ACK"}, {FlagReliable, "RELIABLE"}, {FlagNeedAck, "NEED_ACK"},
	{FlagHasSize, "HAS_SIZE"}, {FlagMultiAck, "MULTI_ACK"},
}

// Has reports whether all bits of x are set in f.
func (f Flags) Has(x Flags) bool { return f&x == x }

// Names returns the names of the set flags ("ACK", "RELIABLE", "NEED_ACK", "HAS_SIZE",
// "MULTI_ACK"); bits without a name are given as hex ("0x100"). It allocates; it is meant
// for printing.
func (f Flags) Names() []string {
	names := []string{}
	for _, n := range flagNames {
		if f&n.f != 0 {
			names = append(names, n.name)
		}
	}
	for bit := Flags(1); bit != 0; bit <<= 1 {
		if f&bit != 0 && !knownFlags.Has(bit) {
			names = append(names, "0x"+strconv.FormatUint(uint64(bit), 16))
		}
	}
	return names
}

const knownFlags = FlagAck | FlagReliable | FlagNeedAck | FlagHasSize | FlagMultiAck

// String returns the flag names joined by "|", or "0" when none is set.
func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	s := ""
	for i, n := range f.Names() {
		if i > 0 {
			s += "|"
		}
		s += n
	}
	return s
}

// StreamType is the stream type of a virtual port ("Virtual ports" in
// nintendo-wiki "PRUDP Protocol", "VPort Structure" in GROBackendWV wiki "PRUDP packet format").
type StreamType uint8

// Stream types.
const (
	StreamDO               StreamType = 1
	StreamRV               StreamType = 2
	StreamOldRVSec         StreamType = 3
	StreamSBMGMT           StreamType = 4
	StreamNAT              StreamType = 5
	StreamSessionDiscovery StreamType = 6
	StreamNATEcho          StreamType = 7
	StreamRouting          StreamType = 8
	StreamGame             StreamType = 9
	StreamRVSecure         StreamType = 10
	StreamRelay            StreamType = 11
)

var streamNames = [...]string{"", "DO", "RV", "OldRVSec", "SBMGMT", "NAT", "SessionDiscovery", "NATEcho", "Routing", "Game", "RVSecure", "Relay"}

// String returns the spec's name of s ("DO", "OldRVSec", "RVSecure", ...).
func (s StreamType) String() string {
	if s != 0 && int(s) < len(streamNames) {
		return streamNames[s]
	}
	return "STREAM(" + strconv.Itoa(int(s)) + ")"
}

// VPort is a virtual port: a stream type and a port. V0, Quazal, V1 and Hyperscape pack it
// in one byte (stream type in the high nibble, port 0-15 in the low nibble); Lite carries
// 8-bit ports and the two stream types in a byte of their own.
type VPort struct {
	Stream StreamType
	Port   uint8
}

// Byte returns the one-byte encoding (Stream<<4 | Port). Only meaningful when both fit in
// a nibble.
func (v VPort) Byte() byte { return byte(v.Stream)<<4 | v.Port&0x0f }

// VPortFromByte splits a one-byte virtual port.
func VPortFromByte(b byte) VPort { return VPort{Stream: StreamType(b >> 4), Port: b & 0x0f} }

// String returns "stream:port", e.g. "OldRVSec:15".
func (v VPort) String() string { return v.Stream.String() + ":" + strconv.Itoa(int(v.Port)) }

// OptionMask says which V1/Lite options ("Optional data" in NintendoClients wiki "PRUDP Protocol") a packet
// carries. The zero value tells Append to write the options the spec lists for the packet's
// type and flags (see [DefaultOptions]); Parse always sets the options it found, with
// [OptNone] when there were none, so that parse -> append reproduces the packet.
type OptionMask uint8

// Options. Bit i is option id i for ids 0-4; OptLiteSignature is option 0x80.
const (
	OptSupportedFunctions OptionMask = 1 << 0 // option 0, 4 bytes
	OptConnSignature      OptionMask = 1 << 1 // option 1, 16 bytes
	OptFragmentID         OptionMask = 1 << 2 // option 2, 1 byte
	OptUnreliableSeq      OptionMask = 1 << 3 // option 3, 2 bytes
	OptMaxSubstreamID     OptionMask = 1 << 4 // option 4, 1 byte
	OptLiteSignature      OptionMask = 1 << 5 // option 0x80, 16 bytes
	OptNone               OptionMask = 1 << 7 // explicitly no options
)

// Option ids on the wire.
const (
	OptionSupportedFunctions = 0
	OptionConnSignature      = 1
	OptionFragmentID         = 2
	OptionUnreliableSeq      = 3
	OptionMaxSubstreamID     = 4
	OptionLiteSignature      = 0x80
)

// Packet is one PRUDP packet in any dialect. Fields a dialect does not carry are ignored
// by its Append and left zero by its Parse:
//
//	field              nex-v0/quazal   nex-v1        nex-lite          hyperscape
//	SessionID          yes             yes           -                 yes
//	SubstreamID        -               yes           -                 -
//	FragmentID         DATA, 1 byte    option 2      header, 1 byte    DATA, u32
//	Signature          4 bytes         16 bytes      -                 4 bytes
//	ConnSignature      SYN/CONNECT, 4  option 1, 16  option 1, 16      SYN/CONNECT, 4
//	option fields      -               yes           yes (+0x80)       -
//	Checksum           1 or 4 bytes    -             -                 4 bytes
//
// Four-byte signatures occupy the first 4 bytes of the 16-byte arrays in wire (little-endian)
// order; use [Packet.Signature32] and [Packet.ConnSignature32] to read them as numbers.
type Packet struct {
	Src, Dst    VPort
	Type        PacketType
	Flags       Flags
	SessionID   uint8
	SubstreamID uint8
	Seq         uint16
	FragmentID  uint32

	// Signature is the packet signature (V0/Quazal/Hyperscape 4 bytes, V1 16 bytes).
	Signature [16]byte
	// ConnSignature is the connection signature (4 or 16 bytes, see above).
	ConnSignature [16]byte

	// V1/Lite options; Options says which are present.
	Options            OptionMask
	SupportedFunctions uint32   // option 0
	UnreliableSeq      uint16   // option 3: initial sequence id of unreliable DATA
	MaxSubstreamID     uint8    // option 4
	LiteSignature      [16]byte // option 0x80

	// Payload is the (usually encrypted) payload. Parse returns a slice of its input.
	Payload []byte

	// Checksum is the checksum as read by Parse (1 or 4 bytes). Append ignores it and
	// writes the computed checksum.
	Checksum uint32
}

// Signature32 returns the first 4 bytes of Signature as a little-endian number.
func (p *Packet) Signature32() uint32 { return binary.LittleEndian.Uint32(p.Signature[:4]) }

// SetSignature32 sets a 4-byte packet signature.
func (p *Packet) SetSignature32(v uint32) {
	p.Signature = [16]byte{}
	binary.LittleEndian.PutUint32(p.Signature[:4], v)
}

// ConnSignature32 returns the first 4 bytes of ConnSignature as a little-endian number.
func (p *Packet) ConnSignature32() uint32 { return binary.LittleEndian.Uint32(p.ConnSignature[:4]) }

// SetConnSignature32 sets a 4-byte connection signature.
func (p *Packet) SetConnSignature32(v uint32) {
	p.ConnSignature = [16]byte{}
	binary.LittleEndian.PutUint32(p.ConnSignature[:4], v)
}

// Dialect is a PRUDP packet codec configured with its access key and options.
type Dialect interface {
	// Name is the dialect's name as the CLI spells it ("nex-v1", "quazal", ...).
	Name() string
	// Parse decodes the first packet in b and returns it with the number of bytes it used.
	// Payload aliases b. A checksum mismatch returns the decoded packet, n and an error
	// wrapping ErrBadChecksum; any other error returns an invalid packet.
	Parse(b []byte) (Packet, int, error)
	// Append appends the encoding of p to b, computing lengths and the checksum. It does
	// not compute signatures (see the dialect's signature functions).
	Append(b []byte, p *Packet) ([]byte, error)
}

// Dialect names as the CLI and the docs spell them.
const (
	NameV0         = "nex-v0"
	NameV0Friends  = "nex-v0-friends"
	NameQuazal     = "quazal"
	NameV1         = "nex-v1"
	NameLite       = "nex-lite"
	NameHyperscape = "hyperscape"
)
