package credentials

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/gamewire/gamewire/nex/types"
)

// Switch ID tokens: the BaaS id token a Switch game presents in
// AuthenticationInfo (token type 2, NEX 4) — an RS256 JWT whose sub is the
// user id (16 hex digits, the PID), aud the game-server audience
// (Nintendo's is ed9e2f05d286f7b8), typ "id_token", and nintendo.ai the
// application (title) id (nintendo-wiki "BaaS", "Tokens";
// github.com/PretendoNetwork/nintendo-wiki docs/switch/). A revival pins the
// key set of the issuer it trusts (its BaaS replacement's /1.0.0/certificates,
// or a file) and never follows a token's jku.

// DefaultAudience is the aud of Nintendo's BaaS id tokens.
const DefaultAudience = "ed9e2f05d286f7b8"

// MaxIDTokenLen bounds an ID token (Nintendo's are about 1 KiB).
const MaxIDTokenLen = 8 << 10

// maxJWKS bounds a key set read from a file or a URL.
const maxJWKS = 1 << 20

// Errors of ID token checks.
var (
	ErrBadSignature = errors.New("credentials: ID token signature does not verify with the pinned keys")
	ErrWrongTitle   = errors.New("credentials: ID token is for another title")
	ErrBadClaims    = errors.New("credentials: ID token claims refused")
)

// IDToken is what an accepted ID token says.
type IDToken struct {
	PID     types.PID
	TitleID uint64
	Expires time.Time
	Issuer  string
}

// idClaims are the claims checked.
type idClaims struct {
	jwt.Claims
	Typ      string `json:"typ"`
	Nintendo struct {
		AI string `json:"ai"`
	} `json:"nintendo"`
}

// IDTokenVerifier checks Switch ID tokens against pinned keys.
type IDTokenVerifier struct {
	// Issuer, when not empty, is the iss tokens must carry.
	Issuer string
	// Audience is the aud tokens must carry; default DefaultAudience.
	Audience string
	// TitleID, when not 0, is the nintendo.ai tokens must carry: a token
	// minted for another title is refused.
	TitleID uint64
	// Leeway is the clock skew allowed on exp, iat and nbf; default 1 minute.
	Leeway time.Duration

	mu      sync.Mutex
	keys    jose.JSONWebKeySet
	url     string
	fetched time.Time
	client  *http.Client
}

// NewIDTokenVerifier pins the key set at where: a file (JSON Web Key Set) or
// an http(s) URL, fetched now and again (at most once a minute) when a token
// names a key id it does not have (keys rotate).
func NewIDTokenVerifier(ctx context.Context, where string) (*IDTokenVerifier, error) {
	v := &IDTokenVerifier{}
	if strings.HasPrefix(where, "http://") || strings.HasPrefix(where, "https://") {
		v.url = where
		v.client = &http.Client{Timeout: 10 * time.Second}
		if err := v.fetch(ctx); err != nil {
			return nil, err
		}
		return v, nil
	}
	b, err := readLimited(where)
	if err != nil {
		return nil, fmt.Errorf("credentials: key set %s: %w", where, err)
	}
	if err := v.SetKeys(b); err != nil {
		return nil, fmt.Errorf("credentials: key set %s: %w", where, err)
	}
	return v, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxJWKS+1))
	if err == nil && len(b) > maxJWKS {
		err = fmt.Errorf("larger than %d bytes", maxJWKS)
	}
	return b, err
}

// SetKeys replaces the pinned keys with a JSON Web Key Set. Only RSA public
// keys are kept.
func (v *IDTokenVerifier) SetKeys(jwks []byte) error {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		return fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	var keep jose.JSONWebKeySet
	for _, k := range set.Keys {
		if _, ok := k.Key.(*rsa.PublicKey); ok {
			keep.Keys = append(keep.Keys, k)
		}
	}
	if len(keep.Keys) == 0 {
		return errors.New("no RSA public key in the key set")
	}
	v.mu.Lock()
	v.keys = keep
	v.mu.Unlock()
	return nil
}

func (v *IDTokenVerifier) fetch(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.url, nil)
	if err != nil {
		return fmt.Errorf("credentials: key set %s: %w", v.url, err)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return fmt.Errorf("credentials: key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("credentials: key set %s: HTTP %s", v.url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS+1))
	if err == nil && len(b) > maxJWKS {
		err = fmt.Errorf("larger than %d bytes", maxJWKS)
	}
	if err == nil {
		err = v.SetKeys(b)
	}
	if err != nil {
		return fmt.Errorf("credentials: key set %s: %w", v.url, err)
	}
	v.mu.Lock()
	v.fetched = time.Now()
	v.mu.Unlock()
	return nil
}

// key returns the pinned key named kid (the only key when kid is empty and
// one is pinned), refetching a URL key set once a minute at most.
func (v *IDTokenVerifier) key(kid string) (*jose.JSONWebKey, bool) {
	find := func() (*jose.JSONWebKey, bool) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if kid == "" && len(v.keys.Keys) == 1 {
			return &v.keys.Keys[0], true
		}
		if ks := v.keys.Key(kid); len(ks) > 0 && kid != "" {
			return &ks[0], true
		}
		return nil, false
	}
	if k, ok := find(); ok {
		return k, true
	}
	v.mu.Lock()
	stale := v.url != "" && time.Since(v.fetched) > time.Minute
	v.mu.Unlock()
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if v.fetch(ctx) == nil {
			return find()
		}
	}
	return nil, false
}

