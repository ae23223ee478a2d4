package friends

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// MaxFriendCode is the largest friend code: 12 decimal digits (0000-0000-0000
// to 5497-5581-3887, a 7-bit checksum over a 32-bit PID).
const MaxFriendCode = 1<<39 - 1

// FriendCode returns the 3DS friend code of pid: the PID in the low 32 bits and
// above them a 7-bit checksum, the first byte of the SHA-1 of the PID's four
// little-endian bytes shifted right by one (3dbrew "Friend Code" in
// docs/sources.md; Pretendo's NASC server computes it the same way when it
// creates an account). Consoles print it as 12 decimal digits in groups of four.
func FriendCode(pid types.PID) uint64 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(pid))
	sum := sha1.Sum(b[:])
	return uint64(sum[0]>>1)<<32 | uint64(uint32(pid))
}

// PIDOfFriendCode returns the PID a friend code names, after checking its
// checksum; FPD::InvalidLocalFriendCode names a code that cannot be one.
func PIDOfFriendCode(code uint64) (types.PID, error) {
	if code > MaxFriendCode {
		return 0, fmt.Errorf("%w: friend code %d has more than 12 digits' worth of bits", types.FPDInvalidLocalFriendCode, code)
	}
	pid := types.PID(uint32(code))
	if pid == 0 || FriendCode(pid) != code {
		return 0, fmt.Errorf("%w: friend code %s: bad checksum", types.FPDInvalidLocalFriendCode, FormatFriendCode(code))
	}
	return pid, nil
}

// FormatFriendCode prints a friend code as the consoles do: 0000-0000-0000.
func FormatFriendCode(code uint64) string {
	return fmt.Sprintf("%04d-%04d-%04d", code/100000000%10000, code/10000%10000, code%10000)
}

// ParseFriendCode reads a friend code written with or without dashes or
// spaces, and checks it (PIDOfFriendCode).
func ParseFriendCode(s string) (uint64, types.PID, error) {
	var code uint64
	digits := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
			if digits > 12 {
				return 0, 0, fmt.Errorf("friends: friend code %q: more than 12 digits", s)
			}
			code = code*10 + uint64(c-'0')
		case c == '-' || c == ' ':
		default:
			return 0, 0, fmt.Errorf("friends: friend code %q: %q is not a digit", s, c)
		}
	}
	if digits != 12 {
		return 0, 0, fmt.Errorf("friends: friend code %q: %d digits, want 12", s, digits)
	}
	pid, err := PIDOfFriendCode(code)
	return code, pid, err
}
