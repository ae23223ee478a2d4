package kerberos

import (
	"encoding/binary"
	"fmt"
	"time"
)

// ConnectRequest is the payload of a CONNECT to a secure server
// ("Connection request" under "Secure server connection" in
// NintendoClients wiki "PRUDP Protocol"): Buffer(internal ticket) + Buffer(request data encrypted
// with the session key). Fields alias the parsed input.
type ConnectRequest struct {
	Ticket  []byte
	Request []byte
}

// Append appends the encoding of r.
func (r *ConnectRequest) Append(b []byte) ([]byte, error) {
	b = appendBuffer(b, r.Ticket)
	return appendBuffer(b, r.Request), nil
}

// ParseConnectRequest decodes a secure CONNECT payload. It reads exactly the
// two Buffers and reports how many bytes they took; callers that hold the
// whole payload should treat n < len(b) as trailing data.
func ParseConnectRequest(b []byte) (ConnectRequest, int, error) {
	var r ConnectRequest
	var off int
	var err error
	if r.Ticket, off, err = readBuffer(b, 0, "ticket"); err != nil {
		return ConnectRequest{}, 0, fmt.Errorf("secure connect request: %w", err)
	}
	if r.Request, off, err = readBuffer(b, off, "request data"); err != nil {
		return ConnectRequest{}, 0, fmt.Errorf("secure connect request: %w", err)
	}
	return r, off, nil
}

// RequestData is the plaintext of ConnectRequest.Request ("Request data" in
// NintendoClients wiki "PRUDP Protocol"): the client's PID, its connection id and a check value
// the server answers with check + 1.
type RequestData struct {
	PID          uint64
	ConnectionID uint32
	Check        uint32
}

// Seal appends d encoded and encrypted with the session key.
func (d *RequestData) Seal(dst, sessionKey []byte, s Settings) ([]byte, error) {
	ps, err := s.pidSize()
	if err != nil {
		return dst, fmt.Errorf("secure connect request data: %w", err)
	}
	var buf [16]byte
	plain, err := appendPID(buf[:0], d.PID, ps)
	if err != nil {
		return dst, fmt.Errorf("secure connect request data: PID: %w", err)
	}
	plain = binary.LittleEndian.AppendUint32(plain, d.ConnectionID)
	plain = binary.LittleEndian.AppendUint32(plain, d.Check)
	return Encrypt(dst, sessionKey, plain)
}

// OpenRequestData checks the HMAC of b under the session key, decrypts it
// and decodes it. The plaintext must be exactly PID + 8 bytes.
func OpenRequestData(b, sessionKey []byte, s Settings) (RequestData, error) {
	ps, err := s.pidSize()
	if err != nil {
		return RequestData{}, fmt.Errorf("secure connect request data: %w", err)
	}
	var buf [16]byte
	plain, err := Decrypt(buf[:0], sessionKey, b)
	if err != nil {
		return RequestData{}, fmt.Errorf("secure connect request data: %w", err)
	}
	if len(plain) != ps+8 {
		return RequestData{}, fmt.Errorf("secure connect request data: %w: %d bytes, want %d (PID, connection id, check)", ErrBadLength, len(plain), ps+8)
	}
	return RequestData{
		PID:          readPID(plain, 0, ps),
		ConnectionID: binary.LittleEndian.Uint32(plain[ps:]),
		Check:        binary.LittleEndian.Uint32(plain[ps+4:]),
	}, nil
}

// AppendConnect builds a client's secure CONNECT payload from the ticket it
// decrypted (its Internal ticket and SessionKey) and d.
func AppendConnect(b []byte, t *Ticket, d RequestData, s Settings) ([]byte, error) {
	enc, err := d.Seal(nil, t.SessionKey, s)
	if err != nil {
		return b, err
	}
	r := ConnectRequest{Ticket: t.Internal, Request: enc}
	return r.Append(b)
}

// Accepted is what a secure server learns from a valid CONNECT payload.
type Accepted struct {
	// Info is the decrypted internal ticket; Info.SessionKey keys the
	// connection.
	Info TicketInfo
	// Request is the decrypted request data; its PID equals Info.SourcePID.
	Request RequestData
}

// AcceptConnect does a secure server's part of "Secure server connection"
// (NintendoClients wiki "PRUDP Protocol"): it decodes the CONNECT payload, opens the internal
// ticket with targetKey (its own key), checks the ticket's age against now
// (maxAge <= 0 means DefaultMaxAge), opens the request data with the session
// key and checks that the PID in it is the one the ticket was issued to. The
// CONNECT acknowledgement should then carry AppendConnectResponse(nil,
// a.Request.Check).
func AcceptConnect(payload, targetKey []byte, s Settings, now time.Time, maxAge time.Duration) (Accepted, error) {
	r, n, err := ParseConnectRequest(payload)
	if err != nil {
		return Accepted{}, err
	}
	if n != len(payload) {
		return Accepted{}, fmt.Errorf("secure connect request: %w: %d bytes at offset %d", ErrTrailingData, len(payload)-n, n)
	}
	info, err := OpenInternal(r.Ticket, targetKey, s)
	if err != nil {
		return Accepted{}, err
	}
	if err := info.Validate(now, maxAge); err != nil {
		return Accepted{}, err
	}
	d, err := OpenRequestData(r.Request, info.SessionKey, s)
	if err != nil {
		return Accepted{}, err
	}
	if d.PID != info.SourcePID {
		return Accepted{}, fmt.Errorf("secure connect request: %w: request says %d, ticket was issued to %d", ErrPIDMismatch, d.PID, info.SourcePID)
	}
	return Accepted{Info: info, Request: d}, nil
}

// ConnectResponseSize is the size of the CONNECT acknowledgement's payload:
// a Buffer holding one Uint32.
const ConnectResponseSize = 8

// AppendConnectResponse appends the CONNECT acknowledgement payload of a
// secure server ("Connection response" in NintendoClients wiki "PRUDP Protocol"):
// Buffer(LE32(check + 1)), unencrypted.
func AppendConnectResponse(b []byte, check uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, 4)
	return binary.LittleEndian.AppendUint32(b, check+1)
}

// CheckConnectResponse verifies a CONNECT acknowledgement payload against the
// check value the client sent.
func CheckConnectResponse(b []byte, check uint32) error {
	if len(b) != ConnectResponseSize {
		return fmt.Errorf("secure connect response: %w: %d bytes, want %d", ErrBadLength, len(b), ConnectResponseSize)
	}
	if n := binary.LittleEndian.Uint32(b); n != 4 {
		return fmt.Errorf("secure connect response: Buffer length at offset 0: %w: %d, want 4", ErrBadLength, n)
	}
	if got := binary.LittleEndian.Uint32(b[4:]); got != check+1 {
		return fmt.Errorf("secure connect response: value at offset 4: %w: got %#08x, want %#08x", ErrBadCheck, got, check+1)
	}
	return nil
}
