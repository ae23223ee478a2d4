package pia

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Pia library version such as 5.27 (Major 5, Minor 27). The Pia version
// decides the header layout, the message layout, the cipher and the nonce construction
// ("Header", "Version" and "Messages" in the Pia Protocol wiki).
type Version struct {
	Major, Minor uint8
}

// ParseVersion parses "5.27", "6.16" or "5.27.0" (a patch level is ignored).
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("pia: version %q: want MAJOR.MINOR (for example 5.27)", s)
	}
	major, err := strconv.ParseUint(parts[0], 10, 8)
	if err != nil {
		return Version{}, fmt.Errorf("pia: version %q: major: %w", s, err)
	}
	minor, err := strconv.ParseUint(parts[1], 10, 8)
	if err != nil {
		return Version{}, fmt.Errorf("pia: version %q: minor: %w", s, err)
	}
	v := Version{uint8(major), uint8(minor)}
	if major < 3 || major > 6 {
		return Version{}, fmt.Errorf("pia: version %q: %w (packet layouts are known for 3.x to 6.30)", s, ErrUnsupported)
	}
	return v, nil
}

// String returns "MAJOR.MINOR".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// atLeast reports whether v >= major.minor.
func (v Version) atLeast(major, minor uint8) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// HeaderLayout names one of the six packet header layouts of "Header" in the Pia Protocol wiki.
type HeaderLayout uint8

// The header layouts, named by the Pia versions that use them.
const (
	HeaderUpTo5_6   HeaderLayout = iota + 1 // up to 5.6: 12 bytes, AES-ECB + HMAC-MD5
	Header5_7       HeaderLayout = iota + 1 // 5.7 - 5.10: 36 bytes, GCM 16-byte tag
	Header5_11      HeaderLayout = iota + 1 // 5.11 - 5.21: 32 bytes, version 3 or 4, GCM 16-byte tag
	Header5_23      HeaderLayout = iota + 1 // 5.23 - 5.26: 24 bytes, version 5, GCM 8-byte tag
	Header5_27      HeaderLayout = iota + 1 // 5.27 - 5.44: 32 bytes, version 9, variable ids, footer
	Header6_16      HeaderLayout = iota + 1 // 6.16 - 6.30: 28 bytes, version 11-13, variable ids, footer
	numHeaderLayout                         // sentinel
)

// AllHeaderLayouts lists every header layout, oldest first.
var AllHeaderLayouts = []HeaderLayout{HeaderUpTo5_6, Header5_7, Header5_11, Header5_23, Header5_27, Header6_16}

func (l HeaderLayout) String() string {
	switch l {
	case HeaderUpTo5_6:
		return "up to 5.6"
	case Header5_7:
		return "5.7-5.10"
	case Header5_11:
		return "5.11-5.21"
	case Header5_23:
		return "5.23-5.26"
	case Header5_27:
		return "5.27-5.44"
	case Header6_16:
		return "6.16-6.30"
	}
	return "unknown layout " + strconv.Itoa(int(l))
}

// Size is the encoded header size in bytes.
func (l HeaderLayout) Size() int {
	switch l {
	case HeaderUpTo5_6:
		return 12
	case Header5_7:
		return 36
	case Header5_11, Header5_27:
		return 32
	case Header5_23:
		return 24
	case Header6_16:
		return 28
	}
	return 0
}

// TagSize is the size of the authentication data: the GCM tag in the header
// (16 bytes up to 5.21, 8 bytes from 5.23) or, up to 5.6, the HMAC-MD5 appended
// to an encrypted packet ("Encryption" in the Pia Protocol wiki).
func (l HeaderLayout) TagSize() int {
	switch l {
	case HeaderUpTo5_6, Header5_7, Header5_11:
		return 16
	case Header5_23, Header5_27, Header6_16:
		return 8
	}
	return 0
}

// HasVersionBits reports whether byte 4 of the header carries the header version
// (5.11 and later) rather than the 1/2 "encrypted" value.
func (l HeaderLayout) HasVersionBits() bool { return l >= Header5_11 && l < numHeaderLayout }

// HasFooter reports whether the header has a footer size (5.27 and later).
func (l HeaderLayout) HasFooter() bool { return l == Header5_27 || l == Header6_16 }

// hasConnectionID reports whether the header carries a connection id byte.
func (l HeaderLayout) hasConnectionID() bool { return l <= Header5_23 }

// MessageLayout names a message layout: the six of "Messages" in the Pia Protocol wiki,
// with the spec's "5.27 - 6.30" split in two because the bands frame messages
// differently (docs/pia.md, "Deviations from the wiki").
type MessageLayout uint8

// The message layouts, named by the Pia versions that use them.
const (
	MessageUpTo5_4    MessageLayout = iota + 1 // up to 5.4: 20-byte header, source station index, 16-bit protocol type
	Message5_6        MessageLayout = iota + 1 // 5.6 - 5.10: 24-byte header
	Message5_11       MessageLayout = iota + 1 // 5.11 - 5.12: 22-byte header, version 1
	Message5_14       MessageLayout = iota + 1 // 5.14 - 5.17: 24-byte header, version 2, 24-bit port
	Message5_18       MessageLayout = iota + 1 // 5.18 - 5.26: fields inherited from the previous message, source constant id
	Message5_27       MessageLayout = iota + 1 // 5.27 - 5.44: fields inherited from the previous message, padded to 4 bytes
	Message6_16       MessageLayout = iota + 1 // 6.16 - 6.30: as 5.27, but unpadded: the next message starts on the next byte
	numMessageLayouts                          // sentinel
)

