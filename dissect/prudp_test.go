package dissect

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/wire"
)

// convo builds a PRUDP conversation the way a client and server would send it,
// using prudp/wire and prudp/crypt as the encoders, and records the
// application messages sent so tests can check that each appears decrypted.
type convo struct {
	t        testing.TB
	dia      wire.Dialect
	v1       *wire.V1
	key      string
	frames   [][]byte
	sent     [2][][]byte // messages per direction
	seq      [2]uint16
	ciph     [2]*crypt.Cipher
	connSig  [2][]byte
	frag     int
	compress bool
	// secure connections: the CONNECT carries connectPayload and packets are
	// signed with sessionKey, RC4 streams keyed with it.
	sessionKey     []byte
	connectPayload []byte
	hs             *hyperscape.DataCipher // Hyperscape: AES-CBC DATA transform
	srvAddr        netip.AddrPort         // the server's address; srv when zero
	minorVersion   int                    // V1: the PRUDP minor version the handshake offers; 0: 4
}

// secure switches c to a secure connection with session key sk.
func (c *convo) secure(sk, connectPayload []byte) {
	c.sessionKey, c.connectPayload = sk, connectPayload
	for i := range c.ciph {
		ci, err := crypt.NewCipher(sk, crypt.ModeStream)
		if err != nil {
			c.t.Fatal(err)
		}
		c.ciph[i] = ci
	}
}

func newConvo(t testing.TB, dia wire.Dialect, accessKey string, fragSize int) *convo {
	c := &convo{t: t, dia: dia, key: accessKey, frag: fragSize}
	if v1, ok := dia.(*wire.V1); ok {
		c.v1 = v1
	}
	mode := crypt.ModeStream
	if dia.Name() == wire.NameQuazal {
		mode = crypt.ModePerPacket
	}
	for i := range c.ciph {
		ci, err := crypt.NewCipher([]byte(crypt.DefaultKey), mode)
		if err != nil {
			t.Fatal(err)
		}
		c.ciph[i] = ci
	}
	return c
}

func (c *convo) ends(dir int) (netip.AddrPort, netip.AddrPort) {
	server := srv
	if c.srvAddr.IsValid() {
		server = c.srvAddr
	}
	if dir == 0 {
		return cli, server
	}
	return server, cli
}

func (c *convo) vports(dir int) (wire.VPort, wire.VPort) {
	a, b := wire.VPort{Stream: wire.StreamRVSecure, Port: 15}, wire.VPort{Stream: wire.StreamRVSecure, Port: 1}
	if c.dia.Name() == wire.NameQuazal {
		a.Stream, b.Stream = wire.StreamOldRVSec, wire.StreamOldRVSec
	}
	if dir == 1 {
		return b, a
	}
	return a, b
}

