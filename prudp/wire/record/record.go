// Package record turns decoded PRUDP packets into the records `gamewire decode --hex`
// prints (docs/cli.md, "decode --hex"): one JSON object per packet with stable keys, or
// one line of text. It also holds one Profile per dialect: which fields its records
// carry, how its signatures are checked, how its payloads are encrypted and compressed.
// The capture dissector writes its PRUDP packet records with Profile.Fields and reads
// its receive path from the same profiles.
package record

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gamewire/gamewire/prudp/crypt"
	"github.com/gamewire/gamewire/prudp/wire"
)

// Endpoint is a virtual port in a record.
type Endpoint struct {
	Stream     uint8  `json:"stream"`
	StreamName string `json:"stream_name"`
	Port       uint8  `json:"port"`
}

// Record is one decoded packet. Fields a dialect does not carry are null, never guessed:
// session_id is null for nex-lite, substream_id is set only for nex-v1, fragment_id only
// where the packet carries one, checksum_ok is null for dialects without a checksum, and
// signature_ok is null when the signature cannot be checked without connection state.
type Record struct {
	Protocol               string   `json:"protocol"`
	Dialect                string   `json:"dialect"`
	Offset                 int      `json:"offset"`
	Length                 int      `json:"length"`
	Src                    Endpoint `json:"src"`
	Dst                    Endpoint `json:"dst"`
	Type                   string   `json:"type"`
	Flags                  []string `json:"flags"`
	SessionID              *uint8   `json:"session_id"`
	SubstreamID            *uint8   `json:"substream_id"`
	Seq                    uint16   `json:"seq"`
	FragmentID             *uint32  `json:"fragment_id"`
	SignatureHex           *string  `json:"signature_hex"`
	ConnectionSignatureHex *string  `json:"connection_signature_hex"`
	SupportedFunctions     *uint32  `json:"supported_functions,omitempty"`
	UnreliableSeq          *uint16  `json:"unreliable_seq,omitempty"`
	MaxSubstreamID         *uint8   `json:"max_substream_id,omitempty"`
	LiteSignatureHex       *string  `json:"lite_signature_hex,omitempty"`
	PayloadHex             string   `json:"payload_hex"`
	Checksum               *uint32  `json:"checksum"`
	ChecksumOK             *bool    `json:"checksum_ok"`
	SignatureOK            *bool    `json:"signature_ok"`
	PlainHex               *string  `json:"plain_hex,omitempty"`
	PlainError             string   `json:"plain_error,omitempty"`
}

// Options say how to produce plain_hex.
type Options struct {
	// RC4Key decrypts DATA payloads with a fresh RC4 state per packet.
	RC4Key []byte
	// Decrypt uses the dialect's default key ("CD&ML") instead; Lite payloads are not
	// encrypted, and Quazal DO (stream type 1) payloads are not RC4-encrypted (the
	// published DO packet is plain).
	Decrypt bool
	// MaxPlain bounds decompressed payloads (default 1 MiB).
	MaxPlain int
}

func (o *Options) wantPlain() bool { return o.Decrypt || o.RC4Key != nil }

func ptr[T any](v T) *T { return &v }

// DecodeAll decodes every packet in b with d and returns their records. A packet with a
// bad checksum gets a record with checksum_ok=false and decoding goes on after it; any
// other error stops decoding and is returned with the records decoded so far.
func DecodeAll(d wire.Dialect, b []byte, opts Options) ([]Record, error) {
	var recs []Record
	for off := 0; off < len(b); {
		p, n, err := d.Parse(b[off:])
		if err != nil && !errors.Is(err, wire.ErrBadChecksum) {
			return recs, fmt.Errorf("packet at offset %d: %w", off, err)
		}
		recs = append(recs, Describe(d, &p, b[off:off+n], off, err == nil, opts))
		off += n
	}
	if len(recs) == 0 {
		return nil, errors.New("no packet: empty input")
	}
	return recs, nil
}

