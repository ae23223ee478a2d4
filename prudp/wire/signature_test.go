package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"testing"
)

// refHMAC is an independent HMAC-MD5 keyed with MD5(access key) over the concatenation
// of parts, written straight from the spec tables.
func refHMAC(accessKey string, parts ...[]byte) []byte {
	k := md5.Sum([]byte(accessKey))
	h := hmac.New(md5.New, k[:])
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func TestV0GamesSignature(t *testing.T) {
	d := NewV0("ridfebb9", ModeGames)
	sessionKey := bytes.Repeat([]byte{0x42}, 32)
	p := Packet{Type: TypeData, Seq: 0x0102, FragmentID: 3, Payload: []byte("encrypted payload")}
	want := refHMAC("ridfebb9", sessionKey, le16(0x0102), []byte{3}, p.Payload)
	got := d.PacketSignature(&p, sessionKey, 0xabcdef01)
	if got != binary.LittleEndian.Uint32(want) {
		t.Fatalf("signature %#x, want %#x", got, binary.LittleEndian.Uint32(want))
	}
	// Authentication connection: no session key.
	want = refHMAC("ridfebb9", le16(0x0102), []byte{3}, p.Payload)
	auth := d.PacketSignature(&p, nil, 0)
	if auth != binary.LittleEndian.Uint32(want) {
		t.Fatalf("auth signature %#x", auth)
	}
	p.SetSignature32(auth)
	if !d.VerifySignature(&p, nil, 0) {
		t.Error("does not verify")
	}
	p.Payload = []byte("Encrypted payload")
	if d.VerifySignature(&p, nil, 0) {
		t.Error("verifies with a changed payload")
	}
	// DISCONNECT is signed like DATA; other packets carry the connection signature.
	disc := Packet{Type: TypeDisconnect, Seq: 7}
	want = refHMAC("ridfebb9", le16(7), []byte{0})
	if got := d.PacketSignature(&disc, nil, 0); got != binary.LittleEndian.Uint32(want) {
		t.Errorf("DISCONNECT signature %#x", got)
	}
	for _, typ := range []PacketType{TypeSyn, TypeConnect, TypePing} {
		q := Packet{Type: typ, Payload: []byte{1}}
		if got := d.PacketSignature(&q, sessionKey, 0xabcdef01); got != 0xabcdef01 {
			t.Errorf("%v signature %#x, want the connection signature", typ, got)
		}
	}
}

func TestV0FriendsSignature(t *testing.T) {
	d := NewV0("ridfebb9", ModeFriends)
	empty := Packet{Type: TypeData, Seq: 4}
	if got := d.PacketSignature(&empty, nil, 0x55); got != 0x12345678 {
		t.Errorf("empty DATA signature %#x, want 0x12345678", got)
	}
	p := Packet{Type: TypeData, Seq: 4, FragmentID: 1, Payload: []byte("friends payload")}
	want := refHMAC("ridfebb9", p.Payload)
	if got := d.PacketSignature(&p, []byte("ignored"), 0x55); got != binary.LittleEndian.Uint32(want) {
		t.Errorf("DATA signature %#x", got)
	}
	disc := Packet{Type: TypeDisconnect}
	if got := d.PacketSignature(&disc, nil, 0x55); got != 0x55 {
		t.Errorf("friends DISCONNECT signature %#x, want the connection signature", got)
	}
}

func TestV1SignatureInputs(t *testing.T) {
	d := NewV1("3d37fbdb")
	sessionKey := bytes.Repeat([]byte{7}, 16)
	connSig := bytes.Repeat([]byte{9}, 16)
	p := Packet{Type: TypeData, Flags: FlagReliable | FlagNeedAck | FlagHasSize,
		Src: VPort{10, 15}, Dst: VPort{10, 1}, SessionID: 3, SubstreamID: 0, Seq: 99,
		FragmentID: 0, Payload: []byte("rmc request")}
	enc, err := d.Append(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SignPacket(enc, sessionKey, connSig); err != nil {
		t.Fatal(err)
	}
	want := refHMAC("3d37fbdb", enc[6:14], sessionKey, le32(KeySum("3d37fbdb")), connSig, enc[30:])
	if !bytes.Equal(enc[14:30], want) {
		t.Errorf("signature %x, want %x", enc[14:30], want)
	}
	if ok, err := d.VerifyPacket(enc, sessionKey, connSig); !ok || err != nil {
		t.Errorf("verify: %v %v", ok, err)
	}
	if ok, _ := d.VerifyPacket(enc, sessionKey, nil); ok {
		t.Error("verifies without the connection signature")
	}
	if _, err := d.Signature(enc[:len(enc)-1], nil, nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("short packet: %v", err)
	}
	// Two packets in one buffer: each signature covers only its own packet.
	two := append(bytes.Clone(enc), enc...)
	if ok, _ := d.VerifyPacket(two, sessionKey, connSig); !ok {
		t.Error("first of two packets does not verify")
	}
}

func TestLiteSignature(t *testing.T) {
	d := NewLite("6181dff1")
	var cs [16]byte
	copy(cs[:], "server-conn-sig!")
	k := md5.Sum([]byte("6181dff1"))
	want := refHMAC("6181dff1", k[:], cs[:])
	if got := d.Signature(cs); !bytes.Equal(got[:], want) {
		t.Errorf("lite signature %x, want %x", got, want)
	}
}

func TestConnectionSignature(t *testing.T) {
	secret := []byte("server secret")
	a := ConnectionSignature(secret, netip.MustParseAddrPort("127.0.0.1:60000"))
	h := hmac.New(md5.New, secret)
	h.Write([]byte{127, 0, 0, 1, 0xea, 0x60})
	if !bytes.Equal(a[:], h.Sum(nil)) {
		t.Errorf("connection signature %x", a)
	}
	if b := ConnectionSignature(secret, netip.MustParseAddrPort("[::ffff:127.0.0.1]:60000")); b != a {
		t.Error("IPv4-mapped address signs differently")
	}
	if c := ConnectionSignature(secret, netip.MustParseAddrPort("127.0.0.1:60001")); c == a {
		t.Error("port not signed")
	}
	if c := ConnectionSignature([]byte("other"), netip.MustParseAddrPort("127.0.0.1:60000")); c == a {
		t.Error("secret not used")
	}
}

// TestSignConcurrent: dialect values are shared by many connections.
func TestSignConcurrent(t *testing.T) {
	d := NewV1("3d37fbdb")
	p := Packet{Type: TypeData, Src: VPort{10, 15}, Dst: VPort{10, 1}, Payload: bytes.Repeat([]byte{1}, 100)}
	enc, _ := d.Append(nil, &p)
	want, _ := d.Signature(enc, []byte("k"), nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if got, _ := d.Signature(enc, []byte("k"), nil); got != want {
					t.Error("signature differs under concurrency")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestConnectionSigner: a reused signer gives what ConnectionSignature gives, for
// IPv4, IPv4-mapped and IPv6 peers in any order, and allocates nothing.
func TestConnectionSigner(t *testing.T) {
	secret := []byte("server secret")
	signer := NewConnectionSigner(secret)
	peers := []string{"127.0.0.1:60000", "[::1]:60000", "[::ffff:10.0.0.1]:1", "192.168.1.2:65535", "127.0.0.1:60000"}
	for _, p := range peers {
		ap := netip.MustParseAddrPort(p)
		if got, want := signer.Sign(ap), ConnectionSignature(secret, ap); got != want {
			t.Errorf("%s: reused signer gives %x, want %x", p, got, want)
		}
	}
	ap := netip.MustParseAddrPort("[2001:db8::1]:3074")
	if n := testing.AllocsPerRun(100, func() { signer.Sign(ap) }); n != 0 && !raceEnabled {
		t.Errorf("ConnectionSigner.Sign: %v allocations, want 0", n)
	}
}