// send encodes p (signing V1 packets) and appends it as a frame.
func (c *convo) send(dir int, p *wire.Packet) []byte {
	c.t.Helper()
	p.Src, p.Dst = c.vports(dir)
	if c.v1 == nil && c.dia.Name() != wire.NameHyperscape {
		if p.Type == wire.TypeData || p.Type == wire.TypeDisconnect {
			if v0, ok := c.dia.(*wire.V0); ok && c.connSig[1-dir] != nil {
				p.SetSignature32(v0.PacketSignature(p, c.sessionKey, le32(c.connSig[1-dir])))
			}
		} else if c.connSig[1-dir] != nil {
			p.SetSignature32(le32(c.connSig[1-dir]))
		}
		if c.dia.Name() == wire.NameQuazal && c.connSig[1-dir] != nil {
			p.SetSignature32(le32(c.connSig[1-dir]))
		}
	}
	b, err := c.dia.Append(nil, p)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.v1 != nil {
		var cs []byte
		if c.connSig[1-dir] != nil && !(p.Type == wire.TypeSyn) {
			cs = c.connSig[1-dir]
		}
		var sk []byte
		if p.Type != wire.TypeSyn {
			sk = c.sessionKey
		}
		if err := c.v1.SignPacket(b, sk, cs); err != nil {
			c.t.Fatal(err)
		}
	}
	s, d := c.ends(dir)
	c.frames = append(c.frames, wrapLink(c.t, layers.LinkTypeEthernet, udpIP(c.t, s, d, b)))
	return c.frames[len(c.frames)-1]
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// supportedFunctions is what a V1 handshake's SYN-ACK, CONNECT and CONNECT-ACK
// offer in their supported-functions option, whose low byte is the PRUDP
// minor version (3 and up turn structure headers on): minorVersion, 4 when
// it is 0.
func (c *convo) supportedFunctions() uint32 {
	if c.minorVersion == 0 {
		return 4
	}
	return uint32(c.minorVersion)
}

func (c *convo) handshake() {
	syn := wire.Packet{Type: wire.TypeSyn, Flags: wire.FlagNeedAck}
	c.send(0, &syn)
	sa := wire.Packet{Type: wire.TypeSyn, Flags: wire.FlagAck}
	if c.v1 != nil {
		sa.Options = wire.OptSupportedFunctions | wire.OptConnSignature | wire.OptMaxSubstreamID
		copy(sa.ConnSignature[:], bytes.Repeat([]byte{0x5a}, 16))
		sa.SupportedFunctions = c.supportedFunctions()
	} else {
		sa.SetConnSignature32(0x11223344)
	}
	c.send(1, &sa)
	if c.v1 != nil {
		c.connSig[1] = sa.ConnSignature[:]
	} else {
		c.connSig[1] = sa.ConnSignature[:4]
	}
	cn := wire.Packet{Type: wire.TypeConnect, Flags: wire.FlagReliable | wire.FlagNeedAck, Seq: 1, Payload: c.connectPayload}
	if c.v1 != nil {
		cn.Options = wire.OptSupportedFunctions | wire.OptConnSignature | wire.OptUnreliableSeq | wire.OptMaxSubstreamID
		copy(cn.ConnSignature[:], bytes.Repeat([]byte{0xc1}, 16))
		cn.SupportedFunctions = c.supportedFunctions()
	} else {
		cn.SetConnSignature32(0x55667788)
	}
	c.send(0, &cn)
	if c.v1 != nil {
		c.connSig[0] = cn.ConnSignature[:]
	} else {
		c.connSig[0] = cn.ConnSignature[:4]
	}
	ca := wire.Packet{Type: wire.TypeConnect, Flags: wire.FlagAck, Seq: 1}
	if c.v1 != nil {
		ca.Options = wire.OptSupportedFunctions | wire.OptConnSignature | wire.OptUnreliableSeq | wire.OptMaxSubstreamID
		copy(ca.ConnSignature[:], bytes.Repeat([]byte{0x5a}, 16))
		ca.SupportedFunctions = c.supportedFunctions()
	}
	c.send(1, &ca)
	c.seq = [2]uint16{2, 1}
}

// message sends one application message as reliable DATA fragments and
// returns the frames in fragment order (not yet appended when hold is true).
func (c *convo) message(dir int, msg []byte, hold bool) [][]byte {
	c.t.Helper()
	c.sent[dir] = append(c.sent[dir], append([]byte(nil), msg...))
	var out [][]byte
	n := 0
	for off := 0; off < len(msg) || off == 0; off += c.frag {
		end := min(off+c.frag, len(msg))
		n++
		fid := uint32(n)
		if end == len(msg) {
			fid = 0
		}
		chunk := msg[off:end]
		if c.compress || c.dia.Name() == wire.NameQuazal {
			if c.compress {
				chunk = crypt.Compress(nil, chunk)
			} else {
				chunk = append([]byte{0}, chunk...)
			}
		}
		enc := make([]byte, len(chunk))
		c.ciph[dir].XORPacket(enc, chunk)
		if c.hs != nil {
			enc = c.hs.Seal(nil, msg[off:end], c.seq[dir], false)
		}
		p := wire.Packet{Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck | wire.FlagHasSize, Seq: c.seq[dir], FragmentID: fid, Payload: enc, SessionID: 0x42}
		if c.v1 != nil {
			p.Flags &^= wire.FlagHasSize
		}
		c.seq[dir]++
		f := c.send(dir, &p)
		if hold {
			c.frames = c.frames[:len(c.frames)-1]
		}
		out = append(out, f)
		// The peer acknowledges.
		ack := wire.Packet{Type: wire.TypeData, Flags: wire.FlagAck, Seq: p.Seq, FragmentID: 0}
		if !hold {
			c.send(1-dir, &ack)
		}
		if end == len(msg) {
			break
		}
	}
	return out
}

func (c *convo) pcap() []byte { return pcapFile(c.t, layers.LinkTypeEthernet, c.frames...) }

// messagesOf extracts the plain_hex of message records per direction, in order.
func messagesOf(t testing.TB, recs []string) (msgs [2][]string, retrans int, all []map[string]any) {
	t.Helper()
	for _, line := range recs {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("record is not JSON: %v\n%s", err, line)
		}
		all = append(all, m)
		if m["retransmission"] == true {
			retrans++
		}
		if m["record"] != "message" {
			continue
		}
		dir := 0
		if m["net_src"] == srv.String() {
			dir = 1
		}
		msgs[dir] = append(msgs[dir], m["plain_hex"].(string))
	}
	return
}

