package hyperscape

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func certKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := GenerateCertKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func exchange(t testing.TB, cert *ecdsa.PrivateKey) (*Client, ServerHello, SharedKey) {
	t.Helper()
	c, err := NewClient(&cert.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := c.PublicKey()
	h, k, err := Respond(pub[:], cert)
	if err != nil {
		t.Fatal(err)
	}
	return c, h, k
}

func TestKeyExchange(t *testing.T) {
	cert := certKey(t)
	c, h, serverKey := exchange(t, cert)
	clientKey, err := c.Finish(h.PublicKey[:], h.Signature, h.Tag[:])
	if err != nil {
		t.Fatal(err)
	}
	if clientKey != serverKey {
		t.Fatalf("client key %x != server key %x", clientKey, serverKey)
	}
	// The signature is ASN.1 DER ECDSA over SHA-256 of the 64-byte key.
	digest := sha256.Sum256(h.PublicKey[:])
	if !ecdsa.VerifyASN1(&cert.PublicKey, digest[:], h.Signature) {
		t.Fatal("signature is not DER ECDSA-SHA256 over the wire key")
	}
	// A second exchange yields different ephemeral keys and shared key.
	_, h2, k2 := exchange(t, cert)
	if h2.PublicKey == h.PublicKey || k2 == serverKey {
		t.Fatal("ephemeral keys repeat")
	}
}

func TestKeyExchangeRawSignature(t *testing.T) {
	cert := certKey(t)
	c, h, serverKey := exchange(t, cert)
	digest := sha256.Sum256(h.PublicKey[:])
	r, s, err := ecdsa.Sign(nil, cert, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 64)
	r.FillBytes(raw[:32])
	s.FillBytes(raw[32:])
	k, err := c.Finish(h.PublicKey[:], raw, h.Tag[:])
	if err != nil || k != serverKey {
		t.Fatalf("raw r||s signature: %v", err)
	}
}

func TestKeyExchangeRefusals(t *testing.T) {
	cert := certKey(t)
	other := certKey(t)
	c, h, _ := exchange(t, cert)

	flip := func(b []byte, i int) []byte {
		b = append([]byte(nil), b...)
		b[i] ^= 0x01
		return b
	}
	for i := range h.Signature {
		if _, err := c.Finish(h.PublicKey[:], flip(h.Signature, i), h.Tag[:]); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("signature byte %d flipped: err = %v, want ErrBadSignature", i, err)
		}
	}
	for i := range h.Tag {
		if _, err := c.Finish(h.PublicKey[:], h.Signature, flip(h.Tag[:], i)); !errors.Is(err, ErrBadTag) {
			t.Fatalf("tag byte %d flipped: err = %v, want ErrBadTag", i, err)
		}
	}
	for i := range h.PublicKey {
		_, err := c.Finish(flip(h.PublicKey[:], i), h.Signature, h.Tag[:])
		if !errors.Is(err, ErrBadPublicKey) && !errors.Is(err, ErrBadSignature) {
			t.Fatalf("server key byte %d flipped: err = %v", i, err)
		}
	}
	tests := []struct {
		name          string
		pub, sig, tag []byte
		want          error
	}{
		{"short tag", h.PublicKey[:], h.Signature, h.Tag[:31], ErrBadTag},
		{"empty signature", h.PublicKey[:], nil, h.Tag[:], ErrBadSignature},
		{"short key", h.PublicKey[:63], h.Signature, h.Tag[:], ErrBadPublicKey},
		{"point not on curve", make([]byte, 64), h.Signature, h.Tag[:], ErrBadPublicKey},
	}
	for _, tt := range tests {
		if _, err := c.Finish(tt.pub, tt.sig, tt.tag); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	// A client configured with another certification key refuses.
	wrong, err := NewClient(&other.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	wp := wrong.PublicKey()
	h2, _, err := Respond(wp[:], cert)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.Finish(h2.PublicKey[:], h2.Signature, h2.Tag[:]); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("wrong certification key: err = %v, want ErrBadSignature", err)
	}
	// A tag computed for another client's key (replayed answer) fails.
	if _, err := wrong.Finish(h.PublicKey[:], h.Signature, h.Tag[:]); !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrBadTag) {
		t.Fatalf("replayed answer: err = %v", err)
	}
	if _, err := NewClient(nil); !errors.Is(err, ErrNoCertKey) {
		t.Fatalf("nil certification key: %v", err)
	}
	if _, _, err := Respond(make([]byte, 64), cert); !errors.Is(err, ErrBadPublicKey) {
		t.Fatalf("server given a bad client key: %v", err)
	}
	cp := c.PublicKey()
	if _, _, err := Respond(cp[:], nil); !errors.Is(err, ErrNoCertKey) {
		t.Fatalf("server without certification key: %v", err)
	}
}