// Verify checks an ID token at time now: RS256 only, signed by a pinned key,
// iss (when set), aud, typ id_token, exp/nbf/iat within Leeway, sub a 16-digit
// hex user id, nintendo.ai the title (when TitleID is set).
func (v *IDTokenVerifier) Verify(token string, now time.Time) (IDToken, error) {
	if len(token) > MaxIDTokenLen {
		return IDToken{}, fmt.Errorf("%w: %d bytes, at most %d", ErrMalformed, len(token), MaxIDTokenLen)
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return IDToken{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(tok.Headers) != 1 {
		return IDToken{}, fmt.Errorf("%w: %d signatures", ErrMalformed, len(tok.Headers))
	}
	key, ok := v.key(tok.Headers[0].KeyID)
	if !ok {
		return IDToken{}, fmt.Errorf("%w: no pinned key %q", ErrBadSignature, tok.Headers[0].KeyID)
	}
	var c idClaims
	if err := tok.Claims(key.Key, &c); err != nil {
		return IDToken{}, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	aud := v.Audience
	if aud == "" {
		aud = DefaultAudience
	}
	leeway := v.Leeway
	if leeway == 0 {
		leeway = time.Minute
	}
	if c.Expiry == nil {
		return IDToken{}, fmt.Errorf("%w: no exp", ErrBadClaims)
	}
	if err := c.Claims.ValidateWithLeeway(jwt.Expected{Issuer: v.Issuer, AnyAudience: jwt.Audience{aud}, Time: now}, leeway); err != nil {
		if errors.Is(err, jwt.ErrExpired) {
			return IDToken{}, fmt.Errorf("%w: %w", ErrExpired, err)
		}
		return IDToken{}, fmt.Errorf("%w: %w", ErrBadClaims, err)
	}
	if c.Typ != "id_token" {
		return IDToken{}, fmt.Errorf("%w: typ %q, want id_token", ErrBadClaims, c.Typ)
	}
	pid, err := strconv.ParseUint(c.Subject, 16, 64)
	if err != nil || len(c.Subject) != 16 {
		return IDToken{}, fmt.Errorf("%w: sub %q is not a 16-digit hex user id", ErrBadClaims, c.Subject)
	}
	var title uint64
	if c.Nintendo.AI != "" {
		if title, err = strconv.ParseUint(c.Nintendo.AI, 16, 64); err != nil {
			return IDToken{}, fmt.Errorf("%w: nintendo.ai %q", ErrBadClaims, c.Nintendo.AI)
		}
	}
	if v.TitleID != 0 && title != v.TitleID {
		return IDToken{}, fmt.Errorf("%w: %016x, this server is %016x", ErrWrongTitle, title, v.TitleID)
	}
	return IDToken{PID: types.PID(pid), TitleID: title, Expires: c.Expiry.Time(), Issuer: c.Issuer}, nil
}

// Issuer mints Switch-style ID tokens: for tests and private servers whose
// own BaaS stand-in signs them (gamewire keygen switch-issuer / switch-token).
type Issuer struct {
	Key *rsa.PrivateKey
	KID string
	// Issuer (iss) and Audience (aud; default DefaultAudience).
	Issuer, Audience string
}

// NewIssuer generates a 2048-bit RSA issuer key with a random key id.
func NewIssuer(iss string) (*Issuer, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Issuer{Key: k, KID: fmt.Sprintf("%x", id), Issuer: iss}, nil
}

// JWKS returns the issuer's public key set (what verifiers pin).
func (i *Issuer) JWKS() ([]byte, error) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &i.Key.PublicKey, KeyID: i.KID, Algorithm: string(jose.RS256), Use: "sig"}}}
	return json.MarshalIndent(set, "", "  ")
}

// Mint signs an ID token for user pid and title, valid for ttl from now.
func (i *Issuer) Mint(pid types.PID, title uint64, now time.Time, ttl time.Duration) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: i.Key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", i.KID))
	if err != nil {
		return "", err
	}
	aud := i.Audience
	if aud == "" {
		aud = DefaultAudience
	}
	var jti [16]byte
	_, _ = rand.Read(jti[:])
	c := idClaims{
		Claims: jwt.Claims{Issuer: i.Issuer, Subject: fmt.Sprintf("%016x", uint64(pid)), Audience: jwt.Audience{aud},
			Expiry: jwt.NewNumericDate(now.Add(ttl)), IssuedAt: jwt.NewNumericDate(now), ID: fmt.Sprintf("%x", jti)},
		Typ: "id_token",
	}
	c.Nintendo.AI = fmt.Sprintf("%016x", title)
	return jwt.Signed(signer).Claims(c).Serialize()
}

// MarshalPrivateKey returns the issuer's key as PEM (PKCS#8) with its key id
// in a header.
func (i *Issuer) MarshalPrivateKey() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(i.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Key-Id": i.KID}, Bytes: der}), nil
}

// ParseIssuer reads a key MarshalPrivateKey wrote.
func ParseIssuer(pemBytes []byte, iss string) (*Issuer, error) {
	blk, _ := pem.Decode(pemBytes)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("credentials: issuer key: no PEM PRIVATE KEY block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("credentials: issuer key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("credentials: issuer key is not RSA")
	}
	return &Issuer{Key: rk, KID: blk.Headers["Key-Id"], Issuer: iss}, nil
}
