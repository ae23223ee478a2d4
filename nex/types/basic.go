package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// MaxStringLen is the longest string content a String can carry: its 16-bit length
// field counts the null terminator too.
const MaxStringLen = math.MaxUint16 - 1

// AppendString appends s as a NEX String ("String" in types.md): a 16-bit length
// that includes the null terminator, the UTF-8 bytes and the terminator. An empty
// string is written as length 1 and a lone terminator, as NEX does.
func AppendString(b []byte, s string) ([]byte, error) {
	if len(s) > MaxStringLen {
		return b, fmt.Errorf("string of %d bytes: %w (max %d)", len(s), ErrTooLong, MaxStringLen)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s)+1))
	b = append(b, s...)
	return append(b, 0), nil
}

// ParseStringBytes decodes a NEX String ("String" in types.md) and returns its content without the
// terminator, aliasing b (no allocation). A length of 0 (written by some peers for a
// null string) decodes as empty.
func ParseStringBytes(b []byte) ([]byte, int, error) {
	if len(b) < 2 {
		return nil, 0, fmt.Errorf("string length: %w (need 2 bytes, have %d)", ErrTruncated, len(b))
	}
	n := int(binary.LittleEndian.Uint16(b))
	if n == 0 {
		return b[2:2], 2, nil
	}
	if len(b)-2 < n {
		return nil, 0, fmt.Errorf("string of length %d: %w (have %d bytes)", n, ErrTruncated, len(b)-2)
	}
	if b[2+n-1] != 0 {
		return nil, 0, fmt.Errorf("string of length %d: %w", n, ErrNoTerminator)
	}
	return b[2 : 2+n-1 : 2+n-1], 2 + n, nil
}

// ParseString decodes a NEX String (see ParseStringBytes) and copies it into a Go string.
func ParseString(b []byte) (string, int, error) {
	s, n, err := ParseStringBytes(b)
	if err != nil {
		return "", 0, err
	}
	return string(s), n, nil
}

// AppendBuffer appends data as a NEX Buffer ("Buffer" in types.md): a 32-bit length and the bytes.
func AppendBuffer(b []byte, data []byte) ([]byte, error) {
	if uint64(len(data)) > math.MaxUint32 {
		return b, fmt.Errorf("buffer of %d bytes: %w", len(data), ErrTooLong)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...), nil
}