func TestPEMRoundTrip(t *testing.T) {
	k := certKey(t)
	privPEM, err := MarshalPrivateKeyPEM(k)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := MarshalPublicKeyPEM(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(privPEM, []byte("-----BEGIN PRIVATE KEY-----\n")) || !bytes.HasPrefix(pubPEM, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Fatalf("PEM headers:\n%s\n%s", privPEM, pubPEM)
	}
	k2, err := ParsePrivateKeyPEM(privPEM)
	if err != nil || !k2.Equal(k) {
		t.Fatalf("private key round trip: %v", err)
	}
	p2, err := ParsePublicKeyPEM(pubPEM)
	if err != nil || !p2.Equal(&k.PublicKey) {
		t.Fatalf("public key round trip: %v", err)
	}
	for name, b := range map[string][]byte{
		"empty":             nil,
		"public as private": pubPEM,
		"garbage block":     []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
	} {
		if _, err := ParsePrivateKeyPEM(b); !errors.Is(err, ErrBadPEM) {
			t.Errorf("private %s: err = %v, want ErrBadPEM", name, err)
		}
	}
	if _, err := ParsePublicKeyPEM(privPEM); !errors.Is(err, ErrBadPEM) {
		t.Errorf("private as public: err = %v", err)
	}
}

func TestWriteKeyPairRefusesOverwrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	k := certKey(t)
	priv, pub, err := WriteKeyPair(dir, k)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(priv); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key file mode: %v %v", st.Mode(), err)
	}
	lk, err := LoadPrivateKey(priv)
	if err != nil || !lk.Equal(k) {
		t.Fatalf("LoadPrivateKey: %v", err)
	}
	lp, err := LoadPublicKey(pub)
	if err != nil || !lp.Equal(&k.PublicKey) {
		t.Fatalf("LoadPublicKey: %v", err)
	}
	before, _ := os.ReadFile(priv)
	if _, _, err := WriteKeyPair(dir, certKey(t)); err == nil {
		t.Fatal("second WriteKeyPair overwrote the key pair")
	}
	after, _ := os.ReadFile(priv)
	if !bytes.Equal(before, after) {
		t.Fatal("private key changed")
	}
	// Only the public file present: still refused, nothing written.
	dir2 := t.TempDir()
	os.WriteFile(filepath.Join(dir2, PublicKeyFile), []byte("x"), 0o644)
	if _, _, err := WriteKeyPair(dir2, k); err == nil {
		t.Fatal("existing public key file overwritten")
	}
	if _, err := os.Stat(filepath.Join(dir2, PrivateKeyFile)); !os.IsNotExist(err) {
		t.Fatal("private key written although the pair was refused")
	}
}

// TestOpenSSLInterop checks the PEM files and signatures against the OpenSSL
// commands the spec gives ("Identification").
func TestOpenSSLInterop(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl not found")
		}
		t.Skip("openssl not found")
	}
	run := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(openssl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("openssl %v: %v\n%s", args, err, out)
		}
		return out
	}
	dir := t.TempDir()
	// Keys made by OpenSSL load here and work in an exchange.
	sslPriv, sslPub := filepath.Join(dir, "key.pem"), filepath.Join(dir, "key.out")
	run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", sslPriv)
	run("ec", "-in", sslPriv, "-pubout", "-out", sslPub)
	priv, err := LoadPrivateKey(sslPriv)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := LoadPublicKey(sslPub)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(pub)
	if err != nil {
		t.Fatal(err)
	}
	cp := c.PublicKey()
	h, sk, err := Respond(cp[:], priv)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := c.Finish(h.PublicKey[:], h.Signature, h.Tag[:]); err != nil || k != sk {
		t.Fatalf("exchange with OpenSSL keys: %v", err)
	}
	// OpenSSL verifies our signature as DER ECDSA-SHA256 over the wire key.
	keyFile, sigFile := filepath.Join(dir, "server.key"), filepath.Join(dir, "server.sig")
	os.WriteFile(keyFile, h.PublicKey[:], 0o600)
	os.WriteFile(sigFile, h.Signature, 0o600)
	run("dgst", "-sha256", "-verify", sslPub, "-signature", sigFile, keyFile)
	// And we verify a signature OpenSSL made.
	sslSig := filepath.Join(dir, "ssl.sig")
	run("dgst", "-sha256", "-sign", sslPriv, "-out", sslSig, keyFile)
	sig, _ := os.ReadFile(sslSig)
	if !verifyServerKey(pub, h.PublicKey[:], sig) {
		t.Fatal("OpenSSL's signature does not verify")
	}
	// Files we write are the ones OpenSSL's commands would write.
	ours := filepath.Join(dir, "ours")
	ourPriv, ourPub, err := WriteKeyPair(ours, certKey(t))
	if err != nil {
		t.Fatal(err)
	}
	derived := run("ec", "-in", ourPriv, "-pubout")
	want, _ := os.ReadFile(ourPub)
	if !bytes.Contains(derived, want) {
		t.Fatalf("openssl ec -pubout of our key.pem:\n%s\nour key.pub.pem:\n%s", derived, want)
	}
}

