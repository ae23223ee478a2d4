package lossy

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"
)

func TestLinkStatistics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Seed: 7, Loss: 0.2, Duplicate: 0.05, Reorder: 0.1, Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond, QueueLen: 20000})
		a, _ := n.Listen(netip.MustParseAddrPort("127.0.0.1:1"))
		b, _ := n.Listen(netip.MustParseAddrPort("127.0.0.1:2"))
		const count = 10000
		for i := range count {
			if _, err := a.WriteToUDPAddrPort([]byte{byte(i), byte(i >> 8)}, b.AddrPort()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		st := n.Stats()
		if st.Sent != count {
			t.Fatalf("sent %d", st.Sent)
		}
		lossRate := float64(st.Lost) / count
		if lossRate < 0.17 || lossRate > 0.23 {
			t.Errorf("loss rate %.3f, want about 0.2", lossRate)
		}
		if st.Duplicated < 300 || st.Duplicated > 700 {
			t.Errorf("duplicated %d, want about 500", st.Duplicated)
		}
		if st.Delivered != st.Sent-st.Lost+st.Duplicated {
			t.Errorf("delivered %d, want sent-lost+duplicated = %d", st.Delivered, st.Sent-st.Lost+st.Duplicated)
		}
		// Read everything and count inversions: reordering must show.
		buf := make([]byte, 16)
		inversions, prev := 0, -1
		for range st.Delivered {
			n, from, err := b.ReadFromUDPAddrPort(buf)
			if err != nil || n != 2 || from != a.AddrPort() {
				t.Fatalf("read: %d %v %v", n, from, err)
			}
			v := int(buf[0]) | int(buf[1])<<8
			if v < prev {
				inversions++
			}
			prev = v
		}
		if inversions == 0 {
			t.Error("no datagram was reordered")
		}
	})
}

func TestSameSeedSameChoices(t *testing.T) {
	run := func() Stats {
		var st Stats
		synctest.Test(t, func(t *testing.T) {
			n := New(Config{Seed: 42, Loss: 0.3, Duplicate: 0.1})
			a, _ := n.Listen(netip.AddrPort{})
			b, _ := n.Listen(netip.AddrPort{})
			for range 1000 {
				a.WriteToUDPAddrPort([]byte("x"), b.AddrPort())
			}
			st = n.Stats()
		})
		return st
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("runs differ: %+v vs %+v", a, b)
	}
}

func TestClose(t *testing.T) {
	n := New(Config{})
	a, _ := n.Listen(netip.AddrPort{})
	a.Close()
	if _, _, err := a.ReadFromUDPAddrPort(make([]byte, 1)); err == nil {
		t.Fatal("read after close succeeded")
	}
	if _, err := a.WriteToUDPAddrPort([]byte("x"), a.AddrPort()); err == nil {
		t.Fatal("write after close succeeded")
	}
}

func TestTamperAndInject(t *testing.T) {
	n := New(Config{Tamper: func(b []byte, from, to netip.AddrPort) []byte { b[0] ^= 0xff; return b }})
	a, _ := n.Listen(netip.AddrPort{})
	b, _ := n.Listen(netip.AddrPort{})
	a.WriteToUDPAddrPort([]byte{1}, b.AddrPort())
	buf := make([]byte, 4)
	if k, _, _ := b.ReadFromUDPAddrPort(buf); k != 1 || buf[0] != 0xfe {
		t.Fatalf("tamper not applied: %x", buf[:k])
	}
	spoofed := netip.MustParseAddrPort("10.9.8.7:6")
	n.Inject([]byte{7}, spoofed, b.AddrPort())
	if k, from, _ := b.ReadFromUDPAddrPort(buf); k != 1 || from != spoofed || buf[0] != 7 {
		t.Fatalf("inject: %x from %v", buf[:k], from)
	}
}
