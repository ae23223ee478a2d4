package wire

import (
	"encoding/binary"
	"strconv"
)

// legacyCodec is the header codec V0, Quazal and Hyperscape share ("V0 Format" in
// NintendoClients wiki "PRUDP Protocol", GROBackendWV wiki "PRUDP packet format", the Hyperscape "PRUDP" wiki page):
//
//	source(1) destination(1) type-and-flags(2 or 1) session(1) signature(4) sequence(2)
//	[connection signature(4): SYN, CONNECT] [fragment id(1 or 4): DATA]
//	[payload size(2): FLAG_HAS_SIZE] payload checksum(1 or 4)
//
// The dialects differ only in the parameters below.
type legacyCodec struct {
	name      string
	tfSize    int // type-and-flags bytes: 2 (V0), 1 (Quazal, Hyperscape)
	fragSize  int // fragment id bytes: 1, or 4 (Hyperscape)
	csSize    int // checksum bytes: 1 or 4
	keySum    uint32
	baseMode  uint8
	typeTable uint8
}

// Checksum base modes.
const (
	baseKey   = iota // sum(access key) on every packet (NEX V0)
	baseRVSec        // sum(access key) on OldRVSec streams, else 0 (Quazal)
	baseZero         // always 0 (Hyperscape)
)

// Type tables.
const (
	typesNEX        = iota // 0-7: SYN ... RAW
	types2006              // 6 ACK, 7 RESET
	typesHyperscape        // 0-4, 6 USER
)

func decodeType(table uint8, raw uint8) (PacketType, bool) {
	switch {
	case raw <= 4:
		return PacketType(raw), true
	case table == typesHyperscape:
		if raw == 6 {
			return TypeUser, true
		}
		return 0, false
	case table == types2006 && raw >= 6 && raw <= 7:
		return TypeAck + PacketType(raw-6), true
	case raw <= 7:
		return PacketType(raw), true
	}
	return 0, false
}

func encodeType(table uint8, t PacketType) (uint8, bool) {
	switch {
	case t <= TypePing:
		return uint8(t), true
	case table == typesHyperscape:
		return 6, t == TypeUser
	case table == types2006:
		switch t {
		case TypeUser:
			return 5, true
		case TypeAck, TypeReset:
			return uint8(t-TypeAck) + 6, true
		}
		return 0, false
	case t <= TypeRaw:
		return uint8(t), true
	}
	return 0, false
}

func (c *legacyCodec) base(src StreamType) uint32 {
	switch c.baseMode {
	case baseKey:
		return c.keySum
	case baseRVSec:
		if src == StreamOldRVSec {
			return c.keySum
		}
	}
	return 0
}

func (c *legacyCodec) checksum(src StreamType, b []byte) uint32 {
	if c.csSize == 1 {
		return uint32(Checksum1(c.base(src), b))
	}
	return Checksum4(c.base(src), b)
}

// fixedField names the fixed-header field that contains offset off.
func (c *legacyCodec) fixedField(off int) (string, int) {
	tf := c.tfSize
	switch {
	case off < 1:
		return "source", 0
	case off < 2:
		return "destination", 1
	case off < 2+tf:
		return "type and flags", 2
	case off < 3+tf:
		return "session id", 2 + tf
	case off < 7+tf:
		return "packet signature", 3 + tf
	}
	return "sequence id", 7 + tf
}

