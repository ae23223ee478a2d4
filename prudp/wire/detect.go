package wire

import (
	"errors"
	"math/bits"
	"strings"
)

// ErrUnknownDialect means Detect found no dialect that decodes the bytes with verified checksums.
var ErrUnknownDialect = errors.New("no dialect decodes these bytes")

// DetectOptions configures [Detect].
type DetectOptions struct {
	// AccessKey is used for checksums (V0, Quazal) and by the returned dialect.
	AccessKey string
	// QuazalChecksum pins the Quazal checksum size (1 or 4); 0 tries both.
	QuazalChecksum int
	// QuazalTypes2006 makes a detected Quazal dialect use the 2006 packet types.
	QuazalTypes2006 bool
	// Candidates restricts detection to these dialect names (NameV0, NameQuazal, ...);
	// empty means all.
	Candidates []string
}

func (o *DetectOptions) allowed(name string) bool {
	if len(o.Candidates) == 0 {
		return true
	}
	for _, c := range o.Candidates {
		if c == name {
			return true
		}
	}
	return false
}

// Detect tells the dialect of a datagram (or a WebSocket message) by its shape:
//
//   - magic EA D0: nex-v1; magic 0x80 and a clean Lite decode of the whole input: nex-lite;
//   - otherwise every checksum dialect is tried (nex-v0, quazal with 1- and 4-byte
//     checksums, hyperscape), and a candidate qualifies when it decodes all of b, packet
//     after packet, with every checksum verified under opts.AccessKey.
//
// Among qualifying candidates, 4-byte checksums win over 1-byte ones (a 1-byte checksum
// passes by chance 1 time in 256); then the one whose packets look most plausible (no
// undefined flag bits; for Quazal no NEX-only stream types 8-11); then, in this order,
// quazal/4, hyperscape, quazal/1, nex-v0 (V0 and Quazal 1-byte checksums are the same
// function, so on equal evidence the 1-byte header layouts are decided by structure alone).
// Nothing qualifying is an error wrapping ErrUnknownDialect that lists what was tried.
func Detect(b []byte, opts DetectOptions) (Dialect, error) {
	if len(b) >= 2 && b[0] == v1Magic0 && b[1] == v1Magic1 && opts.allowed(NameV1) {
		return NewV1(opts.AccessKey), nil
	}
	if len(b) >= 1 && b[0] == liteMagic && opts.allowed(NameLite) {
		d := NewLite(opts.AccessKey)
		if _, ok := decodesAll(d, b, false); ok {
			return d, nil
		}
	}
	var cands []Dialect
	if opts.allowed(NameQuazal) && opts.QuazalChecksum != 1 {
		cands = append(cands, NewQuazal(opts.AccessKey, QuazalOptions{ChecksumSize: 4, Types2006: opts.QuazalTypes2006}))
	}
	if opts.allowed(NameHyperscape) {
		cands = append(cands, NewHyperscape())
	}
	if opts.allowed(NameQuazal) && opts.QuazalChecksum != 4 {
		cands = append(cands, NewQuazal(opts.AccessKey, QuazalOptions{ChecksumSize: 1, Types2006: opts.QuazalTypes2006}))
	}
	if opts.allowed(NameV0) {
		cands = append(cands, NewV0(opts.AccessKey, ModeGames))
	}
	if opts.allowed(NameV0Friends) {
		cands = append(cands, NewV0(opts.AccessKey, ModeFriends))
	}
	var best Dialect
	bestScore := 0
	var tried []string
	for _, d := range cands {
		tried = append(tried, detectName(d))
		penalty, ok := decodesAll(d, b, true)
		if !ok {
			continue
		}
		score := penalty
		if l, _ := legacyOfDialect(d); l != nil && l.csSize == 1 {
			score += 100
		}
		if best == nil || score < bestScore {
			best, bestScore = d, score
		}
	}
	if best == nil {
		return nil, &Error{Dialect: "auto", Field: "dialect", Offset: 0, Err: ErrUnknownDialect,
			Detail: "tried " + strings.Join(tried, ", ") + " under the given access key; pass --dialect"}
	}
	return best, nil
}

func detectName(d Dialect) string {
	if q, ok := d.(*Quazal); ok {
		if q.opts.ChecksumSize == 4 {
			return "quazal/4-byte checksum"
		}
		return "quazal/1-byte checksum"
	}
	return d.Name()
}

func legacyOfDialect(d Dialect) (*legacyCodec, bool) {
	switch d := d.(type) {
	case *V0:
		return &d.legacyCodec, true
	case *Quazal:
		return &d.legacyCodec, true
	case *Hyperscape:
		return &d.legacyCodec, true
	}
	return nil, false
}

// decodesAll reports whether d decodes all of b into packets (with verified checksums
// when checksum is set) and how implausible they look.
func decodesAll(d Dialect, b []byte, checksum bool) (penalty int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	_, isQuazal := d.(*Quazal)
	for off := 0; off < len(b); {
		p, n, err := d.Parse(b[off:])
		if err != nil || n <= 0 {
			return 0, false
		}
		penalty += bits.OnesCount16(uint16(p.Flags &^ knownFlags))
		for _, s := range []StreamType{p.Src.Stream, p.Dst.Stream} {
			if s == 0 || s > StreamRelay || isQuazal && s > StreamNATEcho {
				penalty++
			}
		}
		off += n
	}
	return penalty, true
}
