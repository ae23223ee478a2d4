package hyperscape

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gamewire/gamewire/prudp/wire"
)

// serverPayload lays a ServerHello out as prudp/wire's server CONNECT payload.
func serverPayload(t testing.TB, h ServerHello) []byte {
	t.Helper()
	c := wire.HyperscapeConnect{PublicKey: h.PublicKey, PublicKeySignature: h.Signature, Tag: h.Tag[:]}
	b, err := c.Append(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHandshakeThroughWire runs the key exchange through the CONNECT payload
// codecs of prudp/wire, both directions, as the engine will.
func TestHandshakeThroughWire(t *testing.T) {
	cert := certKey(t)
	c, err := NewClient(&cert.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	hello := wire.HyperscapeConnect{PublicKey: c.PublicKey()}
	req, err := hello.Append(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wire.ParseHyperscapeConnect(req, false)
	if err != nil {
		t.Fatal(err)
	}
	h, serverKey, err := Respond(got.PublicKey[:], cert)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := wire.ParseHyperscapeConnect(serverPayload(t, h), true)
	if err != nil {
		t.Fatal(err)
	}
	clientKey, err := c.Finish(ans.PublicKey[:], ans.PublicKeySignature, ans.Tag)
	if err != nil {
		t.Fatal(err)
	}
	if clientKey != serverKey {
		t.Fatal("keys differ")
	}
	// And the first DATA payload both ways.
	sd, _ := NewDataCipher(serverKey)
	cd, _ := NewDataCipher(clientKey)
	msg := []byte("first RMC call")
	out, err := sd.Open(nil, cd.Seal(nil, msg, 1, true), 1, 1024)
	if err != nil || !bytes.Equal(out, msg) {
		t.Fatalf("client -> server DATA: %q, %v", out, err)
	}
	out, err = cd.Open(nil, sd.Seal(nil, msg, 1, false), 1, 1024)
	if err != nil || !bytes.Equal(out, msg) {
		t.Fatalf("server -> client DATA: %q, %v", out, err)
	}
	// A DATA payload sealed under another connection's key is refused.
	other, _ := NewDataCipher(SharedKey{1})
	if _, err := sd.Open(nil, other.Seal(nil, msg, 1, false), 1, 1024); !errors.Is(err, ErrBadPadding) && !errors.Is(err, ErrBadPayload) && !errors.Is(err, ErrBadSequence) {
		t.Fatalf("foreign key: err = %v", err)
	}
}

// FuzzServerConnectPayload feeds arbitrary server CONNECT payloads through
// prudp/wire's parser and the client's checks: no panic, and nothing but the
// genuine answer (up to signature re-encoding) is accepted.
func FuzzServerConnectPayload(f *testing.F) {
	cert := certKey(f)
	c, h, _ := exchange(f, cert)
	real := serverPayload(f, h)
	f.Add(real)
	f.Add(real[:len(real)-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, payload []byte) {
		p, err := wire.ParseHyperscapeConnect(payload, true)
		if err != nil {
			return
		}
		if _, err := c.Finish(p.PublicKey[:], p.PublicKeySignature, p.Tag); err == nil {
			if p.PublicKey != h.PublicKey || !bytes.Equal(p.Tag, h.Tag[:]) {
				t.Fatalf("forged answer accepted: %x", payload)
			}
		}
	})
}
