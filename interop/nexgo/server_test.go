package nexgo

import (
	"net"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"
)

// TestStartAnswersSYN checks that the harness brings a nex-go server up on loopback: a
// V1 SYN (the published Terraria vector, access key 3d37fbdb) gets a SYN-ACK back.
func TestStartAnswersSYN(t *testing.T) {
	srv, err := Start(Config{Version: 1, AccessKey: "3d37fbdb"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: srv.Port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	syn := testutil.Unhex(t, "ead0011b0000afa1c0000000000047cdc13045c9fda980d5db81456feff1000404010000011000000000000000000000000000000000040100")
	buf := make([]byte, 1500)
	for try := 0; try < 5; try++ {
		if _, err := c.Write(syn); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			continue
		}
		if n < 14 || buf[0] != 0xea || buf[1] != 0xd0 {
			t.Fatalf("reply is not a V1 packet: % x", buf[:n])
		}
		typeFlags := uint16(buf[8]) | uint16(buf[9])<<8
		if typeFlags&0xf != 0 || typeFlags>>4&1 == 0 {
			t.Fatalf("reply type/flags %#04x: want SYN with FLAG_ACK", typeFlags)
		}
		return
	}
	t.Fatal("no SYN-ACK from nex-go within 5 tries")
}
