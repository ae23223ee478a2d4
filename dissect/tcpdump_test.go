package dissect

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/tcpdumptest"
	"github.com/gamewire/gamewire/pia"
	"github.com/gamewire/gamewire/pipboy"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
	"github.com/gamewire/gamewire/prudp/wire"
)

// These tests capture gamewire's own traffic with a real capture tool
// (tcpdump on the loopback interface, filtered by port) and check that the
// dissector finds every application message decrypted, in order. CI installs
// tcpdump; elsewhere they are skipped when tcpdump is missing or may not
// capture (it needs root or CAP_NET_RAW).

// captureMessages are the messages the client sends: small, a few
// fragments, and one of 20 KiB.
func captureMessages() [][]byte {
	var out [][]byte
	for i, n := range []int{16, 200, 1000, 3000, 20000, 64, 5000} {
		out = append(out, testMessage(i, n))
	}
	return out
}

func TestTcpdumpPRUDPDialects(t *testing.T) {
	const accessKey = "6f599f81"
	serverKey := kerberos.DeriveKey("secure server password", 2)
	ticket := func(s kerberos.Settings) *kerberos.Ticket {
		userKey := kerberos.DeriveKey("user password", 1000)
		sealed, _, err := kerberos.IssueTicket(nil, kerberos.Issue{SourcePID: 1000, TargetPID: 2, SourceKey: userKey[:], TargetKey: serverKey[:], Issued: time.Now()}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := kerberos.OpenTicket(sealed, userKey[:], s)
		if err != nil {
			t.Fatal(err)
		}
		return &tk
	}
	for _, tc := range []struct {
		name     string
		dialect  prudp.Dialect
		secure   bool
		compress bool
		keys     string
	}{
		{name: "nex-v1", dialect: prudp.NEXV1},
		{name: "nex-v0", dialect: prudp.NEXV0},
		{name: "nex-v0-friends", dialect: prudp.NEXV0Friends},
		{name: "nex-v1-secure", dialect: prudp.NEXV1, secure: true, keys: "password 2 secure server password"},
		{name: "nex-v0-secure", dialect: prudp.NEXV0, secure: true, keys: "kerberos-key 2 " + hex.EncodeToString(serverKey[:])},
		{name: "nex-v1-compressed", dialect: prudp.NEXV1, compress: true, keys: "compression on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dialect := tc.dialect
			pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			port := pc.LocalAddr().(*net.UDPAddr).Port
			cfg := prudp.Config{Dialect: dialect, AccessKey: accessKey, Compression: tc.compress}
			srv := &prudp.Server{Config: cfg}
			if tc.secure {
				srv.ServerKey = serverKey[:]
				cfg.Ticket, cfg.PID = ticket(kerberos.NEX3DS), 1000
			}
			go srv.Serve(pc)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				srv.Shutdown(ctx)
			}()

			// The kernel may drop packets when the machine is busy (tcpdump then
			// says so); such a capture cannot show every message, so try again.
			var capture []byte
			for attempt := 1; ; attempt++ {
				td := tcpdumptest.Start(t, "udp port "+strconv.Itoa(port))
				echoSession(t, port, &cfg)
				capture = td.Stop(t)
				if td.Dropped() == 0 {
					break
				}
				if attempt == 3 {
					t.Skipf("the kernel dropped packets in 3 captures in a row (machine too busy); tcpdump said: %s", td.Stderr())
				}
			}
			if dir := os.Getenv("GAMEWIRE_SAVE_CAPTURES"); dir != "" && !tc.secure && !tc.compress {
				os.WriteFile(filepath.Join(dir, "tcpdump-"+dialect.String()+".pcap"), capture, 0o644)
			}
			msgs := captureMessages()

			keys, err := ParseKeys(strings.NewReader("access-key " + accessKey + "\n" + tc.keys + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			d := New(Config{Keys: keys})
			var got [2][]string
			var notes []string
			err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
				if r.Kind == KindNote {
					notes = append(notes, string(r.AppendJSON(nil)))
				}
				if f, ok := r.Field("signature_ok"); ok && f.Type == FieldBool && !f.Bool {
					t.Errorf("signature does not verify: %.400s", r.AppendJSON(nil))
				}
				if f, ok := r.Field("checksum_ok"); ok && f.Type == FieldBool && !f.Bool {
					t.Errorf("checksum does not verify: %.400s", r.AppendJSON(nil))
				}
				if r.Kind != KindMessage || r.Protocol != "prudp" {
					return nil
				}
				f, _ := r.Field("plain_hex")
				dir := 0
				if r.NetSrc.Port() == uint16(port) {
					dir = 1
				}
				got[dir] = append(got[dir], hex.EncodeToString(f.Bytes))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for dir, name := range []string{"client to server", "server to client (echo)"} {
				if len(got[dir]) != len(msgs) {
					t.Fatalf("%s: %d messages decoded, %d sent; notes: %q", name, len(got[dir]), len(msgs), notes)
				}
				for i, m := range msgs {
					if got[dir][i] != hex.EncodeToString(m) {
						t.Fatalf("%s: message %d differs", name, i)
					}
				}
			}
			fl := d.Flows()
			if len(fl) != 1 || fl[0].Dialect != dialect.String() || !strings.HasPrefix(fl[0].Handshake, "connected") && fl[0].Handshake != "disconnected" {
				t.Fatalf("flows %+v", fl)
			}
			t.Logf("%s: %d frames, %d bytes captured by tcpdump; %d retransmissions; notes %d", dialect, d.Summary().Frames, len(capture), fl[0].Retransmissions, len(notes))
		})
	}
}

// echoSession dials the echo server, sends captureMessages and checks the echoes.
func echoSession(t *testing.T, port int, cfg *prudp.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := prudp.Dial(ctx, "127.0.0.1:"+strconv.Itoa(port), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range captureMessages() {
		if err := c.Send(ctx, 0, m); err != nil {
			t.Fatal(err)
		}
		echo, err := c.Recv(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(echo.Data, m) {
			t.Fatalf("echo differs")
		}
	}
	c.Close(ctx)
}

// TestTcpdumpPipboy captures a Pip-Boy session between gamewire's game
// emulator (serving the real Fallout 4 dump from testdata) and its app
// client, and checks that the capture decodes to the database the app built.
func TestTcpdumpPipboy(t *testing.T) {
	dump, err := os.ReadFile("../testdata/pipboy/fo4-1.1.30-dump-payload.bin")
	if err != nil {
		t.Fatal(err)
	}
	db := pipboy.NewDatabase()
	if err := db.Apply(dump); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := pipboy.NewServer(db)
	go srv.Serve(ln)
	defer srv.Close()

	var capture []byte
	var appJSON []byte
	for attempt := 1; ; attempt++ {
		td := tcpdumptest.Start(t, "tcp port "+strconv.Itoa(port))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := pipboy.Dial(ctx, "127.0.0.1:"+strconv.Itoa(port), nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if err := c.WaitReady(ctx); err != nil {
			cancel()
			t.Fatal(err)
		}
		if _, err := c.Send(pipboy.Refresh()); err != nil {
			t.Fatal(err)
		}
		c.View(func(db *pipboy.Database) {
			root, _ := db.Root()
			appJSON, _ = root.AppendJSON(nil, "")
		})
		c.Close()
		cancel()
		capture = td.Stop(t)
		if td.Dropped() == 0 {
			break
		}
		if attempt == 3 {
			t.Skipf("the kernel dropped packets in 3 captures in a row: %s", td.Stderr())
		}
	}
	d := New(Config{Dialects: map[uint16]string{uint16(port): "pipboy"}})
	cmds := 0
	err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
		if r.Kind == KindNote {
			t.Errorf("note: %s", r.AppendJSON(nil))
		}
		if f, ok := r.Field("type"); ok && f.Str == pipboy.TypeCommandRequest.String() {
			cmds++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var st *pipboy.GameState
	for _, s := range d.PipboyStates() {
		st = s
	}
	if st == nil || !st.HelloSeen {
		t.Fatalf("no Pip-Boy session decoded (%d bytes captured)", len(capture))
	}
	root, _ := st.DB.Root()
	gotJSON, err := root.AppendJSON(nil, "")
	if err != nil || !bytes.Equal(gotJSON, appJSON) {
		t.Fatalf("the capture decodes to a different database than the app built (%v): %d vs %d bytes of JSON", err, len(gotJSON), len(appJSON))
	}
	if cmds != 1 {
		t.Errorf("%d command requests decoded, want 1", cmds)
	}
	t.Logf("%d frames, %d values", d.Summary().Frames, st.DB.Len())
}

// TestTcpdumpPia captures two Pia endpoints (5.18, LAN network, encrypted)
// exchanging messages on loopback and decodes the capture with the keys.
func TestTcpdumpPia(t *testing.T) {
	key := []byte("0123456789abcdef")
	const networkID = 0x19EC1D90
	v, _ := pia.ParseVersion("5.18")
	newEP := func(vid uint32) *pia.Endpoint {
		pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		e, err := pia.NewEndpoint(pc, pia.EndpointConfig{Version: v, NonceParams: pia.NonceParams{Network: pia.NetworkLAN, NetworkID: networkID},
			SessionKey: key, VariableID: vid, ConstantID: uint64(vid)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	a, b := newEP(0x1111), newEP(0x2222)
	pb := a.AddPeer(b.LocalAddr(), pia.PeerConfig{VariableID: 0x2222})
	b.AddPeer(a.LocalAddr(), pia.PeerConfig{VariableID: 0x1111})
	got := make(chan []byte, 64)
	b.Handle(0x68, 5, pia.HandlerFunc(func(from *pia.Peer, m *pia.Message) { got <- append([]byte(nil), m.Payload...) }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Serve(ctx)

	var sent []string
	var capture []byte
	for attempt := 1; ; attempt++ {
		sent = sent[:0]
		td := tcpdumptest.Start(t, "udp port "+strconv.Itoa(int(b.LocalAddr().Port())))
		for i := range 10 {
			p := testMessage(i, 40+i*20)
			sent = append(sent, hex.EncodeToString(p))
			if err := a.Send(pb, pia.Message{ProtocolType: 0x68, ProtocolPort: 5, Payload: p}); err != nil {
				t.Fatal(err)
			}
			if i%3 == 2 {
				a.Flush()
			}
		}
		a.Flush()
		for range sent {
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("endpoint B did not receive every message")
			}
		}
		capture = td.Stop(t)
		if td.Dropped() == 0 {
			break
		}
		if attempt == 3 {
			t.Skipf("the kernel dropped packets in 3 captures in a row: %s", td.Stderr())
		}
	}
	keys, err := ParseKeys(strings.NewReader("pia-network lan\npia-network-id 0x19EC1D90\npia-key " + hex.EncodeToString(key) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := New(Config{Keys: keys})
	var msgs []string
	err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
		if r.Kind == KindNote {
			t.Errorf("note: %s", r.AppendJSON(nil))
		}
		if r.Kind == KindMessage && r.Protocol == "pia" {
			f, _ := r.Field("plain_hex")
			msgs = append(msgs, hex.EncodeToString(f.Bytes))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(msgs, ",") != strings.Join(sent, ",") {
		t.Fatalf("decoded %d Pia messages, sent %d (or in another order)", len(msgs), len(sent))
	}
	if fl := d.Flows(); len(fl) != 1 || fl[0].Protocol != "pia" || fl[0].Dialect != "pia 5.18" {
		t.Fatalf("flows %+v", fl)
	}
}

// TestTcpdumpLiteWebSocket captures PRUDP Lite over a plain WebSocket
// (prudp/lite's client and listener, coder/websocket underneath) and over a
// raw TCP stream (the listener takes both on one port): the client
// sends a handshake and fragmented messages, the listener's port echoes every
// packet back, and the capture must show every message of both directions.
func TestTcpdumpLiteWebSocket(t *testing.T) {
	for _, scheme := range []string{"ws", "tcp"} {
		t.Run(scheme, func(t *testing.T) { liteCapture(t, scheme) })
	}
}

// liteCapture runs one Lite session over a ws:// or raw tcp:// stream under tcpdump.
func liteCapture(t *testing.T, scheme string) {
	l := lite.NewListener(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	go l.Serve(ln)
	defer l.Close()
	pc := l.Port(1)
	go func() { // echo every packet, swapping the ports
		buf := make([]byte, 8192)
		dia := wire.NewLite("")
		for {
			n, from, err := pc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			p, _, err := dia.Parse(buf[:n])
			if err != nil {
				continue
			}
			p.Src, p.Dst = p.Dst, p.Src
			out, err := dia.Append(nil, &p)
			if err == nil {
				pc.WriteToUDPAddrPort(out, from)
			}
		}
	}()

	dia := wire.NewLite("")
	msgs := captureMessages()
	var capture []byte
	for attempt := 1; ; attempt++ {
		td := tcpdumptest.Start(t, "tcp port "+strconv.Itoa(port))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		conn, err := lite.DialStream(ctx, scheme+"://127.0.0.1:"+strconv.Itoa(port)+"/", nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		src, dst := wire.VPort{Stream: wire.StreamRVSecure, Port: 31}, wire.VPort{Stream: wire.StreamRVSecure, Port: 1}
		send := func(p wire.Packet) {
			p.Src, p.Dst = src, dst
			b, err := dia.Append(nil, &p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		send(wire.Packet{Type: wire.TypeSyn, Flags: wire.FlagNeedAck})
		send(wire.Packet{Type: wire.TypeConnect, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 1})
		seq := uint16(2)
		echoed := 0
		for _, m := range msgs {
			for off, n := 0, 1; off < len(m); off, n = off+1000, n+1 {
				end := min(off+1000, len(m))
				fid := uint32(n)
				if end == len(m) {
					fid = 0
				}
				send(wire.Packet{Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: seq, FragmentID: fid, Payload: m[off:end]})
				seq++
				echoed++
			}
		}
		// Read the echoes back (Lite packets back to back on the stream).
		r := lite.NewReader(conn, 8192)
		for range echoed + 2 {
			if _, err := r.Next(); err != nil {
				t.Fatalf("reading echoes: %v", err)
			}
		}
		conn.Close()
		cancel()
		capture = td.Stop(t)
		if td.Dropped() == 0 {
			break
		}
		if attempt == 3 {
			t.Skipf("the kernel dropped packets in 3 captures in a row: %s", td.Stderr())
		}
	}
	if dir := os.Getenv("GAMEWIRE_SAVE_CAPTURES"); dir != "" && scheme == "ws" {
		os.WriteFile(filepath.Join(dir, "tcpdump-nex-lite-websocket.pcap"), capture, 0o644)
	}
	d := New(Config{})
	var got [2][]string
	err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
		if r.Kind == KindNote {
			t.Errorf("note: %.300s", r.AppendJSON(nil))
		}
		if r.Kind == KindMessage && r.Protocol == "prudp" {
			f, _ := r.Field("plain_hex")
			dir := 0
			if r.NetSrc.Port() == uint16(port) {
				dir = 1
			}
			got[dir] = append(got[dir], hex.EncodeToString(f.Bytes))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range 2 {
		if len(got[dir]) != len(msgs) {
			t.Fatalf("direction %d: %d Lite messages decoded from the WebSocket, %d sent", dir, len(got[dir]), len(msgs))
		}
		for i, m := range msgs {
			if got[dir][i] != hex.EncodeToString(m) {
				t.Fatalf("direction %d: message %d differs", dir, i)
			}
		}
	}
	if fl := d.Flows(); len(fl) != 1 || fl[0].Protocol != "prudp" || fl[0].Dialect != "nex-lite" {
		t.Fatalf("flows %+v", fl)
	}
}

// TestTcpdumpWireDialects covers the dialects the engine does not speak
// (Quazal with 1- and 4-byte checksums, Hyperscape): the conversation is
// encoded by prudp/wire, prudp/crypt and prudp/hyperscape as in the
// synthetic tests, but sent over real UDP sockets on loopback and captured by
// tcpdump, so recognition and decryption run on what a capture tool wrote.
func TestTcpdumpWireDialects(t *testing.T) {
	var hsKey hyperscape.SharedKey
	copy(hsKey[:], "0123456789abcdef")
	for _, tc := range []struct {
		name string
		dia  wire.Dialect
		key  string
		keys string
	}{
		{"quazal", wire.NewQuazal("8dtRv2oj", wire.QuazalOptions{}), "8dtRv2oj", "access-key 8dtRv2oj"},
		{"quazal-4", wire.NewQuazal("yl4NG7qZ", wire.QuazalOptions{ChecksumSize: 4}), "yl4NG7qZ", "access-key yl4NG7qZ"},
		{"hyperscape", wire.NewHyperscape(), "", "hyperscape-key " + hex.EncodeToString(hsKey[:])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConvo(t, tc.dia, tc.key, 900)
			if tc.name == "hyperscape" {
				dc, err := hyperscape.NewDataCipher(hsKey)
				if err != nil {
					t.Fatal(err)
				}
				c.hs = dc
			}
			c.handshake()
			for i, m := range captureMessages() {
				c.message(i%2, m, false)
			}
			a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			// Both sockets are drained (so nothing is refused) and say when a datagram
			// has arrived: a datagram delivered to its socket has passed the capture,
			// so waiting for each before sending the next keeps the capture in
			// sending order.
			arrived := make(chan struct{}, 1)
			for _, sock := range []*net.UDPConn{a, b} {
				go func() {
					buf := make([]byte, 65536)
					for {
						if _, _, err := sock.ReadFromUDP(buf); err != nil {
							return
						}
						arrived <- struct{}{}
					}
				}()
			}
			port := b.LocalAddr().(*net.UDPAddr).Port
			var capture []byte
			for attempt := 1; ; attempt++ {
				td := tcpdumptest.Start(t, "udp port "+strconv.Itoa(port))
				for _, f := range c.frames {
					udp := f[14+20:]
					payload := udp[8:binary.BigEndian.Uint16(udp[4:6])] // without Ethernet padding
					var err error
					if binary.BigEndian.Uint16(udp[0:2]) == cli.Port() {
						_, err = a.WriteToUDP(payload, b.LocalAddr().(*net.UDPAddr))
					} else {
						_, err = b.WriteToUDP(payload, a.LocalAddr().(*net.UDPAddr))
					}
					if err != nil {
						t.Fatal(err)
					}
					select {
					case <-arrived:
					case <-time.After(10 * time.Second):
						t.Fatal("a datagram sent on loopback did not arrive within 10 s")
					}
				}
				capture = td.Stop(t)
				if td.Dropped() == 0 {
					break
				}
				if attempt == 3 {
					t.Skipf("the kernel dropped packets in 3 captures in a row: %s", td.Stderr())
				}
			}
			keys, err := ParseKeys(strings.NewReader(tc.keys + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			d := New(Config{Keys: keys})
			var got [2][]string
			err = d.Decode(bytes.NewReader(capture), func(r *Record) error {
				if r.Kind == KindNote {
					t.Errorf("note: %.300s", r.AppendJSON(nil))
				}
				if r.Kind == KindMessage {
					f, _ := r.Field("plain_hex")
					dir := 0
					if r.NetSrc.Port() == uint16(port) {
						dir = 1
					}
					got[dir] = append(got[dir], hex.EncodeToString(f.Bytes))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for dir := range 2 {
				if len(got[dir]) != len(c.sent[dir]) {
					t.Fatalf("direction %d: %d messages decoded, %d sent", dir, len(got[dir]), len(c.sent[dir]))
				}
				for i, m := range c.sent[dir] {
					if got[dir][i] != hex.EncodeToString(m) {
						t.Fatalf("direction %d message %d differs", dir, i)
					}
				}
			}
			want := tc.dia.Name()
			if fl := d.Flows(); len(fl) != 1 || fl[0].Dialect != want {
				t.Fatalf("flows %+v", fl)
			}
		})
	}
}
