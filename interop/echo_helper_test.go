package interop

import (
	"context"
	"testing"

	"github.com/gamewire/gamewire/interop/rmcframe"
	"github.com/gamewire/gamewire/prudp"
)

// echoRMC sends one RMC request of each size on conn (call ids 1, 2, ...), checks
// that the peer echoes each back intact and in order, and then closes conn
// gracefully.
func echoRMC(t *testing.T, ctx context.Context, conn *prudp.Conn, protocol uint8, method uint32, sizes []int) {
	t.Helper()
	for i, size := range sizes {
		req := rmcframe.Request(protocol, uint32(i+1), method, size, byte(i))
		if err := conn.Send(ctx, 0, req); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		m, err := conn.Recv(ctx)
		if err != nil {
			t.Fatalf("recv %d (size %d): %v (stats %+v)", i, size, err, conn.Stats())
		}
		if err := rmcframe.CheckEcho(req, m.Data); err != nil {
			t.Fatalf("message %d (size %d): %v", i, size, err)
		}
	}
	if err := conn.Close(ctx); err != nil {
		t.Errorf("graceful close: %v", err)
	}
}
