package wire

import (
	"encoding/binary"
	"strconv"
)

// HyperscapePublicKeySize is the size of a Hyperscape public key: an uncompressed SEC1
// P-256 point without its 0x04 tag ("Structure: Public Key" in the Hyperscape "PRUDP" wiki page).
const HyperscapePublicKeySize = 64

// HyperscapeConnect is the payload of a Hyperscape CONNECT after the connection signature
// (which the packet header carries, see [Hyperscape]): "Packet: CONNECT" in
// the Hyperscape "PRUDP" wiki page.
//
// The client's CONNECT carries only PublicKey. The server's answer (FLAG_ACK set) carries
// PublicKeySignature (a Buffer), PublicKey and Tag (a Buffer: HMAC-SHA256, 32 bytes).
// A Buffer is a little-endian u32 length followed by that many bytes, as everywhere in
// Quazal. Parse returns slices aliasing its input.
type HyperscapeConnect struct {
	PublicKey          [HyperscapePublicKeySize]byte
	PublicKeySignature []byte // server only
	Tag                []byte // server only
}

const hsDialect = "hyperscape connect"

// ParseHyperscapeConnect decodes a CONNECT payload; server selects the server's format
// (the CONNECT with FLAG_ACK). The payload must be consumed exactly.
func ParseHyperscapeConnect(payload []byte, server bool) (HyperscapeConnect, error) {
	var c HyperscapeConnect
	off := 0
	buffer := func(field string) ([]byte, error) {
		if len(payload)-off < 4 {
			return nil, errAt(hsDialect, field+" length", off, ErrTruncated)
		}
		n := binary.LittleEndian.Uint32(payload[off:])
		if uint64(len(payload)-off-4) < uint64(n) {
			return nil, errDetail(hsDialect, field, off, ErrTruncated,
				"length says "+strconv.FormatUint(uint64(n), 10)+", "+strconv.Itoa(len(payload)-off-4)+" bytes present")
		}
		v := payload[off+4 : off+4+int(n) : off+4+int(n)]
		off += 4 + int(n)
		return v, nil
	}
	var err error
	if server {
		if c.PublicKeySignature, err = buffer("public key signature"); err != nil {
			return HyperscapeConnect{}, err
		}
	}
	if len(payload)-off < HyperscapePublicKeySize {
		return HyperscapeConnect{}, errAt(hsDialect, "public key", off, ErrTruncated)
	}
	copy(c.PublicKey[:], payload[off:])
	off += HyperscapePublicKeySize
	if server {
		if c.Tag, err = buffer("tag"); err != nil {
			return HyperscapeConnect{}, err
		}
	}
	if off != len(payload) {
		return HyperscapeConnect{}, errDetail(hsDialect, "payload", off, ErrTrailingData,
			strconv.Itoa(len(payload)-off)+" bytes after the last field")
	}
	return c, nil
}

// Append appends the CONNECT payload in the client's (server=false) or the server's format.
func (c *HyperscapeConnect) Append(b []byte, server bool) ([]byte, error) {
	if !server {
		if len(c.PublicKeySignature) != 0 || len(c.Tag) != 0 {
			return b, errDetail(hsDialect, "payload", -1, ErrUnsupported, "the client's CONNECT carries only the public key")
		}
		return append(b, c.PublicKey[:]...), nil
	}
	if uint64(len(c.PublicKeySignature)) > 0xffffffff || uint64(len(c.Tag)) > 0xffffffff {
		return b, errAt(hsDialect, "buffer length", -1, ErrTooLarge)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.PublicKeySignature)))
	b = append(b, c.PublicKeySignature...)
	b = append(b, c.PublicKey[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Tag)))
	b = append(b, c.Tag...)
	return b, nil
}
