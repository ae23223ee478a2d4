package rmc

import (
	"encoding/binary"
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// ClassVersion names the version of one structure class used in a verbose request
// ("ClassVersion" in rmc.md).
type ClassVersion struct {
	Name    string
	Version uint16
}

// VerboseRequest is a request in the "verbose" variation some Rendez-Vous titles use
// ("Verbose" variation, Request Format, in rmc.md): protocol and method by name, and
// a ClassVersionContainer with the versions of the structures in the parameters
// (which then have no structure headers). Method names carry the protocol name as a
// prefix. After parsing, Params aliases the input.
type VerboseRequest struct {
	Protocol      string
	CallID        uint32
	Method        string
	ClassVersions []ClassVersion
	Params        []byte
}

// VerboseResponse is a response in the "verbose" variation. Success responses carry
// the method name (which in all known cases ends with "*"), error responses a
// Result and the call id. After parsing, Data aliases the input.
type VerboseResponse struct {
	Protocol string
	Result   types.Result
	CallID   uint32
	Method   string
	Data     []byte
}

// IsError reports whether r is an error response.
func (r *VerboseResponse) IsError() bool { return r.Result.IsError() }

// Append appends r with its size field.
func (r *VerboseRequest) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b, err := types.AppendString(b, r.Protocol)
	if err != nil {
		return b[:start], fmt.Errorf("rmc verbose request protocol name: %w", err)
	}
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, r.CallID)
	if b, err = types.AppendString(b, r.Method); err != nil {
		return b[:start], fmt.Errorf("rmc verbose request method name: %w", err)
	}
	b, err = types.AppendList(b, r.ClassVersions, func(b []byte, cv ClassVersion) ([]byte, error) {
		b, err := types.AppendString(b, cv.Name)
		return binary.LittleEndian.AppendUint16(b, cv.Version), err
	})
	if err != nil {
		return b[:start], fmt.Errorf("rmc verbose request class versions: %w", err)
	}
	b = append(b, r.Params...)
	return finishSize(b, start)
}

// Append appends r with its size field.
func (r *VerboseResponse) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b, err := types.AppendString(b, r.Protocol)
	if err != nil {
		return b[:start], fmt.Errorf("rmc verbose response protocol name: %w", err)
	}
	b = append(b, 0) // is request: false
	if r.Result.IsError() {
		b = append(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(r.Result))
		b = binary.LittleEndian.AppendUint32(b, r.CallID)
		return finishSize(b, start)
	}
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, r.CallID)
	if b, err = types.AppendString(b, r.Method); err != nil {
		return b[:start], fmt.Errorf("rmc verbose response method name: %w", err)
	}
	b = append(b, r.Data...)
	return finishSize(b, start)
}

// verboseBody checks the size field and returns the message after it.
func verboseBody(b []byte) ([]byte, int, error) {
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("%w: %d bytes, need 4 for the size", ErrTruncated, len(b))
	}
	size := uint64(binary.LittleEndian.Uint32(b))
	if uint64(len(b)-4) < size {
		return nil, 0, fmt.Errorf("%w: size field says %d bytes, %d present", ErrTruncated, size, len(b)-4)
	}
	return b[4 : 4+size], 4 + int(size), nil
}

// ParseVerboseRequest decodes a verbose request ("Verbose" variation, "Request
// Format" in rmc.md).
func ParseVerboseRequest(b []byte) (VerboseRequest, int, error) {
	msg, n, err := verboseBody(b)
	if err != nil {
		return VerboseRequest{}, 0, err
	}
	r := types.NewReader(msg, types.Settings{})
	var q VerboseRequest
	q.Protocol = r.String("protocol name")
	if isReq := r.Bool("is request"); r.Err() == nil && !isReq {
		return VerboseRequest{}, 0, fmt.Errorf("%w (protocol %q)", ErrNotRequest, q.Protocol)
	}
	q.CallID = r.U32("call id")
	q.Method = r.String("method name")
	q.ClassVersions = types.ReadList(&r, "class versions", func(r *types.Reader, field string) ClassVersion {
		return ClassVersion{Name: r.String("name"), Version: r.U16("version")}
	})
	if err := r.Err(); err != nil {
		return VerboseRequest{}, 0, fmt.Errorf("rmc verbose request: %w", err)
	}
	q.Params = msg[r.Offset():len(msg):len(msg)]
	return q, n, nil
}

// ParseVerboseResponse decodes a verbose response ("Verbose" variation, "Response
// Format" in rmc.md).
func ParseVerboseResponse(b []byte) (VerboseResponse, int, error) {
	msg, n, err := verboseBody(b)
	if err != nil {
		return VerboseResponse{}, 0, err
	}
	r := types.NewReader(msg, types.Settings{})
	var q VerboseResponse
	q.Protocol = r.String("protocol name")
	if isReq := r.Bool("is request"); r.Err() == nil && isReq {
		return VerboseResponse{}, 0, fmt.Errorf("%w (protocol %q)", ErrNotResponse, q.Protocol)
	}
	success := r.Bool("is success")
	if r.Err() == nil && !success {
		q.Result = types.Result(r.U32("error code")) | types.ResultErrorMask
		q.CallID = r.U32("call id")
		if err := r.Done(); err != nil {
			return VerboseResponse{}, 0, fmt.Errorf("rmc verbose error response: %w", err)
		}
		return q, n, nil
	}
	q.Result = types.ResultSuccess
	q.CallID = r.U32("call id")
	q.Method = r.String("method name")
	if err := r.Err(); err != nil {
		return VerboseResponse{}, 0, fmt.Errorf("rmc verbose response: %w", err)
	}
	q.Data = msg[r.Offset():len(msg):len(msg)]
	return q, n, nil
}
