package credentials

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Policy is how a NEX server treats the token of a login.
type Policy uint8

const (
	// PolicyOptional checks a token when the client sends one and lets a
	// login without one through on its password (Nintendo's NEX 1 and NEX 3
	// servers, most Wii U titles: nintendo-wiki "Ticket Granting (10)").
	PolicyOptional Policy = iota
	// PolicyRequired refuses a login without a valid token (plain Login,
	// LoginEx without AuthenticationInfo, Register, RegisterEx without login
	// data) with Authentication::ValidationFailed, as NEX 2 and NEX 4+
	// servers and Pretendo's do.
	PolicyRequired
	// PolicyOff ignores tokens: the password alone decides.
	PolicyOff
)

// ParsePolicy reads a policy: required, optional or off.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "required":
		return PolicyRequired, nil
	case "optional":
		return PolicyOptional, nil
	case "off":
		return PolicyOff, nil
	}
	return 0, fmt.Errorf("token policy %q: want required, optional or off", s)
}

func (p Policy) String() string {
	switch p {
	case PolicyRequired:
		return "required"
	case PolicyOff:
		return "off"
	}
	return "optional"
}

// DefaultPolicy is the policy of a game of NEX version v (major*10000 +
// minor*100 + patch; 0 when unknown): required on NEX 2 and NEX 4 and later,
// whose servers enforce the token in LoginEx, optional on NEX 1 and 3 and
// when the version is unknown (nintendo-wiki "Ticket Granting (10)").
func DefaultPolicy(v int) Policy {
	switch major := v / 10000; {
	case v == 0:
		return PolicyOptional
	case major == 2 || major >= 4:
		return PolicyRequired
	}
	return PolicyOptional
}

// Checker checks the tokens presented to one game's NEX server.
type Checker struct {
	Policy Policy
	// Keys authenticate gamewire's tokens; nil accepts none of them.
	Keys *Keys
	// Pretendo, when set, also accepts tokens of Pretendo's account server
	// made with this game's key.
	Pretendo *PretendoKey
	// GameServerID, when not 0, refuses gamewire tokens issued for another
	// game server (Pretendo's tokens carry none).
	GameServerID uint32
	// Switch, when set, checks BaaS ID tokens (JWTs).
	Switch *IDTokenVerifier
	// Disabled, when set, reports whether an account is disabled now (an
	// NNID with a negative access level): its logins are refused with
	// RendezVous::AccountDisabled whatever the policy and the token, so
	// disabling an account also stops the tokens it was handed before.
	Disabled func(ctx context.Context, pid types.PID) (bool, error)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// refuse wraps err with the NEX result a login is refused with.
func refuse(err error) error {
	var r types.Result
	switch {
	case errors.Is(err, ErrExpired):
		r = types.AuthenticationTokenExpired
	case errors.Is(err, ErrWrongPID):
		r = types.AuthenticationPrincipalIDUnmatched
	case errors.Is(err, ErrDisabled):
		r = types.RendezVousAccountDisabled
	default:
		r = types.AuthenticationValidationFailed
	}
	return fmt.Errorf("%w: %w", r, err)
}

// Result returns the NEX result an error of Check or Login carries
// (Authentication::ValidationFailed when it carries none).
func Result(err error) types.Result {
	var r types.Result
	if errors.As(err, &r) {
		return r
	}
	return types.AuthenticationValidationFailed
}

// Login decides a login by principal pid presenting token (present false:
// none was sent, as with Login or Register). It returns nil to let it
// through, or an error carrying the result to refuse it with (Result).
func (c *Checker) Login(pid types.PID, token string, present bool) error {
	if c == nil || c.Policy == PolicyOff {
		return nil
	}
	if !present || token == "" {
		if c.Policy == PolicyRequired {
			return refuse(ErrNoToken)
		}
		return nil
	}
	_, err := c.Check(token, pid)
	return err
}

// Check authenticates token and checks it against the principal logging in:
// a NEX token, not expired, of pid, for this game server, of an account not
// disabled. Errors carry the NEX result (Result).
func (c *Checker) Check(token string, pid types.PID) (Token, error) {
	if len(token) > MaxTokenLen && !LooksLikeJWT(token) {
		return Token{}, refuse(fmt.Errorf("%w: %d characters, at most %d", ErrMalformed, len(token), MaxTokenLen))
	}
	if LooksLikeJWT(token) {
		if c.Switch == nil {
			return Token{}, refuse(fmt.Errorf("%w: a Switch ID token, and no key set is pinned (serve --switch-jwks)", ErrMalformed))
		}
		id, err := c.Switch.Verify(token, c.now())
		if err != nil {
			return Token{}, refuse(err)
		}
		if id.PID != pid {
			return Token{}, refuse(fmt.Errorf("%w: token for %d, login as %d", ErrWrongPID, id.PID, pid))
		}
		return Token{Type: TypeNEX, System: SystemSwitch, PID: id.PID, Expires: id.Expires, TitleID: id.TitleID}, nil
	}
	raw, err := ParseNintendoBase64(strings.TrimSpace(token))
	if err != nil {
		return Token{}, refuse(err)
	}
	var t Token
	switch {
	case len(raw) == NEXTokenLen && c.Keys != nil:
		t, err = c.Keys.Open(raw)
		if err == nil && c.GameServerID != 0 && t.GameServerID != c.GameServerID {
			err = fmt.Errorf("%w: %08X, this server is %08X", ErrWrongGame, t.GameServerID, c.GameServerID)
		}
	case len(raw) == PretendoTokenLen && c.Pretendo != nil:
		t, err = c.Pretendo.Open(raw)
	default:
		err = fmt.Errorf("%w: %d bytes is no token this server accepts", ErrMalformed, len(raw))
	}
	if err != nil {
		return t, refuse(err)
	}
	switch {
	case t.Type != TypeNEX:
		err = fmt.Errorf("%w: %d, want NEX (%d)", ErrWrongType, t.Type, TypeNEX)
	case !c.now().Before(t.Expires):
		err = fmt.Errorf("%w at %s", ErrExpired, t.Expires.UTC().Format(time.RFC3339))
	case t.PID != pid:
		err = fmt.Errorf("%w: token for %d, login as %d", ErrWrongPID, t.PID, pid)
	case t.AccessLevel < 0:
		err = fmt.Errorf("%w: access level %d", ErrDisabled, t.AccessLevel)
	}
	if err != nil {
		return t, refuse(err)
	}
	return t, nil
}

// LooksLikeJWT reports whether token has a JWT's shape (three base64url parts,
// a JSON header, longer than any NASC or NNAS token): what a Switch presents.
func LooksLikeJWT(token string) bool {
	return len(token) > 96 && strings.HasPrefix(token, "eyJ") && strings.Count(token, ".") == 2 && !strings.ContainsAny(token, "*+/=")
}
