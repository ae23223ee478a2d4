package record

import (
	"bytes"
	"encoding/binary"

	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/wire"
)

// A Profile describes one dialect's receive path as data: which fields its records
// carry (and which are null), how its signatures are checked, how its DATA payloads
// are encrypted and compressed. `decode --hex` (Describe, Plain) and the capture
// dissector both read it, so a dialect's rules live here once.
type Profile struct {
	Name        string
	Layout      Layout
	Signature   SignatureScheme
	Encryption  Encryption
	Compression Compression
	// PlainDO: payloads of the DO stream (Quazal Duplicated Objects, stream type 1)
	// are compressed but not encrypted (the published DO packet is plain).
	PlainDO bool
	// TicketConnect: the CONNECT of a secure connection carries a Kerberos ticket and
	// request data (prudp/kerberos), from which the session key can be learnt.
	TicketConnect bool
}

// Layout says which header fields a dialect's packets carry.
type Layout uint8

const (
	// LayoutLegacy (V0, Quazal, Hyperscape): session id, 4-byte signature, fragment id
	// on DATA, 4-byte connection signature on SYN and CONNECT, a checksum.
	LayoutLegacy Layout = iota
	// LayoutV1: session and substream ids, 16-byte signature, options (fragment id,
	// connection signature, ...) when present; no checksum.
	LayoutV1
	// LayoutLite: no session id, no signature, always a fragment id, options; no checksum.
	LayoutLite
)

// SignatureScheme says how a packet's signature is checked.
type SignatureScheme uint8

const (
	SigNone    SignatureScheme = iota // not checked (Hyperscape: the handshake is signed by ECDH keys)
	SigV0                             // wire.V0.VerifySignature: HMAC-MD5 or the connection signature
	SigV1                             // wire.V1.VerifyPacket: HMAC-MD5 over header, session key, connection signature, payload
	SigLite                           // wire.Lite.Signature: the CONNECT's lite signature over the server's connection signature
	SigConnSig                        // Quazal: every packet after the handshake carries the peer's connection signature
)

// Encryption says how DATA payloads are encrypted.
type Encryption uint8

const (
	// EncryptNone: not encrypted by PRUDP (Lite: TLS protects the stream).
	EncryptNone Encryption = iota
	// EncryptRC4Stream (NEX V0, V1): reliable payloads run one RC4 stream per direction
	// and substream (key crypt.SubstreamKey of the session key, or "CD&ML" on an
	// authentication connection) from the substream's first reliable packet; unreliable
	// payloads use per-packet keys (crypt.UnreliableKeys).
	EncryptRC4Stream
	// EncryptRC4PerPacket (Quazal): every payload starts from a freshly keyed RC4 state.
	EncryptRC4PerPacket
	// EncryptAESCBC (Hyperscape): AES-128-CBC under the connection's ECDH shared key
	// (prudp/hyperscape.DataCipher, which also undoes the compression inside it).
	EncryptAESCBC
)

// Compression says whether decrypted payloads carry the compression-ratio byte
// (crypt.Decompress).
type Compression uint8

const (
	CompressNone       Compression = iota // never (Lite; Hyperscape's cipher decompresses itself)
	CompressAlways                        // always (Quazal)
	CompressNegotiated                    // only when the connection enabled it (NEX disables it by default)
)

var profiles = [...]Profile{
	{Name: wire.NameV0, Layout: LayoutLegacy, Signature: SigV0, Encryption: EncryptRC4Stream,
		Compression: CompressNegotiated, TicketConnect: true},
	{Name: wire.NameV0Friends, Layout: LayoutLegacy, Signature: SigV0, Encryption: EncryptRC4Stream,
		Compression: CompressNegotiated, TicketConnect: true},
	{Name: wire.NameV1, Layout: LayoutV1, Signature: SigV1, Encryption: EncryptRC4Stream,
		Compression: CompressNegotiated, TicketConnect: true},
	{Name: wire.NameLite, Layout: LayoutLite, Signature: SigLite, Encryption: EncryptNone,
		Compression: CompressNone, TicketConnect: true},
	{Name: wire.NameQuazal, Layout: LayoutLegacy, Signature: SigConnSig, Encryption: EncryptRC4PerPacket,
		Compression: CompressAlways, PlainDO: true},
	{Name: wire.NameHyperscape, Layout: LayoutLegacy, Signature: SigNone, Encryption: EncryptAESCBC,
		Compression: CompressNone},
}

// ProfileOf returns the profile of the dialect named name (wire.NameV0, ...), or nil.
func ProfileOf(name string) *Profile {
	for i := range profiles {
		if profiles[i].Name == name {
			return &profiles[i]
		}
	}
	return nil
}

