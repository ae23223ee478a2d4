package wire

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"strconv"
)

// V1 header layout ("V1 Format" in NintendoClients wiki "PRUDP Protocol"): magic EA D0, 12-byte header,
// 16-byte signature, options, payload.
const (
	v1Magic0     = 0xEA
	v1Magic1     = 0xD0
	v1Version    = 1
	v1HeaderSize = 30 // magic + header + signature
	liteMagic    = 0x80
	liteHeader   = 12
)

// optionSize returns the value size of a known option id, or -1.
func optionSize(id byte) int {
	switch id {
	case OptionSupportedFunctions:
		return 4
	case OptionConnSignature, OptionLiteSignature:
		return 16
	case OptionFragmentID, OptionMaxSubstreamID:
		return 1
	case OptionUnreliableSeq:
		return 2
	}
	return -1
}

// optionField names an option in errors; only called on the error path.
func optionField(id byte) string { return "option " + strconv.Itoa(int(id)) }

func optionBit(id byte) OptionMask {
	if id == OptionLiteSignature {
		return OptLiteSignature
	}
	return 1 << id
}

// DefaultOptions returns the options the spec lists for a packet of type t with flags f:
// "Packet-specific data" of "V1 Format" (lite=false) or of "Lite Format" (lite=true) in
// NintendoClients wiki "PRUDP Protocol". Append writes these when Packet.Options is zero.
func DefaultOptions(lite bool, t PacketType, f Flags) OptionMask {
	if lite {
		switch t {
		case TypeSyn:
			if f&FlagAck != 0 {
				return OptSupportedFunctions | OptConnSignature
			}
			return OptSupportedFunctions
		case TypeConnect:
			if f&FlagAck == 0 {
				return OptSupportedFunctions | OptLiteSignature
			}
			return OptSupportedFunctions
		}
		return 0
	}
	switch t {
	case TypeSyn:
		return OptSupportedFunctions | OptConnSignature | OptMaxSubstreamID
	case TypeConnect:
		return OptSupportedFunctions | OptConnSignature | OptUnreliableSeq | OptMaxSubstreamID
	case TypeData:
		return OptFragmentID
	}
	return 0
}

// parseOptions decodes the options in b[off:end] into p. lite allows option 0x80 and
// refuses option 2 (the Lite header carries the fragment id).
func parseOptions(name string, b []byte, off, end int, p *Packet, lite bool) error {
	var seen OptionMask
	for off < end {
		if len(b) < off+2 {
			if len(b) > off {
				return errAt(name, "option "+strconv.Itoa(int(b[off])), off, ErrTruncated)
			}
			return errAt(name, "option header", off, ErrTruncated)
		}
		if off+2 > end {
			return errDetail(name, "option header", off, ErrBadLength, "crosses the end of the options")
		}
		id, size := b[off], int(b[off+1])
		want := optionSize(id)
		if want < 0 || (id == OptionLiteSignature && !lite) || (id == OptionFragmentID && lite) {
			return errDetail(name, optionField(id), off, ErrBadOption, "unknown option id")
		}
		if size != want {
			return errDetail(name, optionField(id), off, ErrBadOption, "size "+strconv.Itoa(size)+", want "+strconv.Itoa(want))
		}
		bit := optionBit(id)
		if seen&bit != 0 {
			return errDetail(name, optionField(id), off, ErrBadOption, "repeated")
		}
		seen |= bit
		v := off + 2
		if len(b) < v+size {
			return errAt(name, optionField(id), off, ErrTruncated)
		}
		if v+size > end {
			return errDetail(name, optionField(id), off, ErrBadLength, "crosses the end of the options")
		}
		switch id {
		case OptionSupportedFunctions:
			p.SupportedFunctions = binary.LittleEndian.Uint32(b[v:])
		case OptionConnSignature:
			copy(p.ConnSignature[:], b[v:v+16])
		case OptionFragmentID:
			p.FragmentID = uint32(b[v])
		case OptionUnreliableSeq:
			p.UnreliableSeq = binary.LittleEndian.Uint16(b[v:])
		case OptionMaxSubstreamID:
			p.MaxSubstreamID = b[v]
		case OptionLiteSignature:
			copy(p.LiteSignature[:], b[v:v+16])
		}
		off = v + size
	}
	if seen == 0 {
		seen = OptNone
	}
	p.Options = seen
	return nil
}

