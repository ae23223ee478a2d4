package prudp

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gamewire/gamewire/internal/lossy"
	"github.com/gamewire/gamewire/prudp/hyperscape"
	"github.com/gamewire/gamewire/prudp/wire"
)

// testCertKey is one certification key pair for the whole test binary
// (generating P-256 keys is cheap, but fuzz iterations add up).
var testCertKey = sync.OnceValue(func() *ecdsa.PrivateKey {
	k, err := hyperscape.GenerateCertKey()
	if err != nil {
		panic(err)
	}
	return k
})

// hyperscapeConfig is a Hyperscape configuration whose server and client
// halves trust the same certification key.
func hyperscapeConfig() Config {
	k := testCertKey()
	return Config{Dialect: Hyperscape, CertKey: k, CertPub: &k.PublicKey}
}

func TestHyperscapeDefaults(t *testing.T) {
	r := (&Config{Dialect: Hyperscape}).resolved()
	if r.StreamType != StreamOldRVSec || r.FragmentSize != QuazalFragmentSize || r.KeepAlive != 10*time.Second ||
		r.MaxUnansweredPings != 2 || r.ChecksumSize != 4 {
		t.Fatalf("Hyperscape defaults: stream %d, fragment %d, keepalive %v, pings %d, checksum %d",
			r.StreamType, r.FragmentSize, r.KeepAlive, r.MaxUnansweredPings, r.ChecksumSize)
	}
	ctx := context.Background()
	srv := &Server{Addr: "127.0.0.1:0", Config: Config{Dialect: Hyperscape}}
	if err := srv.ListenAndServe(); err == nil || !strings.Contains(err.Error(), "CertKey") {
		t.Fatalf("server without a certification key: %v", err)
	}
	if _, err := Dial(ctx, "127.0.0.1:9", &Config{Dialect: Hyperscape}); err == nil || !strings.Contains(err.Error(), "CertPub") {
		t.Fatalf("client without a certification key: %v", err)
	}
}

// TestHyperscapeLossyExactlyOnce runs the whole Hyperscape stack (SYN
// signatures, ECDH CONNECT, USER, AES-CBC DATA with and without
// compression, u32 fragment ids) through loss, duplication and reordering.
func TestHyperscapeLossyExactlyOnce(t *testing.T) {
	count := 300
	if testing.Short() || raceEnabled {
		count = 100
	}
	for _, zlib := range []bool{false, true} {
		name := "plain"
		if zlib {
			name = "zlib"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				link := lossy.Config{Seed: 11, Loss: 0.15, Duplicate: 0.05, Reorder: 0.1, Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond}
				cfg := hyperscapeConfig()
				cfg.Compression = zlib
				cfg.InitialRTO, cfg.MaxRetransmits = 200*time.Millisecond, 30
				srv := &Server{Config: cfg, Shards: 1}
				n, c, stop := lossyPair(t, link, srv, &cfg)
				defer stop()
				exchangeInOrder(t, c, count)
				if st := n.Stats(); st.Lost == 0 || st.Duplicated == 0 {
					t.Errorf("the link did not lose and duplicate: %+v", st)
				}
				if ss := srv.Stats(); len(ss.ConnDrops) != 0 && (ss.ConnDrops["decrypt"] != 0 || ss.ConnDrops["signature"] != 0) {
					t.Errorf("drops on an honest link: %v", ss.ConnDrops)
				}
			})
		})
	}
}

// TestHyperscapeUserStage checks the handshake packet by packet: the client's
// first reliable packet after CONNECT is a USER with sequence id 2, the server
// acknowledges it, and DATA follows from sequence id 3.
func TestHyperscapeUserStage(t *testing.T) {
	p := newManualPair(t, hyperscapeConfig())
	if n := len(p.client.streams[0].inflight); n != 0 {
		t.Fatalf("USER unacknowledged: %d packets in flight", n)
	}
	if got := p.server.streams[0].recvNext; got != 3 {
		t.Fatalf("server expects sequence id %d after USER, want 3", got)
	}
	if _, ok := p.client.xf.(*aesTransform); !ok {
		t.Fatal("no AES DATA transform after the key exchange")
	}
	if _, ok := p.server.xf.(*aesTransform); !ok {
		t.Fatal("no AES DATA transform after the key exchange")
	}
	big := bytes.Repeat([]byte("hyperscape!"), 300) // 4 fragments of 963
	p.sendNow(big)
	p.cep.shards[0].flushWrites()
	d := wire.NewHyperscape()
	var frags []uint32
	for _, o := range p.ccap.out {
		w, _, err := d.Parse(o.b)
		if err != nil {
			t.Fatal(err)
		}
		if w.Type == wire.TypeData {
			frags = append(frags, w.FragmentID)
			if bytes.Contains(w.Payload, []byte("hyperscape!")) {
				t.Fatal("DATA payload in the clear")
			}
		}
	}
	if len(frags) != 4 || frags[0] != 1 || frags[3] != 0 {
		t.Fatalf("fragment ids %v, want 1 2 3 0", frags)
	}
	p.deliver()
	if in := p.server.conn.inbox; len(in) != 1 || !bytes.Equal(in[0].Data, big) {
		t.Fatalf("server received %d messages", len(in))
	}
}

