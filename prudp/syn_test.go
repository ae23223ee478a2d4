package prudp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp/wire"
)

// TestClientSYNSessionIDZero: the client's SYN carries session id 0, as consoles
// send it (the published Terraria SYN) and as NintendoClients' server insists;
// the client's session id is announced by its CONNECT.
func TestClientSYNSessionIDZero(t *testing.T) {
	const key = "3d37fbdb"
	for _, tc := range []struct {
		dialect Dialect
		codec   interface {
			Parse([]byte) (wire.Packet, int, error)
		}
	}{
		{NEXV1, wire.NewV1(key)},
		{NEXV0, wire.NewV0(key, wire.ModeGames)},
	} {
		t.Run(tc.dialect.String(), func(t *testing.T) {
			pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			go Dial(ctx, pc.LocalAddr().String(), &Config{Dialect: tc.dialect, AccessKey: key}) // never answered
			pc.SetReadDeadline(time.Now().Add(3 * time.Second))
			buf := make([]byte, 1500)
			n, err := pc.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := tc.codec.Parse(buf[:n])
			if err != nil {
				t.Fatalf("parse the client's first datagram % x: %v", buf[:n], err)
			}
			if p.Type != wire.TypeSyn || p.SessionID != 0 {
				t.Fatalf("first packet %v with session id %d, want a SYN with session id 0", p.Type, p.SessionID)
			}
		})
	}
}