// Describe makes the record of p, which d decoded from raw (exactly the packet's bytes)
// at offset off of its input; checksumOK says whether Parse verified its checksum.
// The fields are those Profile.Fields writes, the ones the dissector writes too.
func Describe(d wire.Dialect, p *wire.Packet, raw []byte, off int, checksumOK bool, opts Options) Record {
	pr := ProfileOf(d.Name())
	f := Facts{Offset: off, Length: len(raw), Flags: p.Flags.Names(), ChecksumOK: checksumOK,
		Signature: signatureOK(pr, d, p, raw)}
	if opts.wantPlain() && p.Type == wire.TypeData && !p.Flags.Has(wire.FlagMultiAck) && len(p.Payload) > 0 {
		plain, err := Plain(d, p, opts)
		if err != nil {
			f.PlainError = err.Error()
		} else {
			f.Plain, f.Decoded = plain, true
		}
	}
	r := Record{Protocol: "prudp"}
	pr.Fields(&structSink{r: &r}, p, &f)
	return r
}

// structSink fills a Record from Profile.Fields; the Record's JSON tags name the same
// keys in the same order (TestDescribeFollowsFields).
type structSink struct {
	r   *Record
	obj *Endpoint // the src or dst object being filled
	in  int       // its members still to come
}

func (s *structSink) member() *Endpoint {
	if s.in == 0 {
		return nil
	}
	s.in--
	return s.obj
}

func (s *structSink) Object(key string, members int) {
	s.obj, s.in = &s.r.Src, members
	if key == "dst" {
		s.obj = &s.r.Dst
	}
}

func (s *structSink) String(key, v string) {
	if e := s.member(); e != nil {
		e.StreamName = v
		return
	}
	switch key {
	case "dialect":
		s.r.Dialect = v
	case "type":
		s.r.Type = v
	case "plain_error":
		s.r.PlainError = v
	}
}

func (s *structSink) Int(key string, v int64) {
	if e := s.member(); e != nil {
		if key == "stream" {
			e.Stream = uint8(v)
		} else {
			e.Port = uint8(v)
		}
		return
	}
	r := s.r
	switch key {
	case "offset":
		r.Offset = int(v)
	case "length":
		r.Length = int(v)
	case "session_id":
		r.SessionID = ptr(uint8(v))
	case "substream_id":
		r.SubstreamID = ptr(uint8(v))
	case "seq":
		r.Seq = uint16(v)
	case "fragment_id":
		r.FragmentID = ptr(uint32(v))
	case "supported_functions":
		r.SupportedFunctions = ptr(uint32(v))
	case "unreliable_seq":
		r.UnreliableSeq = ptr(uint16(v))
	case "max_substream_id":
		r.MaxSubstreamID = ptr(uint8(v))
	case "checksum":
		r.Checksum = ptr(uint32(v))
	}
}

func (s *structSink) Bool(key string, v bool) {
	switch key {
	case "checksum_ok":
		s.r.ChecksumOK = ptr(v)
	case "signature_ok":
		s.r.SignatureOK = ptr(v)
	}
}

func (s *structSink) Null(string) {} // a nil pointer marshals as null

func (s *structSink) Hex(key string, v []byte) {
	h := hex.EncodeToString(v)
	switch key {
	case "signature_hex":
		s.r.SignatureHex = &h
	case "connection_signature_hex":
		s.r.ConnectionSignatureHex = &h
	case "lite_signature_hex":
		s.r.LiteSignatureHex = &h
	case "payload_hex":
		s.r.PayloadHex = h
	case "plain_hex":
		s.r.PlainHex = &h
	}
}

func (s *structSink) Strings(key string, v []string) {
	if key == "flags" {
		s.r.Flags = v
	}
}

// signatureOK checks what can be checked without connection state: a single packet
// says nothing of the session key or the peer's connection signature.
func signatureOK(pr *Profile, d wire.Dialect, p *wire.Packet, raw []byte) Verdict {
	return pr.VerifySignature(d, p, raw, &SignatureState{KeyUnknown: true})
}