// detRand makes IVs deterministic for the tests that flip bytes.
func detRand(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	old := randRead
	randRead = func(b []byte) {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	t.Cleanup(func() { randRead = old })
}

func testKey() SharedKey {
	var k SharedKey
	for i := range k {
		k[i] = byte(i * 7)
	}
	return k
}

func TestDataRoundTrip(t *testing.T) {
	c, err := NewDataCipher(testKey())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	random := make([]byte, 1000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name     string
		frag     []byte
		compress bool
		ratio0   bool // expect the ratio byte 0
	}{
		{"empty", nil, false, true},
		{"13 bytes fill a block exactly", bytes.Repeat([]byte{'a'}, 13), false, true},
		{"text", []byte("hello hyperscape"), false, true},
		{"compressible", bytes.Repeat([]byte("RMC "), 250), true, false},
		{"incompressible falls back", random, true, true},
		{"empty compressed falls back", nil, true, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := uint16(0xfff0 + i)
			sealed := c.Seal([]byte("hdr"), tt.frag, seq, tt.compress)
			if string(sealed[:3]) != "hdr" {
				t.Fatal("Seal clobbered dst")
			}
			sealed = sealed[3:]
			if (len(sealed)-IVSize)%16 != 0 || len(sealed) < IVSize+16 {
				t.Fatalf("sealed length %d", len(sealed))
			}
			got, err := c.Open([]byte("x"), sealed, seq, 4096)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != 'x' || !bytes.Equal(got[1:], tt.frag) {
				t.Fatalf("Open = %q", got)
			}
			// Inspect the ratio byte by decrypting by hand.
			plain := decryptRaw(t, testKey(), sealed)
			if (plain[0] == 0) != tt.ratio0 {
				t.Fatalf("ratio byte %d", plain[0])
			}
			if _, err := c.Open(nil, sealed, seq+1, 4096); !errors.Is(err, ErrBadSequence) {
				t.Fatalf("wrong seq: err = %v, want ErrBadSequence", err)
			}
			if len(tt.frag) > 0 {
				if _, err := c.Open(nil, sealed, seq, len(tt.frag)-1); !errors.Is(err, ErrBadPayload) {
					t.Fatalf("limit below size: err = %v, want ErrBadPayload", err)
				}
			}
		})
	}
}