// ParseBuffer decodes a NEX Buffer ("Buffer" in types.md); the returned bytes alias b.
func ParseBuffer(b []byte) ([]byte, int, error) {
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("buffer length: %w (need 4 bytes, have %d)", ErrTruncated, len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	if uint64(len(b)-4) < n {
		return nil, 0, fmt.Errorf("buffer of length %d: %w (have %d bytes)", n, ErrTruncated, len(b)-4)
	}
	return b[4 : 4+n : 4+n], 4 + int(n), nil
}

// AppendQBuffer appends data as a NEX qBuffer ("qBuffer" in types.md): a 16-bit length and the bytes.
func AppendQBuffer(b []byte, data []byte) ([]byte, error) {
	if len(data) > math.MaxUint16 {
		return b, fmt.Errorf("qBuffer of %d bytes: %w (max %d)", len(data), ErrTooLong, math.MaxUint16)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...), nil
}

// ParseQBuffer decodes a NEX qBuffer ("qBuffer" in types.md); the returned bytes alias b.
func ParseQBuffer(b []byte) ([]byte, int, error) {
	if len(b) < 2 {
		return nil, 0, fmt.Errorf("qBuffer length: %w (need 2 bytes, have %d)", ErrTruncated, len(b))
	}
	n := int(binary.LittleEndian.Uint16(b))
	if len(b)-2 < n {
		return nil, 0, fmt.Errorf("qBuffer of length %d: %w (have %d bytes)", n, ErrTruncated, len(b)-2)
	}
	return b[2 : 2+n : 2+n], 2 + n, nil
}

// PID is a principal id ("PID" in types.md): a user id, 4 bytes on the wire on
// 3DS / Wii U and 8 bytes on Switch (Settings.PIDSize).
type PID uint64

// AppendPID appends pid in the width s selects. A PID that does not fit 4 bytes is
// an error rather than a silent truncation.
func AppendPID(b []byte, s Settings, pid PID) ([]byte, error) {
	size, err := s.pidSize()
	if err != nil {
		return b, err
	}
	if size == 4 {
		if pid > math.MaxUint32 {
			return b, fmt.Errorf("PID %d: %w (4-byte PIDs)", pid, ErrTooLong)
		}
		return binary.LittleEndian.AppendUint32(b, uint32(pid)), nil
	}
	return binary.LittleEndian.AppendUint64(b, uint64(pid)), nil
}

// ParsePID decodes a PID of the width s selects.
func ParsePID(b []byte, s Settings) (PID, int, error) {
	size, err := s.pidSize()
	if err != nil {
		return 0, 0, err
	}
	if len(b) < size {
		return 0, 0, fmt.Errorf("PID: %w (need %d bytes, have %d)", ErrTruncated, size, len(b))
	}
	if size == 4 {
		return PID(binary.LittleEndian.Uint32(b)), 4, nil
	}
	return PID(binary.LittleEndian.Uint64(b)), 8, nil
}

// DateTime is the NEX packed date ("DateTime" in types.md): year in bits 63-26,
// month 25-22, day 21-17, hour 16-12, minute 11-6, second 5-0. It is not a Unix
// timestamp. Servers write UTC.
type DateTime uint64

// MakeDateTime packs the given calendar fields. Fields out of their bit range are
// masked, as the format cannot carry them.
func MakeDateTime(year, month, day, hour, minute, second int) DateTime {
	return DateTime(uint64(second)&63 | (uint64(minute)&63)<<6 | (uint64(hour)&31)<<12 |
		(uint64(day)&31)<<17 | (uint64(month)&15)<<22 | uint64(year)<<26)
}

// DateTimeFromTime packs t, converted to UTC, to the second.
func DateTimeFromTime(t time.Time) DateTime {
	t = t.UTC()
	return MakeDateTime(t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second())
}

// Year and the following accessors unpack the fields of d.
func (d DateTime) Year() int   { return int(d >> 26) }
func (d DateTime) Month() int  { return int(d>>22) & 15 }
func (d DateTime) Day() int    { return int(d>>17) & 31 }
func (d DateTime) Hour() int   { return int(d>>12) & 31 }
func (d DateTime) Minute() int { return int(d>>6) & 63 }
func (d DateTime) Second() int { return int(d) & 63 }

// Time returns d as a UTC time. Out-of-range fields (month 13, ...) are normalised
// the way time.Date does.
func (d DateTime) Time() time.Time {
	return time.Date(d.Year(), time.Month(d.Month()), d.Day(), d.Hour(), d.Minute(), d.Second(), 0, time.UTC)
}

// String prints d as YYYY-MM-DD hh:mm:ss without normalising it.
func (d DateTime) String() string {
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", d.Year(), d.Month(), d.Day(), d.Hour(), d.Minute(), d.Second())
}

// AppendDateTime appends d as a 64-bit value ("DateTime" in types.md).
func AppendDateTime(b []byte, d DateTime) []byte {
	return binary.LittleEndian.AppendUint64(b, uint64(d))
}

// ParseDateTime decodes a DateTime ("DateTime" in types.md).
func ParseDateTime(b []byte) (DateTime, int, error) {
	if len(b) < 8 {
		return 0, 0, fmt.Errorf("DateTime: %w (need 8 bytes, have %d)", ErrTruncated, len(b))
	}
	return DateTime(binary.LittleEndian.Uint64(b)), 8, nil
}

// AppendResult appends a Result code ("Result" in types.md).
func AppendResult(b []byte, r Result) []byte {
	return binary.LittleEndian.AppendUint32(b, uint32(r))
}

// ParseResult decodes a Result code ("Result" in types.md).
func ParseResult(b []byte) (Result, int, error) {
	if len(b) < 4 {
		return 0, 0, fmt.Errorf("Result: %w (need 4 bytes, have %d)", ErrTruncated, len(b))
	}
	return Result(binary.LittleEndian.Uint32(b)), 4, nil
}

// AppendBool appends a Bool (one byte, 0 or 1).
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// ResultRange is the ResultRange structure of types.md (m_uiOffset, m_uiSize).
type ResultRange struct {
	Offset uint32
	Size   uint32
}

// Append appends r as a structure (with its header when s asks for one; version 0).
func (r ResultRange) Append(b []byte, s Settings) ([]byte, error) {
	b, mark := BeginStructure(b, s, 0)
	b = binary.LittleEndian.AppendUint32(b, r.Offset)
	b = binary.LittleEndian.AppendUint32(b, r.Size)
	return EndStructure(b, mark)
}

// ResultRange reads a ResultRange structure.
func (r *Reader) ResultRange(field string) ResultRange {
	m := r.EnterStructure(field)
	v := ResultRange{Offset: r.U32("m_uiOffset"), Size: r.U32("m_uiSize")}
	r.LeaveStructure(m)
	return v
}

// QUUID is the 16-byte qUUID of types.md: seven little-endian fields.
type QUUID [16]byte

// String prints u in the usual UUID form, swapping each little-endian field back to
// big-endian as types.md's example does.
func (u QUUID) String() string {
	rev := func(p []byte) []byte {
		out := make([]byte, len(p))
		for i := range p {
			out[i] = p[len(p)-1-i]
		}
		return out
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x%x%x", rev(u[0:4]), rev(u[4:6]), rev(u[6:8]), rev(u[8:10]),
		rev(u[10:12]), rev(u[12:14]), rev(u[14:16]))
}