func checkMessages(t *testing.T, c *convo, msgs [2][]string) {
	t.Helper()
	for dir := range 2 {
		if len(msgs[dir]) != len(c.sent[dir]) {
			t.Fatalf("direction %d: %d messages decoded, %d sent", dir, len(msgs[dir]), len(c.sent[dir]))
		}
		for i, m := range c.sent[dir] {
			if msgs[dir][i] != hex.EncodeToString(m) {
				t.Fatalf("direction %d message %d:\n got %.80s\nwant %.80s", dir, i, msgs[dir][i], hex.EncodeToString(m))
			}
		}
	}
}

func testMessage(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*7 + j*13)
	}
	copy(b, fmt.Sprintf("message %d", i))
	return b
}

func TestPRUDPDialectsDecrypt(t *testing.T) {
	for _, tc := range []struct {
		name string
		dia  wire.Dialect
		key  string
		keys []string
	}{
		{"nex-v1", wire.NewV1("6f599f81"), "6f599f81", []string{"wrongkey", "6f599f81"}},
		{"nex-v0", wire.NewV0("ridfebb9", wire.ModeGames), "ridfebb9", []string{"ridfebb9"}},
		{"quazal", wire.NewQuazal("8dtRv2oj", wire.QuazalOptions{}), "8dtRv2oj", []string{"8dtRv2oj"}},
		{"quazal-4", wire.NewQuazal("8dtRv2oj", wire.QuazalOptions{ChecksumSize: 4}), "8dtRv2oj", []string{"8dtRv2oj"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConvo(t, tc.dia, tc.key, 300)
			c.handshake()
			for i := range 5 {
				c.message(0, testMessage(i, 100+i*250), false)
				c.message(1, testMessage(100+i, 50+i*300), false)
			}
			recs, err := collect(t, Config{Keys: &Keys{AccessKeys: tc.keys}}, c.pcap())
			if err != nil {
				t.Fatal(err)
			}
			msgs, retrans, all := messagesOf(t, recs)
			checkMessages(t, c, msgs)
			if retrans != 0 {
				t.Errorf("%d retransmissions marked in a clean capture", retrans)
			}
			for _, m := range all {
				if m["record"] != "packet" {
					continue
				}
				if m["protocol"] != "prudp" || m["dialect"] != tc.dia.Name() {
					t.Fatalf("record %v", m)
				}
				if m["checksum_ok"] == false || m["signature_ok"] == false {
					t.Fatalf("verification failed: %v", m)
				}
				if _, ok := m["error"]; ok {
					t.Fatalf("error in %v", m)
				}
			}
		})
	}
}