func TestDataAllocs(t *testing.T) {
	c, _ := NewDataCipher(testKey())
	frag := make([]byte, 1000)
	buf := make([]byte, 0, 2048)
	out := make([]byte, 0, 2048)
	if n := testing.AllocsPerRun(100, func() {
		sealed := c.Seal(buf[:0], frag, 9, false)
		if _, err := c.Open(out[:0], sealed, 9, 2048); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("uncompressed Seal+Open allocates %v times", n)
	}
}

func TestDataOpenErrors(t *testing.T) {
	detRand(t, 5)
	c, _ := NewDataCipher(testKey())
	sealed := c.Seal(nil, []byte("short"), 3, false)
	var wrong SharedKey
	wc, _ := NewDataCipher(wrong)
	tests := []struct {
		name    string
		c       *DataCipher
		payload []byte
		want    error
	}{
		{"empty", c, nil, ErrBadCiphertext},
		{"IV only", c, sealed[:16], ErrBadCiphertext},
		{"not whole blocks", c, sealed[:31], ErrBadCiphertext},
		{"wrong key", wc, sealed, ErrBadPadding},
	}
	for _, tt := range tests {
		if _, err := tt.c.Open(nil, tt.payload, 3, 100); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	for i := range len(sealed) {
		if _, err := c.Open(nil, sealed[:i], 3, 100); err == nil {
			t.Fatalf("prefix of %d bytes accepted", i)
		}
	}
	// Short uncompressed payload (one block: ratio, 5 bytes, seq, 8 of
	// padding): corrupting the IV over the ratio byte, the suffix or the
	// padding is detected; over the fragment itself it cannot be (no MAC).
	for i := range IVSize {
		bad := append([]byte(nil), sealed...)
		bad[i] ^= 0x04
		_, err := c.Open(nil, bad, 3, 100)
		inFragment := i >= 1 && i <= 5
		if inFragment != (err == nil) {
			t.Errorf("IV byte %d flipped: err = %v", i, err)
		}
	}
	// Compressed payload: every flip outside the ratio byte (IV byte 0,
	// where any non-zero value is accepted by design) is detected.
	z := c.Seal(nil, bytes.Repeat([]byte("abc"), 300), 77, true)
	if decryptRaw(t, testKey(), z)[0] == 0 {
		t.Fatal("payload not compressed")
	}
	for i := 1; i < len(z); i++ {
		bad := append([]byte(nil), z...)
		bad[i] ^= 0x01
		if _, err := c.Open(nil, bad, 77, 4096); err == nil {
			t.Fatalf("compressed payload byte %d flipped: accepted", i)
		}
	}
}

func TestCheckPadding(t *testing.T) {
	block := func(tail ...byte) []byte {
		b := make([]byte, 16)
		copy(b[16-len(tail):], tail)
		return b
	}
	tests := []struct {
		b    []byte
		pad  int
		good bool
	}{
		{block(1), 1, true},
		{block(2, 2), 2, true},
		{block(3, 2), 0, false},
		{block(0), 0, false},
		{block(17), 0, false},
		{bytes.Repeat([]byte{16}, 16), 16, true},
		{append(bytes.Repeat([]byte{15}, 15), 16), 0, false},
	}
	for i, tt := range tests {
		pad, ok := checkPadding(tt.b)
		if ok != tt.good || (ok && pad != tt.pad) {
			t.Errorf("case %d (% x): pad %d ok %v", i, tt.b, pad, ok)
		}
	}
}

func decryptRaw(t testing.TB, k SharedKey, sealed []byte) []byte {
	t.Helper()
	c, _ := NewDataCipher(k)
	out := append([]byte(nil), sealed[IVSize:]...)
	c.setDec(sealed[:IVSize])
	c.dec.CryptBlocks(out, out)
	return out
}

func FuzzOpen(f *testing.F) {
	c, _ := NewDataCipher(testKey())
	f.Add(c.Seal(nil, []byte("seed fragment"), 1, false), uint16(1))
	f.Add(c.Seal(nil, bytes.Repeat([]byte("zz"), 100), 2, true), uint16(2))
	f.Add(make([]byte, 32), uint16(0))
	f.Fuzz(func(t *testing.T, payload []byte, seq uint16) {
		const limit = 2048
		frag, err := c.Open(nil, payload, seq, limit)
		if err != nil {
			return
		}
		if len(frag) > limit {
			t.Fatalf("fragment of %d bytes over limit", len(frag))
		}
		again, err := c.Open(nil, c.Seal(nil, frag, seq, true), seq, limit)
		if err != nil || !bytes.Equal(again, frag) {
			t.Fatalf("reseal round trip: %v", err)
		}
	})
}

func FuzzClientFinish(f *testing.F) {
	cert := certKey(f)
	c, h, _ := exchange(f, cert)
	f.Add(h.PublicKey[:], h.Signature, h.Tag[:])
	f.Add(make([]byte, 64), []byte{0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01}, make([]byte, 32))
	f.Fuzz(func(t *testing.T, pub, sig, tag []byte) {
		_, err := c.Finish(pub, sig, tag)
		real := bytes.Equal(pub, h.PublicKey[:]) && bytes.Equal(tag, h.Tag[:])
		if err == nil && !real {
			t.Fatalf("forged answer accepted: pub %x sig %x tag %x", pub, sig, tag)
		}
	})
}

func FuzzParsePublicKey(f *testing.F) {
	cert := certKey(f)
	c, _ := NewClient(&cert.PublicKey)
	p := c.PublicKey()
	f.Add(p[:])
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParsePublicKey(b)
		if err != nil {
			return
		}
		if w := wireKey(k); !bytes.Equal(w[:], b) {
			t.Fatal("parse -> encode differs")
		}
	})
}

func BenchmarkDataSeal1K(b *testing.B) {
	c, _ := NewDataCipher(testKey())
	frag := make([]byte, 1024)
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(frag)))
	b.ReportAllocs()
	for b.Loop() {
		c.Seal(buf[:0], frag, 1, false)
	}
}

func BenchmarkDataOpen1K(b *testing.B) {
	c, _ := NewDataCipher(testKey())
	frag := make([]byte, 1024)
	sealed := c.Seal(nil, frag, 1, false)
	out := make([]byte, 0, 2048)
	b.SetBytes(int64(len(frag)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Open(out[:0], sealed, 1, 2048); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKeyExchange(b *testing.B) {
	cert := certKey(b)
	b.ReportAllocs()
	for b.Loop() {
		c, _ := NewClient(&cert.PublicKey)
		p := c.PublicKey()
		h, _, err := Respond(p[:], cert)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Finish(h.PublicKey[:], h.Signature, h.Tag[:]); err != nil {
			b.Fatal(err)
		}
	}
}
