// Package credentials is what a console presents before and at a NEX login,
// and how gamewire checks it: the tokens its account services (NNAS for the
// Wii U, NASC for the 3DS; nex/nnas, nex/nasc) hand out and its NEX servers
// check at LoginEx / ValidateAndRequestTicketWith* / RegisterEx, Pretendo's
// token format (to run behind a Pretendo account server), and Switch BaaS ID
// tokens (RS256 JWTs) checked against a pinned key set.
//
// gamewire's own tokens are authenticated with HMAC-SHA256 under a server
// secret (Keys); nothing of their content is secret. Sources: nintendo-wiki
// "Ticket Granting (10)", "NASC", "NNID Server", "BaaS"
// (github.com/PretendoNetwork/nintendo-wiki), NintendoClients nintendo/nnas.py,
// nasc.py, nex/backend.py (github.com/kinnay/NintendoClients); Pretendo's token
// layout from github.com/PretendoNetwork/account src/util.ts (facts only, no
// code).
package credentials

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Token types (the byte after the format version).
const (
	TypeAccess  uint8 = 1 // NNAS OAuth access token
	TypeRefresh uint8 = 2 // NNAS OAuth refresh token
	TypeNEX     uint8 = 3 // presented to a NEX server
	TypeService uint8 = 4 // independent service token
)

// System types: which account service issued a token.
const (
	SystemWiiU   uint8 = 1 // NNAS
	System3DS    uint8 = 2 // NASC
	SystemSwitch uint8 = 3
)

// Errors of token parsing and checks. Check wraps them together with the NEX
// result code a login answers with (Result).
var (
	ErrMalformed = errors.New("credentials: malformed token")
	ErrBadMAC    = errors.New("credentials: token authentication failed")
	ErrExpired   = errors.New("credentials: token expired")
	ErrWrongPID  = errors.New("credentials: token belongs to another principal")
	ErrWrongGame = errors.New("credentials: token is for another game server")
	ErrWrongType = errors.New("credentials: wrong token type")
	ErrDisabled  = errors.New("credentials: account disabled")
	ErrNoToken   = errors.New("credentials: no token")
)

// Token is the content of a NEX or service token.
type Token struct {
	Type         uint8
	System       uint8
	AccessLevel  int8 // negative: the account is disabled
	PID          types.PID
	Expires      time.Time // whole seconds
	TitleID      uint64
	GameServerID uint32
}

// nexBodyLen and macLen make a NEX token: 32 bytes of body, 16 of MAC, 64
// characters of base64 (Cemu keeps at most 512).
const (
	formatVersion = 1
	nexBodyLen    = 32
	nexMACLen     = 16
	// NEXTokenLen is the decoded length of a gamewire NEX or service token.
	NEXTokenLen = nexBodyLen + nexMACLen
)

// Keys are the secrets gamewire's tokens are authenticated with, derived from
// one 32-byte server secret (kept in the store, or given to serve).
type Keys struct {
	nex, oauth [32]byte
}

// NewKeys derives the token keys from secret (at least 16 bytes).
func NewKeys(secret []byte) (*Keys, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("credentials: token secret of %d bytes, want at least 16", len(secret))
	}
	k := &Keys{}
	copy(k.nex[:], derive(secret, "gamewire nex token v1"))
	copy(k.oauth[:], derive(secret, "gamewire nnas oauth v1"))
	return k, nil
}

func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

func mac(key []byte, body []byte, n int) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)[:n]
}

// Seal returns the token's bytes: body then HMAC-SHA256 (16 bytes).
func (k *Keys) Seal(t Token) []byte {
	b := make([]byte, nexBodyLen, NEXTokenLen)
	b[0] = formatVersion
	b[1] = t.Type
	b[2] = t.System
	b[3] = byte(t.AccessLevel)
	binary.LittleEndian.PutUint64(b[4:], uint64(t.PID))
	binary.LittleEndian.PutUint64(b[12:], uint64(max(t.Expires.Unix(), 0)))
	binary.LittleEndian.PutUint64(b[20:], t.TitleID)
	binary.LittleEndian.PutUint32(b[28:], t.GameServerID)
	return append(b, mac(k.nex[:], b, nexMACLen)...)
}

