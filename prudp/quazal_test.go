package prudp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"

	"github.com/gamewire/gamewire/internal/lossy"
	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/wire"
)

const quazalKey = "8dtRv2oj" // Ghost Recon Online's access key (GROBackendWV wiki "PRUDP packet format")

func TestQuazalDefaults(t *testing.T) {
	r := (&Config{Dialect: Quazal}).resolved()
	if r.StreamType != StreamOldRVSec || r.FragmentSize != QuazalFragmentSize || r.RC4Mode != RC4PerPacket ||
		r.ChecksumSize != 1 || r.Kerberos != kerberos.Quazal || r.IdleTimeout != 60*time.Second {
		t.Fatalf("Quazal defaults: stream %d, fragment %d, rc4 %v, checksum %d, kerberos %+v, idle %v",
			r.StreamType, r.FragmentSize, r.RC4Mode, r.ChecksumSize, r.Kerberos, r.IdleTimeout)
	}
	if err := r.validate(); err != nil {
		t.Fatal(err)
	}
	bad := r
	bad.ChecksumSize = 2
	if err := bad.validate(); err == nil {
		t.Fatal("ChecksumSize 2 accepted")
	}
	if r := (&Config{Dialect: NEXV0}).resolved(); r.RC4Mode != RC4Stream || r.StreamType != StreamRVSecure {
		t.Fatalf("NEX V0 defaults changed: rc4 %v, stream %d", r.RC4Mode, r.StreamType)
	}
	for _, name := range []string{"quazal", "hyperscape"} {
		d, err := ParseDialect(name)
		if err != nil || d.String() != name {
			t.Fatalf("ParseDialect(%q) = %v, %v", name, d, err)
		}
	}
}

// quazalVariants are the configurations every Quazal test runs in.
func quazalVariants() []Config {
	var out []Config
	sigs := []QuazalSignatures{QuazalSigConnection, QuazalSigPayload, QuazalSigSession}
	for _, cs := range []int{1, 4} {
		for _, mode := range []RC4Mode{RC4PerPacket, RC4Stream} {
			for _, zlib := range []bool{false, true} {
				out = append(out, Config{Dialect: Quazal, AccessKey: quazalKey, ChecksumSize: cs, RC4Mode: mode,
					QuazalSignatures: sigs[len(out)%len(sigs)], Compression: zlib})
			}
		}
	}
	return out
}

func quazalName(c Config) string {
	z := ""
	if c.Compression {
		z = "/zlib"
	}
	return fmt.Sprintf("checksum%d/%s/sig-%s%s", c.ChecksumSize, c.RC4Mode, c.QuazalSignatures, z)
}

// TestQuazalLossyExactlyOnce pushes small and fragmented messages through
// loss, duplication and reordering in every Quazal variant; each comes back
// from the echo server exactly once and in order.
func TestQuazalLossyExactlyOnce(t *testing.T) {
	count := 400
	if testing.Short() || raceEnabled {
		count = 50 // zlib under the race detector is slow; 8 variants run
	}
	for _, cfg := range quazalVariants() {
		t.Run(quazalName(cfg), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				link := lossy.Config{Seed: 7, Loss: 0.15, Duplicate: 0.05, Reorder: 0.1, Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond}
				cfg.InitialRTO, cfg.MaxRetransmits = 200*time.Millisecond, 30
				srv := &Server{Config: cfg, Shards: 1}
				n, c, stop := lossyPair(t, link, srv, &cfg)
				defer stop()
				exchangeInOrder(t, c, count)
				if st := n.Stats(); st.Lost == 0 || st.Duplicated == 0 {
					t.Errorf("the link did not lose and duplicate: %+v", st)
				}
				if ss := srv.Stats(); ss.ConnDrops["signature"] != 0 || ss.Drops["signature"] != 0 || ss.Drops["checksum"] != 0 {
					t.Errorf("signature or checksum drops on an honest link: %v %v", ss.Drops, ss.ConnDrops)
				}
			})
		})
	}
}

// exchangeInOrder sends count messages (every tenth one several fragments
// long) and checks the echoes arrive exactly once, in order.
func exchangeInOrder(t *testing.T, c *Conn, count int) {
	t.Helper()
	ctx := context.Background()
	msgFor := func(i int) []byte {
		size := 16
		if i%10 == 0 {
			size = 3000 + i
		}
		m := bytes.Repeat([]byte{byte(i), byte(i >> 8), 'q'}, size/3+1)[:size]
		binary.LittleEndian.PutUint32(m, uint32(i))
		return m
	}
	done := make(chan error, 1)
	go func() {
		for i := range count {
			m, err := c.Recv(ctx)
			if err != nil {
				done <- fmt.Errorf("recv %d: %w", i, err)
				return
			}
			if !bytes.Equal(m.Data, msgFor(i)) {
				done <- fmt.Errorf("message %d: got index %d, %d bytes", i, binary.LittleEndian.Uint32(m.Data), len(m.Data))
				return
			}
		}
		done <- nil
	}()
	for i := range count {
		if err := c.Send(ctx, 0, msgFor(i)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestQuazalSecureTickets connects to a secure Quazal server with a ticket
// (kerberos.Quazal: 4-byte PIDs, 16-byte session keys, the key derived with
// MD5 iterated 65000 + pid%1024 times) through a lossy link.
func TestQuazalSecureTickets(t *testing.T) {
	serverKey := kerberos.DeriveKey("quazal-server-password", 2)
	for _, mode := range []RC4Mode{RC4PerPacket, RC4Stream} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var pid uint64
				done := make(chan struct{}, 1)
				srv := &Server{Config: Config{Dialect: Quazal, AccessKey: quazalKey, RC4Mode: mode}, ServerKey: serverKey[:],
					ConnState: func(c *Conn, st ConnState) {
						if st == StateNew {
							pid = c.PID()
							done <- struct{}{}
						}
					}}
				cfg := Config{Dialect: Quazal, AccessKey: quazalKey, RC4Mode: mode, Ticket: issue(t, serverKey[:], time.Now(), kerberos.Quazal), PID: 1000,
					InitialRTO: 200 * time.Millisecond, MaxRetransmits: 30}
				if len(cfg.Ticket.SessionKey) != 16 {
					t.Fatalf("Quazal session key of %d bytes", len(cfg.Ticket.SessionKey))
				}
				_, c, stop := lossyPair(t, lossy.Config{Seed: 9, Loss: 0.1, Duplicate: 0.05, Delay: 5 * time.Millisecond}, srv, &cfg)
				defer stop()
				exchangeInOrder(t, c, 50)
				<-done
				if pid != 1000 {
					t.Fatalf("server saw PID %d, want 1000", pid)
				}
			})
		})
	}
}

