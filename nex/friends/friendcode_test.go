package friends

import (
	"errors"
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

func TestFriendCode(t *testing.T) {
	for _, pid := range []types.PID{1, 1000, 1799999999, 0xFFFFFFFF} {
		code := FriendCode(pid)
		if code>>32 > 127 || types.PID(uint32(code)) != pid {
			t.Fatalf("FriendCode(%d) = %d: PID not in the low 32 bits or checksum over 7 bits", pid, code)
		}
		got, err := PIDOfFriendCode(code)
		if err != nil || got != pid {
			t.Fatalf("PIDOfFriendCode(FriendCode(%d)) = %d, %v", pid, got, err)
		}
		c2, p2, err := ParseFriendCode(FormatFriendCode(code))
		if err != nil || c2 != code || p2 != pid {
			t.Fatalf("ParseFriendCode(%q) = %d, %d, %v", FormatFriendCode(code), c2, p2, err)
		}
		// Every other checksum is refused.
		for sum := uint64(0); sum < 128; sum++ {
			bad := sum<<32 | uint64(uint32(pid))
			if bad == code {
				continue
			}
			if _, err := PIDOfFriendCode(bad); !errors.Is(err, types.FPDInvalidLocalFriendCode) {
				t.Fatalf("PIDOfFriendCode(%d) with checksum %d: %v", bad, sum, err)
			}
		}
	}
	if _, err := PIDOfFriendCode(MaxFriendCode + 1); err == nil {
		t.Fatal("a 40-bit code was accepted")
	}
	for _, s := range []string{"1234-5678-901", "1234-5678-90123", "1234-5678-901x"} {
		if _, _, err := ParseFriendCode(s); err == nil {
			t.Fatalf("ParseFriendCode(%q) accepted", s)
		}
	}
}
