package types

import (
	"errors"
	"testing"
)

// TestWriterPID: Writer.PID (which inlines) writes what AppendPID writes and
// fails as it does: the same message and sentinel, nothing written.
func TestWriterPID(t *testing.T) {
	for _, size := range []int{0, 4, 8, 5, -4, 12} {
		for _, p := range []PID{0, 1001, 1<<32 - 1, 1 << 32, 1<<64 - 1} {
			s := Settings{PIDSize: size}
			want, wantErr := AppendPID([]byte{7}, s, p)
			w := NewWriter([]byte{7}, s)
			w.PID(p)
			got, err := w.Bytes()
			switch {
			case wantErr == nil:
				if err != nil || string(got) != string(want) {
					t.Errorf("size %d PID %d: %x %v, want %x", size, p, got, err, want)
				}
			case err == nil || err.Error() != wantErr.Error() || string(got) != "\x07":
				t.Errorf("size %d PID %d: %x %v, want the error %v", size, p, got, err, wantErr)
			default:
				for _, sentinel := range []error{ErrTooLong, ErrBadPIDSize} {
					if errors.Is(err, sentinel) != errors.Is(wantErr, sentinel) {
						t.Errorf("size %d PID %d: errors.Is(%v, %v) differs", size, p, err, sentinel)
					}
				}
			}
		}
	}
}
