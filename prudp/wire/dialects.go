package wire

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/binary"
)

// SignatureMode selects how V0 packet signatures are made ("Packet signature" under
// "V0 Format" in NintendoClients wiki "PRUDP Protocol").
type SignatureMode uint8

const (
	// ModeGames: DATA and DISCONNECT are signed with HMAC-MD5 over session key, sequence
	// id, fragment id and payload; other packets carry the connection signature.
	ModeGames SignatureMode = iota
	// ModeFriends: DATA is signed with HMAC-MD5 over the payload (0x12345678 when it is
	// empty); other packets carry the connection signature.
	ModeFriends
)

// FriendsEmptySignature is the packet signature of a friends-mode DATA packet with an
// empty payload.
const FriendsEmptySignature uint32 = 0x12345678

// V0 is the NEX V0 dialect ("V0 Format" in NintendoClients wiki "PRUDP Protocol"): 2-byte type and flags
// (flags<<4 | type), 1-byte checksum with base sum(access key), 4-byte packet signatures.
// Its Name is "nex-v0" in games mode and "nex-v0-friends" in friends mode.
type V0 struct {
	legacyCodec
	mode   SignatureMode
	keyMD5 [16]byte
	macs   *macPool
}

// NewV0 returns the V0 dialect for an access key and signature mode.
func NewV0(accessKey string, mode SignatureMode) *V0 {
	name := NameV0
	if mode == ModeFriends {
		name = NameV0Friends
	}
	d := &V0{
		legacyCodec: legacyCodec{name: name, tfSize: 2, fragSize: 1, csSize: 1,
			keySum: KeySum(accessKey), baseMode: baseKey, typeTable: typesNEX},
		mode:   mode,
		keyMD5: md5.Sum([]byte(accessKey)),
	}
	d.macs = newMacPool(d.keyMD5[:])
	return d
}

// Name returns "nex-v0" or "nex-v0-friends".
func (d *V0) Name() string { return d.name }

// Mode returns the signature mode.
func (d *V0) Mode() SignatureMode { return d.mode }

// Parse implements [Dialect].
func (d *V0) Parse(b []byte) (Packet, int, error) { return d.parse(b) }

// Append implements [Dialect]. The packet signature is taken from p.Signature: compute it
// first with [V0.PacketSignature].
func (d *V0) Append(b []byte, p *Packet) ([]byte, error) { return d.append(b, p) }

// SignatureIsConnSig reports whether packets of type t carry the connection signature as
// their packet signature (rather than an HMAC) in d's mode.
func (d *V0) SignatureIsConnSig(t PacketType) bool {
	if d.mode == ModeFriends {
		return t != TypeData
	}
	return t != TypeData && t != TypeDisconnect
}

// PacketSignature implements "Packet signature" of "V0 Format" in NintendoClients wiki "PRUDP Protocol".
// Games mode: for DATA and DISCONNECT, the first 4 bytes of HMAC-MD5 keyed with MD5(access
// key) over sessionKey (empty on an authentication connection), LE16 sequence id, the
// fragment id byte and the (encrypted) payload. Friends mode: for DATA, 0x12345678 when
// the payload is empty, else the first 4 bytes of HMAC-MD5 over the payload. Every other
// packet carries connSig, the connection signature received from the peer.
// The result is the little-endian u32 to store with p.SetSignature32.
func (d *V0) PacketSignature(p *Packet, sessionKey []byte, connSig uint32) uint32 {
	if d.SignatureIsConnSig(p.Type) {
		return connSig
	}
	if d.mode == ModeFriends {
		if len(p.Payload) == 0 {
			return FriendsEmptySignature
		}
		m := d.macs.get()
		m.h.Write(p.Payload)
		s := m.sum()
		d.macs.put(m)
		return binary.LittleEndian.Uint32(s[:4])
	}
	m := d.macs.get()
	m.h.Write(sessionKey)
	binary.LittleEndian.PutUint16(m.scratch[:2], p.Seq)
	m.scratch[2] = byte(p.FragmentID)
	m.h.Write(m.scratch[:3])
	m.h.Write(p.Payload)
	s := m.sum()
	d.macs.put(m)
	return binary.LittleEndian.Uint32(s[:4])
}

