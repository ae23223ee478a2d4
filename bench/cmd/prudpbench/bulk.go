package main

import (
	"fmt"
	"io"
	"net"
	"time"

	kcp "github.com/xtaci/kcp-go/v5"
)

// runBulk prints one connection's one-way transfer rate for kcp-go (no FEC, no
// encryption) and for gamewire without encryption (Config.NoEncryption: no RC4;
// checksums and signatures stay), as the comparison asks, and with its dialect's
// encryption, measured back to back in this run.
func runBulk(mb int) {
	if *bulkLoss > 0 {
		fmt.Printf("Both bulk transfers through a loopback relay dropping %.1f%% of datagrams each way (seeded).\n\n", *bulkLoss*100)
	}
	fmt.Println("| bulk transfer, one connection | MB/s |")
	fmt.Println("|---|---|")
	k, err := bulkKCP(mb)
	printBulk("kcp-go v5.6.72 (no FEC, no crypt)", k, err)
	g, err := bulkGamewire(mb, true)
	printBulk("gamewire "+*serveDial+" (no encryption)", g, err)
	var e float64
	if *serveDial != "nex-lite" && *serveDial != "hyperscape" {
		e, err = bulkGamewire(mb, false)
		printBulk("gamewire "+*serveDial+" (RC4)", e, err)
	}
	if k > 0 && g > 0 {
		fmt.Printf("\ngamewire (no encryption) / kcp-go bulk: %.2fx\n", g/k)
	}
	if k > 0 && e > 0 {
		fmt.Printf("gamewire (RC4) / kcp-go bulk: %.2fx\n", e/k)
	}
}

func printBulk(name string, mbps float64, err error) {
	if err != nil {
		fmt.Printf("| %s | error: %v |\n", name, err)
		return
	}
	fmt.Printf("| %s | %.1f |\n", name, mbps)
}

// bulkKCP sends mb megabytes over one kcp-go session in fast mode with a large window.
func bulkKCP(mb int) (float64, error) {
	l, err := kcp.ListenWithOptions("127.0.0.1:0", nil, 0, 0)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	setBuffers(l)
	total := mb << 20
	done := make(chan error, 1)
	go func() {
		s, err := l.AcceptKCP()
		if err != nil {
			done <- err
			return
		}
		defer s.Close()
		tune(s)
		_, err = io.CopyN(io.Discard, s, int64(total))
		done <- err
	}()
	addr, stop, err := via(l.Addr().String())
	if err != nil {
		return 0, err
	}
	defer stop()
	s, err := kcp.DialWithOptions(addr, nil, 0, 0)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	tune(s)
	buf := make([]byte, 64<<10)
	start := time.Now()
	for sent := 0; sent < total; sent += len(buf) {
		if _, err := s.Write(buf); err != nil {
			return 0, err
		}
	}
	select {
	case err := <-done:
		if err != nil {
			return 0, err
		}
	case <-time.After(2 * time.Minute):
		return 0, fmt.Errorf("kcp bulk did not finish in 2 minutes")
	}
	return float64(total) / (1 << 20) / time.Since(start).Seconds(), nil
}

// socketBuffer is what both bulk transfers ask the kernel for, as gamewire's server and
// client do by default (the kernel caps it at net.core.rmem_max / wmem_max).
const socketBuffer = 4 << 20

func setBuffers(c interface {
	SetReadBuffer(int) error
	SetWriteBuffer(int) error
}) {
	_ = c.SetReadBuffer(socketBuffer)
	_ = c.SetWriteBuffer(socketBuffer)
}

// tune sets kcp-go's fast mode (nodelay, 10 ms interval, fast resend after 2 skips,
// no congestion control), a 1024-packet window and a 1400-byte MTU, as kcp-go's own
// benchmarks and kcptun's "fast" profiles do, and large socket buffers.
func tune(s *kcp.UDPSession) {
	setBuffers(s)
	s.SetNoDelay(1, 10, 2, 1)
	s.SetWindowSize(1024, 1024)
	s.SetMtu(1400)
	// Stream mode is what kcp-go's own bulk benchmarks use; v5.6.72 marks the toggle
	// deprecated but still honours it.
	//lint:ignore SA1019 kept to match kcp-go's own bulk benchmark settings
	s.SetStreamMode(true)
	s.SetACKNoDelay(false)
}

var _ net.Conn = (*kcp.UDPSession)(nil)
