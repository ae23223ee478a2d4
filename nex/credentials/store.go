package credentials

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/gamewire/gamewire/nex/types"
)

// NNID is a Nintendo Network ID (the NNAS account of a Wii U user) and the
// NEX account it is linked to (the same PID).
//
// Two passwords are kept apart: the console's account password, of which the
// store keeps only a verifier (Verifier), and the NEX password, which the
// server issues (never typed by anyone), hands out in nex_token, and from
// which the NEX account's Kerberos keys are derived (it is as secret as those
// keys, and kept beside them).
type NNID struct {
	PID         types.PID
	UserID      string // the NNID, 6 to 16 characters
	NEXPassword string
	Email       string
	BirthDate   string // YYYY-MM-DD
	Country     string // ISO 3166 alpha-2
	Region      int    // X-Nintendo-Region bit
	Gender      string // M or F
	Language    string
	TZName      string
	MiiName     string
	MiiData     []byte // the Mii (FFL data), base64 in the profile; may be empty
	AccessLevel int8   // negative: disabled (tokens refused, AccountDisabled)
	Created     time.Time
	Updated     time.Time
}

// Verifier is what the store keeps of a console account password: PBKDF2-
// SHA256 over the password hash the console sends (hex SHA-256 of PID LE ‖
// 02 65 43 46 ‖ password; nintendo-wiki "NNID Server", NintendoClients
// nnas.calc_password_hash), never the hash itself.
type Verifier struct {
	Salt       []byte
	Hash       []byte
	Iterations int
}

// verifierIterations is PBKDF2's work factor: the input is already a salted
// SHA-256, so this only slows an offline search of a stolen store.
const verifierIterations = 20000

// PasswordHash is the hash a console sends for password of account pid
// (password_type=hash).
func PasswordHash(pid types.PID, password string) string {
	b := binary.LittleEndian.AppendUint32(nil, uint32(pid))
	b = append(b, 0x02, 0x65, 0x43, 0x46)
	sum := sha256.Sum256(append(b, password...))
	return hex.EncodeToString(sum[:])
}

// NewVerifier makes the verifier of a password hash (PasswordHash's form).
func NewVerifier(passwordHash string) (Verifier, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return Verifier{}, err
	}
	v := Verifier{Salt: salt, Iterations: verifierIterations}
	h, err := pbkdf2.Key(sha256.New, strings.ToLower(passwordHash), salt, v.Iterations, 32)
	v.Hash = h
	return v, err
}

// Check reports whether passwordHash (hex, any case) is the verified one.
func (v Verifier) Check(passwordHash string) bool {
	if v.Iterations <= 0 || v.Iterations > 10_000_000 || len(v.Hash) == 0 {
		return false
	}
	h, err := pbkdf2.Key(sha256.New, strings.ToLower(passwordHash), v.Salt, v.Iterations, len(v.Hash))
	return err == nil && hmac.Equal(h, v.Hash)
}

// NewNEXPassword draws a NEX password: 16 characters (the length of
// Nintendo's; Cemu keeps at most 64) of letters and digits.
func NewNEXPassword() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Store errors.
var (
	ErrNoNNID      = errors.New("credentials: no such NNID")
	ErrNNIDExists  = errors.New("credentials: NNID or PID taken")
	ErrBadNNID     = errors.New("credentials: bad NNID")
	ErrNoSecret    = errors.New("credentials: no token secret")
	ErrNoNEXServer = errors.New("credentials: no NEX server for this game server id")
)

// CheckUserID refuses an NNID that is not 6 to 16 letters, digits, '-', '_'
// or '.' (the console's rules).
func CheckUserID(id string) error {
	if len(id) < 6 || len(id) > 16 {
		return fmt.Errorf("%w: %q has %d characters, want 6 to 16", ErrBadNNID, id, len(id))
	}
	for _, r := range id {
		if r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("%w: %q has %q", ErrBadNNID, id, r)
		}
	}
	return nil
}

// Store keeps NNIDs, their NEX accounts and the token secret (nex/accounts
// for SQLite, nex/pgstore for PostgreSQL, both through internal/sqlstore).
type Store interface {
	// TokenSecret returns the server's 32-byte token secret, creating it on
	// first use (every process on one store shares it).
	TokenSecret(ctx context.Context) ([]byte, error)
	// CreateNNID creates n and its NEX account (keys derived from
	// n.NEXPassword) in one transaction; PID 0 picks the next free one.
	CreateNNID(ctx context.Context, n NNID, v Verifier) (NNID, error)
	// NNIDByUserID finds an NNID (case-insensitively), NNIDByPID by PID;
	// ErrNoNNID when none.
	NNIDByUserID(ctx context.Context, userID string) (NNID, Verifier, error)
	NNIDByPID(ctx context.Context, pid types.PID) (NNID, Verifier, error)
	// SetNNIDPassword replaces the account password's verifier.
	SetNNIDPassword(ctx context.Context, pid types.PID, v Verifier) error
	// SetAccessLevel changes an NNID's access level (negative disables it).
	SetAccessLevel(ctx context.Context, pid types.PID, level int8) error
	// NNIDs lists every NNID in PID order.
	NNIDs(ctx context.Context) ([]NNID, error)
}

// NEXServer is where a game's NEX authentication server is, as the account
// services hand it out (NNAS nex_token host and port, NASC locator).
type NEXServer struct {
	Host string // an IPv4 literal: Cemu keeps 15 characters of nex_token's host
	Port int
}
