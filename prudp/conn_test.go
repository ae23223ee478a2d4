package prudp

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestConnMinorVersionAndLocalAddr checks the negotiated minor version on
// both ends (the lower of the two offers; 0 on V0) and that LocalAddr is the
// socket's real address: the client's is the port the server sees.
func TestConnMinorVersionAndLocalAddr(t *testing.T) {
	for _, tc := range []struct {
		dialect        Dialect
		server, client uint8
		want           uint8
	}{
		{NEXV1, 0, 0, 4}, // the defaults
		{NEXV1, 2, 5, 2},
		{NEXV1, 5, 1, 1},
		{NEXV1, 3, 3, 3},
		{NEXV0, 0, 0, 0},
	} {
		t.Run(fmt.Sprintf("%v/%d-%d", tc.dialect, tc.server, tc.client), func(t *testing.T) {
			serverSide := make(chan *Conn, 1)
			srv := &Server{Config: Config{Dialect: tc.dialect, AccessKey: testKey, MinorVersion: tc.server},
				Handler: HandlerFunc(func(c *Conn, m Message) {
					select {
					case serverSide <- c:
					default:
					}
					_ = c.Send(context.Background(), m.Substream, m.Data)
				})}
			addr := startServer(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cfg := Config{Dialect: tc.dialect, AccessKey: testKey, MinorVersion: tc.client}
			c, err := Dial(ctx, addr, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Abort()
			if err := c.Send(ctx, 0, []byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Recv(ctx); err != nil {
				t.Fatal(err)
			}
			sc := <-serverSide
			if got := c.MinorVersion(); got != tc.want {
				t.Errorf("client MinorVersion %d, want %d", got, tc.want)
			}
			if got := sc.MinorVersion(); got != tc.want {
				t.Errorf("server MinorVersion %d, want %d", got, tc.want)
			}
			la := c.LocalAddr()
			if !la.IsValid() || la.Port() == 0 || la != sc.RemoteAddr() {
				t.Errorf("client LocalAddr %v, server sees it as %v", la, sc.RemoteAddr())
			}
			if got := sc.LocalAddr().String(); got != addr {
				t.Errorf("server conn LocalAddr %v, want the server's %v", got, addr)
			}
			if got := c.RemoteAddr().String(); got != addr {
				t.Errorf("client RemoteAddr %v, want %v", got, addr)
			}
		})
	}
}
