package hyperscape

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"math/big"
)

// TagSize is the size of the key-exchange tag (HMAC-SHA256).
const TagSize = sha256.Size

// SharedKeySize is the size of the derived DATA key (AES-128).
const SharedKeySize = 16

// SharedKey is the AES-128 key of a connection's DATA packets, the first 16
// bytes of SHA-1 of the ECDH result ("Packet: CONNECT").
type SharedKey [SharedKeySize]byte

// ServerHello is what the server's CONNECT acknowledgement carries besides
// its connection signature ("Server->Client Payload" of "Packet: CONNECT").
// prudp/wire lays it out on the wire; this package computes and checks it.
type ServerHello struct {
	// PublicKey is the server's ephemeral key.
	PublicKey PublicKey
	// Signature is ECDSA-P256-SHA256 over PublicKey by the certification
	// key, ASN.1 DER.
	Signature []byte
	// Tag is HMAC-SHA256(ECDH result, client key || server key).
	Tag [TagSize]byte
}

// Client is the client side of one key exchange. Use it once.
type Client struct {
	priv    *ecdh.PrivateKey
	pub     PublicKey
	certPub *ecdsa.PublicKey
}

// NewClient makes a fresh ephemeral key pair for one connection. certPub is
// the server's certification public key; the exchange fails without it.
func NewClient(certPub *ecdsa.PublicKey) (*Client, error) {
	if certPub == nil {
		return nil, fmt.Errorf("hyperscape client: %w", ErrNoCertKey)
	}
	if certPub.Curve != elliptic.P256() {
		return nil, fmt.Errorf("hyperscape client: %w: certification key is not P-256", ErrBadPublicKey)
	}
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("hyperscape client: %w", err)
	}
	return &Client{priv: priv, pub: wireKey(priv.PublicKey()), certPub: certPub}, nil
}

// PublicKey is the 64-byte key the client sends in its CONNECT.
func (c *Client) PublicKey() PublicKey { return c.pub }

// Finish checks the server's answer and returns the shared DATA key. The
// checks run in this order, each with its own error: the server key is a
// P-256 point (ErrBadPublicKey), its signature verifies under the
// certification key (ErrBadSignature), and the tag matches the ECDH result
// (ErrBadTag, compared in constant time).
func (c *Client) Finish(serverPub, signature, tag []byte) (SharedKey, error) {
	spub, err := ParsePublicKey(serverPub)
	if err != nil {
		return SharedKey{}, fmt.Errorf("hyperscape client: server key: %w", err)
	}
	if !verifyServerKey(c.certPub, serverPub, signature) {
		return SharedKey{}, fmt.Errorf("hyperscape client: %w (%d-byte signature)", ErrBadSignature, len(signature))
	}
	secret, err := c.priv.ECDH(spub)
	if err != nil {
		return SharedKey{}, fmt.Errorf("hyperscape client: ECDH: %w", err)
	}
	want := exchangeTag(secret, c.pub[:], serverPub)
	if !hmac.Equal(want[:], tag) {
		return SharedKey{}, fmt.Errorf("hyperscape client: %w (%d-byte tag)", ErrBadTag, len(tag))
	}
	return deriveShared(secret), nil
}

// Respond is the server side: given the client's 64-byte public key and the
// certification private key, it makes an ephemeral key pair, signs the
// public half, computes the tag, and returns the answer and the shared DATA
// key.
func Respond(clientPub []byte, certKey *ecdsa.PrivateKey) (ServerHello, SharedKey, error) {
	if certKey == nil {
		return ServerHello{}, SharedKey{}, fmt.Errorf("hyperscape server: %w", ErrNoCertKey)
	}
	if certKey.Curve != elliptic.P256() {
		return ServerHello{}, SharedKey{}, fmt.Errorf("hyperscape server: %w: certification key is not P-256", ErrBadPublicKey)
	}
	cpub, err := ParsePublicKey(clientPub)
	if err != nil {
		return ServerHello{}, SharedKey{}, fmt.Errorf("hyperscape server: client key: %w", err)
	}
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return ServerHello{}, SharedKey{}, fmt.Errorf("hyperscape server: %w", err)
	}
	secret, err := priv.ECDH(cpub)
	if err != nil {
		return ServerHello{}, SharedKey{}, fmt.Errorf("hyperscape server: ECDH: %w", err)
	}
	h := ServerHello{PublicKey: wireKey(priv.PublicKey())}
	digest := sha256.Sum256(h.PublicKey[:])
	if h.Signature, err = ecdsa.SignASN1(rand.Reader, certKey, digest[:]); err != nil {
		return ServerHello{}, SharedKey{}, fmt.Errorf("hyperscape server: sign: %w", err)
	}
	h.Tag = exchangeTag(secret, clientPub, h.PublicKey[:])
	return h, deriveShared(secret), nil
}

// verifyServerKey checks sig over SHA-256(serverPub), as ASN.1 DER or, failing
// that, as 64-byte raw r||s.
func verifyServerKey(cert *ecdsa.PublicKey, serverPub, sig []byte) bool {
	digest := sha256.Sum256(serverPub)
	if ecdsa.VerifyASN1(cert, digest[:], sig) {
		return true
	}
	if len(sig) == 64 {
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(cert, digest[:], r, s)
	}
	return false
}

func exchangeTag(secret, clientPub, serverPub []byte) [TagSize]byte {
	m := hmac.New(sha256.New, secret)
	m.Write(clientPub)
	m.Write(serverPub)
	var t [TagSize]byte
	m.Sum(t[:0])
	return t
}

func deriveShared(secret []byte) SharedKey {
	h := sha1.Sum(secret)
	var k SharedKey
	copy(k[:], h[:SharedKeySize])
	return k
}
