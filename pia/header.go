// Package pia implements Pia, the peer-to-peer packet layer of many Nintendo games
// (the Pia Protocol wiki and nintendo-wiki docs/pia/): the packet headers and messages of every
// known version, their encryption (AES-ECB + HMAC-MD5 up to 5.6, AES-GCM with a 16-byte
// tag for 5.7-5.21 and an 8-byte tag from 5.23), the nonces of the NEX, LDN, LAN and
// NPLN networks, the session-key derivations, ENL game-key generation, the RTT
// timers, and an Endpoint that speaks Pia over a UDP socket.
//
// Everything on the wire is big-endian. Decoded values may alias the input they were
// parsed from; each function says so.
package pia

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors returned by this package. They are wrapped with context (layout, field,
// offset); test for them with errors.Is.
var (
	// ErrTruncated: a header, message or footer ends before its fields or sizes say.
	ErrTruncated = errors.New("truncated")
	// ErrBadMagic: the packet does not start with Magic.
	ErrBadMagic = errors.New("bad magic number")
	// ErrBadVersion: the header's version bits do not match the configured Pia version
	// ("Version" in the Pia Protocol wiki).
	ErrBadVersion = errors.New("header version does not match the configured Pia version")
	// ErrNoVersionBits: the version was to be detected from a layout without version bits.
	ErrNoVersionBits = errors.New("pia: packets up to 5.10 carry no version bits; give the Pia version")
	// ErrUnsupported: the layout, network or version combination has no definition in the spec.
	ErrUnsupported = errors.New("unsupported")
	// ErrBadField: a field holds a value the spec does not allow (encryption byte,
	// footer size, MTU, ...).
	ErrBadField = errors.New("bad field value")
	// ErrAuth: the packet's HMAC or AES-GCM tag does not verify, or a plaintext packet
	// arrived in an encrypted session.
	ErrAuth = errors.New("authentication failed")
	// ErrBadPadding: an AES-ECB ciphertext is not a whole number of blocks.
	ErrBadPadding = errors.New("bad padding")
	// ErrTooLarge: a footer, message or packet exceeds what its size field or the MTU allows.
	ErrTooLarge = errors.New("too large")
	// ErrKey: a session or game key is missing or has the wrong size.
	ErrKey = errors.New("bad key")
)

// Magic is the magic number that starts every Pia packet ("Header" in the Pia Protocol wiki).
var Magic = [4]byte{0x32, 0xAB, 0x98, 0x64}

const (
	encryptedNo   = 1    // byte 4 up to 5.10: not encrypted
	encryptedYes  = 2    // byte 4 up to 5.10: encrypted
	encryptionBit = 0x80 // byte 4 from 5.11: encryption enabled
	versionMask   = 0x7F // byte 4 from 5.11: header version
)

// Header is a Pia packet header in any of the six layouts of "Header" in
// the Pia Protocol wiki. Fields that a layout does not carry are zero.
type Header struct {
	Layout    HeaderLayout
	Encrypted bool
	// Version is the header version in the version bits (5.11 and later; 0 before).
	Version uint8
	// ConnectionID is carried up to 5.26 ("Connection ID").
	ConnectionID uint8
	PacketID     uint16
	// SessionTimer and RTTTimer are carried up to 5.10 ("RTT Calculation").
	SessionTimer uint16
	RTTTimer     uint16
	// DestinationVariableID and SourceVariableID are carried from 5.27 (32-bit in
	// 5.27-5.44, 16-bit in 6.x).
	DestinationVariableID uint32
	SourceVariableID      uint32
	// FooterSize is the size of the plaintext footer after the ciphertext (5.27 and later).
	FooterSize uint8
	// Nonce is the 8-byte AES-GCM nonce part carried from 5.7.
	Nonce [8]byte
	// Tag is the AES-GCM authentication tag (16 bytes up to 5.21, the first 8 bytes
	// from 5.23; the rest is zero). Up to 5.6 the HMAC-MD5 follows the packet instead.
	Tag [16]byte
}

// ConnectionByte is the byte the nonces use as "connection id": the header's
// connection id up to 5.26, and the low byte of the source variable id from 5.27
// (the published 5.27-5.44 LDN vector builds its nonce that way).
func (h *Header) ConnectionByte() uint8 {
	if h.Layout.hasConnectionID() {
		return h.ConnectionID
	}
	return uint8(h.SourceVariableID)
}

// ParseHeader implements "Header" in the Pia Protocol wiki: it decodes the header of layout l
// at the start of b and returns it with its size.
func ParseHeader(b []byte, l HeaderLayout) (Header, int, error) {
	n := l.Size()
	if n == 0 {
		return Header{}, 0, fmt.Errorf("pia header: %w: layout %d", ErrUnsupported, l)
	}
	if len(b) < n {
		return Header{}, 0, fmt.Errorf("pia header %s: %w: %d bytes, need %d", l, ErrTruncated, len(b), n)
	}
	b = b[:n]
	if [4]byte(b[:4]) != Magic {
		return Header{}, 0, fmt.Errorf("pia header %s: %w: % x at offset 0", l, ErrBadMagic, b[:4])
	}
	h := Header{Layout: l}
	if l.HasVersionBits() {
		h.Encrypted = b[4]&encryptionBit != 0
		h.Version = b[4] & versionMask
		if hl, _, ok := LayoutForHeaderVersion(h.Version); !ok || hl != l {
			return Header{}, 0, fmt.Errorf("pia header %s: %w: version %d at offset 4", l, ErrBadVersion, h.Version)
		}
	} else {
		switch b[4] {
		case encryptedNo:
		case encryptedYes:
			h.Encrypted = true
		default:
			return Header{}, 0, fmt.Errorf("pia header %s: %w: encrypted byte %d at offset 4 (want 1 or 2)", l, ErrBadField, b[4])
		}
	}
	switch l {
	case HeaderUpTo5_6, Header5_7:
		h.ConnectionID = b[5]
		h.PacketID = binary.BigEndian.Uint16(b[6:])
		h.SessionTimer = binary.BigEndian.Uint16(b[8:])
		h.RTTTimer = binary.BigEndian.Uint16(b[10:])
		if l == Header5_7 {
			copy(h.Nonce[:], b[12:20])
			copy(h.Tag[:], b[20:36])
		}
	case Header5_11, Header5_23:
		h.ConnectionID = b[5]
		h.PacketID = binary.BigEndian.Uint16(b[6:])
		copy(h.Nonce[:], b[8:16])
		copy(h.Tag[:l.TagSize()], b[16:])
	case Header5_27:
		h.DestinationVariableID = binary.BigEndian.Uint32(b[5:])
		h.SourceVariableID = binary.BigEndian.Uint32(b[9:])
		h.PacketID = binary.BigEndian.Uint16(b[13:])
		h.FooterSize = b[15]
		copy(h.Nonce[:], b[16:24])
		copy(h.Tag[:8], b[24:32])
	case Header6_16:
		h.DestinationVariableID = uint32(binary.BigEndian.Uint16(b[5:]))
		h.SourceVariableID = uint32(binary.BigEndian.Uint16(b[7:]))
		h.PacketID = binary.BigEndian.Uint16(b[9:])
		h.FooterSize = b[11]
		copy(h.Nonce[:], b[12:20])
		copy(h.Tag[:8], b[20:28])
	}
	return h, n, nil
}

// Append implements "Header" in the Pia Protocol wiki: it appends the header in h.Layout.
// Up to 5.10 Version must be 0; from 5.11 it must be a version of h.Layout.
// Fields the layout cannot carry must be zero (a 6.x variable id must fit 16 bits).
func (h *Header) Append(b []byte) ([]byte, error) {
	l := h.Layout
	if l.Size() == 0 {
		return b, fmt.Errorf("pia header: %w: layout %d", ErrUnsupported, l)
	}
	var v byte
	if l.HasVersionBits() {
		if hl, _, ok := LayoutForHeaderVersion(h.Version); !ok || hl != l {
			return b, fmt.Errorf("pia header %s: %w: version %d", l, ErrBadVersion, h.Version)
		}
		v = h.Version
		if h.Encrypted {
			v |= encryptionBit
		}
	} else {
		if h.Version != 0 {
			return b, fmt.Errorf("pia header %s: %w: version %d, layout has no version bits", l, ErrBadVersion, h.Version)
		}
		v = encryptedNo
		if h.Encrypted {
			v = encryptedYes
		}
	}
	if err := h.checkFields(); err != nil {
		return b, err
	}
	b = append(b, Magic[:]...)
	b = append(b, v)
	switch l {
	case HeaderUpTo5_6, Header5_7:
		b = append(b, h.ConnectionID)
		b = binary.BigEndian.AppendUint16(b, h.PacketID)
		b = binary.BigEndian.AppendUint16(b, h.SessionTimer)
		b = binary.BigEndian.AppendUint16(b, h.RTTTimer)
		if l == Header5_7 {
			b = append(b, h.Nonce[:]...)
			b = append(b, h.Tag[:]...)
		}
	case Header5_11, Header5_23:
		b = append(b, h.ConnectionID)
		b = binary.BigEndian.AppendUint16(b, h.PacketID)
		b = append(b, h.Nonce[:]...)
		b = append(b, h.Tag[:l.TagSize()]...)
	case Header5_27:
		b = binary.BigEndian.AppendUint32(b, h.DestinationVariableID)
		b = binary.BigEndian.AppendUint32(b, h.SourceVariableID)
		b = binary.BigEndian.AppendUint16(b, h.PacketID)
		b = append(b, h.FooterSize)
		b = append(b, h.Nonce[:]...)
		b = append(b, h.Tag[:8]...)
	case Header6_16:
		b = binary.BigEndian.AppendUint16(b, uint16(h.DestinationVariableID))
		b = binary.BigEndian.AppendUint16(b, uint16(h.SourceVariableID))
		b = binary.BigEndian.AppendUint16(b, h.PacketID)
		b = append(b, h.FooterSize)
		b = append(b, h.Nonce[:]...)
		b = append(b, h.Tag[:8]...)
	}
	return b, nil
}

// checkFields rejects values the layout cannot carry, so Append never loses data.
func (h *Header) checkFields() error {
	l := h.Layout
	bad := func(field string) error {
		return fmt.Errorf("pia header %s: %w: %s cannot be carried by this layout", l, ErrBadField, field)
	}
	if !l.hasConnectionID() && h.ConnectionID != 0 {
		return bad("connection id")
	}
	if l > Header5_7 && (h.SessionTimer != 0 || h.RTTTimer != 0) {
		return bad("session/RTT timer")
	}
	if l < Header5_27 && (h.DestinationVariableID != 0 || h.SourceVariableID != 0) {
		return bad("variable id")
	}
	if l == Header6_16 && (h.DestinationVariableID > 0xFFFF || h.SourceVariableID > 0xFFFF) {
		return bad("variable id above 16 bits")
	}
	if !l.HasFooter() && h.FooterSize != 0 {
		return bad("footer size")
	}
	if l == HeaderUpTo5_6 && (h.Nonce != [8]byte{} || h.Tag != [16]byte{}) {
		return bad("nonce/tag")
	}
	if ts := l.TagSize(); ts < 16 {
		for _, x := range h.Tag[ts:] {
			if x != 0 {
				return bad("tag beyond its first 8 bytes")
			}
		}
	}
	return nil
}
