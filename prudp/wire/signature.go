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

// ConnectionSignature implements "Connection signature" in specs/prudp-nex.md: an
// HMAC-MD5, keyed with a server secret, of the peer's address as the server perceives it
// (4 bytes for IPv4 and IPv4-mapped IPv6, 16 for IPv6) followed by its port as big-endian
// u16. No peer can verify it, so the exact input is this implementation's choice; what
// matters is that the server can recompute it from the address of a later CONNECT, which
// is what makes stateless SYN handling possible. V1 and Lite send all 16 bytes; V0 and
// Quazal send the first 4 (read them with binary.LittleEndian.Uint32). It allocates
// (hmac.New); it runs once per SYN.
func ConnectionSignature(secret []byte, peer netip.AddrPort) [16]byte {
	var in [18]byte
	n := 0
	a := peer.Addr().Unmap()
	if a.Is4() {
		v := a.As4()
		n = copy(in[:], v[:])
	} else {
		v := a.As16()
		n = copy(in[:], v[:])
	}
	binary.BigEndian.PutUint16(in[n:], peer.Port())
	h := hmac.New(md5.New, secret)
	h.Write(in[:n+2])
	var out [16]byte
	h.Sum(out[:0])
	return out
}