// TestQuazalPerPacketRC4OnTheWire checks the bytes a Quazal client sends:
// each DATA payload decrypts from a fresh RC4 "CD&ML" state (docs/peers.md,
// "Quazal Rendez-Vous"), the checksum has the configured size, and the
// packets decode with the wire codec.
func TestQuazalPerPacketRC4OnTheWire(t *testing.T) {
	for _, cs := range []int{1, 4} {
		t.Run(fmt.Sprintf("checksum%d", cs), func(t *testing.T) {
			p := newManualPair(t, Config{Dialect: Quazal, AccessKey: quazalKey, ChecksumSize: cs})
			d := wire.NewQuazal(quazalKey, wire.QuazalOptions{ChecksumSize: cs})
			msgs := []string{"first payload", "second payload"}
			var datas [][]byte
			for _, m := range msgs {
				p.sendNow([]byte(m))
				p.cep.shards[0].flushWrites()
				for _, o := range p.ccap.out {
					w, _, err := d.Parse(o.b)
					if err != nil {
						t.Fatalf("client datagram % x: %v", o.b, err)
					}
					if w.Type == wire.TypeData && w.Flags.Has(wire.FlagReliable) {
						datas = append(datas, append([]byte(nil), w.Payload...))
						if w.Src.Stream != wire.StreamOldRVSec {
							t.Errorf("source stream %v, want OldRVSec", w.Src)
						}
					}
				}
				p.deliver()
			}
			if len(datas) != 2 {
				t.Fatalf("%d DATA packets", len(datas))
			}
			for i, enc := range datas {
				var rc crypt.RC4
				_ = rc.Reset([]byte("CD&ML"))
				plain := make([]byte, len(enc))
				rc.XORKeyStream(plain, enc)
				if string(plain) != msgs[i] {
					t.Errorf("DATA %d decrypts from a fresh CD&ML state to %q, want %q", i, plain, msgs[i])
				}
			}
			if n := len(p.server.conn.inbox); n != 2 {
				t.Fatalf("server received %d messages", n)
			}
		})
	}
}

// TestQuazalSignatureModes checks that a packet signed in one mode is
// refused by a peer checking another, and that the payload mode puts
// 0x12345678 on empty DATA.
func TestQuazalSignatureModes(t *testing.T) {
	p := newManualPair(t, Config{Dialect: Quazal, AccessKey: quazalKey, QuazalSignatures: QuazalSigPayload})
	q := pkt{typ: typeData, flags: flagAck}
	q.src, q.dst = p.client.localPort, p.client.remotePort
	b, err := p.client.codec.appendPacket(nil, &q, p.client.keysFor(typeData, true))
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := wire.NewQuazal(quazalKey, wire.QuazalOptions{}).Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if w.Signature32() != wire.FriendsEmptySignature {
		t.Fatalf("empty DATA signature %#x, want %#x", w.Signature32(), wire.FriendsEmptySignature)
	}
	// The same ACK under connection signatures does not verify.
	conn, _ := newCodec(&Config{Dialect: Quazal, AccessKey: quazalKey, ChecksumSize: 1})
	var got pkt
	if _, err := conn.parse(b, &got); err != nil {
		t.Fatal(err)
	}
	if conn.verify(&got, p.server.keysFor(typeData, false)) {
		t.Fatal("a payload-mode signature verified as a connection signature")
	}
	if !p.server.codec.verify(&got, p.server.keysFor(typeData, false)) {
		t.Fatal("the payload-mode signature does not verify in its own mode")
	}
}

// TestQuazalVectorsThroughEngine decodes the published Quazal packets with
// the engine's codec (the wire package checks every field; here the engine's
// view): the GRO CONNECT verifies with the GRO key, the DO packet with base 0.
func TestQuazalVectorsThroughEngine(t *testing.T) {
	vectors := map[string]struct {
		key, hex string
		typ      uint8
	}{
		"gro-connect": {quazalKey, "3f31311f7856341201000100267f5e", typeConnect},
	}
	for name, v := range vectors {
		t.Run(name, func(t *testing.T) {
			c, err := newCodec(&Config{Dialect: Quazal, AccessKey: v.key, ChecksumSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			b := testutil.Unhex(t, v.hex)
			var p pkt
			n, err := c.parse(b, &p)
			if err != nil || n != len(b) {
				t.Fatalf("parse: n=%d err=%v", n, err)
			}
			if p.typ != v.typ || p.src != vport(StreamOldRVSec, 0xf) || p.dst != vport(StreamOldRVSec, 1) {
				t.Fatalf("decoded %+v", p)
			}
			// One bit off and the checksum refuses it.
			b[len(b)-2] ^= 1
			if _, err := c.parse(b, &p); err == nil {
				t.Fatal("corrupted vector accepted")
			}
		})
	}
}
