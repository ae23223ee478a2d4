package kerberos

import (
	"crypto/md5"
	"encoding/binary"
)

// Key derivation constants of "Key Derivation" in nintendo-wiki "Kerberos Authentication".
const (
	// DeriveBaseRounds is the fixed part of the MD5 iteration count.
	DeriveBaseRounds = 65000
	// DerivePIDModulus bounds the PID-dependent part of the iteration count.
	DerivePIDModulus = 1024
)

// DeriveKey returns the 3DS / Wii U (and Quazal) password key: the password
// hashed with MD5 65000 + pid%1024 times ("Key Derivation" in
// nintendo-wiki "Kerberos Authentication"). It costs roughly 65,000 MD5 blocks, so
// servers should cache the result per account.
func DeriveKey(password string, pid uint64) [16]byte {
	rounds := DeriveBaseRounds + int(pid%DerivePIDModulus)
	key := md5.Sum([]byte(password))
	for range rounds - 1 {
		key = md5.Sum(key[:])
	}
	return key
}

// DeriveKeySwitch returns the Switch password key, MD5(MD5(password) ||
// LE64(pid)) ("Key Derivation" in nintendo-wiki "Kerberos Authentication").
func DeriveKeySwitch(password string, pid uint64) [16]byte {
	var buf [24]byte
	h := md5.Sum([]byte(password))
	copy(buf[:16], h[:])
	binary.LittleEndian.PutUint64(buf[16:], pid)
	return md5.Sum(buf[:])
}
