package kerberos

import (
	"crypto/hmac"
	"crypto/md5"
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/prudp/crypt"
)

// Errors of this package. Functions wrap them with the field and offset
// involved; test with errors.Is.
var (
	// ErrTruncated reports input that ends before a field does.
	ErrTruncated = errors.New("truncated")
	// ErrBadHMAC reports an encrypted blob whose HMAC-MD5 does not match:
	// the wrong key (wrong password, wrong PID, wrong server key) or
	// corrupted bytes. Nothing is decrypted in that case.
	ErrBadHMAC = errors.New("HMAC mismatch (wrong key or corrupted data)")
	// ErrTrailingData reports bytes left over after the last field.
	ErrTrailingData = errors.New("trailing data")
	// ErrBadLength reports a field whose length does not match the settings
	// (session key size, request size, response size).
	ErrBadLength = errors.New("bad length")
	// ErrBadSettings reports a Settings value with an unsupported size.
	ErrBadSettings = errors.New("bad settings")
	// ErrBadKey reports an empty or over-long encryption key.
	ErrBadKey = errors.New("bad key")
	// ErrExpired reports a ticket older than the allowed age.
	ErrExpired = errors.New("ticket expired")
	// ErrNotYetValid reports a ticket dated too far in the future.
	ErrNotYetValid = errors.New("ticket issued in the future")
	// ErrBadDateTime reports a DateTime whose fields are not a calendar date.
	ErrBadDateTime = errors.New("invalid DateTime")
	// ErrPIDMismatch reports a CONNECT request whose PID is not the ticket's.
	ErrPIDMismatch = errors.New("PID does not match ticket")
	// ErrBadCheck reports a CONNECT response whose value is not check + 1.
	ErrBadCheck = errors.New("wrong response check value")
)

// HMACSize is the size of the HMAC-MD5 after every encrypted blob.
const HMACSize = md5.Size

// Encrypt appends to dst the Kerberos encryption of plain under key: RC4 with
// a fresh state, then the HMAC-MD5 (keyed with key) of the ciphertext ("Ticket
// Format" in nintendo-wiki "Kerberos Authentication"). The result is len(plain)+16 bytes.
func Encrypt(dst, key, plain []byte) ([]byte, error) {
	var c crypt.RC4
	if err := c.Reset(key); err != nil {
		return dst, fmt.Errorf("kerberos encrypt: %w: %v", ErrBadKey, err)
	}
	start := len(dst)
	dst = append(dst, plain...)
	ct := dst[start:]
	c.XORKeyStream(ct, ct)
	mac := hmac.New(md5.New, key)
	mac.Write(ct)
	return mac.Sum(dst), nil
}

// Decrypt checks the trailing HMAC-MD5 of sealed in constant time and only
// then appends the RC4 decryption of the rest to dst. A mismatch returns
// ErrBadHMAC and leaves dst unchanged.
func Decrypt(dst, key, sealed []byte) ([]byte, error) {
	if len(sealed) < HMACSize {
		return dst, fmt.Errorf("kerberos decrypt: %w: %d bytes, the HMAC alone is %d", ErrTruncated, len(sealed), HMACSize)
	}
	var c crypt.RC4
	if err := c.Reset(key); err != nil {
		return dst, fmt.Errorf("kerberos decrypt: %w: %v", ErrBadKey, err)
	}
	body, tag := sealed[:len(sealed)-HMACSize], sealed[len(sealed)-HMACSize:]
	mac := hmac.New(md5.New, key)
	mac.Write(body)
	var sum [HMACSize]byte
	if !hmac.Equal(mac.Sum(sum[:0]), tag) {
		return dst, fmt.Errorf("kerberos decrypt: %w (HMAC at offset %d)", ErrBadHMAC, len(body))
	}
	start := len(dst)
	dst = append(dst, body...)
	c.XORKeyStream(dst[start:], dst[start:])
	return dst, nil
}
