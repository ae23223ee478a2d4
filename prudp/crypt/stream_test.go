package crypt

import (
	"bytes"
	"crypto/rc4"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/gamewire/gamewire/internal/testutil"
)

func seqKey(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// The expected values were computed by running the Python of
// NintendoClients wiki "PRUDP Protocol" ("Details on substreams and unreliable packets") as
// printed there.
func TestUnreliableKeySpecPython(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
		seq  uint16
		sid  uint8
		want string
	}{
		{"32-byte key", seqKey(32), 0x1234, 0x56, "7990a8a7012124c67937f5a4faf414a1290dc878ae3553bba9a9b814fe49351b"},
		{"CD&ML wraps", []byte(DefaultKey), 0xffff, 0xff, "76d8d0a3bf1616c6f18932bad8fb9352ff368376dcb7c341018218af73c748d1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UnreliableKey(tt.key, tt.seq, tt.sid)
			if want := testutil.Unhex(t, tt.want); !bytes.Equal(got[:], want) {
				t.Fatalf("key %x, want %x", got, want)
			}
		})
	}
	// A session key longer than the stack buffer takes the other path.
	long := seqKey(100)
	u := NewUnreliableKeys(long)
	if u.Key(1, 2) != UnreliableKey(long, 1, 2) {
		t.Fatal("long key: NewUnreliableKeys and UnreliableKey disagree")
	}
}

func TestUnreliableXORPacket(t *testing.T) {
	u := NewUnreliableKeys(seqKey(32))
	msg := []byte("unreliable payload")
	enc := append([]byte(nil), msg...)
	u.XORPacket(enc, enc, 7, 3)
	k := u.Key(7, 3)
	ref, _ := rc4.NewCipher(k[:])
	want := make([]byte, len(msg))
	ref.XORKeyStream(want, msg)
	if !bytes.Equal(enc, want) {
		t.Fatalf("XORPacket = %x, want %x", enc, want)
	}
	u.XORPacket(enc, enc, 7, 3)
	if !bytes.Equal(enc, msg) {
		t.Fatal("XORPacket twice is not the identity")
	}
	if n := testing.AllocsPerRun(100, func() { u.XORPacket(enc, enc, 9, 1) }); n != 0 {
		t.Fatalf("XORPacket allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = UnreliableKey(msg[:16], 9, 1) }); n != 0 {
		t.Fatalf("UnreliableKey allocates %v times", n)
	}
}

func TestModifyKey(t *testing.T) {
	tests := []struct {
		in    []byte
		times uint8
		want  string
	}{
		{seqKey(32), 1, "11111111111111111111111111111111101112131415161718191a1b1c1d1e1f"},
		{seqKey(32), 2, "2221201f1e1d1c1b1a19181716151413101112131415161718191a1b1c1d1e1f"},
		{[]byte(DefaultKey), 1, "4646264d4c"},
		{[]byte(DefaultKey), 0, hex.EncodeToString([]byte(DefaultKey))},
	}
	for _, tt := range tests {
		orig := append([]byte(nil), tt.in...)
		got := SubstreamKey(tt.in, tt.times)
		if hex.EncodeToString(got) != tt.want {
			t.Errorf("SubstreamKey(%x, %d) = %x, want %s", tt.in, tt.times, got, tt.want)
		}
		if !bytes.Equal(tt.in, orig) {
			t.Errorf("SubstreamKey modified its input")
		}
	}
}

func TestCipherModes(t *testing.T) {
	key := []byte(DefaultKey)
	p1 := []byte("first packet payload")
	p2 := []byte("second packet")

	ref, _ := rc4.NewCipher(key)
	stream1 := make([]byte, len(p1))
	stream2 := make([]byte, len(p2))
	ref.XORKeyStream(stream1, p1)
	ref.XORKeyStream(stream2, p2)
	fresh, _ := rc4.NewCipher(key)
	fresh2 := make([]byte, len(p2))
	fresh.XORKeyStream(fresh2, p2)

	t.Run("stream", func(t *testing.T) {
		c, err := NewCipher(key, ModeStream)
		if err != nil {
			t.Fatal(err)
		}
		a := append([]byte(nil), p1...)
		b := append([]byte(nil), p2...)
		c.XORPacket(a, a)
		c.XORPacket(b, b)
		if !bytes.Equal(a, stream1) || !bytes.Equal(b, stream2) {
			t.Fatal("stream mode does not continue the keystream")
		}
	})
	t.Run("per-packet", func(t *testing.T) {
		c, err := NewCipher(key, ModePerPacket)
		if err != nil {
			t.Fatal(err)
		}
		a := append([]byte(nil), p1...)
		b := append([]byte(nil), p2...)
		c.XORPacket(a, a)
		c.XORPacket(b, b)
		if !bytes.Equal(a, stream1) || !bytes.Equal(b, fresh2) {
			t.Fatal("per-packet mode does not restart from the keyed state")
		}
		if n := testing.AllocsPerRun(100, func() { c.XORPacket(b, b) }); n != 0 {
			t.Fatalf("per-packet XORPacket allocates %v times", n)
		}
	})
	t.Run("rekey switches mode", func(t *testing.T) {
		c, _ := NewCipher(key, ModePerPacket)
		if err := c.Init(key, ModeStream); err != nil {
			t.Fatal(err)
		}
		if c.Mode() != ModeStream || c.fresh != nil {
			t.Fatal("Init did not switch to stream mode")
		}
		if err := c.Init(key, Mode(9)); err == nil {
			t.Fatal("unknown mode accepted")
		}
		if _, err := NewCipher(nil, ModeStream); err == nil {
			t.Fatal("empty key accepted")
		}
	})
}

func BenchmarkUnreliableKey(b *testing.B) {
	key := seqKey(32)
	b.ReportAllocs()
	var seq uint16
	for b.Loop() {
		seq++
		_ = UnreliableKey(key, seq, 1)
	}
}

func BenchmarkUnreliablePacket1K(b *testing.B) {
	u := NewUnreliableKeys(seqKey(32))
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var seq uint16
	for b.Loop() {
		seq++
		u.XORPacket(buf, buf, seq, 1)
	}
}

func BenchmarkCipherPerPacket1K(b *testing.B) {
	c, _ := NewCipher([]byte(DefaultKey), ModePerPacket)
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		c.XORPacket(buf, buf)
	}
}

// TestQuazalCDMLVector decrypts the payload of a Quazal DATA packet from the
// Splinter Cell Blacklist server emulator's packet tests (public repository
// unixoide/5th-echelon, quazal/src/prudp/packet.rs, test_syn, fourth packet:
// 3f3132 7c 60300dd5 0200 00 <payload> 7f). Under a fresh "CD&ML" state it
// reads: ratio byte 0, then an RMC message whose LE32 size covers the rest
// and which names the "Tracking" protocol.
func TestQuazalCDMLVector(t *testing.T) {
	payload := testutil.Unhex(t, "0f9344db1375e25005a260fd2a16fbb1ab248796fc3fcc7b5a")
	c, err := NewCipher([]byte(DefaultKey), ModePerPacket)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // per-packet: the same bytes decrypt alike twice
		buf := append([]byte(nil), payload...)
		c.XORPacket(buf, buf)
		msg, err := Decompress(buf, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if n := int(binary.LittleEndian.Uint32(msg)); n != len(msg)-4 {
			t.Fatalf("RMC size %d, message has %d bytes after it: %x", n, len(msg)-4, msg)
		}
		if !bytes.HasSuffix(msg, []byte("Tracking\x00")) {
			t.Fatalf("plaintext %q does not name the Tracking protocol", msg)
		}
	}
}
