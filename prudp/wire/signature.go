package wire

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"hash"
	"net/netip"
	"sync"
)

// macState is a reusable HMAC-MD5 state with scratch space, so that signing a packet
// allocates nothing once the pool is warm.
type macState struct {
	h       hash.Hash
	scratch [16]byte
	out     [16]byte
}

func (m *macState) sum() [16]byte {
	m.h.Sum(m.out[:0])
	return m.out
}

// macPool hands out HMAC-MD5 states keyed with one key (MD5 of the access key). Dialect
// values share one pool, which makes them safe for concurrent use.
type macPool struct{ p sync.Pool }

func newMacPool(key []byte) *macPool {
	k := append([]byte(nil), key...)
	mp := &macPool{}
	mp.p.New = func() any { return &macState{h: hmac.New(md5.New, k)} }
	return mp
}

func (mp *macPool) get() *macState {
	m := mp.p.Get().(*macState)
	m.h.Reset()
	return m
}

func (mp *macPool) put(m *macState) { mp.p.Put(m) }

// ConnectionSignature implements "Connection signature" in NintendoClients wiki "PRUDP Protocol": an
// HMAC-MD5, keyed with a server secret, of the peer's address as the server perceives it
// (4 bytes for IPv4 and IPv4-mapped IPv6, 16 for IPv6) followed by its port as big-endian
// u16. No peer can verify it, so the exact input is this implementation's choice; what
// matters is that the server can recompute it from the address of a later CONNECT, which
// is what makes stateless SYN handling possible. V1 and Lite send all 16 bytes; V0 and
// Quazal send the first 4 (read them with binary.LittleEndian.Uint32). It allocates
// (hmac.New); a ConnectionSigner does not.
func ConnectionSignature(secret []byte, peer netip.AddrPort) [16]byte {
	return NewConnectionSigner(secret).Sign(peer)
}

// ConnectionSigner computes ConnectionSignature with one HMAC-MD5 state and scratch
// space that it reuses, so that a server signing every SYN allocates nothing per
// call. It is not safe for concurrent use.
type ConnectionSigner struct {
	mac hash.Hash
	in  [18]byte
	out [16]byte
}

// NewConnectionSigner returns a ConnectionSigner keyed with the server secret.
func NewConnectionSigner(secret []byte) *ConnectionSigner {
	return &ConnectionSigner{mac: hmac.New(md5.New, secret)}
}

// Sign returns ConnectionSignature(secret, peer).
func (s *ConnectionSigner) Sign(peer netip.AddrPort) [16]byte {
	n := 0
	a := peer.Addr().Unmap()
	if a.Is4() {
		v := a.As4()
		n = copy(s.in[:], v[:])
	} else {
		v := a.As16()
		n = copy(s.in[:], v[:])
	}
	binary.BigEndian.PutUint16(s.in[n:], peer.Port())
	s.mac.Reset()
	s.mac.Write(s.in[:n+2])
	s.mac.Sum(s.out[:0])
	return s.out
}