func isZero16(b *[16]byte) bool {
	var z [16]byte
	return *b == z
}

// checkOptions refuses packets whose option fields hold values the option mask would drop.
func checkOptions(name string, p *Packet, mask OptionMask, lite bool) error {
	switch {
	case mask&OptSupportedFunctions == 0 && p.SupportedFunctions != 0:
		return errDetail(name, "option 0", -1, ErrUnsupported, "supported functions set but option 0 not present")
	case mask&OptConnSignature == 0 && !isZero16(&p.ConnSignature):
		return errDetail(name, "option 1", -1, ErrUnsupported, "connection signature set but option 1 not present")
	case !lite && mask&OptFragmentID == 0 && p.FragmentID != 0:
		return errDetail(name, "option 2", -1, ErrUnsupported, "fragment id set but option 2 not present")
	case mask&OptUnreliableSeq == 0 && p.UnreliableSeq != 0:
		return errDetail(name, "option 3", -1, ErrUnsupported, "unreliable sequence id set but option 3 not present")
	case mask&OptMaxSubstreamID == 0 && p.MaxSubstreamID != 0:
		return errDetail(name, "option 4", -1, ErrUnsupported, "max substream id set but option 4 not present")
	case mask&OptLiteSignature == 0 && !isZero16(&p.LiteSignature):
		return errDetail(name, "option 128", -1, ErrUnsupported, "lite signature set but option 0x80 not present")
	case lite && mask&OptFragmentID != 0:
		return errDetail(name, "option 2", -1, ErrUnsupported, "the Lite header carries the fragment id")
	case !lite && mask&OptLiteSignature != 0:
		return errDetail(name, "option 128", -1, ErrUnsupported, "only Lite carries option 0x80")
	case p.FragmentID > 0xff:
		return errDetail(name, "fragment id", -1, ErrTooLarge, "1 byte")
	case len(p.Payload) > 0xffff:
		return errDetail(name, "payload size", -1, ErrTooLarge, strconv.Itoa(len(p.Payload))+" bytes")
	}
	return nil
}

func appendOptions(b []byte, p *Packet, mask OptionMask) []byte {
	if mask&OptSupportedFunctions != 0 {
		b = append(b, OptionSupportedFunctions, 4)
		b = binary.LittleEndian.AppendUint32(b, p.SupportedFunctions)
	}
	if mask&OptConnSignature != 0 {
		b = append(b, OptionConnSignature, 16)
		b = append(b, p.ConnSignature[:]...)
	}
	if mask&OptFragmentID != 0 {
		b = append(b, OptionFragmentID, 1, byte(p.FragmentID))
	}
	if mask&OptUnreliableSeq != 0 {
		b = append(b, OptionUnreliableSeq, 2)
		b = binary.LittleEndian.AppendUint16(b, p.UnreliableSeq)
	}
	if mask&OptMaxSubstreamID != 0 {
		b = append(b, OptionMaxSubstreamID, 1, p.MaxSubstreamID)
	}
	if mask&OptLiteSignature != 0 {
		b = append(b, OptionLiteSignature, 16)
		b = append(b, p.LiteSignature[:]...)
	}
	return b
}

func effectiveOptions(lite bool, p *Packet) OptionMask {
	mask := p.Options
	if mask == 0 {
		return DefaultOptions(lite, p.Type, p.Flags)
	}
	return mask &^ OptNone
}

// decodeTypeFlags16 splits the 2-byte (flags<<4 | type) field of V0, V1 and Lite.
func decodeTypeFlags16(v uint16) (PacketType, Flags, bool) {
	t, ok := decodeType(typesNEX, uint8(v&0x0f))
	return t, Flags(v >> 4), ok
}

func encodeTypeFlags16(name string, t PacketType, f Flags) (uint16, error) {
	raw, ok := encodeType(typesNEX, t)
	if !ok {
		return 0, errDetail(name, "type", -1, ErrUnsupported, t.String())
	}
	if f > 0x0fff {
		return 0, errDetail(name, "flags", -1, ErrTooLarge, "12 bits")
	}
	return uint16(f)<<4 | uint16(raw), nil
}