// tamperConnectAck returns a Tamper function changing the server's CONNECT
// answer with edit (the checksum is recomputed, so only the key exchange
// can notice).
func tamperConnectAck(edit func(h *wire.HyperscapeConnect)) func(b []byte, from, to netip.AddrPort) []byte {
	d := wire.NewHyperscape()
	return func(b []byte, from, to netip.AddrPort) []byte {
		if from != lossyServerAddr {
			return b
		}
		w, _, err := d.Parse(b)
		if err != nil || w.Type != wire.TypeConnect || !w.Flags.Has(wire.FlagAck) {
			return b
		}
		h, err := wire.ParseHyperscapeConnect(w.Payload, true)
		if err != nil {
			return b
		}
		h.PublicKeySignature = append([]byte(nil), h.PublicKeySignature...)
		h.Tag = append([]byte(nil), h.Tag...)
		edit(&h)
		if w.Payload, err = h.Append(nil, true); err != nil {
			panic(err)
		}
		out, err := d.Append(nil, &w)
		if err != nil {
			panic(err)
		}
		return out
	}
}

// TestHyperscapeHandshakeRefused: a wrong certification key, a tampered
// signature, a tampered server key and a bad tag each refuse the connection
// with ErrHandshake and the specific reason.
func TestHyperscapeHandshakeRefused(t *testing.T) {
	other, err := hyperscape.GenerateCertKey()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		pub    *ecdsa.PublicKey
		tamper func(h *wire.HyperscapeConnect)
		want   error
	}{
		{"wrong certification key", &other.PublicKey, nil, hyperscape.ErrBadSignature},
		{"tampered signature", nil, func(h *wire.HyperscapeConnect) { h.PublicKeySignature[len(h.PublicKeySignature)-1] ^= 1 }, hyperscape.ErrBadSignature},
		{"tampered server key", nil, func(h *wire.HyperscapeConnect) { h.PublicKey[63] ^= 1 }, nil},
		{"bad tag", nil, func(h *wire.HyperscapeConnect) { h.Tag[0] ^= 1 }, hyperscape.ErrBadTag},
		{"short tag", nil, func(h *wire.HyperscapeConnect) { h.Tag = h.Tag[:16] }, hyperscape.ErrBadTag},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				link := lossy.Config{Seed: 1, Delay: time.Millisecond}
				if tc.tamper != nil {
					link.Tamper = tamperConnectAck(tc.tamper)
				}
				n := lossy.New(link)
				spc, _ := n.Listen(lossyServerAddr)
				cpc, _ := n.Listen(lossyClientAddr)
				cfg := hyperscapeConfig()
				srv := &Server{Config: cfg}
				served := make(chan error, 1)
				go func() { served <- srv.Serve(spc) }()
				defer func() { srv.Close(); <-served }()
				if tc.pub != nil {
					cfg.CertPub = tc.pub
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				c, err := DialPacketConn(ctx, cpc, lossyServerAddr, &cfg, true)
				if err == nil {
					c.Abort()
					t.Fatal("connection established")
				}
				if !errors.Is(err, ErrHandshake) || (tc.want != nil && !errors.Is(err, tc.want)) {
					t.Fatalf("error %v, want ErrHandshake wrapping %v", err, tc.want)
				}
				if !strings.Contains(err.Error(), "hyperscape") {
					t.Fatalf("error %q does not say what failed", err)
				}
			})
		})
	}
}