// Plain returns p's payload decrypted and decompressed as opts ask: RC4 with a fresh
// state (opts.RC4Key, or the default key "CD&ML" with opts.Decrypt); then, for Quazal,
// the compression-ratio byte and zlib (crypt.Decompress). NEX (V0, V1) payloads carry no
// ratio byte (NEX disables compression); Lite payloads are neither encrypted nor
// compressed. Hyperscape payloads are AES-CBC under a per-connection key, which a single
// packet cannot supply.
func Plain(d wire.Dialect, p *wire.Packet, opts Options) ([]byte, error) {
	pr := ProfileOf(d.Name())
	limit := opts.MaxPlain
	if limit <= 0 {
		limit = 1 << 20
	}
	key := opts.RC4Key
	switch pr.Encryption {
	case EncryptAESCBC:
		return nil, errors.New("hyperscape payloads are AES-CBC with the connection's ECDH key; RC4 does not apply")
	case EncryptNone:
		if key == nil {
			return append([]byte(nil), p.Payload...), nil
		}
	}
	if key == nil && opts.Decrypt && pr.Encrypted(p) {
		key = []byte(crypt.DefaultKey)
	}
	out := append([]byte(nil), p.Payload...)
	if key != nil {
		var c crypt.RC4
		if err := c.Reset(key); err != nil {
			return nil, err
		}
		c.XORKeyStream(out, out)
	}
	if pr.Compression == CompressAlways {
		plain, err := crypt.Decompress(out, limit)
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), plain...), nil
	}
	return out, nil
}

// Text returns the record as one line.
func (r *Record) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s", r.Dialect, r.Type)
	if len(r.Flags) > 0 {
		fmt.Fprintf(&sb, " [%s]", strings.Join(r.Flags, "|"))
	}
	fmt.Fprintf(&sb, " %s:%d -> %s:%d", r.Src.StreamName, r.Src.Port, r.Dst.StreamName, r.Dst.Port)
	if r.SessionID != nil {
		fmt.Fprintf(&sb, " session=%#02x", *r.SessionID)
	}
	if r.SubstreamID != nil {
		fmt.Fprintf(&sb, " substream=%d", *r.SubstreamID)
	}
	fmt.Fprintf(&sb, " seq=%d", r.Seq)
	if r.FragmentID != nil {
		fmt.Fprintf(&sb, " fragment=%d", *r.FragmentID)
	}
	if r.SignatureHex != nil {
		fmt.Fprintf(&sb, " sig=%s", *r.SignatureHex)
	}
	if r.ConnectionSignatureHex != nil {
		fmt.Fprintf(&sb, " conn_sig=%s", *r.ConnectionSignatureHex)
	}
	if r.SupportedFunctions != nil {
		fmt.Fprintf(&sb, " functions=%#x", *r.SupportedFunctions)
	}
	if r.UnreliableSeq != nil {
		fmt.Fprintf(&sb, " unreliable_seq=%d", *r.UnreliableSeq)
	}
	if r.MaxSubstreamID != nil {
		fmt.Fprintf(&sb, " max_substream=%d", *r.MaxSubstreamID)
	}
	if r.LiteSignatureHex != nil {
		fmt.Fprintf(&sb, " lite_sig=%s", *r.LiteSignatureHex)
	}
	fmt.Fprintf(&sb, " payload=%d bytes", len(r.PayloadHex)/2)
	if len(r.PayloadHex) > 0 {
		fmt.Fprintf(&sb, " %s", r.PayloadHex)
	}
	if r.ChecksumOK != nil {
		status := "ok"
		if !*r.ChecksumOK {
			status = "BAD"
		}
		fmt.Fprintf(&sb, " checksum=%#x %s", *r.Checksum, status)
	}
	switch {
	case r.SignatureOK == nil:
		sb.WriteString(" signature=unchecked")
	case *r.SignatureOK:
		sb.WriteString(" signature=ok")
	default:
		sb.WriteString(" signature=BAD")
	}
	if r.PlainHex != nil {
		fmt.Fprintf(&sb, " plain=%s", *r.PlainHex)
	}
	if r.PlainError != "" {
		fmt.Fprintf(&sb, " plain_error=%q", r.PlainError)
	}
	return sb.String()
}
