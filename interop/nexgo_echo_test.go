package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gamewire/gamewire/interop/nexgo"
	"github.com/gamewire/gamewire/prudp"
)

// TestGamewireClientAgainstNexgo connects gamewire's PRUDP client to nex-go v2.3.1's
// server in V1 and V0 (both signature modes), sends RMC requests of several sizes (one larger than a fragment) and
// checks that nex-go echoes each back intact, in order, then disconnects gracefully.
func TestGamewireClientAgainstNexgo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		dialect prudp.Dialect
		key     string
		plain   bool
		zlib    bool
	}{
		{"v1", 1, prudp.NEXV1, "ridfebb9", false, false},
		// nex-go's encryption.Dummy against gamewire's NoEncryption: nex-go
		// parses each RMC request, so a side still encrypting gets no echo.
		{"v1-no-encryption", 1, prudp.NEXV1, "ridfebb9", true, false},
		// zlib on both ends: nex-go checks gamewire's ratio byte (n/c+1) and
		// compresses every payload itself, even where zlib makes it larger.
		{"v1-compression", 1, prudp.NEXV1, "ridfebb9", false, true},
		// nex-go signs V0 packets in the games mode unless the access key is the friends
		// server's (ridfebb9), for which it uses the friends mode.
		{"v0-games", 0, prudp.NEXV0, "6f599f81", false, false},
		{"v0-friends", 0, prudp.NEXV0Friends, "ridfebb9", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			srv, err := nexgo.Start(nexgo.Config{Version: tc.version, AccessKey: key, FixedRTO: 200 * time.Millisecond, NoEncryption: tc.plain, Compression: tc.zlib})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := prudp.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", srv.Port), &prudp.Config{Dialect: tc.dialect, AccessKey: key, NoEncryption: tc.plain, Compression: tc.zlib})
			if err != nil {
				t.Fatalf("dial nex-go %s: %v", tc.name, err)
			}
			sizes := []int{13, 64, 1024, 3000, 64, 1}
			echoRMC(t, ctx, conn, 0x66, 7, sizes)
			if got := srv.Received(); got != len(sizes) {
				t.Errorf("nex-go echoed %d messages, want %d", got, len(sizes))
			}
			t.Logf("%s: %d messages echoed by nex-go; client stats %+v", tc.name, len(sizes), conn.Stats())
		})
	}
}
