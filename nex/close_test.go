package nex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/prudp"
)

// TestShutdownBeforeServe: a Shutdown that comes before Serve has started its
// PRUDP servers (a Ctrl-C right after start) makes Serve return
// prudp.ErrServerClosed at once instead of serving on.
func TestShutdownBeforeServe(t *testing.T) {
	srv := &Server{Accounts: testAccounts(), Config: prudp.Config{Dialect: prudp.NEXV1, AccessKey: "6f599f81"}}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, b, err := loopbackPair()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(a, b) }()
	select {
	case err := <-done:
		if !errors.Is(err, prudp.ErrServerClosed) {
			t.Fatalf("Serve after Shutdown: %v, want ErrServerClosed", err)
		}
	case <-time.After(10 * time.Second):
		srv.Close()
		t.Fatal("Serve after Shutdown kept serving")
	}
}
