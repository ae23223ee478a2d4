package prudp

import (
	"fmt"

	"github.com/gamewire/gamewire/prudp/crypt"
)

// payloadTransform is a dialect's DATA payload transform: what turns a
// message fragment into the payload on the wire and back. NEX and Quazal
// use RC4 (rc4Transform), Lite and Config.NoEncryption none
// (plainTransform), Hyperscape AES-CBC (aesTransform); each may add zlib
// compression (Config.Compression). A session holds one, built by its
// dialect once the handshake settled the keys, and calls it without knowing
// which it is.
type payloadTransform interface {
	// room is the message bytes one DATA packet carries: the fragment size
	// less what the transform frames inside it (zlib's ratio byte).
	room() int
	// sealReliable appends the wire form of a reliable fragment sent as
	// sequence id seq on substream sub.
	sealReliable(dst, frag []byte, sub uint8, seq uint16) []byte
	// sealUnreliable appends the wire form of an unreliable message; sid is
	// our session id. It refuses (ErrMessageTooLarge) a message that does
	// not fit one packet.
	sealUnreliable(dst, data []byte, seq uint16, sid uint8) ([]byte, error)
	// openArrival opens a DATA payload as it arrives, before ordering, into
	// dst, so that a transform that authenticates refuses a damaged payload
	// before it is acknowledged (an intact copy may still come). Transforms
	// that open in delivery order do nothing and report opened false.
	openArrival(dst, payload []byte, seq uint16) (plain []byte, opened bool, err error)
	// openReliable opens a reliable payload of substream sub in delivery
	// order; it may modify payload in place. With inflate false it only
	// advances the cipher (the payload belongs to a message already
	// refused) and returns nothing.
	openReliable(payload []byte, sub uint8, inflate bool) ([]byte, error)
	// inflatesAtDelivery reports whether openReliable inflates (compressed
	// payloads of the RC4 and plain transforms), so that what a payload
	// will take in reassembly is not known before then.
	inflatesAtDelivery() bool
	// openUnreliable opens an unreliable payload carrying session id sid;
	// it may modify payload in place.
	openUnreliable(payload []byte, seq uint16, sid uint8) ([]byte, error)
}

// zlibFraming is the optional compression of the RC4 and plain transforms:
// a ratio byte, then the zlib stream (or the payload as it is, behind ratio
// 0, when zlib would not make it smaller).
type zlibFraming struct {
	on       bool
	fragSize int
}

func (z zlibFraming) room() int {
	if z.on {
		return z.fragSize - 1 // the ratio byte
	}
	return z.fragSize
}

func (z zlibFraming) seal(dst, data []byte) []byte {
	if z.on {
		return compressPayload(dst, data)
	}
	return append(dst, data...)
}

// open undoes seal. One packet inflates to at most maxInflated bytes, and
// to no more than its ratio byte claims (crypt.DecompressDeclared).
func (z zlibFraming) open(payload []byte) ([]byte, error) {
	if !z.on {
		return payload, nil
	}
	return crypt.DecompressDeclared(payload, max(z.fragSize, maxInflated))
}

// maxInflated bounds what one compressed DATA payload may inflate to: what
// the largest datagram read could carry uncompressed. Senders compress
// each fragment on its own (one ratio byte and zlib stream per packet), so
// a fragment is never larger inflated than a packet could carry plain,
// even from a peer whose fragment size is larger than ours; a message then
// cannot inflate past what its fragments could carry uncompressed.
const maxInflated = maxDatagram

// sealUnreliable frames data and checks that it fits one packet.
func (z zlibFraming) sealUnreliable(dst, data []byte) ([]byte, error) {
	start := len(dst)
	dst = z.seal(dst, data)
	if n := len(dst) - start; n > z.fragSize {
		return dst[:start], fmt.Errorf("%w: unreliable message of %d bytes exceeds the fragment size %d", ErrMessageTooLarge, n, z.fragSize)
	}
	return dst, nil
}

// compressPayload appends src compressed with its ratio byte, or with ratio 0
// and uncompressed when zlib would not make it smaller.
func compressPayload(dst, src []byte) []byte {
	start := len(dst)
	dst = crypt.Compress(dst, src)
	if len(dst)-start-1 >= len(src) {
		dst = append(dst[:start], 0)
		dst = append(dst, src...)
	}
	return dst
}