// V1 is the NEX V1 dialect ("V1 Format" in NintendoClients wiki "PRUDP Protocol"). It carries no checksum;
// packets are authenticated by the 16-byte signature ([V1.Signature]). Parse does not
// check the signature (it needs the session key and connection signature).
type V1 struct {
	keyMD5   [16]byte
	keySumLE [4]byte
	macs     *macPool
}

// NewV1 returns the V1 dialect for an access key.
func NewV1(accessKey string) *V1 {
	d := &V1{keyMD5: md5.Sum([]byte(accessKey))}
	binary.LittleEndian.PutUint32(d.keySumLE[:], KeySum(accessKey))
	d.macs = newMacPool(d.keyMD5[:])
	return d
}

// Name returns "nex-v1".
func (d *V1) Name() string { return NameV1 }

var v1Fields = [...]struct {
	off  int
	name string
}{
	{0, "magic"}, {2, "version"}, {3, "options length"}, {4, "payload size"}, {6, "source"},
	{7, "destination"}, {8, "type and flags"}, {10, "session id"}, {11, "substream id"},
	{12, "sequence id"}, {14, "signature"},
}

// Parse implements [Dialect] for "V1 Format". Payload aliases b.
func (d *V1) Parse(b []byte) (Packet, int, error) {
	var p Packet
	if len(b) >= 2 && (b[0] != v1Magic0 || b[1] != v1Magic1) {
		return p, 0, errDetail(NameV1, "magic", 0, ErrBadMagic, "want EA D0")
	}
	if len(b) < v1HeaderSize {
		i := len(v1Fields) - 1
		for v1Fields[i].off > len(b) {
			i--
		}
		return p, 0, errAt(NameV1, v1Fields[i].name, v1Fields[i].off, ErrTruncated)
	}
	if b[2] != v1Version {
		return p, 0, errDetail(NameV1, "version", 2, ErrBadVersion, "version "+strconv.Itoa(int(b[2])))
	}
	optEnd := v1HeaderSize + int(b[3])
	size := int(binary.LittleEndian.Uint16(b[4:]))
	p.Src = VPortFromByte(b[6])
	p.Dst = VPortFromByte(b[7])
	t, f, ok := decodeTypeFlags16(binary.LittleEndian.Uint16(b[8:]))
	if !ok {
		return Packet{}, 0, errDetail(NameV1, "type and flags", 8, ErrBadType, "type "+strconv.Itoa(int(b[8]&0x0f)))
	}
	p.Type, p.Flags = t, f
	p.SessionID = b[10]
	p.SubstreamID = b[11]
	p.Seq = binary.LittleEndian.Uint16(b[12:])
	copy(p.Signature[:], b[14:30])
	if err := parseOptions(NameV1, b, v1HeaderSize, optEnd, &p, false); err != nil {
		return Packet{}, 0, err
	}
	if len(b)-optEnd < size {
		return Packet{}, 0, errDetail(NameV1, "payload", optEnd, ErrTruncated,
			"size field says "+strconv.Itoa(size)+", "+strconv.Itoa(len(b)-optEnd)+" bytes present")
	}
	n := optEnd + size
	p.Payload = b[optEnd:n:n]
	return p, n, nil
}

// Append implements [Dialect] for "V1 Format". The options written are p.Options (the
// spec's set for the type when zero, see [DefaultOptions]); the signature written is
// p.Signature: to sign, append and then call [V1.SignPacket] on the appended bytes.
func (d *V1) Append(b []byte, p *Packet) ([]byte, error) {
	mask := effectiveOptions(false, p)
	if err := checkOptions(NameV1, p, mask, false); err != nil {
		return b, err
	}
	tf, err := encodeTypeFlags16(NameV1, p.Type, p.Flags)
	if err != nil {
		return b, err
	}
	if p.Src.Stream > 15 || p.Src.Port > 15 || p.Dst.Stream > 15 || p.Dst.Port > 15 {
		return b, errDetail(NameV1, "virtual port", -1, ErrTooLarge, "stream type and port must fit 4 bits")
	}
	start := len(b)
	b = append(b, v1Magic0, v1Magic1, v1Version, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(p.Payload)))
	b = append(b, p.Src.Byte(), p.Dst.Byte())
	b = binary.LittleEndian.AppendUint16(b, tf)
	b = append(b, p.SessionID, p.SubstreamID)
	b = binary.LittleEndian.AppendUint16(b, p.Seq)
	b = append(b, p.Signature[:]...)
	optStart := len(b)
	b = appendOptions(b, p, mask)
	b[start+3] = byte(len(b) - optStart)
	b = append(b, p.Payload...)
	return b, nil
}

