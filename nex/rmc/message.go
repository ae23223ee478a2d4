// Package rmc implements RMC, the remote method call layer of NEX and Quazal
// Rendez-Vous (nintendo-wiki "RMC Protocol"): requests, responses and error responses in
// the "packed" variation (with extended protocol ids) and the "verbose" one, a
// request multiplexer shaped like net/http's (Mux, Handler, HandlerFunc) so a game's
// protocols plug in without touching the core, and a client that matches
// responses to calls by call id.
//
// Messages are transport-independent byte slices: one RMC message per reassembled
// PRUDP payload (or Lite / WebSocket message).
package rmc

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// Sentinel errors; decoders wrap them with context.
var (
	// ErrTruncated: the message ends before its header does, or before its size says.
	ErrTruncated = errors.New("rmc: truncated")
	// ErrBadSize: the size field disagrees with the message.
	ErrBadSize = errors.New("rmc: bad size field")
	// ErrNotRequest: a request was expected but the message is a response.
	ErrNotRequest = errors.New("rmc: message is a response")
	// ErrNotResponse: a response was expected but the message is a request.
	ErrNotResponse = errors.New("rmc: message is a request")
	// ErrTrailingData: an error response has bytes after the call id.
	ErrTrailingData = errors.New("rmc: trailing data")
	// ErrBadMethod: a method id does not fit the response's 15 bits.
	ErrBadMethod = errors.New("rmc: method id too large")
)

// Protocol ids of the protocols this module implements, and the extended-id marker.
const (
	// ProtocolExtended in the protocol byte means a 16-bit protocol id follows
	// ("packed extended" variation). Protocols 0x7F and above are always sent so.
	ProtocolExtended = 0x7F

	ProtocolTicketGranting   uint16 = 10 // Ticket Granting (authentication.md)
	ProtocolSecureConnection uint16 = 11 // Secure Connection (secure-connection.md)
	ProtocolHealth           uint16 = 18 // Health (health.md)
	ProtocolUtility          uint16 = 110
)

const (
	requestFlag    = 0x80   // ORed into the protocol byte of a request
	responseMethod = 0x8000 // ORed into the method id of a success response
)

// Request is a packed RMC request ("Request Format" in rmc.md).
// After ParseRequest, Params aliases the input.
type Request struct {
	Protocol uint16
	CallID   uint32
	Method   uint32
	Params   []byte
}

// Response is a packed RMC response ("Response Format" in rmc.md). A success has
// Result.IsSuccess() (the zero Result counts as success), CallID, Method and Data;
// an error response carries only Result (with its error bit) and CallID.
// After ParseResponse, Data aliases the input.
type Response struct {
	Protocol uint16
	Result   types.Result
	CallID   uint32
	Method   uint32
	Data     []byte
}

// IsError reports whether r is an error response.
func (r *Response) IsError() bool { return r.Result.IsError() }

func appendProtocol(b []byte, protocol uint16, flag byte) []byte {
	if protocol < ProtocolExtended {
		return append(b, byte(protocol)|flag)
	}
	return binary.LittleEndian.AppendUint16(append(b, ProtocolExtended|flag), protocol)
}

func finishSize(b []byte, start int) ([]byte, error) {
	n := len(b) - start - 4
	if uint64(n) > 0xFFFFFFFF {
		return b[:start], fmt.Errorf("rmc: message of %d bytes too long for its size field", n)
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(n))
	return b, nil
}

// Append appends r as a packed request with its size field ("Packed" variations,
// "Request Format" in rmc.md).
func (r *Request) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = appendProtocol(b, r.Protocol, requestFlag)
	b = binary.LittleEndian.AppendUint32(b, r.CallID)
	b = binary.LittleEndian.AppendUint32(b, r.Method)
	b = append(b, r.Params...)
	return finishSize(b, start)
}

// Append appends r as a packed response, success or error by r.Result ("Packed"
// variations, "Response Format" in rmc.md).
func (r *Response) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = appendProtocol(b, r.Protocol, 0)
	if r.Result.IsError() {
		b = append(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(r.Result))
		b = binary.LittleEndian.AppendUint32(b, r.CallID)
		return finishSize(b, start)
	}
	if r.Method >= responseMethod {
		return b[:start], fmt.Errorf("%w: %d (max %d)", ErrBadMethod, r.Method, responseMethod-1)
	}
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint32(b, r.CallID)
	b = binary.LittleEndian.AppendUint32(b, r.Method|responseMethod)
	b = append(b, r.Data...)
	return finishSize(b, start)
}

