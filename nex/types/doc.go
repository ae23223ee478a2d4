// Package types implements the NEX common types of nintendo-wiki "NEX common types":
// String, Buffer, qBuffer, PID (4 or 8 bytes by setting), Result, DateTime,
// StationURL, List, Map, Variant, Structure (with the version header of NEX 3.5+),
// Data / AnyDataHolder, RVConnectionData, ResultRange and qUUID.
//
// It is a leaf package: it imports nothing from gamewire, so every codec, the
// dissector and the servers can share it.
//
// Encoders append to a caller's slice and fail only when a value cannot be
// represented (a string longer than its 16-bit length field, ...). Decoders come in
// two shapes:
//
//   - ParseXxx(b) (T, n, error) decodes one value at the start of b and reports how
//     many bytes it used; byte slices in the result alias b.
//   - Reader walks a method's parameters in order with a sticky error, so a handler
//     reads field after field and checks once. Its errors name the field and the
//     offset where decoding failed. What it copies out of the input (strings, the
//     bytes of BufferCopy and QBufferCopy, which generated codecs use because a
//     server's input buffer is reused after the call) shares one allocation per
//     Reader, bounded in size; arena.go says how and what a kept value retains.
//
// Every length field is checked against the bytes actually present before anything
// is allocated, so a forged length yields ErrTruncated or ErrBadLength, never a
// large allocation. Everything is little-endian.
package types

import (
	"errors"
	"fmt"
)

// Sentinel errors. Decoders wrap them (in *Error for Reader, with fmt.Errorf for the
// Parse functions), so callers test with errors.Is.
var (
	// ErrTruncated: the input ends before the value does.
	ErrTruncated = errors.New("nex: truncated")
	// ErrNoTerminator: a String's last byte is not the null terminator.
	ErrNoTerminator = errors.New("nex: string not null-terminated")
	// ErrTooLong: a value does not fit its length field when encoding.
	ErrTooLong = errors.New("nex: value too long for its length field")
	// ErrBadLength: a length or count field is inconsistent with the data.
	ErrBadLength = errors.New("nex: bad length")
	// ErrBadVariant: a Variant has an unknown type id.
	ErrBadVariant = errors.New("nex: unknown variant type")
	// ErrBadStationURL: a StationURL string is malformed.
	ErrBadStationURL = errors.New("nex: malformed station url")
	// ErrBadPIDSize: Settings.PIDSize is neither 0, 4 nor 8.
	ErrBadPIDSize = errors.New("nex: PID size must be 4 or 8")
	// ErrTrailingData: a structure or message has bytes left after its last field.
	ErrTrailingData = errors.New("nex: trailing data")
	// ErrVersion: a structure's header revision is newer than the connection's
	// NEX version allows (a client of another NEX version); see VersionError.
	ErrVersion = errors.New("nex: structure revision newer than the NEX version allows")
	// ErrBadClass: an AnyDataHolder names a class that is not the one expected.
	ErrBadClass = errors.New("nex: unexpected AnyDataHolder class")
)

// Error is a decoding error with its place: the field being read and the offset
// (from the start of the Reader's input) where it failed.
type Error struct {
	Field  string // field name, e.g. "vecMyURLs[2]" or "pConnectionData.m_urlRegularProtocols"
	Offset int    // byte offset of the failing value
	Err    error  // one of the sentinel errors, possibly wrapped with detail
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at offset %d: %v", e.Field, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Settings are the per-connection encoding choices that change the bytes of a type.
// The zero value is NEX on 3DS / Wii U before 3.5: 4-byte PIDs, no structure headers.
type Settings struct {
	// PIDSize is 4 (3DS / Wii U) or 8 (Switch, and crossplay titles); 0 means 4.
	PIDSize int
	// StructureHeader writes and expects the Structure version header (version byte
	// plus content length) in front of every structure level, as NEX 3.5 and later do
	// in the packed RMC variation. NintendoClients turns it on when the negotiated
	// PRUDP minor version is 3 or more; see SettingsForMinorVersion.
	StructureHeader bool
	// Version is the NEX library version the peer speaks (30400 is 3.4.0): the
	// one version context every service and every generated codec reads (version
	// gates of structure fields, the revision a writer puts in a structure
	// header). 0 means not configured: NEXVersion then derives it from the other
	// settings.
	Version Version
	// Gates is the reading of disputed version gates (gates.go): GatesAuto and
	// GatesConsole read them as the consoles do, GatesNintendoClients as
	// NintendoClients does. Learned, when set, overrides it.
	Gates Gates
	// Learned, when not nil, is the reading a server learned for the connection
	// (shared by every copy of its settings); nil: Gates decides.
	Learned *GateReading
}

// NEXVersion returns the connection's NEX version: Version when set, else what
// the other settings imply: 4.0 with 8-byte PIDs (Switch), 3.5 with structure
// headers, 3.4 without (the oldest NEX 3 layout; the 3DS / Wii U default).
func (s Settings) NEXVersion() Version { return s.nexVersion() }

// nexVersion is NEXVersion without a copy of the settings.
func (s *Settings) nexVersion() Version {
	switch {
	case s.Version != 0:
		return s.Version
	case s.PIDSize == 8:
		return Version4
	case s.StructureHeader:
		return Version3_5
	}
	return Version3_4
}

// SettingsForMinorVersion returns the settings for a connection whose negotiated
// PRUDP minor version is minor: structure headers from minor version 3 on.
func SettingsForMinorVersion(minor int, pidSize int) Settings {
	return Settings{PIDSize: pidSize, StructureHeader: minor >= 3}
}

func (s Settings) pidSize() (int, error) {
	switch s.PIDSize {
	case 0, 4:
		return 4, nil
	case 8:
		return 8, nil
	}
	return 0, fmt.Errorf("%w (got %d)", ErrBadPIDSize, s.PIDSize)
}
