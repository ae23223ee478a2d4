package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// refChecksum1 is calc_checksum of "Checksum" (1 Byte) in nintendo-wiki "PRUDP Protocol",
// translated line by line.
func refChecksum1(key string, data []byte) byte {
	var temp uint32
	for i := 0; i+4 <= len(data); i += 4 {
		temp += binary.LittleEndian.Uint32(data[i:])
	}
	checksum := 0
	for i := 0; i < len(key); i++ {
		checksum += int(key[i])
	}
	for _, b := range data[len(data)&^3:] {
		checksum += int(b)
	}
	var main [4]byte
	binary.LittleEndian.PutUint32(main[:], temp)
	for _, b := range main {
		checksum += int(b)
	}
	return byte(checksum)
}

// refChecksum4 is calc_checksum of "4 Byte": pad with zeros, sum the words, add the base.
func refChecksum4(key string, data []byte) uint32 {
	padded := append(append([]byte(nil), data...), make([]byte, 4-len(data)%4)...)
	var sum uint32
	for i := 0; i+4 <= len(padded); i += 4 {
		sum += binary.LittleEndian.Uint32(padded[i:])
	}
	return KeySum(key)&0xff + sum
}

func TestChecksumsAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		for _, key := range []string{"", "8dtRv2oj", "ridfebb9", "a much longer access key with many bytes"} {
			if got, want := Checksum1(KeySum(key), data), refChecksum1(key, data); got != want {
				t.Fatalf("Checksum1(%q, %d bytes) = %#x, want %#x", key, n, got, want)
			}
			if got, want := Checksum4(KeySum(key), data), refChecksum4(key, data); got != want {
				t.Fatalf("Checksum4(%q, %d bytes) = %#x, want %#x", key, n, got, want)
			}
		}
	}
}
