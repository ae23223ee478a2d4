package types

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BeginStructure starts one level of a Structure ("Structure header" in types.md).
// With structure headers it appends the version and a length placeholder and returns
// the mark EndStructure needs to fill it in; without them it appends nothing and
// returns -1. A structure that inherits another is written as the parent's level
// followed by the child's, each with its own Begin/End pair.
func BeginStructure(b []byte, s Settings, version uint8) ([]byte, int) {
	if !s.StructureHeader {
		return b, -1
	}
	b = append(b, version, 0, 0, 0, 0)
	return b, len(b)
}

// EndStructure completes the level started with mark by writing its content length.
func EndStructure(b []byte, mark int) ([]byte, error) {
	if mark < 0 {
		return b, nil
	}
	n := len(b) - mark
	if uint64(n) > math.MaxUint32 {
		return b, fmt.Errorf("structure content of %d bytes: %w", n, ErrTooLong)
	}
	binary.LittleEndian.PutUint32(b[mark-4:], uint32(n))
	return b, nil
}

// StructureHeader is the decoded version header of one structure level.
type StructureHeader struct {
	Version uint8
	Content []byte // the level's content, aliasing the input
}

// ParseStructureHeader decodes a structure header ("Structure header" in types.md)
// and returns the content it frames.
func ParseStructureHeader(b []byte) (StructureHeader, int, error) {
	if len(b) < 5 {
		return StructureHeader{}, 0, fmt.Errorf("structure header: %w (need 5 bytes, have %d)", ErrTruncated, len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b[1:]))
	if uint64(len(b)-5) < n {
		return StructureHeader{}, 0, fmt.Errorf("structure content of %d bytes: %w (have %d)", n, ErrTruncated, len(b)-5)
	}
	return StructureHeader{Version: b[0], Content: b[5 : 5+n : 5+n]}, 5 + int(n), nil
}

// AnyDataHolder is the AnyDataHolder of types.md: an object of a class derived from
// Data, named by its type name. Data holds the object's encoding (its structure
// levels, headers included when the settings have them); the holder does not decode
// it, so unknown classes pass through unchanged. After parsing, Data aliases the input.
type AnyDataHolder struct {
	TypeName string
	Data     []byte
}

// AppendAnyDataHolder appends h ("AnyDataHolder" in types.md): the type name, the data length plus 4, the data
// length and the data.
func AppendAnyDataHolder(b []byte, h AnyDataHolder) ([]byte, error) {
	if uint64(len(h.Data)) > math.MaxUint32-4 {
		return b, fmt.Errorf("AnyDataHolder data of %d bytes: %w", len(h.Data), ErrTooLong)
	}
	b, err := AppendString(b, h.TypeName)
	if err != nil {
		return b, fmt.Errorf("AnyDataHolder type name: %w", err)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.Data))+4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.Data)))
	return append(b, h.Data...), nil
}

// ParseAnyDataHolder decodes an AnyDataHolder. The two length fields must agree
// (outer = inner + 4).
func ParseAnyDataHolder(b []byte) (AnyDataHolder, int, error) {
	name, off, err := ParseString(b)
	if err != nil {
		return AnyDataHolder{}, 0, fmt.Errorf("AnyDataHolder type name: %w", err)
	}
	if len(b)-off < 8 {
		return AnyDataHolder{}, 0, fmt.Errorf("AnyDataHolder lengths at offset %d: %w (need 8 bytes, have %d)", off, ErrTruncated, len(b)-off)
	}
	outer := uint64(binary.LittleEndian.Uint32(b[off:]))
	inner := uint64(binary.LittleEndian.Uint32(b[off+4:]))
	if outer != inner+4 {
		return AnyDataHolder{}, 0, fmt.Errorf("AnyDataHolder %q at offset %d: %w (outer length %d, inner %d: want inner+4)", name, off, ErrBadLength, outer, inner)
	}
	off += 8
	if uint64(len(b)-off) < inner {
		return AnyDataHolder{}, 0, fmt.Errorf("AnyDataHolder %q data of %d bytes: %w (have %d)", name, inner, ErrTruncated, len(b)-off)
	}
	end := off + int(inner)
	return AnyDataHolder{TypeName: name, Data: b[off:end:end]}, end, nil
}

// AppendData appends the Data base class level ("Data" in types.md): it has no
// fields, so with structure headers it is an empty level of version 0, and nothing
// without. Classes inheriting Data write it before their own level.
func AppendData(b []byte, s Settings) []byte {
	if s.StructureHeader {
		return append(b, 0, 0, 0, 0, 0)
	}
	return b
}

// ReadData reads the Data base class level.
func (r *Reader) ReadData(field string) {
	r.LeaveStructure(r.EnterStructure(field))
}

// RVConnectionData is the RVConnectionData structure of types.md: where the secure
// server is. Revision 1 adds the server's current time.
type RVConnectionData struct {
	RegularURL       StationURL // m_urlRegularProtocols
	SpecialProtocols []byte     // m_lstSpecialProtocols (List<byte>)
	SpecialURL       StationURL // m_urlSpecialProtocols
	// Version is the structure version. Only with structure headers is it on the
	// wire; version 1 and up carry CurrentUTCTime. Without headers (NEX before
	// 3.5) the structure is always version 0.
	Version        uint8
	CurrentUTCTime DateTime // m_currentUTCTime, version 1
}

// Append appends c as a structure.
func (c RVConnectionData) Append(b []byte, s Settings) ([]byte, error) {
	b, mark := BeginStructure(b, s, c.Version)
	b, err := AppendStationURL(b, c.RegularURL)
	if err != nil {
		return b, fmt.Errorf("RVConnectionData.m_urlRegularProtocols: %w", err)
	}
	b, err = AppendList(b, c.SpecialProtocols, func(b []byte, v byte) ([]byte, error) { return append(b, v), nil })
	if err != nil {
		return b, fmt.Errorf("RVConnectionData.m_lstSpecialProtocols: %w", err)
	}
	if b, err = AppendStationURL(b, c.SpecialURL); err != nil {
		return b, fmt.Errorf("RVConnectionData.m_urlSpecialProtocols: %w", err)
	}
	if s.StructureHeader && c.Version >= 1 {
		b = AppendDateTime(b, c.CurrentUTCTime)
	}
	return EndStructure(b, mark)
}

// RVConnectionData reads an RVConnectionData structure.
func (r *Reader) RVConnectionData(field string) RVConnectionData {
	var c RVConnectionData
	m := r.EnterStructure(field)
	c.RegularURL = r.StationURL("m_urlRegularProtocols")
	c.SpecialProtocols = ReadList(r, "m_lstSpecialProtocols", (*Reader).U8)
	c.SpecialURL = r.StationURL("m_urlSpecialProtocols")
	if m.Version >= 1 {
		c.Version = uint8(m.Version)
		c.CurrentUTCTime = r.DateTime("m_currentUTCTime")
	} else if m.Version == 0 {
		c.Version = 0
	}
	r.LeaveStructure(m)
	return c
}