// packetExtent checks that pkt starts with one whole V1 packet and returns where its
// options start and where it ends.
func (d *V1) packetExtent(pkt []byte) (int, error) {
	if len(pkt) < v1HeaderSize {
		return 0, errAt(NameV1, "header", 0, ErrTruncated)
	}
	if pkt[0] != v1Magic0 || pkt[1] != v1Magic1 {
		return 0, errDetail(NameV1, "magic", 0, ErrBadMagic, "want EA D0")
	}
	end := v1HeaderSize + int(pkt[3]) + int(binary.LittleEndian.Uint16(pkt[4:]))
	if len(pkt) < end {
		return 0, errAt(NameV1, "payload", v1HeaderSize+int(pkt[3]), ErrTruncated)
	}
	return end, nil
}

// Signature implements "Packet signature" of "V1 Format" in NintendoClients wiki "PRUDP Protocol": the
// HMAC-MD5, keyed with MD5(access key), of bytes 0x4-0xC of the header (source,
// destination, type and flags, session id, substream id, sequence id), sessionKey (empty on
// an authentication connection, else 16 or 32 bytes), the sum of the access key's bytes as
// LE u32, connSig (empty until the peer's connection signature has been received, else 16
// bytes), the options and the (encrypted) payload. pkt is one encoded packet, e.g. the
// first n bytes Parse used, or what Append appended; its signature field is not read.
func (d *V1) Signature(pkt []byte, sessionKey, connSig []byte) ([16]byte, error) {
	end, err := d.packetExtent(pkt)
	if err != nil {
		return [16]byte{}, err
	}
	m := d.macs.get()
	m.h.Write(pkt[6:14])
	m.h.Write(sessionKey)
	m.h.Write(d.keySumLE[:])
	m.h.Write(connSig)
	m.h.Write(pkt[v1HeaderSize:end])
	s := m.sum()
	d.macs.put(m)
	return s, nil
}

// SignPacket computes pkt's signature (see [V1.Signature]) and writes it into pkt.
func (d *V1) SignPacket(pkt []byte, sessionKey, connSig []byte) error {
	s, err := d.Signature(pkt, sessionKey, connSig)
	if err != nil {
		return err
	}
	copy(pkt[14:30], s[:])
	return nil
}

// VerifyPacket reports whether pkt's signature field holds the signature computed with
// sessionKey and connSig. It compares in constant time.
func (d *V1) VerifyPacket(pkt []byte, sessionKey, connSig []byte) (bool, error) {
	s, err := d.Signature(pkt, sessionKey, connSig)
	if err != nil {
		return false, err
	}
	return hmac.Equal(s[:], pkt[14:30]), nil
}

// Lite is the NEX Lite dialect ("Lite Format" in NintendoClients wiki "PRUDP Protocol") used by the Switch
// over WebSocket: magic 0x80, one byte of stream types, 8-bit ports, the fragment id in
// the header, no session id, no checksum and no packet signature. CONNECT carries the
// Lite signature in option 0x80 ([Lite.Signature]).
type Lite struct {
	keyMD5 [16]byte
	macs   *macPool
}

// NewLite returns the Lite dialect for an access key.
func NewLite(accessKey string) *Lite {
	d := &Lite{keyMD5: md5.Sum([]byte(accessKey))}
	d.macs = newMacPool(d.keyMD5[:])
	return d
}

// Name returns "nex-lite".
func (d *Lite) Name() string { return NameLite }