// NewDialect returns the codec of pr's dialect under an access key (Hyperscape has
// none); quazal applies to Quazal only (ChecksumSize 0 means 1).
func (pr *Profile) NewDialect(accessKey string, quazal wire.QuazalOptions) wire.Dialect {
	switch pr.Name {
	case wire.NameV0:
		return wire.NewV0(accessKey, wire.ModeGames)
	case wire.NameV0Friends:
		return wire.NewV0(accessKey, wire.ModeFriends)
	case wire.NameV1:
		return wire.NewV1(accessKey)
	case wire.NameLite:
		return wire.NewLite(accessKey)
	case wire.NameQuazal:
		if quazal.ChecksumSize == 0 {
			quazal.ChecksumSize = 1
		}
		return wire.NewQuazal(accessKey, quazal)
	}
	return wire.NewHyperscape()
}

// HasFragmentID reports whether p carries a fragment id.
func (pr *Profile) HasFragmentID(p *wire.Packet) bool {
	switch pr.Layout {
	case LayoutV1:
		return p.Options&wire.OptFragmentID != 0
	case LayoutLite:
		return true
	}
	return p.Type == wire.TypeData
}

// ConnSignature returns the connection signature p carries (aliasing p), or nil.
func (pr *Profile) ConnSignature(p *wire.Packet) []byte {
	switch {
	case pr.Layout != LayoutLegacy:
		if p.Options&wire.OptConnSignature != 0 {
			return p.ConnSignature[:]
		}
	case p.Type == wire.TypeSyn || p.Type == wire.TypeConnect:
		return p.ConnSignature[:4]
	}
	return nil
}

// PacketSignature returns p's packet signature (aliasing p), or nil when the layout has none.
func (pr *Profile) PacketSignature(p *wire.Packet) []byte {
	switch pr.Layout {
	case LayoutV1:
		return p.Signature[:16]
	case LayoutLite:
		return nil
	}
	return p.Signature[:4]
}

// Encrypted reports whether p's DATA payload is encrypted.
func (pr *Profile) Encrypted(p *wire.Packet) bool {
	return pr.Encryption != EncryptNone && !(pr.PlainDO && p.Src.Stream == wire.StreamDO)
}

// RC4Mode returns how the RC4 keystream of reliable payloads runs.
func (pr *Profile) RC4Mode() crypt.Mode {
	if pr.Encryption == EncryptRC4PerPacket {
		return crypt.ModePerPacket
	}
	return crypt.ModeStream
}

// Verdict is the outcome of a signature check.
type Verdict uint8

const (
	Unchecked Verdict = iota // cannot be checked with what is known (JSON null)
	Verified
	Failed
)

// SignatureState is what a signature check knows beyond the packet.
type SignatureState struct {
	SessionKey  []byte // the connection's session key; nil on an authentication connection or when unknown
	PeerConnSig []byte // the connection signature the peer sent (SYN-ACK, CONNECT); nil when not seen
	// KeyUnknown: the connection may use a session key the caller does not know (a
	// secure connection whose key was not found, or a packet seen without its
	// connection), so a signature that depends on it and does not verify is Unchecked.
	KeyUnknown bool
	// V1 only: the combination of session key and connection signature that verified
	// last, tried first (an ordering hint, updated on success).
	UsedSessionKey, UsedConnSig bool
}

// VerifySignature checks p's signature (raw is exactly its bytes; d is pr's codec)
// with what st knows. Failed means the signature is certainly wrong: the inputs it
// depends on are all known (a V1 SYN, a friends-mode V0 DATA, a connection followed
// from its start) and it does not verify.
func (pr *Profile) VerifySignature(d wire.Dialect, p *wire.Packet, raw []byte, st *SignatureState) Verdict {
	peer := st.PeerConnSig
	switch pr.Signature {
	case SigV1:
		return verifyV1(d.(*wire.V1), p, raw, st)
	case SigV0:
		v0 := d.(*wire.V0)
		var cs uint32
		if len(peer) >= 4 {
			cs = binary.LittleEndian.Uint32(peer)
		} else if v0.SignatureIsConnSig(p.Type) {
			return Unchecked
		}
		if v0.VerifySignature(p, st.SessionKey, cs) {
			return Verified
		}
		if st.KeyUnknown && v0.Mode() == wire.ModeGames {
			return Unchecked
		}
		return Failed
	case SigLite:
		if p.Type == wire.TypeConnect && p.Options&wire.OptLiteSignature != 0 && len(peer) == 16 {
			if d.(*wire.Lite).Signature([16]byte(peer)) == p.LiteSignature {
				return Verified
			}
			return Failed
		}
	case SigConnSig:
		if p.Type == wire.TypeSyn || len(peer) < 4 {
			return Unchecked
		}
		if bytes.Equal(p.Signature[:4], peer[:4]) {
			return Verified
		}
		return Failed
	}
	return Unchecked
}

