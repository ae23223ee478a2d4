package prudp

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
)

// TestSequentialGracefulCloses closes 200 connections one after another over
// a lossy link. Every Close must be acknowledged, also when the server's
// application aborts each connection as soon as it ended (the peer's
// DISCONNECT was then dropped with its queued acknowledgements, and its
// retransmissions met an unknown connection: the NEX engineer's ~2% of
// graceful closes that waited for their context).
func TestSequentialGracefulCloses(t *testing.T) {
	for _, tc := range []struct {
		name        string
		abortOnDone bool
	}{{"handler", false}, {"abort-on-done", true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := lossy.New(lossy.Config{Seed: 3, Loss: 0.2, Delay: time.Millisecond})
				spc, err := n.Listen(lossyServerAddr)
				if err != nil {
					t.Fatal(err)
				}
				srv := &Server{Config: Config{AccessKey: testKey}, Handler: HandlerFunc(func(c *Conn, m Message) {
					_ = c.Send(context.Background(), 0, m.Data)
					if tc.abortOnDone {
						go func() { <-c.Done(); c.Abort() }()
					}
				})}
				served := make(chan error, 1)
				go func() { served <- srv.Serve(spc) }()
				const closes = 200
				// Failures end the loop without t.Fatal, so that the server and
				// the client are stopped and the bubble exits cleanly.
				for i := range closes {
					if err := gracefulRoundTrip(n, i); err != nil {
						t.Errorf("connection %d of %d: %v; server %+v", i, closes, err, srv.Stats())
						break
					}
				}
				time.Sleep(time.Minute) // past every linger
				synctest.Wait()
				st := srv.Stats()
				if st.Ended["peer_closed"] != closes || st.Sessions != 0 {
					t.Errorf("ended %v, %d sessions left; want %d peer_closed, 0 left", st.Ended, st.Sessions, closes)
				}
				srv.Close()
				<-served
			})
		})
	}
}

// gracefulRoundTrip dials from a new port, echoes one message and closes
// gracefully; the Close must be acknowledged within 30 s of fake time.
func gracefulRoundTrip(n *lossy.Network, i int) error {
	cpc, err := n.Listen(netip.AddrPortFrom(lossyClientAddr.Addr(), uint16(20000+i)))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := Config{AccessKey: testKey}
	c, err := DialPacketConn(ctx, cpc, lossyServerAddr, &cfg, true)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Abort() // no-op once closed
	if err := c.Send(ctx, 0, []byte{byte(i)}); err != nil {
		return err
	}
	if m, err := c.Recv(ctx); err != nil || len(m.Data) != 1 || m.Data[0] != byte(i) {
		return fmt.Errorf("echo: %v %w", m.Data, err)
	}
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	if err := c.Close(cctx); err != nil {
		return fmt.Errorf("graceful close not acknowledged: %w; client %+v; link %+v", err, c.Stats(), n.Stats())
	}
	return nil
}