// header is the common start of packed messages.
type header struct {
	request  bool
	protocol uint16
	body     []byte // after the protocol id
	n        int    // 4 + size
}

func parseHeader(b []byte) (header, error) {
	if len(b) < 5 {
		return header{}, fmt.Errorf("%w: %d bytes, need at least 5 for size and protocol", ErrTruncated, len(b))
	}
	size := uint64(binary.LittleEndian.Uint32(b))
	if size == 0 {
		return header{}, fmt.Errorf("%w: size 0", ErrBadSize)
	}
	if uint64(len(b)-4) < size {
		return header{}, fmt.Errorf("%w: size field says %d bytes, %d present", ErrTruncated, size, len(b)-4)
	}
	msg := b[4 : 4+size]
	h := header{request: msg[0]&requestFlag != 0, protocol: uint16(msg[0] &^ requestFlag), n: 4 + int(size)}
	h.body = msg[1:]
	if h.protocol == ProtocolExtended {
		if len(h.body) < 2 {
			return header{}, fmt.Errorf("%w: extended protocol id at offset 5", ErrTruncated)
		}
		h.protocol = binary.LittleEndian.Uint16(h.body)
		h.body = h.body[2:]
	}
	return h, nil
}

// bodyOffset is the offset of h.body in the message, for error messages.
func (h header) bodyOffset() int { return h.n - len(h.body) }

// ParseRequest decodes a packed request ("Packed" variations, "Request Format" in
// rmc.md). It uses exactly as many bytes as the size
// field says (n); bytes after that are the caller's business.
func ParseRequest(b []byte) (Request, int, error) {
	h, err := parseHeader(b)
	if err != nil {
		return Request{}, 0, err
	}
	if !h.request {
		return Request{}, 0, fmt.Errorf("%w (protocol %d)", ErrNotRequest, h.protocol)
	}
	if len(h.body) < 8 {
		return Request{}, 0, fmt.Errorf("%w: request of protocol %d: call id and method id at offset %d need 8 bytes, have %d",
			ErrTruncated, h.protocol, h.bodyOffset(), len(h.body))
	}
	return Request{
		Protocol: h.protocol,
		CallID:   binary.LittleEndian.Uint32(h.body),
		Method:   binary.LittleEndian.Uint32(h.body[4:]),
		Params:   h.body[8:len(h.body):len(h.body)],
	}, h.n, nil
}

// ParseResponse decodes a packed response ("Packed" variations, "Response Format"
// in rmc.md). An error response must end after its
// call id.
func ParseResponse(b []byte) (Response, int, error) {
	h, err := parseHeader(b)
	if err != nil {
		return Response{}, 0, err
	}
	if h.request {
		return Response{}, 0, fmt.Errorf("%w (protocol %d)", ErrNotResponse, h.protocol)
	}
	off := h.bodyOffset()
	body := h.body
	if len(body) < 1 {
		return Response{}, 0, fmt.Errorf("%w: success flag at offset %d", ErrTruncated, off)
	}
	r := Response{Protocol: h.protocol}
	if body[0] == 0 {
		if len(body) < 9 {
			return Response{}, 0, fmt.Errorf("%w: error response of protocol %d: error code and call id at offset %d need 8 bytes, have %d",
				ErrTruncated, h.protocol, off+1, len(body)-1)
		}
		if len(body) > 9 {
			return Response{}, 0, fmt.Errorf("%w: error response of protocol %d has %d bytes after the call id", ErrTrailingData, h.protocol, len(body)-9)
		}
		r.Result = types.Result(binary.LittleEndian.Uint32(body[1:])) | types.ResultErrorMask
		r.CallID = binary.LittleEndian.Uint32(body[5:])
		return r, h.n, nil
	}
	if len(body) < 9 {
		return Response{}, 0, fmt.Errorf("%w: response of protocol %d: call id and method id at offset %d need 8 bytes, have %d",
			ErrTruncated, h.protocol, off+1, len(body)-1)
	}
	r.Result = types.ResultSuccess
	r.CallID = binary.LittleEndian.Uint32(body[1:])
	r.Method = binary.LittleEndian.Uint32(body[5:]) &^ responseMethod
	r.Data = body[9:len(body):len(body)]
	return r, h.n, nil
}

// IsRequest reports whether the packed message in b is a request (the protocol
// byte's 0x80 bit). It returns false for messages too short to tell.
func IsRequest(b []byte) bool { return len(b) >= 5 && b[4]&requestFlag != 0 }
