package wire

import (
	"errors"
	"strconv"
)

// Sentinel errors. Decoding and encoding errors are *Error values wrapping one of these,
// so callers test them with errors.Is.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("truncated")
	// ErrBadMagic: a V1 or Lite packet does not start with its magic.
	ErrBadMagic = errors.New("bad magic")
	// ErrBadVersion: a V1 header's version byte is not 1.
	ErrBadVersion = errors.New("unsupported version")
	// ErrBadChecksum: the checksum does not match. Parse still returns the packet.
	ErrBadChecksum = errors.New("checksum mismatch")
	// ErrBadType: the packet type is not defined in the dialect.
	ErrBadType = errors.New("unknown packet type")
	// ErrBadOption: an option id is unknown, repeated, or has the wrong size.
	ErrBadOption = errors.New("bad option")
	// ErrBadLength: a length field disagrees with the bytes present.
	ErrBadLength = errors.New("bad length")
	// ErrTooLarge: a value does not fit its field when encoding.
	ErrTooLarge = errors.New("value too large for field")
	// ErrUnsupported: the packet uses something the dialect cannot express.
	ErrUnsupported = errors.New("not supported by dialect")
	// ErrTrailingData: bytes follow a structure that must fill its buffer.
	ErrTrailingData = errors.New("trailing bytes")
)

// Error is a decoding or encoding error with its place: dialect, field and byte offset
// (offset -1 when encoding). Its text reads
// "prudp nex-v1: option 3 at offset 34: truncated".
type Error struct {
	Dialect string // "nex-v1", "quazal", ... or "aggregate-ack"
	Field   string // the field being decoded, e.g. "option 3", "payload", "checksum"
	Offset  int    // offset of the field in the input; -1 when not applicable
	Err     error  // one of the sentinel errors
	Detail  string // optional extra text, e.g. "got 0x5f, want 0x5e"
}

func (e *Error) Error() string {
	s := "prudp " + e.Dialect + ": " + e.Field
	if e.Offset >= 0 {
		s += " at offset " + strconv.Itoa(e.Offset)
	}
	s += ": " + e.Err.Error()
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

func errAt(dialect, field string, off int, err error) error {
	return &Error{Dialect: dialect, Field: field, Offset: off, Err: err}
}

func errDetail(dialect, field string, off int, err error, detail string) error {
	return &Error{Dialect: dialect, Field: field, Offset: off, Err: err, Detail: detail}
}

func hex32(v uint32) string { return "0x" + strconv.FormatUint(uint64(v), 16) }
