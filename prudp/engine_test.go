package prudp

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"
)

// startServer runs srv on a loopback socket and returns its address.
func startServer(t *testing.T, srv *Server) string {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(pc) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return pc.LocalAddr().String()
}

func TestEchoLoopback(t *testing.T) {
	for _, d := range []Dialect{NEXV1, NEXV0, NEXV0Friends} {
		t.Run(d.String(), func(t *testing.T) {
			cfg := Config{Dialect: d, AccessKey: "6f599f81"}
			srv := &Server{Config: cfg}
			addr := startServer(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				msg := bytes.Repeat([]byte{byte(i)}, 10+i*100)
				if err := c.Send(ctx, 0, msg); err != nil {
					t.Fatal(err)
				}
				m, err := c.Recv(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(m.Data, msg) {
					t.Fatalf("message %d: got %d bytes, want %d", i, len(m.Data), len(msg))
				}
			}
			if err := c.Close(ctx); err != nil {
				t.Fatal(err)
			}
			st := c.Stats()
			t.Logf("stats: %+v", st)
		})
	}
}
