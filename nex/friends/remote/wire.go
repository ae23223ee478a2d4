package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors of the wire decoders.
var (
	ErrTruncated  = errors.New("truncated")
	ErrCompressed = errors.New("compressed gRPC message (none was offered)")
)

// frameHeader is a gRPC length-prefixed message's header: a compressed flag
// and a big-endian length (PROTOCOL-HTTP2.md "Length-Prefixed-Message").
const frameHeader = 5

// AppendFrame appends msg as an uncompressed gRPC length-prefixed message.
func AppendFrame(b, msg []byte) []byte {
	b = append(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	return append(b, msg...)
}

// ParseFrame reads one gRPC length-prefixed message from b and returns it
// (aliasing b) and the bytes it used.
func ParseFrame(b []byte) ([]byte, int, error) {
	if len(b) < frameHeader {
		return nil, 0, fmt.Errorf("gRPC message header of %d bytes: %w", len(b), ErrTruncated)
	}
	switch b[0] {
	case 0:
	case 1:
		return nil, 0, ErrCompressed
	default:
		return nil, 0, fmt.Errorf("gRPC message flag %#x is neither 0 nor 1", b[0])
	}
	n := binary.BigEndian.Uint32(b[1:frameHeader])
	if uint64(n) > uint64(len(b)-frameHeader) {
		return nil, 0, fmt.Errorf("gRPC message of %d bytes with %d left: %w", n, len(b)-frameHeader, ErrTruncated)
	}
	end := frameHeader + int(n)
	return b[frameHeader:end], end, nil
}

// Protobuf wire types (protobuf.dev, "Encoding").
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// AppendFriendPIDsRequest appends GetUserFriendPIDsRequest{pid}: field 1,
// uint32. Proto3 leaves a zero field out.
func AppendFriendPIDsRequest(b []byte, pid uint32) []byte {
	if pid == 0 {
		return b
	}
	b = binary.AppendUvarint(b, 1<<3|wireVarint)
	return binary.AppendUvarint(b, uint64(pid))
}

// AppendFriendPIDsResponse appends GetUserFriendPIDsResponse{pids}: field 1,
// repeated uint32, packed as proto3 packs it.
func AppendFriendPIDsResponse(b []byte, pids []uint32) []byte {
	if len(pids) == 0 {
		return b
	}
	var packed []byte
	for _, p := range pids {
		packed = binary.AppendUvarint(packed, uint64(p))
	}
	b = binary.AppendUvarint(b, 1<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(packed)))
	return append(b, packed...)
}

// ParseFriendPIDsRequest reads GetUserFriendPIDsRequest's pid (0 when absent).
func ParseFriendPIDsRequest(b []byte) (uint32, error) {
	var pid uint32
	err := fields(b, func(num uint64, typ int, v uint64, data []byte) error {
		if num != 1 {
			return nil
		}
		if typ != wireVarint {
			return fmt.Errorf("field pid of wire type %d", typ)
		}
		p, err := uint32Of(v)
		pid = p
		return err
	})
	return pid, err
}

// ParseFriendPIDsResponse reads GetUserFriendPIDsResponse's pids, packed or
// not (a parser accepts both), at most max of them; unknown fields are
// skipped.
func ParseFriendPIDsResponse(b []byte, max int) ([]uint32, error) {
	var pids []uint32
	add := func(v uint64) error {
		p, err := uint32Of(v)
		if err != nil {
			return err
		}
		if len(pids) >= max {
			return fmt.Errorf("more than %d PIDs", max)
		}
		pids = append(pids, p)
		return nil
	}
	err := fields(b, func(num uint64, typ int, v uint64, data []byte) error {
		if num != 1 {
			return nil
		}
		switch typ {
		case wireVarint:
			return add(v)
		case wireBytes:
			for len(data) > 0 {
				v, n := binary.Uvarint(data)
				if n <= 0 {
					return fmt.Errorf("packed pids: bad varint")
				}
				if err := add(v); err != nil {
					return err
				}
				data = data[n:]
			}
			return nil
		}
		return fmt.Errorf("field pids of wire type %d", typ)
	})
	return pids, err
}

func uint32Of(v uint64) (uint32, error) {
	if v > 1<<32-1 {
		return 0, fmt.Errorf("PID %d does not fit 32 bits", v)
	}
	return uint32(v), nil
}

// fields walks a protobuf message's fields, calling f with each field's
// number, wire type and value (varint and fixed values in v, length-delimited
// ones in data, aliasing b). Groups are refused.
func fields(b []byte, f func(num uint64, typ int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("bad field key varint")
		}
		b = b[n:]
		num, typ := key>>3, int(key&7)
		if num == 0 {
			return fmt.Errorf("field number 0")
		}
		var v uint64
		var data []byte
		switch typ {
		case wireVarint:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("field %d: bad varint", num)
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return fmt.Errorf("field %d: fixed64: %w", num, ErrTruncated)
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return fmt.Errorf("field %d: fixed32: %w", num, ErrTruncated)
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("field %d: bad length varint", num)
			}
			b = b[n:]
			if l > uint64(len(b)) {
				return fmt.Errorf("field %d: %d bytes with %d left: %w", num, l, len(b), ErrTruncated)
			}
			data, b = b[:l], b[l:]
		default:
			return fmt.Errorf("field %d: wire type %d is not supported", num, typ)
		}
		if err := f(num, typ, v, data); err != nil {
			return err
		}
	}
	return nil
}
