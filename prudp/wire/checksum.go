package wire

import "encoding/binary"

// KeySum returns the sum of the access key's bytes, the base of V0 and Quazal checksums
// and an input of the V1 signature.
func KeySum(accessKey string) uint32 {
	var s uint32
	for i := 0; i < len(accessKey); i++ {
		s += uint32(accessKey[i])
	}
	return s
}

// sumWords returns the sum, modulo 2^32, of the little-endian u32 words of b's first
// len(b)&^3 bytes.
func sumWords(b []byte) uint32 {
	var s uint32
	n := len(b) &^ 3
	i := 0
	for ; i+16 <= n; i += 16 {
		s += binary.LittleEndian.Uint32(b[i:]) + binary.LittleEndian.Uint32(b[i+4:]) +
			binary.LittleEndian.Uint32(b[i+8:]) + binary.LittleEndian.Uint32(b[i+12:])
	}
	for ; i < n; i += 4 {
		s += binary.LittleEndian.Uint32(b[i:])
	}
	return s
}

// Checksum1 implements the 1-byte checksum of "Checksum" in NintendoClients wiki "PRUDP Protocol" (and
// nintendo-wiki "PRUDP Protocol", "1 Byte"): base, plus the bytes after the last whole u32
// word, plus the four bytes of the u32 sum of the words, truncated to 8 bits. base is
// sum(access key) for NEX; Quazal uses it only on OldRVSec streams (see [Quazal]).
func Checksum1(base uint32, b []byte) byte {
	s := sumWords(b)
	c := base
	for _, x := range b[len(b)&^3:] {
		c += uint32(x)
	}
	c += s&0xff + s>>8&0xff + s>>16&0xff + s>>24
	return byte(c)
}

// Checksum4 implements the 4-byte checksum ("4 Byte" in nintendo-wiki "PRUDP Protocol" and
// "Checksums" in the Hyperscape "PRUDP" wiki page): (base & 0xff) plus the sum of the
// little-endian u32 words of b zero-padded to a multiple of 4, modulo 2^32. Hyperscape
// uses base 0.
func Checksum4(base uint32, b []byte) uint32 {
	s := base&0xff + sumWords(b)
	tail := b[len(b)&^3:]
	var w uint32
	for i, x := range tail {
		w |= uint32(x) << (8 * i)
	}
	return s + w
}