func TestPRUDPRetransmissionAndReorder(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 200)
	c.handshake()
	c.message(0, testMessage(0, 150), false)
	// A 3-fragment message whose fragments arrive 3, 1, 2, then 1 again.
	fr := c.message(0, testMessage(1, 500), true)
	c.frames = append(c.frames, fr[2], fr[0], fr[1], fr[0])
	c.message(0, testMessage(2, 80), false)
	c.message(1, testMessage(3, 80), false)
	recs, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	msgs, retrans, _ := messagesOf(t, recs)
	checkMessages(t, c, msgs)
	if retrans != 1 {
		t.Fatalf("%d retransmissions marked, want 1", retrans)
	}
}

func TestPRUDPLostPacketIsReported(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 200)
	c.handshake()
	c.message(0, testMessage(0, 100), false)
	fr := c.message(0, testMessage(1, 100), true) // never captured
	_ = fr
	c.message(0, testMessage(2, 100), false)
	recs, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := messagesOf(t, recs)
	if len(msgs[0]) != 1 || msgs[0][0] != hex.EncodeToString(c.sent[0][0]) {
		t.Fatalf("messages %v", msgs[0])
	}
	joined := strings.Join(recs, "\n")
	if !strings.Contains(joined, "never captured; RC4 stream position lost") || !strings.Contains(joined, "not decrypted: RC4 stream position lost") {
		t.Fatalf("the gap is not reported:\n%s", joined)
	}
}

