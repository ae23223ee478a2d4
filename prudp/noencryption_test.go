package prudp

import (
	"bytes"
	"testing"
)

// TestNoEncryption: with Config.NoEncryption, reliable and unreliable DATA
// carry the message itself (signed and checksummed as usual, and delivered);
// without it the same payload is RC4-encrypted on the wire.
func TestNoEncryption(t *testing.T) {
	for _, d := range []Dialect{NEXV1, NEXV0, NEXV0Friends, Quazal} {
		for _, plain := range []bool{true, false} {
			cfg := Config{Dialect: d, AccessKey: testKey, NoEncryption: plain}
			if d == Quazal {
				cfg.ChecksumSize = 4
			}
			p := newManualPair(t, cfg)
			msg := []byte("a message that is readable only when it is not encrypted")
			p.sendNow(msg)
			if err := p.client.sendUnreliable(p.now, msg); err != nil {
				t.Fatal(err)
			}
			p.cep.shards[0].flushWrites()
			var payloads int
			for _, o := range p.ccap.out {
				for b := o.b; len(b) > 0; {
					var pk pkt
					n, err := p.cep.codec.parse(b, &pk)
					if err != nil {
						t.Fatalf("%v: parse: %v", d, err)
					}
					b = b[n:]
					if pk.typ != typeData || len(pk.payload) == 0 {
						continue
					}
					payloads++
					if bytes.Equal(pk.payload, msg) != plain {
						t.Errorf("%v NoEncryption=%v: DATA payload on the wire %q", d, plain, pk.payload)
					}
				}
			}
			if payloads != 2 {
				t.Fatalf("%v: %d DATA payloads on the wire, want 2 (reliable, unreliable)", d, payloads)
			}
			p.deliver()
			in := p.server.conn.inbox
			if len(in) != 2 || !bytes.Equal(in[0].Data, msg) || !bytes.Equal(in[1].Data, msg) {
				t.Fatalf("%v NoEncryption=%v: server received %v", d, plain, in)
			}
		}
	}
	cfg := Config{Dialect: Hyperscape, NoEncryption: true}
	cfg = cfg.resolved()
	if err := cfg.validate(); err == nil {
		t.Error("Hyperscape with NoEncryption accepted")
	}
}