func (c *legacyCodec) parse(b []byte) (Packet, int, error) {
	var p Packet
	tf := c.tfSize
	fixed := 9 + tf
	if len(b) < fixed {
		field, off := c.fixedField(len(b))
		return p, 0, errAt(c.name, field, off, ErrTruncated)
	}
	p.Src = VPortFromByte(b[0])
	p.Dst = VPortFromByte(b[1])
	var raw uint8
	if tf == 2 {
		v := binary.LittleEndian.Uint16(b[2:])
		raw = uint8(v & 0x0f)
		p.Flags = Flags(v >> 4)
	} else {
		raw = b[2] & 0x07
		p.Flags = Flags(b[2]>>3) & 0x0f
		if b[2]&0x80 != 0 {
			p.Flags |= FlagMultiAck
		}
	}
	typ, ok := decodeType(c.typeTable, raw)
	if !ok {
		return Packet{}, 0, errDetail(c.name, "type and flags", 2, ErrBadType, "type "+itoa(int(raw)))
	}
	p.Type = typ
	off := 2 + tf
	p.SessionID = b[off]
	copy(p.Signature[:4], b[off+1:off+5])
	p.Seq = binary.LittleEndian.Uint16(b[off+5:])
	off += 7

	if typ == TypeSyn || typ == TypeConnect {
		if len(b) < off+4 {
			return Packet{}, 0, errAt(c.name, "connection signature", off, ErrTruncated)
		}
		copy(p.ConnSignature[:4], b[off:off+4])
		off += 4
	}
	if typ == TypeData {
		if len(b) < off+c.fragSize {
			return Packet{}, 0, errAt(c.name, "fragment id", off, ErrTruncated)
		}
		if c.fragSize == 1 {
			p.FragmentID = uint32(b[off])
		} else {
			p.FragmentID = binary.LittleEndian.Uint32(b[off:])
		}
		off += c.fragSize
	}
	var end int
	if p.Flags&FlagHasSize != 0 {
		if len(b) < off+2 {
			return Packet{}, 0, errAt(c.name, "payload size", off, ErrTruncated)
		}
		size := int(binary.LittleEndian.Uint16(b[off:]))
		off += 2
		if len(b)-off < size {
			return Packet{}, 0, errDetail(c.name, "payload", off, ErrTruncated,
				"size field says "+itoa(size)+", "+itoa(len(b)-off)+" bytes present")
		}
		end = off + size
	} else {
		end = len(b) - c.csSize
		if end < off {
			return Packet{}, 0, errAt(c.name, "checksum", off, ErrTruncated)
		}
	}
	if len(b)-end < c.csSize {
		return Packet{}, 0, errAt(c.name, "checksum", end, ErrTruncated)
	}
	p.Payload = b[off:end:end]
	n := end + c.csSize
	if c.csSize == 1 {
		p.Checksum = uint32(b[end])
	} else {
		p.Checksum = binary.LittleEndian.Uint32(b[end:])
	}
	if want := c.checksum(p.Src.Stream, b[:end]); want != p.Checksum {
		return p, n, errDetail(c.name, "checksum", end, ErrBadChecksum,
			"got "+hex32(p.Checksum)+", want "+hex32(want))
	}
	return p, n, nil
}

func (c *legacyCodec) append(b []byte, p *Packet) ([]byte, error) {
	raw, ok := encodeType(c.typeTable, p.Type)
	if !ok {
		return b, errDetail(c.name, "type", -1, ErrUnsupported, p.Type.String())
	}
	if p.Src.Stream > 15 || p.Src.Port > 15 {
		return b, errDetail(c.name, "source", -1, ErrTooLarge, "stream type and port must fit 4 bits")
	}
	if p.Dst.Stream > 15 || p.Dst.Port > 15 {
		return b, errDetail(c.name, "destination", -1, ErrTooLarge, "stream type and port must fit 4 bits")
	}
	var tfv uint16
	if c.tfSize == 2 {
		if p.Flags > 0x0fff {
			return b, errDetail(c.name, "flags", -1, ErrTooLarge, "12 bits")
		}
		tfv = uint16(p.Flags)<<4 | uint16(raw)
	} else {
		if p.Flags&^(0x0f|FlagMultiAck) != 0 {
			return b, errDetail(c.name, "flags", -1, ErrUnsupported, "only ACK, RELIABLE, NEED_ACK, HAS_SIZE and MULTI_ACK fit the 1-byte field")
		}
		tfv = uint16(p.Flags&0x0f)<<3 | uint16(raw)
		if p.Flags&FlagMultiAck != 0 {
			tfv |= 0x80
		}
	}
	if p.Type == TypeData && c.fragSize == 1 && p.FragmentID > 0xff {
		return b, errDetail(c.name, "fragment id", -1, ErrTooLarge, "1 byte")
	}
	if p.Type != TypeData && p.FragmentID != 0 {
		return b, errDetail(c.name, "fragment id", -1, ErrUnsupported, "only DATA packets carry a fragment id")
	}
	hasSize := p.Flags&FlagHasSize != 0
	if hasSize && len(p.Payload) > 0xffff {
		return b, errDetail(c.name, "payload size", -1, ErrTooLarge, itoa(len(p.Payload))+" bytes")
	}
	start := len(b)
	b = append(b, p.Src.Byte(), p.Dst.Byte())
	if c.tfSize == 2 {
		b = binary.LittleEndian.AppendUint16(b, tfv)
	} else {
		b = append(b, byte(tfv))
	}
	b = append(b, p.SessionID)
	b = append(b, p.Signature[:4]...)
	b = binary.LittleEndian.AppendUint16(b, p.Seq)
	if p.Type == TypeSyn || p.Type == TypeConnect {
		b = append(b, p.ConnSignature[:4]...)
	}
	if p.Type == TypeData {
		if c.fragSize == 1 {
			b = append(b, byte(p.FragmentID))
		} else {
			b = binary.LittleEndian.AppendUint32(b, p.FragmentID)
		}
	}
	if hasSize {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(p.Payload)))
	}
	b = append(b, p.Payload...)
	sum := c.checksum(p.Src.Stream, b[start:])
	if c.csSize == 1 {
		b = append(b, byte(sum))
	} else {
		b = binary.LittleEndian.AppendUint32(b, sum)
	}
	return b, nil
}

func itoa(v int) string { return strconv.Itoa(v) }