// TestPRUDPLostServerPacketNotedServerToClient: a server packet that never
// reached the capture is reported at the end of the capture in the server's
// direction, not the client's.
func TestPRUDPLostServerPacketNotedServerToClient(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 200)
	c.handshake()
	c.message(1, testMessage(0, 100), false)
	c.message(1, testMessage(1, 100), true) // never captured
	c.message(1, testMessage(2, 100), false)
	d := New(Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}})
	found := 0
	err := d.Decode(bytes.NewReader(c.pcap()), func(r *Record) error {
		if r.Kind == KindNote && strings.Contains(r.Error, "never captured") {
			found++
			if r.NetSrc != srv || r.NetDst != cli {
				t.Errorf("note runs %s -> %s, want %s -> %s: %s", r.NetSrc, r.NetDst, srv, cli, r.Error)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != 1 {
		t.Fatalf("%d notes of the lost packet, want 1", found)
	}
}

func TestPRUDPCompressed(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 1000)
	c.compress = true
	c.handshake()
	c.message(0, bytes.Repeat([]byte("compressible "), 200), false)
	recs, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := messagesOf(t, recs)
	checkMessages(t, c, msgs)
}

func TestPRUDPStatsAndText(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 200)
	c.handshake()
	c.message(0, testMessage(0, 450), false)
	d := New(Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}})
	var text bytes.Buffer
	err := d.Decode(bytes.NewReader(c.pcap()), func(r *Record) error {
		text.Write(r.AppendText(nil, d.Summary().FirstFrame))
		text.WriteByte('\n')
		text.Write(r.AppendTree(nil))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fl := d.Flows()
	if len(fl) != 1 || fl[0].Dialect != "nex-v1" || fl[0].Messages != 1 || fl[0].Handshake != "connected" || fl[0].RTT <= 0 || fl[0].Client != cli {
		t.Fatalf("stats %+v", fl)
	}
	for _, want := range []string{"PRUDP nex-v1 SYN [NEED_ACK] RVSecure:15→RVSecure:1 seq=0", "PRUDP message nex-v1, 450 bytes in 3 fragment(s) from seq 2", "plain_hex: ", "signature_ok: true"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	var tbl bytes.Buffer
	WriteStatsTable(&tbl, fl)
	if !strings.Contains(tbl.String(), "nex-v1") || !strings.Contains(tbl.String(), "connected") {
		t.Errorf("stats table:\n%s", tbl.String())
	}
}

func TestPRUDPSecureConnection(t *testing.T) {
	const serverPID, userPID = 2, 1750087940
	targetKey := kerberos.DeriveKey("secure server password", serverPID)
	sessionKey := bytes.Repeat([]byte{0x3c, 0x71}, 16) // 32 bytes, NEX 2+
	info := kerberos.TicketInfo{Issued: kerberos.NewDateTime(t0), SourcePID: userPID, SessionKey: sessionKey}
	internal, err := kerberos.SealInternal(nil, &info, targetKey[:], kerberos.NEX3DS, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := kerberos.AppendConnect(nil, &kerberos.Ticket{SessionKey: sessionKey, TargetPID: serverPID, Internal: internal},
		kerberos.RequestData{PID: userPID, ConnectionID: 77, Check: 0xabcdef}, kerberos.NEX3DS)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dia  wire.Dialect
		keys string
	}{
		{"v1 kerberos-key", wire.NewV1("6f599f81"), "kerberos-key 2 " + hex.EncodeToString(targetKey[:])},
		{"v1 password", wire.NewV1("6f599f81"), "password 2 secure server password"},
		{"v1 session-key", wire.NewV1("6f599f81"), "session-key " + hex.EncodeToString(sessionKey)},
		{"v0 password", wire.NewV0("6f599f81", wire.ModeGames), "password 2 secure server password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConvo(t, tc.dia, "6f599f81", 500)
			c.secure(sessionKey, payload)
			c.handshake()
			c.message(0, testMessage(1, 1200), false)
			c.message(1, testMessage(2, 300), false)
			keys, err := ParseKeys(strings.NewReader("access-key 6f599f81\n" + tc.keys + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := collect(t, Config{Keys: keys}, c.pcap())
			if err != nil {
				t.Fatal(err)
			}
			msgs, _, all := messagesOf(t, recs)
			checkMessages(t, c, msgs)
			for _, m := range all {
				if m["signature_ok"] == false {
					t.Fatalf("signature not verified with the session key: %v", m)
				}
			}
			// Without the keys the payloads are reported as not decrypted, not dropped.
			recs, _ = collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}}, c.pcap())
			if msgs, _, _ := messagesOf(t, recs); len(msgs[0])+len(msgs[1]) != 0 || !strings.Contains(strings.Join(recs, ""), "no --keys entry opens the ticket") {
				t.Fatalf("without keys: %q", recs)
			}
		})
	}
}

