// Package hyperscape implements the cryptography of the Hyperscape PRUDP
// dialect (the Hyperscape "PRUDP" wiki page): the CONNECT key exchange (ECDH on
// P-256, the server's ephemeral key signed by its certification key, an
// HMAC-SHA256 tag over both public keys) and the DATA transform (sequence id
// suffix, compression ratio byte, AES-128-CBC with a random IV). It also reads
// and writes the certification key pair in the PEM files OpenSSL produces.
//
// The package works on byte slices only: the packet layout of SYN, CONNECT
// and DATA belongs to prudp/wire, and the connection state to the engine.
//
// # Choices the spec leaves open
//
//   - Signature: ECDSA P-256 over SHA-256 of the server's 64-byte public key
//     (the uncompressed point without its 0x04 tag), encoded as ASN.1 DER, the
//     format `openssl dgst -sha256 -sign key.pem` writes. Verification also
//     accepts the 64-byte raw r||s form, should a peer send that.
//   - Tag: HMAC-SHA256 keyed with the raw ECDH result (the 32-byte x
//     coordinate) over client key || server key, both 64 bytes.
//   - Shared key: the first 16 bytes of SHA-1 of the same x coordinate.
//   - DATA padding: PKCS#7 to the 16-byte AES block, always at least one
//     byte (a full block when the plaintext is block-aligned).
//   - DATA integrity: the format has no MAC. Open rejects what it can
//     detect (length, padding, zlib stream and checksum, the sequence id
//     suffix), but a flipped bit in the IV or ciphertext of an uncompressed
//     payload can decrypt to other valid-looking bytes. This is a property
//     of the protocol, not of the implementation.
package hyperscape
