package credentials

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Pretendo's token format, as its account server issues NEX tokens and its
// NEX servers check them (github.com/PretendoNetwork/account src/util.ts,
// github.com/PretendoNetwork/nex-protocols-common-go globals/authentication.go;
// facts only): a 23-byte little-endian body {u8 system type, u8 token type,
// u32 PID, u64 expiry in milliseconds, u64 title id, i8 access level},
// AES-256-CBC with a zero IV and PKCS#7 padding under the game server's
// 32-byte key, prefixed with the big-endian CRC32 of the plain body: 36 bytes.
//
// A CRC is no MAC: PretendoKey only decides that a token was made by someone
// holding the key, as far as CBC with a checksum can tell. gamewire issues
// its own format; this one is read so that a gamewire game server can run
// behind a Pretendo account server (serve --pretendo-token-key).
const (
	pretendoBodyLen = 23
	// PretendoTokenLen is the decoded length of a Pretendo NEX token.
	PretendoTokenLen = 4 + 32
)

// PretendoKey is a game server's AES-256 token key.
type PretendoKey struct{ block cipher.Block }

// ParsePretendoKey reads the key as Pretendo's server records give it: 64 hex
// characters.
func ParsePretendoKey(s string) (*PretendoKey, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("credentials: Pretendo token key: want 64 hex characters (32 bytes)")
	}
	blk, err := aes.NewCipher(b)
	if err != nil {
		return nil, err
	}
	return &PretendoKey{blk}, nil
}

// Seal makes a Pretendo NEX token (for tests and for tools that stand in for
// Pretendo's account server).
func (k *PretendoKey) Seal(t Token) []byte {
	body := make([]byte, pretendoBodyLen, 32)
	body[0] = t.System
	body[1] = t.Type
	binary.LittleEndian.PutUint32(body[2:], uint32(t.PID))
	binary.LittleEndian.PutUint64(body[6:], uint64(max(t.Expires.UnixMilli(), 0)))
	binary.LittleEndian.PutUint64(body[14:], t.TitleID)
	body[22] = byte(t.AccessLevel)
	sum := crc32.ChecksumIEEE(body)
	pad := 32 - len(body)
	for range pad {
		body = append(body, byte(pad))
	}
	out := binary.BigEndian.AppendUint32(make([]byte, 0, PretendoTokenLen), sum)
	ct := make([]byte, 32)
	cipher.NewCBCEncrypter(k.block, make([]byte, aes.BlockSize)).CryptBlocks(ct, body)
	return append(out, ct...)
}

// Open decrypts a Pretendo NEX token and checks its CRC. Expiry, PID and type
// are Check's.
func (k *PretendoKey) Open(b []byte) (Token, error) {
	if len(b) < 4+aes.BlockSize || (len(b)-4)%aes.BlockSize != 0 || len(b) > 4+64 {
		return Token{}, fmt.Errorf("%w: %d bytes is no Pretendo token", ErrMalformed, len(b))
	}
	want := binary.BigEndian.Uint32(b)
	pt := make([]byte, len(b)-4)
	cipher.NewCBCDecrypter(k.block, make([]byte, aes.BlockSize)).CryptBlocks(pt, b[4:])
	pad := int(pt[len(pt)-1])
	if pad == 0 || pad > aes.BlockSize || pad > len(pt) {
		return Token{}, fmt.Errorf("%w: bad padding (wrong key?)", ErrBadMAC)
	}
	pt = pt[:len(pt)-pad]
	if crc32.ChecksumIEEE(pt) != want {
		return Token{}, fmt.Errorf("%w: CRC32 mismatch (wrong key?)", ErrBadMAC)
	}
	if len(pt) != pretendoBodyLen {
		return Token{}, fmt.Errorf("%w: Pretendo token body of %d bytes, want %d", ErrMalformed, len(pt), pretendoBodyLen)
	}
	ms := binary.LittleEndian.Uint64(pt[6:])
	if ms > 1<<50 {
		return Token{}, fmt.Errorf("%w: expiry %d ms", ErrMalformed, ms)
	}
	return Token{
		System: pt[0], Type: pt[1],
		PID: types.PID(binary.LittleEndian.Uint32(pt[2:])),
		// Pretendo compares whole seconds.
		Expires:     time.Unix(int64(ms/1000), 0).UTC(),
		TitleID:     binary.LittleEndian.Uint64(pt[14:]),
		AccessLevel: int8(pt[22]),
	}, nil
}