// AllMessageLayouts lists every message layout, oldest first.
var AllMessageLayouts = []MessageLayout{MessageUpTo5_4, Message5_6, Message5_11, Message5_14, Message5_18, Message5_27, Message6_16}

func (l MessageLayout) String() string {
	switch l {
	case MessageUpTo5_4:
		return "up to 5.4"
	case Message5_6:
		return "5.6-5.10"
	case Message5_11:
		return "5.11-5.12"
	case Message5_14:
		return "5.14-5.17"
	case Message5_18:
		return "5.18-5.26"
	case Message5_27:
		return "5.27-5.44"
	case Message6_16:
		return "6.16-6.30"
	}
	return "unknown message layout " + strconv.Itoa(int(l))
}

// inherits reports whether absent fields are copied from the previous message.
func (l MessageLayout) inherits() bool {
	return l == Message5_18 || l == Message5_27 || l == Message6_16
}

// Aligned reports whether each message is padded to a multiple of 4 bytes. The
// wiki says every layout is; 6.16-6.30 is not: a message ends where its payload
// ends and only the packet's plaintext is padded (0xFF to the AES block). Source:
// Decryptu/pokeldn docs/pla.md ("Reading and writing a packet") and
// pokeldn/ldn/pia5.py parse_messages, read off Legends Arceus and Scarlet.
func (l MessageLayout) Aligned() bool { return l != Message6_16 }

// carriesSourceConstantID reports whether the layout has a source constant id field.
func (l MessageLayout) carriesSourceConstantID() bool { return l < Message5_27 }

// HeaderLayout returns the header layout of v. Versions that fall in a gap of the
// spec's table (5.22, 6.0-6.15) use the layout of the range before them; 5.22 is
// taken as 5.21 (header version 4) and 6.x before 6.16 as 6.16.
func (v Version) HeaderLayout() HeaderLayout {
	switch {
	case v.Major >= 6:
		return Header6_16
	case v.atLeast(5, 27):
		return Header5_27
	case v.atLeast(5, 23):
		return Header5_23
	case v.atLeast(5, 11):
		return Header5_11
	case v.atLeast(5, 7):
		return Header5_7
	}
	return HeaderUpTo5_6
}

// MessageLayout returns the message layout of v. Gaps in the spec's table (5.5,
// 5.13, 6.0-6.15) use the layout of the range before them, except that 6.x before
// 6.16 is taken as 6.16 (as HeaderLayout does).
func (v Version) MessageLayout() MessageLayout {
	switch {
	case v.Major >= 6:
		return Message6_16
	case v.atLeast(5, 27):
		return Message5_27
	case v.atLeast(5, 18):
		return Message5_18
	case v.atLeast(5, 14):
		return Message5_14
	case v.atLeast(5, 11):
		return Message5_11
	case v.atLeast(5, 6):
		return Message5_6
	}
	return MessageUpTo5_4
}

// HeaderVersion returns the number carried in the version bits of the header
// ("Version" in the Pia Protocol wiki), or 0 for layouts without version bits (up to 5.10).
// 6.24 is taken as 11 and 6.27-6.28 as 12 (gaps in the table).
func (v Version) HeaderVersion() uint8 {
	switch {
	case v.Major >= 6 && v.atLeast(6, 29):
		return 13
	case v.Major >= 6 && v.atLeast(6, 25):
		return 12
	case v.Major >= 6:
		return 11
	case v.atLeast(5, 27):
		return 9
	case v.atLeast(5, 23):
		return 5
	case v.atLeast(5, 18):
		return 4
	case v.atLeast(5, 11):
		return 3
	}
	return 0
}

// LayoutForHeaderVersion returns the header layout that carries header version hv
// in its version bits, and a representative Pia version for it.
func LayoutForHeaderVersion(hv uint8) (HeaderLayout, Version, bool) {
	switch hv {
	case 3:
		return Header5_11, Version{5, 11}, true
	case 4:
		return Header5_11, Version{5, 18}, true
	case 5:
		return Header5_23, Version{5, 23}, true
	case 9:
		return Header5_27, Version{5, 27}, true
	case 11:
		return Header6_16, Version{6, 16}, true
	case 12:
		return Header6_16, Version{6, 25}, true
	case 13:
		return Header6_16, Version{6, 29}, true
	}
	return 0, Version{}, false
}

// DetectVersion guesses the Pia version of a packet from its version bits (5.11 and
// later). Packets of 5.10 and earlier carry no version, so DetectVersion returns
// ErrNoVersionBits for them: the caller must say which version it expects.
func DetectVersion(b []byte) (Version, error) {
	if len(b) < 5 {
		return Version{}, fmt.Errorf("pia: detect version: %w: %d bytes, need 5", ErrTruncated, len(b))
	}
	if [4]byte(b[:4]) != Magic {
		return Version{}, fmt.Errorf("pia: detect version: %w: % x", ErrBadMagic, b[:4])
	}
	if b[4] == 1 || b[4] == 2 {
		return Version{}, ErrNoVersionBits
	}
	hv := b[4] & versionMask
	if _, v, ok := LayoutForHeaderVersion(hv); ok {
		return v, nil
	}
	return Version{}, fmt.Errorf("pia: detect version: %w: header version %d at offset 4", ErrUnsupported, hv)
}