// TestHyperscapeCorruptedData corrupts the IV of one DATA packet and the
// ciphertext of another in transit (checksums recomputed): the server
// refuses both, unacknowledged, with a logged reason, and the messages still
// arrive once each from the intact retransmissions.
func TestHyperscapeCorruptedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := wire.NewHyperscape()
		var dataSeen atomic.Int32
		link := lossy.Config{Seed: 1, Delay: time.Millisecond, Tamper: func(b []byte, from, to netip.AddrPort) []byte {
			if from != lossyClientAddr {
				return b
			}
			w, _, err := d.Parse(b)
			if err != nil || w.Type != wire.TypeData || w.Flags.Has(wire.FlagAck) {
				return b
			}
			switch dataSeen.Add(1) {
			case 1: // a one-block message: flip the IV's last byte, which lands on the padding
				w.Payload[hyperscape.IVSize-1] ^= 0x80
			case 2: // a longer one: flip the last byte of the second-to-last ciphertext block
				w.Payload[len(w.Payload)-hyperscape.IVSize-1] ^= 0x80
			default:
				return b
			}
			out, err := d.Append(nil, &w)
			if err != nil {
				panic(err)
			}
			return out
		}}
		var logs bytes.Buffer
		cfg := hyperscapeConfig()
		cfg.InitialRTO = 200 * time.Millisecond
		scfg := cfg
		scfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		srv := &Server{Config: scfg, Shards: 1}
		_, c, stop := lossyPair(t, link, srv, &cfg)
		defer stop()
		ctx := context.Background()
		msgs := [][]byte{[]byte("short"), bytes.Repeat([]byte("0123456789"), 10)}
		for _, m := range msgs {
			if err := c.Send(ctx, 0, m); err != nil {
				t.Fatal(err)
			}
			if got := recvOrFail(t, c); !bytes.Equal(got.Data, m) {
				t.Fatalf("echo %q, want %q", got.Data, m)
			}
		}
		if got := srv.Stats().ConnDrops["decrypt"]; got != 2 {
			t.Fatalf("%d DATA packets refused, want 2 (%v)", got, srv.Stats().ConnDrops)
		}
		if n := strings.Count(logs.String(), "DATA payload refused"); n != 2 || !strings.Contains(logs.String(), "padding") {
			t.Fatalf("log does not name the refusals:\n%s", logs.String())
		}
	})
}

// TestHyperscapeUnansweredPings: PINGs go out every 10 s; once the server
// falls silent, the second unanswered PING closes the connection with
// ErrPeerDead before the idle timeout would.
func TestHyperscapeUnansweredPings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var silent atomic.Bool
		var pings atomic.Int32
		d := wire.NewHyperscape()
		link := lossy.Config{Seed: 1, Delay: time.Millisecond, Tamper: func(b []byte, from, to netip.AddrPort) []byte {
			if w, _, err := d.Parse(b); err == nil && w.Type == wire.TypePing && !w.Flags.Has(wire.FlagAck) && from == lossyClientAddr {
				pings.Add(1)
			}
			if silent.Load() && from == lossyServerAddr {
				return nil
			}
			return b
		}}
		cfg := hyperscapeConfig()
		srv := &Server{Config: cfg}
		_, c, stop := lossyPair(t, link, srv, &cfg)
		defer stop()
		// Healthy: a minute of idling is kept alive by answered PINGs.
		time.Sleep(65 * time.Second)
		if err := c.Err(); err != nil {
			t.Fatalf("idle connection closed: %v", err)
		}
		if n := pings.Load(); n < 5 || n > 7 {
			t.Fatalf("%d PINGs in 65 s, want one every 10 s", n)
		}
		silent.Store(true)
		start := time.Now()
		_, err := c.Recv(context.Background())
		if !errors.Is(err, ErrPeerDead) || !strings.Contains(err.Error(), "PING") {
			t.Fatalf("recv: %v, want ErrPeerDead for unanswered PINGs", err)
		}
		if el := time.Since(start); el > 31*time.Second {
			t.Fatalf("closed after %v; two unanswered PINGs take at most 30 s", el)
		}
	})
}

