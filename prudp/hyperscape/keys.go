package hyperscape

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Errors of this package; functions wrap them with context.
var (
	// ErrBadPublicKey reports a public key that is not 64 bytes or not a
	// point on P-256.
	ErrBadPublicKey = errors.New("bad P-256 public key")
	// ErrBadSignature reports a server key whose signature does not verify
	// under the configured certification key.
	ErrBadSignature = errors.New("server key signature does not verify")
	// ErrBadTag reports a key-exchange tag that does not match.
	ErrBadTag = errors.New("key exchange tag mismatch")
	// ErrNoCertKey reports a missing certification key.
	ErrNoCertKey = errors.New("no certification key configured")
	// ErrBadPEM reports a PEM file that does not hold the expected key.
	ErrBadPEM = errors.New("bad PEM key")
	// ErrBadCiphertext reports a DATA payload whose length cannot be an IV
	// plus whole AES blocks.
	ErrBadCiphertext = errors.New("bad AES-CBC ciphertext length")
	// ErrBadPadding reports a DATA payload whose PKCS#7 padding is wrong
	// after decryption: the wrong key or corrupted bytes.
	ErrBadPadding = errors.New("bad PKCS#7 padding")
	// ErrBadPayload reports a decrypted DATA payload that does not
	// decompress or is too short for its sequence id.
	ErrBadPayload = errors.New("bad DATA payload")
	// ErrBadSequence reports a DATA payload whose sequence id suffix is not
	// the packet's sequence id.
	ErrBadSequence = errors.New("sequence id suffix mismatch")
)

// PublicKeySize is the size of a public key on the wire: an uncompressed
// SEC1 P-256 point without its 0x04 tag ("Structure: Public Key").
const PublicKeySize = 64

// PublicKey is a P-256 public key in its wire form.
type PublicKey [PublicKeySize]byte

// ParsePublicKey checks that b is a wire public key on P-256 and returns it
// ready for ECDH.
func ParsePublicKey(b []byte) (*ecdh.PublicKey, error) {
	if len(b) != PublicKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBadPublicKey, len(b), PublicKeySize)
	}
	var sec1 [1 + PublicKeySize]byte
	sec1[0] = 4
	copy(sec1[1:], b)
	k, err := ecdh.P256().NewPublicKey(sec1[:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPublicKey, err)
	}
	return k, nil
}

// wireKey returns the wire form of an ECDH P-256 public key.
func wireKey(k *ecdh.PublicKey) PublicKey {
	var p PublicKey
	copy(p[:], k.Bytes()[1:])
	return p
}

// GenerateCertKey returns a new certification key pair on P-256, like
// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1`.
func GenerateCertKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// MarshalPrivateKeyPEM encodes k as a PKCS#8 "PRIVATE KEY" PEM block, the
// format `openssl genpkey` writes.
func MarshalPrivateKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("certification key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// MarshalPublicKeyPEM encodes k as a PKIX "PUBLIC KEY" PEM block, the format
// `openssl ec -pubout` writes.
func MarshalPublicKeyPEM(k *ecdsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return nil, fmt.Errorf("certification public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePrivateKeyPEM reads a P-256 certification private key from the first
// PEM block of b: PKCS#8 "PRIVATE KEY" (openssl genpkey) or SEC1
// "EC PRIVATE KEY" (openssl ecparam -genkey).
func ParsePrivateKeyPEM(b []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%w: no PEM block found", ErrBadPEM)
	}
	var key any
	var err error
	switch blk.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("%w: PEM block %q, want \"PRIVATE KEY\" or \"EC PRIVATE KEY\"", ErrBadPEM, blk.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPEM, err)
	}
	k, ok := key.(*ecdsa.PrivateKey)
	if !ok || k.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: %T is not a P-256 ECDSA key", ErrBadPEM, key)
	}
	return k, nil
}

// ParsePublicKeyPEM reads a P-256 certification public key from the first
// PEM block of b, a PKIX "PUBLIC KEY" (openssl ec -pubout).
func ParsePublicKeyPEM(b []byte) (*ecdsa.PublicKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%w: no PEM block found", ErrBadPEM)
	}
	if blk.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%w: PEM block %q, want \"PUBLIC KEY\"", ErrBadPEM, blk.Type)
	}
	key, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPEM, err)
	}
	k, ok := key.(*ecdsa.PublicKey)
	if !ok || k.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: %T is not a P-256 ECDSA key", ErrBadPEM, key)
	}
	return k, nil
}

// LoadPrivateKey reads a certification private key PEM file.
func LoadPrivateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// LoadPublicKey reads a certification public key PEM file.
func LoadPublicKey(path string) (*ecdsa.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Key pair file names written by WriteKeyPair. key.pem is what the spec's
// `openssl genpkey ... -out key.pem` writes; key.pub.pem holds what its
// `openssl ec -in key.pem -pubout -out key.out` writes (the same bytes under
// a name that says what it is).
const (
	PrivateKeyFile = "key.pem"
	PublicKeyFile  = "key.pub.pem"
)

// WriteKeyPair writes k to dir as PrivateKeyFile (mode 0600) and
// PublicKeyFile (mode 0644), creating dir if needed. It refuses, writing
// nothing, if either file exists.
func WriteKeyPair(dir string, k *ecdsa.PrivateKey) (privPath, pubPath string, err error) {
	privPEM, err := MarshalPrivateKeyPEM(k)
	if err != nil {
		return "", "", err
	}
	pubPEM, err := MarshalPublicKeyPEM(&k.PublicKey)
	if err != nil {
		return "", "", err
	}
	privPath, pubPath = filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	for _, p := range []string{privPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return "", "", fmt.Errorf("%s already exists; refusing to overwrite", p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := writeNew(privPath, privPEM, 0o600); err != nil {
		return "", "", err
	}
	if err := writeNew(pubPath, pubPEM, 0o644); err != nil {
		os.Remove(privPath)
		return "", "", err
	}
	return privPath, pubPath, nil
}

// writeNew creates path exclusively (O_EXCL closes the race with the Lstat
// check above) and writes b to it.
func writeNew(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; refusing to overwrite", path)
		}
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
