package lite

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gamewire/gamewire/prudp/wire"
)

// testListener serves on 127.0.0.1 with TLS when secure.
func testListener(t *testing.T, secure bool, cfg Config) (*Listener, *tls.Config) {
	t.Helper()
	var client *tls.Config
	if secure {
		srv, roots, err := SelfSigned("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS = srv
		client = &tls.Config{RootCAs: roots}
	}
	l, err := Listen("127.0.0.1:0", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, client
}

func testURL(l *Listener, scheme string) string { return scheme + "://" + l.Addr().String() + "/" }

// readPacket reads one packet from a PortConn with a deadline for the test.
func readPacket(t *testing.T, v *PortConn) ([]byte, netip.AddrPort) {
	t.Helper()
	type res struct {
		b    []byte
		from netip.AddrPort
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		b := make([]byte, 4096)
		n, from, err := v.ReadFromUDPAddrPort(b)
		ch <- res{b[:n], from, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read: %v", r.err)
		}
		return r.b, r.from
	case <-time.After(20 * time.Second):
		t.Fatal("no packet within 20 s")
	}
	return nil, netip.AddrPort{}
}

// toPort returns a Lite DATA packet to a virtual port.
func toPort(t testing.TB, port uint8, seq uint16, payload []byte) []byte {
	d := wire.NewLite("")
	p := wire.Packet{Src: wire.VPort{Stream: 10, Port: 0x1f}, Dst: wire.VPort{Stream: 10, Port: port},
		Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: seq, Payload: payload}
	b, err := d.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPacketsInOut runs every transport: a client writes packets in writes
// that cut them anywhere (several per WebSocket message, one split across
// messages), the listener hands each whole to the PortConn of its port, and
// writes to the stream's address come back to the client.
func TestPacketsInOut(t *testing.T) {
	for _, scheme := range []string{"ws", "wss", "tcp", "tls"} {
		t.Run(scheme, func(t *testing.T) {
			l, ccfg := testListener(t, scheme == "wss" || scheme == "tls", Config{})
			p1, p2 := l.Port(1), l.Port(2)
			c, err := DialStream(context.Background(), testURL(l, scheme), &Config{TLS: ccfg})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var pkts [][]byte
			var stream []byte
			for i := range 6 {
				port := uint8(1 + i%2)
				pkts = append(pkts, toPort(t, port, uint16(i), bytes.Repeat([]byte{byte(i)}, 10+300*i)))
				stream = append(stream, pkts[i]...)
			}
			// Writes of 1, 5, 13, 700 and the rest: boundaries fall inside headers and payloads.
			for _, n := range []int{1, 5, 13, 700, len(stream)} {
				n = min(n, len(stream))
				if _, err := c.Write(stream[:n]); err != nil {
					t.Fatal(err)
				}
				stream = stream[n:]
			}
			var from netip.AddrPort
			for i, want := range pkts {
				v := p1
				if i%2 == 1 {
					v = p2
				}
				got, f := readPacket(t, v)
				if !bytes.Equal(got, want) {
					t.Fatalf("packet %d: got %d bytes, want %d", i, len(got), len(want))
				}
				if from.IsValid() && f != from {
					t.Fatalf("packet %d from %v, earlier ones from %v", i, f, from)
				}
				from = f
			}
			// Back to the client, two packets in one write.
			reply := append(toPort(t, 0x1f, 1, []byte("one")), toPort(t, 0x1f, 2, []byte("two"))...)
			if _, err := p2.WriteToUDPAddrPort(reply, from); err != nil {
				t.Fatal(err)
			}
			r := NewReader(c, 0)
			for i, want := range []string{"one", "two"} {
				p, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasSuffix(p, []byte(want)) {
					t.Fatalf("reply %d: %x", i, p)
				}
			}
			st := l.Stats()
			if st.Accepted[scheme] != 1 || st.PacketsIn != 6 {
				t.Errorf("stats: %+v", st)
			}
		})
	}
}

// TestUnservedPortDropped: a packet for a port without a PortConn is counted, not queued.
func TestUnservedPortDropped(t *testing.T) {
	l, _ := testListener(t, false, Config{})
	p1 := l.Port(1)
	c, err := DialStream(context.Background(), testURL(l, "tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := toPort(t, 1, 2, []byte("after"))
	c.Write(append(toPort(t, 7, 1, []byte("nobody")), want...))
	got, _ := readPacket(t, p1)
	if !bytes.Equal(got, want) {
		t.Fatalf("got %x", got)
	}
	if d := l.Stats().Drops[dropNoPort]; d != 1 {
		t.Errorf("no_port drops: %d, want 1", d)
	}
}

// waitFor polls cond (for state another goroutine changes) for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestCloseMidMessage: a WebSocket client sends a whole packet and half of
// the next one, then closes. The whole packet is delivered, the half is not,
// the stream is counted as truncated, and the engine receives a forced
// DISCONNECT for the connection the stream carried.
func TestCloseMidMessage(t *testing.T) {
	l, _ := testListener(t, false, Config{})
	p1 := l.Port(1)
	ctx := context.Background()
	wc, _, err := websocket.Dial(ctx, testURL(l, "ws"), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	if wc.Subprotocol() != Subprotocol {
		t.Errorf("subprotocol %q, want NEX", wc.Subprotocol())
	}
	whole := toPort(t, 1, 1, []byte("whole"))
	half := toPort(t, 1, 2, bytes.Repeat([]byte{9}, 100))
	if err := wc.Write(ctx, websocket.MessageBinary, append(whole, half[:50]...)); err != nil {
		t.Fatal(err)
	}
	got, from := readPacket(t, p1)
	if !bytes.Equal(got, whole) {
		t.Fatalf("got %x", got)
	}
	wc.CloseNow() // no close frame: the socket just goes away
	disc, from2 := readPacket(t, p1)
	p, _, err := wire.NewLite("").Parse(disc)
	if err != nil || p.Type != wire.TypeDisconnect || p.Flags != 0 || from2 != from ||
		p.Src.Port != 0x1f || p.Dst.Port != 1 || p.Src.Stream != 10 {
		t.Fatalf("after the close: %+v from %v (%v), want a forced DISCONNECT from %v", p, from2, err, from)
	}
	waitFor(t, "stream closed", func() bool { return l.Stats().Streams == 0 })
	st := l.Stats()
	if st.Closed[reasonTruncated]+st.Closed[reasonReadError] != 1 {
		t.Errorf("closed: %v, want one truncated stream", st.Closed)
	}
	if _, err := p1.WriteToUDPAddrPort(whole, from); !errors.Is(err, ErrNoStream) {
		t.Errorf("write to the closed stream: %v, want ErrNoStream", err)
	}
}

// TestSlowReaderDropped: a peer that never reads fills its queue; the
// transport drops it with ErrSlowReader instead of buffering without bound
// or blocking the engine.
func TestSlowReaderDropped(t *testing.T) {
	for _, scheme := range []string{"ws", "tcp"} {
		t.Run(scheme, func(t *testing.T) {
			const limit = 256 << 10
			l, _ := testListener(t, false, Config{MaxQueued: limit})
			p1 := l.Port(1)
			c, err := DialStream(context.Background(), testURL(l, scheme), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(toPort(t, 1, 1, nil))
			_, from := readPacket(t, p1)
			pkt := toPort(t, 0x1f, 1, make([]byte, 1300))
			var werr error
			written := 0
			for written < 1<<30 { // the socket buffers take a few MB at most
				start := time.Now()
				_, werr = p1.WriteToUDPAddrPort(pkt, from)
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("a write blocked the engine for %v", d)
				}
				if werr != nil {
					break
				}
				written += len(pkt)
			}
			if !errors.Is(werr, ErrSlowReader) {
				t.Fatalf("after %d bytes: %v, want ErrSlowReader", written, werr)
			}
			if _, err := p1.WriteToUDPAddrPort(pkt, from); !errors.Is(err, ErrNoStream) {
				t.Errorf("next write: %v, want ErrNoStream", err)
			}
			waitFor(t, "stream gone", func() bool { return l.Stats().Streams == 0 })
			if n := l.Stats().Closed[reasonSlowReader]; n != 1 {
				t.Errorf("slow_reader closes: %d", n)
			}
		})
	}
}

// TestReadBackPressure: while the engine does not read, a stream's packets
// wait in a bounded queue and then in TCP; none is dropped, all arrive in
// order once the engine reads.
func TestReadBackPressure(t *testing.T) {
	const queue = 4
	l, _ := testListener(t, false, Config{ReadQueue: queue})
	p1 := l.Port(1)
	c, err := DialStream(context.Background(), testURL(l, "ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 500
	go func() {
		for i := range n {
			if _, err := c.Write(toPort(t, 1, uint16(i), make([]byte, 1000))); err != nil {
				return
			}
		}
	}()
	waitFor(t, "the read queue to fill", func() bool { return len(p1.in) == queue })
	time.Sleep(50 * time.Millisecond)
	if got := len(p1.in); got != queue {
		t.Fatalf("queue holds %d packets, bound %d", got, queue)
	}
	for i := range n {
		b, _ := readPacket(t, p1)
		p, _, err := wire.NewLite("").Parse(b)
		if err != nil || p.Seq != uint16(i) {
			t.Fatalf("packet %d: seq %d, %v", i, p.Seq, err)
		}
	}
	if d := l.Stats().Drops; len(d) != 0 {
		t.Errorf("drops: %v", d)
	}
}

// TestListenerRefuses: wrong path, garbage, a TLS client on a plain listener.
func TestListenerRefuses(t *testing.T) {
	l, _ := testListener(t, false, Config{HandshakeTimeout: 2 * time.Second})
	l.Port(1)
	ctx := context.Background()
	if _, _, err := websocket.Dial(ctx, "ws://"+l.Addr().String()+"/other", nil); err == nil {
		t.Error("a WebSocket on /other was accepted")
	}
	// Raw bytes that are neither HTTP nor Lite: HTTP answers 400 and closes.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\r', '\n', '\r', '\n'})
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	c.Close()
	if !bytes.Contains(buf[:n], []byte("400")) {
		t.Errorf("garbage got %q, want an HTTP 400", buf[:n])
	}
	// A raw stream that goes wrong after a good packet: closed for framing.
	c, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(append(toPort(t, 1, 1, nil), 0xea, 0xd0, 1, 2))
	readPacket(t, l.Port(1))
	waitFor(t, "framing close", func() bool { return l.Stats().Closed[reasonFraming] == 1 })
	if st := l.Stats(); st.Refused["path"] != 1 {
		t.Errorf("refused: %v", st.Refused)
	}
}

// TestManyStreams: 50 clients at once over every transport keep their packets apart.
func TestManyStreams(t *testing.T) {
	l, ccfg := testListener(t, true, Config{})
	p1 := l.Port(1)
	schemes := []string{"wss", "tls"}
	const clients = 50
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := DialStream(context.Background(), testURL(l, schemes[i%2]), &Config{TLS: ccfg})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	for round := range 3 {
		for i, c := range conns {
			if _, err := c.Write(toPort(t, 1, uint16(round), []byte{byte(i)})); err != nil {
				t.Fatal(err)
			}
		}
	}
	owner := map[netip.AddrPort]byte{}
	next := map[netip.AddrPort]uint16{}
	for range 3 * clients {
		b, from := readPacket(t, p1)
		p, _, err := wire.NewLite("").Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := owner[from]; ok && o != p.Payload[0] {
			t.Fatalf("client %d's packet came from client %d's address", p.Payload[0], o)
		}
		owner[from] = p.Payload[0]
		if p.Seq != next[from] {
			t.Fatalf("client %d: seq %d, want %d", p.Payload[0], p.Seq, next[from])
		}
		next[from]++
	}
	if len(owner) != clients {
		t.Errorf("%d distinct addresses, want %d", len(owner), clients)
	}
	for from, i := range owner {
		if _, err := p1.WriteToUDPAddrPort(toPort(t, 0x1f, 9, []byte{i}), from); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range conns {
		p, err := NewReader(c, 0).Next()
		if err != nil || p[len(p)-1] != byte(i) {
			t.Fatalf("client %d got %x, %v", i, p, err)
		}
	}
}

// TestStatsCounters: Stats reports the transport's counters (package
// prudp/metrics exports them to Prometheus).
func TestStatsCounters(t *testing.T) {
	l, _ := testListener(t, false, Config{})
	p1 := l.Port(1)
	c, err := DialStream(context.Background(), testURL(l, "ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(toPort(t, 1, 1, nil))
	readPacket(t, p1)
	st := l.Stats()
	if st.Streams != 1 || st.Accepted["ws"] != 1 || st.PacketsIn != 1 {
		t.Errorf("streams %d, opened ws %d, packets in %d; want 1 each (all: %+v)", st.Streams, st.Accepted["ws"], st.PacketsIn, st)
	}
}

// TestServeHTTPAndAddStream: the Listener mounted on an HTTP server of the
// caller's, and a stream attached by hand (net.Pipe), both reach the engine.
func TestServeHTTPAndAddStream(t *testing.T) {
	l := NewListener(nil)
	defer l.Close()
	p1 := l.Port(1)
	mux := http.NewServeMux()
	mux.Handle("/", l)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	defer hs.Close()
	c, err := DialStream(context.Background(), "ws://"+ln.Addr().String()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := toPort(t, 1, 1, []byte("via your http.Server"))
	c.Write(want)
	if got, _ := readPacket(t, p1); !bytes.Equal(got, want) {
		t.Fatalf("got %x", got)
	}

	a, b := net.Pipe()
	defer a.Close()
	addr, err := l.AddStream(b)
	if err != nil {
		t.Fatal(err)
	}
	want = toPort(t, 1, 2, []byte("via a pipe"))
	go a.Write(want)
	got, from := readPacket(t, p1)
	if !bytes.Equal(got, want) || from.String() != addr {
		t.Fatalf("got %x from %v, want from %s", got, from, addr)
	}
	if !strings.HasPrefix(addr, "[fd67:7700:") {
		t.Errorf("a pipe has no IP address; got %s, want a synthetic fd67:7700::/32 one", addr)
	}
	if st := l.Stats(); st.Accepted[KindWS] != 1 || st.Accepted[KindStream] != 1 {
		t.Errorf("accepted: %v", st.Accepted)
	}
}

// TestIdleStreamClosed: a stream that sends nothing for IdleTimeout is closed.
func TestIdleStreamClosed(t *testing.T) {
	l, _ := testListener(t, false, Config{IdleTimeout: 300 * time.Millisecond})
	p1 := l.Port(1)
	for _, scheme := range []string{"tcp", "ws"} {
		c, err := DialStream(context.Background(), testURL(l, scheme), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(toPort(t, 1, 1, nil))
		readPacket(t, p1)
	}
	waitFor(t, "the idle streams to close", func() bool { return l.Stats().Closed[reasonIdle] == 2 })
	for range 2 {
		disc, _ := readPacket(t, p1) // the engine is told
		if p, _, err := wire.NewLite("").Parse(disc); err != nil || p.Type != wire.TypeDisconnect {
			t.Fatalf("after the idle close: %+v, %v", p, err)
		}
	}
}

// TestPortClosedClosesStreams: a stream whose reader is waiting to hand a
// packet to a port whose server stops (its PortConn is closed) is closed, not
// left open with nobody reading it.
func TestPortClosedClosesStreams(t *testing.T) {
	l, _ := testListener(t, false, Config{ReadQueue: 1})
	p1 := l.Port(1)
	c, err := DialStream(context.Background(), testURL(l, "tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(append(toPort(t, 1, 1, nil), toPort(t, 1, 2, nil)...)) // the second waits for room
	waitFor(t, "the queue to fill", func() bool { return len(p1.in) == 1 && l.Stats().PacketsIn == 2 })
	p1.Close()
	waitFor(t, "the stream to close", func() bool { return l.Stats().Streams == 0 })
	if n := l.Stats().Closed[reasonClosed]; n != 1 {
		t.Errorf("closed: %v", l.Stats().Closed)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("the client's stream is still open")
	}
}

// upgrade sends a raw WebSocket upgrade request for / with the given extra
// header lines and returns the response, read by net/http, and the connection.
func upgrade(t *testing.T, l *Listener, request string) (*http.Response, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the upgrade response: %v", err)
	}
	resp.Body.Close()
	return resp, c
}

// TestWebSocketAnyNonEmptyKey: the upgrade accepts any non-empty
// Sec-WebSocket-Key and answers the hash of the key as sent (NintendoClients'
// anynet sends secrets.token_urlsafe(), 43 characters), while everything else
// in the handshake stays strict and the NEX subprotocol is chosen when offered.
func TestWebSocketAnyNonEmptyKey(t *testing.T) {
	l, _ := testListener(t, false, Config{HandshakeTimeout: 5 * time.Second})
	const nonce = "dGhlIHNhbXBsZSBub25jZQ==" // RFC 6455 section 1.3's example
	cases := []struct {
		name     string
		method   string
		headers  []string
		status   int
		protocol string // the Sec-WebSocket-Protocol answered
	}{
		{"rfc-nonce", "GET", []string{"Sec-WebSocket-Key: " + nonce, "Sec-WebSocket-Protocol: NEX"}, 101, "NEX"},
		{"token-urlsafe", "GET", []string{"Sec-WebSocket-Key: uLWO3N4WaAswXwixB44UQlLsTWm4WrCGhrv0d5uamws", "Sec-WebSocket-Protocol: NEX"}, 101, "NEX"},
		{"base64-32-bytes", "GET", []string{"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(make([]byte, 32))}, 101, ""},
		{"one-character", "GET", []string{"Sec-WebSocket-Key: x", "Sec-WebSocket-Protocol: chat, NEX"}, 101, "NEX"},
		{"missing", "GET", nil, 400, ""},
		{"empty", "GET", []string{"Sec-WebSocket-Key: "}, 400, ""},
		{"repeated", "GET", []string{"Sec-WebSocket-Key: abc", "Sec-WebSocket-Key: def"}, 400, ""},
		{"odd-key-wrong-version", "GET", []string{"Sec-WebSocket-Key: abc", "!Sec-WebSocket-Version: 8"}, 400, ""},
		{"odd-key-post", "POST", []string{"Sec-WebSocket-Key: abc"}, 405, ""},
		{"odd-key-no-upgrade", "GET", []string{"Sec-WebSocket-Key: abc", "!Upgrade: h2c"}, 426, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A port of its own: a stream that closes hands its ports a
			// DISCONNECT for the engine.
			port := uint8(10 + i)
			pc := l.Port(port)
			h := map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
			var extra, key []string
			for _, line := range tc.headers {
				if name, value, ok := strings.Cut(strings.TrimPrefix(line, "!"), ": "); ok && line[0] == '!' {
					h[name] = value
					continue
				}
				extra = append(extra, line)
				if v, ok := strings.CutPrefix(line, "Sec-WebSocket-Key: "); ok {
					key = append(key, v)
				}
			}
			req := tc.method + " / HTTP/1.1\r\nHost: " + l.Addr().String() + "\r\n"
			for name, value := range h {
				req += name + ": " + value + "\r\n"
			}
			for _, line := range extra {
				req += line + "\r\n"
			}
			resp, c := upgrade(t, l, req+"\r\n")
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, resp.Status, tc.status)
			}
			if tc.status != http.StatusSwitchingProtocols {
				return
			}
			sum := sha1.Sum([]byte(key[0] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
			if got, want := resp.Header.Get("Sec-WebSocket-Accept"), base64.StdEncoding.EncodeToString(sum[:]); got != want {
				t.Errorf("Sec-WebSocket-Accept %q, want %q (the hash of %q)", got, want, key[0])
			}
			if key[0] == nonce && resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
				t.Errorf("RFC 6455's example key answered %q", resp.Header.Get("Sec-WebSocket-Accept"))
			}
			if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != tc.protocol {
				t.Errorf("Sec-WebSocket-Protocol %q, want %q", got, tc.protocol)
			}
			// The upgraded stream carries Lite packets: one masked binary frame.
			pkt := toPort(t, port, 7, []byte(tc.name))
			mask := [4]byte{1, 2, 3, 4}
			frame := append([]byte{0x82, 0x80 | byte(len(pkt))}, mask[:]...)
			for i, b := range pkt {
				frame = append(frame, b^mask[i%4])
			}
			if _, err := c.Write(frame); err != nil {
				t.Fatal(err)
			}
			if got, _ := readPacket(t, pc); !bytes.Equal(got, pkt) {
				t.Errorf("packet through the WebSocket: %x, want %x", got, pkt)
			}
		})
	}
	if st := l.Stats(); st.Accepted[KindWS] != 4 || st.Refused["upgrade"] != 6 {
		t.Errorf("accepted %v, refused %v; want 4 ws streams and 6 refused upgrades", st.Accepted, st.Refused)
	}
}

// trickle sends a packet's bytes one at a time, every 50 ms, until the listener
// counts a stream closed for reason or 100 bytes are sent (5 s); it returns how many
// it sent. The packet declares 200 payload bytes, so it never completes.
func trickle(t *testing.T, l *Listener, c net.Conn, reason string) int {
	t.Helper()
	partial := toPort(t, 1, 9, make([]byte, 200))
	for i := range 100 {
		if l.Stats().Closed[reason] > 0 {
			return i
		}
		if _, err := c.Write(partial[i : i+1]); err != nil {
			return i
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 100
}

// TestIdleMeansNoCompletePacket: a stream that trickles one byte at a time never
// completes a packet and is closed for IdleTimeout (reason "idle") while it still
// trickles, over raw TCP and WebSocket; a stream sending a whole packet every 50 ms
// for as long stays open.
func TestIdleMeansNoCompletePacket(t *testing.T) {
	for _, scheme := range []string{"tcp", "ws"} {
		t.Run(scheme, func(t *testing.T) {
			l, _ := testListener(t, false, Config{IdleTimeout: 400 * time.Millisecond, PacketTimeout: time.Minute})
			p1 := l.Port(1)
			go func() { // drain
				b := make([]byte, 4096)
				for {
					if _, _, err := p1.ReadFromUDPAddrPort(b); err != nil {
						return
					}
				}
			}()
			slow, err := DialStream(context.Background(), testURL(l, scheme), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer slow.Close()
			busy, err := DialStream(context.Background(), testURL(l, scheme), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer busy.Close()
			slow.Write(toPort(t, 1, 1, nil))
			stop := make(chan struct{})
			busyDone := make(chan int)
			go func() {
				n := 0
				for {
					select {
					case <-stop:
						busyDone <- n
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := busy.Write(toPort(t, 1, uint16(n), nil)); err != nil {
						busyDone <- -1
						return
					}
					n++
				}
			}()
			sent := trickle(t, l, slow, reasonIdle)
			close(stop)
			packets := <-busyDone
			st := l.Stats()
			if sent >= 100 || st.Closed[reasonIdle] != 1 {
				t.Fatalf("the trickling stream sent %d bytes and was not closed for idleness: closed %v", sent, st.Closed)
			}
			if st.Streams != 1 || packets < 1 {
				t.Fatalf("the busy stream (%d packets) did not stay open: %d streams, closed %v", packets, st.Streams, st.Closed)
			}
			t.Logf("closed after %d trickled bytes; the busy stream sent %d packets meanwhile", sent, packets)
		})
	}
}

// TestPacketTimeout: a stream that starts a packet and trickles the rest is closed
// after PacketTimeout (reason "packet_timeout"), long before its IdleTimeout.
func TestPacketTimeout(t *testing.T) {
	l, _ := testListener(t, false, Config{IdleTimeout: time.Minute, PacketTimeout: 300 * time.Millisecond})
	p1 := l.Port(1)
	c, err := DialStream(context.Background(), testURL(l, "tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(toPort(t, 1, 1, nil))
	readPacket(t, p1)
	if sent := trickle(t, l, c, reasonPacketTimeout); sent >= 100 {
		t.Fatalf("the trickling stream was not closed: closed %v", l.Stats().Closed)
	}
	if st := l.Stats(); st.Closed[reasonPacketTimeout] != 1 || st.Closed[reasonIdle] != 0 {
		t.Fatalf("closed %v", st.Closed)
	}
}
