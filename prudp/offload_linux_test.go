//go:build linux

package prudp

import (
	"encoding/binary"
	"syscall"
	"testing"
	"unsafe"
)

// cmsg builds one control message as the kernel lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, syscall.CmsgSpace(len(data)))
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(syscall.CmsgLen(len(data)))
	copy(b[syscall.CmsgLen(0):], data)
	return b
}

func TestGROSegment(t *testing.T) {
	u16 := binary.NativeEndian.AppendUint16(nil, 1330)
	u32 := binary.NativeEndian.AppendUint32(nil, 1264)
	other := cmsg(syscall.IPPROTO_IP, syscall.IP_TOS, []byte{0, 0, 0, 0})
	for _, tc := range []struct {
		name string
		oob  []byte
		want int
	}{
		{"none", nil, 0},
		{"u16", cmsg(syscall.IPPROTO_UDP, udpGRO, u16), 1330},
		{"int", cmsg(syscall.IPPROTO_UDP, udpGRO, u32), 1264},
		{"after another", append(other, cmsg(syscall.IPPROTO_UDP, udpGRO, u16)...), 1330},
		{"other only", other, 0},
		{"odd length", cmsg(syscall.IPPROTO_UDP, udpGRO, []byte{1, 2, 3}), 0},
		{"truncated", cmsg(syscall.IPPROTO_UDP, udpGRO, u16)[:syscall.CmsgLen(0)+1], 0},
		{"short header", []byte{1, 2, 3}, 0},
	} {
		if got := groSegment(tc.oob); got != tc.want {
			t.Errorf("%s: groSegment = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// FuzzGROSegment feeds control-message buffers to groSegment, which must
// never read past them and must agree with the standard library's parser
// wherever that one accepts the buffer.
func FuzzGROSegment(f *testing.F) {
	f.Add(cmsg(syscall.IPPROTO_UDP, udpGRO, binary.NativeEndian.AppendUint16(nil, 1330)))
	f.Add(append(cmsg(syscall.IPPROTO_IP, syscall.IP_TOS, []byte{0, 0, 0, 0}),
		cmsg(syscall.IPPROTO_UDP, udpGRO, binary.NativeEndian.AppendUint32(nil, 1264))...))
	f.Fuzz(func(t *testing.T, oob []byte) {
		// Control messages start aligned, as the read's scratch buffer does.
		buf := make([]byte, len(oob))
		copy(buf, oob)
		got := groSegment(buf)
		msgs, err := syscall.ParseSocketControlMessage(buf)
		if err != nil {
			return
		}
		want := 0
		for _, m := range msgs {
			if m.Header.Level == syscall.IPPROTO_UDP && m.Header.Type == udpGRO {
				switch len(m.Data) {
				case 2:
					want = int(binary.NativeEndian.Uint16(m.Data))
				case 4:
					want = int(binary.NativeEndian.Uint32(m.Data))
				}
				break
			}
		}
		if got != want {
			t.Fatalf("groSegment = %d, the standard library's parse gives %d", got, want)
		}
	})
}