func TestPRUDPHyperscapeDecrypt(t *testing.T) {
	var key hyperscape.SharedKey
	copy(key[:], "hyperscape-key!!")
	dc, err := hyperscape.NewDataCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	c := newConvo(t, wire.NewHyperscape(), "", 400)
	c.hs = dc
	c.handshake()
	c.message(0, testMessage(0, 1000), false)
	c.message(1, testMessage(1, 150), false)
	other := bytes.Repeat([]byte{0x11}, 16)
	keys := &Keys{HyperscapeKeys: [][]byte{other, key[:]}}
	recs, err := collect(t, Config{Keys: keys}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, all := messagesOf(t, recs)
	if len(msgs[0]) == 0 {
		for _, r := range recs {
			t.Log(r[:min(len(r), 400)])
		}
	}
	checkMessages(t, c, msgs)
	if all[0]["dialect"] != "hyperscape" || all[0]["checksum_ok"] != true {
		t.Fatalf("first record %v", all[0])
	}
	// Without the key: reported, not dropped.
	recs, _ = collect(t, Config{}, c.pcap())
	if !strings.Contains(strings.Join(recs, ""), "need the connection's shared key") {
		t.Fatal("missing key not reported")
	}
}

// TestPRUDPUnreliableAndSubstreams checks the per-packet key of unreliable
// DATA ("Details on substreams and unreliable packets") and a second
// reliable substream keyed with the modified key.
func TestPRUDPUnreliableAndSubstreams(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 300)
	c.handshake()
	c.message(0, testMessage(0, 100), false)
	// Substream 1: its own sequence ids and the modified key.
	sub1, err := crypt.NewCipher(crypt.SubstreamKey([]byte(crypt.DefaultKey), 1), crypt.ModeStream)
	if err != nil {
		t.Fatal(err)
	}
	m1 := testMessage(7, 250)
	enc := make([]byte, len(m1))
	sub1.XORPacket(enc, m1)
	c.send(0, &wire.Packet{Type: wire.TypeData, Flags: wire.FlagReliable | wire.FlagNeedAck, SubstreamID: 1, Seq: 1, Payload: enc})
	// Unreliable DATA with its per-packet key.
	u := crypt.NewUnreliableKeys([]byte(crypt.DefaultKey))
	m2 := testMessage(9, 60)
	enc2 := make([]byte, len(m2))
	u.XORPacket(enc2, m2, 0x1234, 0x42)
	c.send(0, &wire.Packet{Type: wire.TypeData, Flags: wire.FlagNeedAck, Seq: 0x1234, SessionID: 0x42, Payload: enc2})
	recs, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, all := messagesOf(t, recs)
	want := []string{hex.EncodeToString(c.sent[0][0]), hex.EncodeToString(m1), hex.EncodeToString(m2)}
	if strings.Join(msgs[0], ",") != strings.Join(want, ",") {
		t.Fatalf("messages %v", msgs[0])
	}
	var reliable []any
	for _, m := range all {
		if m["record"] == "message" {
			reliable = append(reliable, m["reliable"])
		}
	}
	if len(reliable) != 3 || reliable[2] != false {
		t.Fatalf("reliable flags %v", reliable)
	}
}

// TestPRUDPCaptureStartsMidStream: without the start of an RC4 stream the
// payloads are reported undecrypted instead of being decrypted into garbage.
func TestPRUDPCaptureStartsMidStream(t *testing.T) {
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 300)
	c.handshake()
	c.message(0, testMessage(0, 100), false)
	c.message(0, testMessage(1, 100), false)
	c.frames = c.frames[6:] // handshake and the first message (and its ack) not captured
	recs, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := messagesOf(t, recs)
	if len(msgs[0]) != 0 || !strings.Contains(strings.Join(recs, ""), "starts in the middle of this RC4 stream") {
		t.Fatalf("mid-stream capture: messages %v\n%s", msgs[0], strings.Join(recs, "\n"))
	}
}

// TestPRUDPMessagesShowRMC: a whole message that is a packed RMC request or
// response gets an "rmc" object (nex/rmc decodes the header).
func TestPRUDPMessagesShowRMC(t *testing.T) {
	req := rmc.Request{Protocol: rmc.ProtocolTicketGranting, CallID: 7, Method: 1, Params: []byte("params")}
	reqb, err := req.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := rmc.Response{Protocol: rmc.ProtocolTicketGranting, CallID: 7, Method: 1, Data: bytes.Repeat([]byte("d"), 700)}
	respb, err := resp.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newConvo(t, wire.NewV1("6f599f81"), "6f599f81", 300)
	c.handshake()
	c.message(0, reqb, false)
	c.message(1, respb, false)
	recs, err := collect(t, Config{Keys: &Keys{AccessKeys: []string{"6f599f81"}}, NoDescriptions: true}, c.pcap())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if strings.Contains(r, `"record":"message"`) {
			i := strings.Index(r, `"rmc":`)
			if i < 0 {
				t.Fatalf("message without rmc: %.300s", r)
			}
			got = append(got, r[i:i+strings.Index(r[i:], "}")+1])
		}
	}
	want := []string{
		`"rmc":{"kind":"request","protocol_id":10,"method_id":1,"call_id":7}`,
		`"rmc":{"kind":"response","protocol_id":10,"method_id":1,"call_id":7,"result":"success"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rmc objects:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
