package lite

import (
	"context"
	"crypto/tls"
	"testing"
)

// BenchmarkTransportRoundTrip measures the transport alone: a client writes one
// Lite packet with a 64-byte payload, the listener hands it to a PortConn, the
// "engine" (this benchmark) writes it back to the stream's address, and the
// client reads it. One op is one round trip through two goroutine hand-offs each
// way, the WebSocket framing (and TLS), and four socket operations.
func BenchmarkTransportRoundTrip(b *testing.B) {
	for _, scheme := range []string{"tcp", "ws", "wss"} {
		b.Run(scheme, func(b *testing.B) {
			cfg := Config{}
			var client *tls.Config
			if scheme == "wss" {
				srv, roots, err := SelfSigned("127.0.0.1")
				if err != nil {
					b.Fatal(err)
				}
				cfg.TLS, client = srv, &tls.Config{RootCAs: roots}
			}
			l, err := Listen("127.0.0.1:0", &cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			v := l.Port(1)
			go func() {
				buf := make([]byte, 4096)
				for {
					n, from, err := v.ReadFromUDPAddrPort(buf)
					if err != nil {
						return
					}
					if _, err := v.WriteToUDPAddrPort(buf[:n], from); err != nil {
						return
					}
				}
			}()
			c, err := DialStream(context.Background(), scheme+"://"+l.Addr().String()+"/", &Config{TLS: client})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			pkt := toPort(b, 1, 1, make([]byte, 64))
			r := NewReader(c, 0)
			b.ReportAllocs()
			b.SetBytes(int64(len(pkt)))
			for b.Loop() {
				if _, err := c.Write(pkt); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