// verifyV1 tries the session key (when known) and the peer's connection signature
// (when seen), each with and without, the combination that verified last first.
func verifyV1(v1 *wire.V1, p *wire.Packet, raw []byte, st *SignatureState) Verdict {
	var sks, css [2][]byte
	nsk, ncs := 1, 1
	if st.SessionKey != nil {
		sks, nsk = [2][]byte{st.SessionKey, nil}, 2
		if !st.UsedSessionKey {
			sks = [2][]byte{nil, st.SessionKey}
		}
	}
	if st.PeerConnSig != nil {
		css, ncs = [2][]byte{st.PeerConnSig, nil}, 2
		if !st.UsedConnSig {
			css = [2][]byte{nil, st.PeerConnSig}
		}
	}
	for _, sk := range sks[:nsk] {
		for _, cs := range css[:ncs] {
			ok, err := v1.VerifyPacket(raw, sk, cs)
			if err != nil {
				return Unchecked
			}
			if ok {
				st.UsedSessionKey, st.UsedConnSig = sk != nil, cs != nil
				return Verified
			}
		}
	}
	if st.KeyUnknown && p.Type != wire.TypeSyn { // a SYN is signed with neither
		return Unchecked
	}
	return Failed
}

// Sink receives a record's fields in order. The dissector's records and Describe's
// Record are both filled through it.
type Sink interface {
	String(key, v string)
	Int(key string, v int64)
	Bool(key string, v bool)
	Null(key string)
	Hex(key string, v []byte)
	Strings(key string, v []string)
	Object(key string, members int)
}

// Facts are what the caller knows about a packet beyond its header.
type Facts struct {
	Offset, Length int      // the packet's place in its input and its size
	Flags          []string // p.Flags.Names() (a caller may cache them)
	ChecksumOK     bool
	Signature      Verdict
	Plain          []byte // plain_hex, when Decoded
	Decoded        bool
	PlainError     string // plain_error, when not empty
}

// Fields writes the fields of packet p to s: the keys, their order and their null
// rules of `decode --hex --format json` (docs/cli.md, "JSON records") after
// "protocol", which the caller writes.
func (pr *Profile) Fields(s Sink, p *wire.Packet, f *Facts) {
	s.String("dialect", pr.Name)
	s.Int("offset", int64(f.Offset))
	s.Int("length", int64(f.Length))
	vport(s, "src", p.Src)
	vport(s, "dst", p.Dst)
	s.String("type", p.Type.String())
	s.Strings("flags", f.Flags)
	if pr.Layout == LayoutLite {
		s.Null("session_id")
	} else {
		s.Int("session_id", int64(p.SessionID))
	}
	if pr.Layout == LayoutV1 {
		s.Int("substream_id", int64(p.SubstreamID))
	} else {
		s.Null("substream_id")
	}
	s.Int("seq", int64(p.Seq))
	if pr.HasFragmentID(p) {
		s.Int("fragment_id", int64(p.FragmentID))
	} else {
		s.Null("fragment_id")
	}
	hexOrNull(s, "signature_hex", pr.PacketSignature(p))
	hexOrNull(s, "connection_signature_hex", pr.ConnSignature(p))
	if p.Options&wire.OptSupportedFunctions != 0 {
		s.Int("supported_functions", int64(p.SupportedFunctions))
	}
	if p.Options&wire.OptUnreliableSeq != 0 {
		s.Int("unreliable_seq", int64(p.UnreliableSeq))
	}
	if p.Options&wire.OptMaxSubstreamID != 0 {
		s.Int("max_substream_id", int64(p.MaxSubstreamID))
	}
	if p.Options&wire.OptLiteSignature != 0 {
		s.Hex("lite_signature_hex", p.LiteSignature[:])
	}
	s.Hex("payload_hex", p.Payload)
	if pr.Layout == LayoutLegacy {
		s.Int("checksum", int64(p.Checksum))
		s.Bool("checksum_ok", f.ChecksumOK)
	} else {
		s.Null("checksum")
		s.Null("checksum_ok")
	}
	switch f.Signature {
	case Verified:
		s.Bool("signature_ok", true)
	case Failed:
		s.Bool("signature_ok", false)
	default:
		s.Null("signature_ok")
	}
	if f.Decoded {
		s.Hex("plain_hex", f.Plain)
	}
	if f.PlainError != "" {
		s.String("plain_error", f.PlainError)
	}
}

func vport(s Sink, key string, v wire.VPort) {
	s.Object(key, 3)
	s.Int("stream", int64(v.Stream))
	s.String("stream_name", v.Stream.String())
	s.Int("port", int64(v.Port))
}

func hexOrNull(s Sink, key string, b []byte) {
	if b == nil {
		s.Null(key)
	} else {
		s.Hex(key, b)
	}
}