// Open authenticates and decodes a token's bytes. It checks the MAC only:
// expiry, PID and game are Check's.
func (k *Keys) Open(b []byte) (Token, error) {
	if len(b) != NEXTokenLen {
		return Token{}, fmt.Errorf("%w: %d bytes, want %d", ErrMalformed, len(b), NEXTokenLen)
	}
	body, sum := b[:nexBodyLen], b[nexBodyLen:]
	if !hmac.Equal(sum, mac(k.nex[:], body, nexMACLen)) {
		return Token{}, ErrBadMAC
	}
	if body[0] != formatVersion {
		return Token{}, fmt.Errorf("%w: format version %d", ErrMalformed, body[0])
	}
	exp := binary.LittleEndian.Uint64(body[12:])
	if exp > 1<<40 {
		return Token{}, fmt.Errorf("%w: expiry %d", ErrMalformed, exp)
	}
	return Token{
		Type: body[1], System: body[2], AccessLevel: int8(body[3]),
		PID:          types.PID(binary.LittleEndian.Uint64(body[4:])),
		Expires:      time.Unix(int64(exp), 0).UTC(),
		TitleID:      binary.LittleEndian.Uint64(body[20:]),
		GameServerID: binary.LittleEndian.Uint32(body[28:]),
	}, nil
}

// OAuth tokens (NNAS access and refresh tokens, sent back as hex): type, PID
// (u32, NNAS PIDs are 32-bit), expiry (u32 seconds), then a truncated
// HMAC-SHA256: 7 bytes for access tokens (32 hex characters, the length
// Nintendo's and Pretendo's have; they live an hour), 11 for refresh tokens
// (40 characters, the length of Nintendo's).
const (
	oauthBodyLen       = 9
	AccessTokenLen     = 16
	RefreshTokenLen    = 20
	AccessTokenExpiry  = time.Hour
	RefreshTokenExpiry = 12 * time.Hour
)

// OAuthToken is the content of an NNAS access or refresh token.
type OAuthToken struct {
	Type    uint8 // TypeAccess or TypeRefresh
	PID     types.PID
	Expires time.Time
}

func oauthLen(typ uint8) int {
	if typ == TypeRefresh {
		return RefreshTokenLen
	}
	return AccessTokenLen
}

// SealOAuth returns the token as lowercase hex.
func (k *Keys) SealOAuth(t OAuthToken) string {
	b := make([]byte, oauthBodyLen, RefreshTokenLen)
	b[0] = t.Type
	binary.LittleEndian.PutUint32(b[1:], uint32(t.PID))
	binary.LittleEndian.PutUint32(b[5:], uint32(min(max(t.Expires.Unix(), 0), 1<<32-1)))
	b = append(b, mac(k.oauth[:], b, oauthLen(t.Type)-oauthBodyLen)...)
	return hex.EncodeToString(b)
}

// OpenOAuth authenticates an OAuth token of type typ and checks its expiry
// against now.
func (k *Keys) OpenOAuth(s string, typ uint8, now time.Time) (OAuthToken, error) {
	want := oauthLen(typ)
	if len(s) != 2*want {
		return OAuthToken{}, fmt.Errorf("%w: %d characters, want %d", ErrMalformed, len(s), 2*want)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return OAuthToken{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if !hmac.Equal(b[oauthBodyLen:], mac(k.oauth[:], b[:oauthBodyLen], want-oauthBodyLen)) {
		return OAuthToken{}, ErrBadMAC
	}
	if b[0] != typ {
		return OAuthToken{}, fmt.Errorf("%w: type %d, want %d", ErrWrongType, b[0], typ)
	}
	t := OAuthToken{Type: b[0], PID: types.PID(binary.LittleEndian.Uint32(b[1:])),
		Expires: time.Unix(int64(binary.LittleEndian.Uint32(b[5:])), 0)}
	if !now.Before(t.Expires) {
		return t, ErrExpired
	}
	return t, nil
}

// NintendoBase64 encodes b as NASC does: standard base64 with '+', '/' and '='
// written '.', '-' and '*' (nintendo-wiki "NASC").
func NintendoBase64(b []byte) string {
	return nintendoReplacer.Replace(base64.StdEncoding.EncodeToString(b))
}

// ParseNintendoBase64 decodes NASC base64; standard base64 is accepted too
// (the two alphabets share everything but those three characters).
func ParseNintendoBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(standardReplacer.Replace(s))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return b, nil
}

var (
	nintendoReplacer = strings.NewReplacer("+", ".", "/", "-", "=", "*")
	standardReplacer = strings.NewReplacer(".", "+", "-", "/", "*", "=")
)

// MaxTokenLen bounds a token string a NEX server decodes (Cemu's buffer is
// 512 characters; BaaS ID tokens are about 1 KiB, so Switch has its own bound).
const MaxTokenLen = 512
