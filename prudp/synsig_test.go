package prudp

import (
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/gamewire/gamewire/internal/lossy"
)

// TestSYNBadSignatureNotAnswered: V1 SYNs whose signature is zeros, or
// made with another access key, get no SYN-ACK and are counted as
// "syn_signature" drops; correctly signed SYNs are all answered, and a
// real client still connects.
func TestSYNBadSignatureNotAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{AccessKey: testKey}
		n := lossy.New(lossy.Config{Seed: 5, QueueLen: 1 << 14})
		spc, _ := n.Listen(lossyServerAddr)
		srv := &Server{Config: cfg}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(spc) }()
		defer func() { srv.Close(); <-served }()

		attacker, _ := n.Listen(lossyClientAddr)
		var answers atomic.Int64
		go func() {
			buf := make([]byte, 4096)
			for {
				if _, _, err := attacker.ReadFromUDPAddrPort(buf); err != nil {
					return
				}
				answers.Add(1)
			}
		}()
		defer attacker.Close()
		synctest.Wait()

		sign := func(key string) []byte {
			c, err := newCodec(&Config{AccessKey: key})
			if err != nil {
				t.Fatal(err)
			}
			syn := pkt{typ: typeSyn, flags: flagNeedAck, src: vport(StreamRVSecure, 0xf), dst: vport(StreamRVSecure, 1), supported: 4}
			b, err := c.appendPacket(nil, &syn, keys{})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		good := sign(testKey)
		zeros := append([]byte(nil), good...)
		clear(zeros[14:30]) // the 16-byte signature after the 14-byte V1 header
		otherKey := sign("wrongkey")

		const flood = 1000
		for i := range flood {
			b := zeros
			if i%2 == 1 {
				b = otherKey
			}
			n.Inject(b, lossyClientAddr, lossyServerAddr)
			if i%256 == 0 {
				synctest.Wait()
			}
		}
		synctest.Wait()
		st := srv.Stats()
		if got := answers.Load(); got != 0 || st.SYNsAnswered != 0 {
			t.Fatalf("badly signed SYNs answered: %d datagrams back, SYNsAnswered %d", got, st.SYNsAnswered)
		}
		if st.Drops["syn_signature"] != flood {
			t.Fatalf("syn_signature drops %d, want %d (%v)", st.Drops["syn_signature"], flood, st.Drops)
		}
		for range 10 {
			n.Inject(good, lossyClientAddr, lossyServerAddr)
		}
		synctest.Wait()
		if got := answers.Load(); got != 10 || srv.Stats().SYNsAnswered != 10 {
			t.Fatalf("well signed SYNs: %d answers, want 10", got)
		}
	})
}