// FuzzHyperscapeConnect feeds arbitrary CONNECT payloads to both ends of the
// key exchange: a server answering a correctly signed CONNECT (it creates a
// connection exactly when the payload is a valid client key), and a client
// waiting for the CONNECT answer (only the real answer establishes it). The
// payload codecs must round-trip what they accept.
func FuzzHyperscapeConnect(f *testing.F) {
	hc, err := hyperscape.NewClient(&testCertKey().PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	pub := hc.PublicKey()
	client := wire.HyperscapeConnect{PublicKey: pub}
	cb, _ := client.Append(nil, false)
	f.Add(cb)
	hello, _, err := hyperscape.Respond(pub[:], testCertKey())
	if err != nil {
		f.Fatal(err)
	}
	server := wire.HyperscapeConnect{PublicKey: hello.PublicKey, PublicKeySignature: hello.Signature, Tag: hello.Tag[:]}
	sb, _ := server.Append(nil, true)
	f.Add(sb)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Codecs: what parses re-encodes to the same bytes.
		for _, isServer := range []bool{false, true} {
			if h, err := wire.ParseHyperscapeConnect(b, isServer); err == nil {
				out, err := h.Append(nil, isServer)
				if err != nil || !bytes.Equal(out, b) {
					t.Fatalf("server=%v: parse -> append gives % x, %v; want % x", isServer, out, err, b)
				}
			}
		}
		// Server: a CONNECT signed with the right connection signature.
		p := newManualPair(t, hyperscapeConfig())
		sh := p.sep.shards[0]
		from := netip.MustParseAddrPort("127.0.0.1:50001")
		sig := sh.connSig(from)
		q := pkt{typ: typeConnect, flags: flagReliable | flagNeedAck, src: p.client.localPort, dst: p.client.remotePort, seq: 1, sessionID: 7, payload: b}
		copy(q.connSig[:], "abcd")
		dg, err := p.sep.codec.appendPacket(nil, &q, keys{connSig: sig[:4]})
		if err != nil {
			t.Fatal(err)
		}
		before := len(sh.sessions)
		p.sep.handleDatagram(sh, p.now, dg, from)
		_, perr := parseHyperscapeClientConnect(b)
		if created := len(sh.sessions) > before; created != (perr == nil) {
			t.Fatalf("payload % x: connection created %v, payload error %v", b, created, perr)
		}
		// Client: the answer to its CONNECT carries b.
		c := newSession(p.cep.shards[0], &p.cep.cfg, p.cep.codec, true, p.scap.addr, p.now)
		c.conn = newConn(p.cep.shards[0], p.scap.addr, 1<<20)
		c.conn.s = c
		c.hs = &outPacket{}
		c.kxFinish = hyperscapeFinish(hc, &p.cep.cfg)
		c.state = stateConnecting
		ack := pkt{typ: typeConnect, flags: flagAck, payload: b}
		c.onConnectAck(p.now, &ack)
		if c.state == stateEstablished {
			// Only the server's real answer (its key and tag; an ECDSA
			// signature has more than one valid encoding) establishes.
			h, err := wire.ParseHyperscapeConnect(b, true)
			if err != nil || h.PublicKey != hello.PublicKey || !bytes.Equal(h.Tag, hello.Tag[:]) {
				t.Fatalf("client established by % x", b)
			}
		} else if c.err == nil || !errors.Is(c.err, ErrHandshake) {
			t.Fatalf("client state %d, err %v after a junk CONNECT answer", c.state, c.err)
		}
	})
}

// TestHyperscapeMultiAck: a packet with NEED_ACK and MULTI_ACK is answered
// with ACK and MULTI_ACK ("Multi Ack" in the Hyperscape "PRUDP" wiki page), and such
// an answer acknowledges like a plain ACK.
func TestHyperscapeMultiAck(t *testing.T) {
	p := newManualPair(t, hyperscapeConfig())
	st := &p.client.streams[0]
	u := pkt{typ: typeUser, flags: flagReliable | flagNeedAck | flagMultiAck, seq: st.sendSeq}
	p.client.transmitNew(p.now, st, &u, 0)
	p.cep.shards[0].flushWrites()
	for _, o := range p.ccap.out {
		p.sep.handleDatagram(p.sep.shards[0], p.now, o.b, p.ccap.addr)
	}
	p.ccap.out = p.ccap.out[:0]
	p.sep.shards[0].flushAcks(p.now)
	p.sep.shards[0].flushWrites()
	d := wire.NewHyperscape()
	var answered bool
	for _, o := range p.scap.out {
		w, _, err := d.Parse(o.b)
		if err != nil {
			t.Fatal(err)
		}
		if w.Type == wire.TypeUser && w.Flags.Has(wire.FlagAck|wire.FlagMultiAck) {
			answered = true
		}
	}
	if !answered {
		t.Fatal("no USER answer with ACK|MULTI_ACK")
	}
	p.deliver()
	if n := len(st.inflight); n != 0 {
		t.Fatalf("%d packets unacknowledged after the ACK|MULTI_ACK", n)
	}
}
