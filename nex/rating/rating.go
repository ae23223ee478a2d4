// Package rating serves the Rating protocol (118, nintendo-wiki "Rating
// (118)") as Pokémon X/Y and Omega Ruby/Alpha Sapphire use it: method 1
// hands out a rating session token and method 2 takes one back. Neither the
// methods' names nor the token's fields are public; the wiki calls the
// methods UnknownMethod0x1 and UnknownMethod0x2 and Pretendo Network's
// server (github.com/PretendoNetwork/pokemon-gen6, read for facts only)
// answers method 1 with one fixed token and method 2 with success. Here
// method 1 issues a fresh token (a 32-bit id and a key: 16 lowercase hex
// digits and a NUL, the form of the one public token) kept in a Store, and
// method 2 checks that the token was issued here, not too long ago, and
// records which player presented it. The other methods (ReportRatingStats,
// GetRanking, DeleteScore, UploadCommonData, GetCommonData) are described
// (nex/protocols/rating) but not served: Core::NotImplemented, as the
// game's Pretendo server answers them.
package rating

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	rt "github.com/gamewire/gamewire/nex/protocols/rating"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the Rating protocol's id.
const ProtocolID = rt.RatingProtocolID

// Defaults of Server's limits.
const (
	// DefaultTokensPerPlayer is how many tokens a player keeps: issuing
	// another drops its oldest.
	DefaultTokensPerPlayer = 8
	// DefaultTokenLifetime is how long a token is taken back.
	DefaultTokenLifetime = 24 * time.Hour
	// KeySize is a token key's size: 16 hex digits and a NUL.
	KeySize = 17
)

// Token is an issued rating session token.
type Token struct {
	ID     uint64
	Key    []byte
	Owner  types.PID
	Issued time.Time
}

// ErrTokenExists: a token with that id is already issued.
var ErrTokenExists = errors.New("rating: token id already issued")

// Store keeps the issued tokens and who presented them.
type Store interface {
	// IssueToken records t (ErrTokenExists when its id is taken), then
	// keeps only the newest keep tokens of t.Owner.
	IssueToken(ctx context.Context, t Token, keep int) error
	// UseToken records that pid presented token id with key at now (once per
	// player and token). A token not issued with that key, or issued before
	// notBefore, fails with an error wrapping Core::InvalidArgument.
	UseToken(ctx context.Context, pid types.PID, id uint64, key []byte, notBefore, now time.Time) error
	// TokenUsers returns the players who presented token id, in order.
	TokenUsers(ctx context.Context, id uint64) ([]types.PID, error)
}

// Server answers Rating.
type Server struct {
	rt.UnimplementedRating

	// Store keeps the tokens; nil keeps them in memory (Memory).
	Store Store
	// TokensPerPlayer: default DefaultTokensPerPlayer.
	TokensPerPlayer int
	// TokenLifetime: default DefaultTokenLifetime.
	TokenLifetime time.Duration
	// Rand draws token ids and keys; default crypto/rand.
	Rand io.Reader
	// Now returns the time; default time.Now.
	Now func() time.Time

	mem Memory
}

func (s *Server) store() Store {
	if s.Store != nil {
		return s.Store
	}
	return &s.mem
}

var _ rt.RatingHandler = (*Server)(nil)

// Register registers s for Rating on mux.
func (s *Server) Register(mux *rmc.Mux) { rt.RegisterRating(mux, s) }

// ServeRMC implements rmc.Handler through the generated codec.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return rt.ServeRating(s, ctx, c, out)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func caller(c *rmc.Call) (types.PID, error) {
	if c.Peer == nil || c.Peer.PID == 0 {
		return 0, types.RendezVousNotAuthenticated
	}
	return c.Peer.PID, nil
}

// newToken draws a token: a nonzero 32-bit id and a key of 16 lowercase hex
// digits and a NUL.
func (s *Server) newToken(owner types.PID) (Token, error) {
	rnd := s.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [12]byte
	for {
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return Token{}, fmt.Errorf("rating: token: %w", err)
		}
		if id := binary.LittleEndian.Uint32(b[:4]); id != 0 {
			key := make([]byte, KeySize)
			hex.Encode(key, b[4:])
			return Token{ID: uint64(id), Key: key, Owner: owner, Issued: s.now()}, nil
		}
	}
}

// issueAttempts bounds the draws of an id already taken.
const issueAttempts = 8

// UnknownMethod0x1 implements rt.RatingHandler: issues a new token to the
// caller.
func (s *Server) UnknownMethod0x1(ctx context.Context, c *rmc.Call) (rt.RatingSessionToken, error) {
	pid, err := caller(c)
	if err != nil {
		return rt.RatingSessionToken{}, err
	}
	keep := s.TokensPerPlayer
	if keep <= 0 {
		keep = DefaultTokensPerPlayer
	}
	for range issueAttempts {
		t, err := s.newToken(pid)
		if err != nil {
			return rt.RatingSessionToken{}, err
		}
		err = s.store().IssueToken(ctx, t, keep)
		if errors.Is(err, ErrTokenExists) {
			continue
		}
		if err != nil {
			return rt.RatingSessionToken{}, err
		}
		return rt.RatingSessionToken{Unknown1: t.ID, Unknown2: t.Key}, nil
	}
	return rt.RatingSessionToken{}, fmt.Errorf("%w: no free token id in %d draws", types.CoreUnknown, issueAttempts)
}

// UnknownMethod0x2 implements rt.RatingHandler: takes back a token issued
// here within the token lifetime (any player's: both sides of a battle may
// present one) and records that the caller presented it.
func (s *Server) UnknownMethod0x2(ctx context.Context, c *rmc.Call, token rt.RatingSessionToken) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	if len(token.Unknown2) > KeySize {
		return fmt.Errorf("%w: token key of %d bytes (tokens issued here have %d)", types.CoreInvalidArgument, len(token.Unknown2), KeySize)
	}
	life := s.TokenLifetime
	if life <= 0 {
		life = DefaultTokenLifetime
	}
	now := s.now()
	return s.store().UseToken(ctx, pid, token.Unknown1, token.Unknown2, now.Add(-life), now)
}

// UnknownToken is the error of a token not issued here (or expired).
func UnknownToken(id uint64) error {
	return fmt.Errorf("%w: rating session token %d was not issued here, or has expired", types.CoreInvalidArgument, id)
}