var liteFields = [...]struct {
	off  int
	name string
}{
	{0, "magic"}, {1, "options length"}, {2, "payload size"}, {4, "stream types"},
	{5, "source port"}, {6, "destination port"}, {7, "fragment id"}, {8, "type and flags"},
	{10, "sequence id"},
}

// Parse implements [Dialect] for "Lite Format". Payload aliases b.
func (d *Lite) Parse(b []byte) (Packet, int, error) {
	var p Packet
	if len(b) >= 1 && b[0] != liteMagic {
		return p, 0, errDetail(NameLite, "magic", 0, ErrBadMagic, "want 0x80")
	}
	if len(b) < liteHeader {
		i := len(liteFields) - 1
		for liteFields[i].off > len(b) {
			i--
		}
		return p, 0, errAt(NameLite, liteFields[i].name, liteFields[i].off, ErrTruncated)
	}
	optEnd := liteHeader + int(b[1])
	size := int(binary.LittleEndian.Uint16(b[2:]))
	p.Src = VPort{Stream: StreamType(b[4] >> 4), Port: b[5]}
	p.Dst = VPort{Stream: StreamType(b[4] & 0x0f), Port: b[6]}
	p.FragmentID = uint32(b[7])
	t, f, ok := decodeTypeFlags16(binary.LittleEndian.Uint16(b[8:]))
	if !ok {
		return Packet{}, 0, errDetail(NameLite, "type and flags", 8, ErrBadType, "type "+strconv.Itoa(int(b[8]&0x0f)))
	}
	p.Type, p.Flags = t, f
	p.Seq = binary.LittleEndian.Uint16(b[10:])
	if err := parseOptions(NameLite, b, liteHeader, optEnd, &p, true); err != nil {
		return Packet{}, 0, err
	}
	if len(b)-optEnd < size {
		return Packet{}, 0, errDetail(NameLite, "payload", optEnd, ErrTruncated,
			"size field says "+strconv.Itoa(size)+", "+strconv.Itoa(len(b)-optEnd)+" bytes present")
	}
	n := optEnd + size
	p.Payload = b[optEnd:n:n]
	return p, n, nil
}

// Append implements [Dialect] for "Lite Format". The options written are p.Options (the
// spec's set for the type and flags when zero, see [DefaultOptions]).
func (d *Lite) Append(b []byte, p *Packet) ([]byte, error) {
	mask := effectiveOptions(true, p)
	if err := checkOptions(NameLite, p, mask, true); err != nil {
		return b, err
	}
	tf, err := encodeTypeFlags16(NameLite, p.Type, p.Flags)
	if err != nil {
		return b, err
	}
	if p.Src.Stream > 15 || p.Dst.Stream > 15 {
		return b, errDetail(NameLite, "stream types", -1, ErrTooLarge, "stream types must fit 4 bits")
	}
	if p.SessionID != 0 || p.SubstreamID != 0 || !isZero16(&p.Signature) {
		return b, errDetail(NameLite, "header", -1, ErrUnsupported, "Lite has no session id, substream id or packet signature")
	}
	start := len(b)
	b = append(b, liteMagic, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(p.Payload)))
	b = append(b, byte(p.Src.Stream)<<4|byte(p.Dst.Stream), p.Src.Port, p.Dst.Port, byte(p.FragmentID))
	b = binary.LittleEndian.AppendUint16(b, tf)
	b = binary.LittleEndian.AppendUint16(b, p.Seq)
	optStart := len(b)
	b = appendOptions(b, p, mask)
	b[start+1] = byte(len(b) - optStart)
	b = append(b, p.Payload...)
	return b, nil
}

// Signature implements "Lite signature" in NintendoClients wiki "PRUDP Protocol": HMAC-MD5, keyed with
// MD5(access key), of MD5(access key) followed by the 16-byte connection signature
// received from the server. The client puts it in option 0x80 of its CONNECT.
func (d *Lite) Signature(serverConnSig [16]byte) [16]byte {
	m := d.macs.get()
	m.h.Write(d.keyMD5[:])
	copy(m.scratch[:16], serverConnSig[:])
	m.h.Write(m.scratch[:16])
	s := m.sum()
	d.macs.put(m)
	return s
}