// VerifySignature reports whether p's packet signature is the one PacketSignature computes.
func (d *V0) VerifySignature(p *Packet, sessionKey []byte, connSig uint32) bool {
	want := d.PacketSignature(p, sessionKey, connSig)
	return subtle.ConstantTimeEq(int32(want), int32(p.Signature32())) == 1
}

// QuazalOptions configures the Quazal dialect.
type QuazalOptions struct {
	// ChecksumSize is 1 (the default when 0) or 4 bytes.
	ChecksumSize int
	// Types2006 selects the 2006 packet types (6 ACK, 7 RESET, as in 25 To Life) instead
	// of the 2012 ones (6 ROUTE, 7 RAW, as in Ghost Recon Online).
	Types2006 bool
}

// Quazal is the original Quazal Rendez-Vous dialect (GROBackendWV wiki "PRUDP packet format" and the
// "original Quazal" notes in NintendoClients wiki "PRUDP Protocol"): the V0 header with a 1-byte type and
// flags (flags<<3 | type), 1-byte fragment id, and a 1- or 4-byte checksum.
//
// The checksum base is sum(access key) only when the packet's source stream type is
// OldRVSec (3); DO, NAT, NATEcho and every other stream type use base 0 (docs/peers.md,
// "Quazal Rendez-Vous"; the published DO packet verifies only that way). The same rule is
// applied to the 4-byte checksum, whose base is (sum(key) & 0xff). Both ends of a
// connection use the same stream type, so the source's is the one consulted.
//
// The packet signature is the connection signature received from the peer in every
// packet ("Quazal Rendez-Vous" under "Packet signature" in nintendo-wiki "PRUDP Protocol").
type Quazal struct {
	legacyCodec
	opts QuazalOptions
}

// NewQuazal returns the Quazal dialect for an access key. It panics if opts.ChecksumSize
// is not 0, 1 or 4 (a programming error, not bad input).
func NewQuazal(accessKey string, opts QuazalOptions) *Quazal {
	cs := opts.ChecksumSize
	switch cs {
	case 0:
		cs = 1
	case 1, 4:
	default:
		panic("wire.NewQuazal: ChecksumSize must be 1 or 4")
	}
	opts.ChecksumSize = cs
	table := uint8(typesNEX)
	if opts.Types2006 {
		table = types2006
	}
	return &Quazal{
		legacyCodec: legacyCodec{name: NameQuazal, tfSize: 1, fragSize: 1, csSize: cs,
			keySum: KeySum(accessKey), baseMode: baseRVSec, typeTable: table},
		opts: opts,
	}
}

// Name returns "quazal".
func (d *Quazal) Name() string { return d.name }

// Options returns the options d was made with (ChecksumSize is 1 or 4).
func (d *Quazal) Options() QuazalOptions { return d.opts }

// Parse implements [Dialect].
func (d *Quazal) Parse(b []byte) (Packet, int, error) { return d.parse(b) }

// Append implements [Dialect].
func (d *Quazal) Append(b []byte, p *Packet) ([]byte, error) { return d.append(b, p) }

// Hyperscape is the Hyperscape dialect (the Hyperscape "PRUDP" wiki page): 1-byte type and flags
// (flags<<3 | type, USER is 6), u32 packet and connection signatures, u32 fragment id in
// DATA, and a 4-byte checksum (sum of the little-endian u32 words of the zero-padded
// packet, no key). The SYN/CONNECT payload structures after the connection signature are
// decoded by [ParseHyperscapeConnect].
type Hyperscape struct {
	legacyCodec
}

// NewHyperscape returns the Hyperscape dialect. It needs no access key.
func NewHyperscape() *Hyperscape {
	return &Hyperscape{legacyCodec{name: NameHyperscape, tfSize: 1, fragSize: 4, csSize: 4,
		baseMode: baseZero, typeTable: typesHyperscape}}
}

// Name returns "hyperscape".
func (d *Hyperscape) Name() string { return d.name }

// Parse implements [Dialect].
func (d *Hyperscape) Parse(b []byte) (Packet, int, error) { return d.parse(b) }

// Append implements [Dialect].
func (d *Hyperscape) Append(b []byte, p *Packet) ([]byte, error) { return d.append(b, p) }