// plainTransform sends payloads as they are (Lite, whose stream TLS
// protects; Config.NoEncryption), compressed when asked.
type plainTransform struct{ zlib zlibFraming }

func newPlainTransform(cfg *Config) payloadTransform {
	return &plainTransform{zlibFraming{on: cfg.Compression, fragSize: cfg.FragmentSize}}
}

func (t *plainTransform) room() int { return t.zlib.room() }
func (t *plainTransform) sealReliable(dst, frag []byte, _ uint8, _ uint16) []byte {
	return t.zlib.seal(dst, frag)
}
func (t *plainTransform) sealUnreliable(dst, data []byte, _ uint16, _ uint8) ([]byte, error) {
	return t.zlib.sealUnreliable(dst, data)
}
func (t *plainTransform) openArrival(_, _ []byte, _ uint16) ([]byte, bool, error) {
	return nil, false, nil
}
func (t *plainTransform) inflatesAtDelivery() bool { return t.zlib.on }
func (t *plainTransform) openReliable(payload []byte, _ uint8, inflate bool) ([]byte, error) {
	if !inflate {
		return nil, nil
	}
	return t.zlib.open(payload)
}
func (t *plainTransform) openUnreliable(payload []byte, _ uint16, _ uint8) ([]byte, error) {
	return t.zlib.open(payload)
}

// rc4Transform is "Encryption" in NintendoClients wiki "PRUDP Protocol": reliable DATA runs
// through one RC4 state per direction and substream (substream n keyed with
// the key modified n times), restarted for every packet in RC4PerPacket
// mode; unreliable DATA gets a key of its own per packet. Compression, when
// on, comes before the cipher.
type rc4Transform struct {
	zlib  zlibFraming
	pairs []rc4Pair // by substream id
	unrel crypt.UnreliableKeys
}

// rc4Pair is the RC4 state of one substream: enc for what we send, dec for
// what we receive.
type rc4Pair struct{ enc, dec crypt.Cipher }

// newRC4Transform keys the streams of substreams 0 to substreams-1 with key
// (Config.NoEncryption: no cipher, a plainTransform).
func newRC4Transform(cfg *Config, key []byte, substreams int) payloadTransform {
	if cfg.NoEncryption {
		return newPlainTransform(cfg)
	}
	t := &rc4Transform{
		zlib:  zlibFraming{on: cfg.Compression, fragSize: cfg.FragmentSize},
		pairs: make([]rc4Pair, substreams),
		unrel: crypt.NewUnreliableKeys(key),
	}
	mode := crypt.ModeStream
	if cfg.RC4Mode == RC4PerPacket {
		mode = crypt.ModePerPacket
	}
	k := append([]byte(nil), key...)
	for i := range t.pairs {
		if i > 0 {
			crypt.ModifyKey(k)
		}
		// Key lengths were checked when the connection was configured.
		_ = t.pairs[i].enc.Init(k, mode)
		_ = t.pairs[i].dec.Init(k, mode)
	}
	return t
}

func (t *rc4Transform) room() int { return t.zlib.room() }

func (t *rc4Transform) sealReliable(dst, frag []byte, sub uint8, _ uint16) []byte {
	start := len(dst)
	dst = t.zlib.seal(dst, frag)
	t.pairs[sub].enc.XORPacket(dst[start:], dst[start:])
	return dst
}

func (t *rc4Transform) sealUnreliable(dst, data []byte, seq uint16, sid uint8) ([]byte, error) {
	start := len(dst)
	dst, err := t.zlib.sealUnreliable(dst, data)
	if err != nil {
		return dst, err
	}
	t.unrel.XORPacket(dst[start:], dst[start:], seq, sid)
	return dst, nil
}

func (t *rc4Transform) openArrival(_, _ []byte, _ uint16) ([]byte, bool, error) {
	return nil, false, nil
}

func (t *rc4Transform) inflatesAtDelivery() bool { return t.zlib.on }

func (t *rc4Transform) openReliable(payload []byte, sub uint8, inflate bool) ([]byte, error) {
	t.pairs[sub].dec.XORPacket(payload, payload)
	if !inflate {
		return nil, nil
	}
	return t.zlib.open(payload)
}

func (t *rc4Transform) openUnreliable(payload []byte, seq uint16, sid uint8) ([]byte, error) {
	t.unrel.XORPacket(payload, payload, seq, sid)
	return t.zlib.open(payload)
}
