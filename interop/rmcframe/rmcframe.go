// Package rmcframe frames test payloads as RMC requests and checks RMC responses, the
// minimum nex-go needs to hand a PRUDP message to its data handler
// (nintendo-wiki "RMC Protocol": packed format, no extended protocol id).
package rmcframe

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of an RMC request header: u32 size, u8 protocol|0x80, u32 call
// id, u32 method id.
const HeaderSize = 13

// Request returns an RMC request of exactly total bytes (at least HeaderSize) whose
// parameters are filled from fill.
func Request(protocol uint8, callID, method uint32, total int, fill byte) []byte {
	if total < HeaderSize {
		total = HeaderSize
	}
	b := make([]byte, total)
	binary.LittleEndian.PutUint32(b[0:], uint32(total-4))
	b[4] = protocol | 0x80
	binary.LittleEndian.PutUint32(b[5:], callID)
	binary.LittleEndian.PutUint32(b[9:], method)
	for i := HeaderSize; i < total; i++ {
		b[i] = fill + byte(i)
	}
	return b
}

// CheckEcho checks that resp is the successful RMC response a server that echoes
// parameters gives to req: same protocol, call id and method, and the same parameters.
func CheckEcho(req, resp []byte) error {
	// Response: u32 size, u8 protocol, u8 success, u32 call id, u32 method|0x8000, params.
	if len(resp) < 14 {
		return fmt.Errorf("rmc response of %d bytes is too short", len(resp))
	}
	if got := binary.LittleEndian.Uint32(resp); int(got) != len(resp)-4 {
		return fmt.Errorf("rmc response size field %d, want %d", got, len(resp)-4)
	}
	if resp[4] != req[4]&^0x80 {
		return fmt.Errorf("rmc response protocol %d, want %d", resp[4], req[4]&^0x80)
	}
	if resp[5] != 1 {
		return fmt.Errorf("rmc response is an error (success byte %d)", resp[5])
	}
	if c, w := binary.LittleEndian.Uint32(resp[6:]), binary.LittleEndian.Uint32(req[5:]); c != w {
		return fmt.Errorf("rmc response call id %d, want %d", c, w)
	}
	if m, w := binary.LittleEndian.Uint32(resp[10:]), binary.LittleEndian.Uint32(req[9:])|0x8000; m != w {
		return fmt.Errorf("rmc response method %#x, want %#x", m, w)
	}
	if got, want := resp[14:], req[HeaderSize:]; string(got) != string(want) {
		return fmt.Errorf("rmc response parameters differ (%d bytes, want %d)", len(got), len(want))
	}
	return nil
}
