package prudp

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/gamewire/gamewire/internal/lossy"
	"github.com/gamewire/gamewire/prudp/crypt"
)

// bombTransform seals every reliable fragment as a zlib bomb (ratio byte
// 255, about 350 bytes inflating to 332,800) under the connection's real
// RC4 stream, as a client of issue 18's attack sends them.
type bombTransform struct {
	*rc4Transform
	bomb []byte
}

func (t *bombTransform) sealReliable(dst, _ []byte, sub uint8, _ uint16) []byte {
	start := len(dst)
	dst = append(dst, t.bomb...)
	t.pairs[sub].enc.XORPacket(dst[start:], dst[start:])
	return dst
}

// TestCompressionBombRefused: messages of three zlib bombs each are refused
// by the first fragment's inflated size (one decompress drop per message:
// the two fragments after it are deciphered but not inflated), nothing of
// them reaches the handler, and the connection goes on with honest
// compressed messages.
func TestCompressionBombRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got atomic.Int64
		srv := &Server{Config: Config{AccessKey: testKey, Compression: true},
			Handler: HandlerFunc(func(c *Conn, m Message) {
				got.Add(1)
				_ = c.Send(context.Background(), m.Substream, m.Data)
			})}
		cfg := Config{AccessKey: testKey, Compression: true}
		_, c, done := lossyPair(t, lossy.Config{Seed: 18}, srv, &cfg)
		defer done()

		bomb := crypt.Compress(nil, make([]byte, 332800))
		sh := c.s.sh
		sh.mu.Lock()
		honest := c.s.xf
		c.s.xf = &bombTransform{rc4Transform: honest.(*rc4Transform), bomb: bomb}
		room := honest.room()
		sh.mu.Unlock()

		const messages = 20
		for range messages {
			if err := c.Send(context.Background(), 0, make([]byte, 2*room+100)); err != nil { // three fragments
				t.Fatal(err)
			}
		}
		synctest.Wait()
		st := srv.Stats()
		if got.Load() != 0 {
			t.Fatalf("%d bomb messages delivered to the handler", got.Load())
		}
		if st.ConnDrops["decompress"] != messages {
			t.Fatalf("decompress drops %d, want one per message (%d): %v", st.ConnDrops["decompress"], messages, st.ConnDrops)
		}

		sh.mu.Lock()
		c.s.xf = honest
		sh.mu.Unlock()
		if err := c.Send(context.Background(), 0, []byte("still here")); err != nil {
			t.Fatal(err)
		}
		if m := recvOrFail(t, c); string(m.Data) != "still here" {
			t.Fatalf("echo %q", m.Data)
		}
	})
}
