package main

import (
	"context"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/interop/nexgo"
)

// serveNexgo runs nex-go v2.3.1's server with an endpoint that echoes every RMC request.
// Its retransmission timeout is pinned, since nex-go's own falls to zero on loopback.
func serveNexgo(ctx context.Context) (string, error) {
	version := 1
	if *serveDial == "nex-v0" {
		version = 0
	}
	s, err := nexgo.Start(nexgo.Config{Version: version, AccessKey: *accessKey, FixedRTO: 200 * time.Millisecond})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", s.Port), nil
}
