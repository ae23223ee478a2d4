package credentials

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/types"
)

// CheckAuth is an auth.Server.CheckToken: the login's AuthenticationInfo
// token checked for the account logging in.
func (c *Checker) CheckAuth(ctx context.Context, a auth.Account, info *auth.AuthenticationInfo) error {
	if err := c.disabled(ctx, a.PID); err != nil {
		return err
	}
	if info == nil {
		return c.Login(a.PID, "", false)
	}
	return c.Login(a.PID, info.Token, true)
}

// CheckRegister is a secure.Server.CheckLogin (nex.Server.CheckRegister):
// RegisterEx's login data checked for the connection's PID; Register (no
// login data) passes unless the policy requires a token.
func (c *Checker) CheckRegister(ctx context.Context, pid types.PID, login *secure.LoginData) error {
	if err := c.disabled(ctx, pid); err != nil {
		return err
	}
	if login == nil {
		return c.Login(pid, "", false)
	}
	return c.Login(pid, login.Token, true)
}

// disabled refuses a disabled account (Disabled).
func (c *Checker) disabled(ctx context.Context, pid types.PID) error {
	if c == nil || c.Disabled == nil {
		return nil
	}
	off, err := c.Disabled(ctx, pid)
	if err != nil {
		return err
	}
	if off {
		return refuse(fmt.Errorf("%w: PID %d", ErrDisabled, pid))
	}
	return nil
}

// ValidateSwitch is an auth.Server.ValidateToken for Switch users, who have
// no NEX password: the AuthenticationInfo's token must be an ID token the
// pinned keys verify, for user (the PID in decimal) and this title. The
// account is the store's when it has one, else one made up of the PID (the
// ticket is sealed with a fresh key the server hands back as pSourceKey, so
// no password is needed).
func (c *Checker) ValidateSwitch(accts auth.Accounts) func(ctx context.Context, user string, info auth.AuthenticationInfo) (auth.Account, error) {
	return func(ctx context.Context, user string, info auth.AuthenticationInfo) (auth.Account, error) {
		pid, err := strconv.ParseUint(user, 10, 64)
		if err != nil {
			return auth.Account{}, fmt.Errorf("%w: user %q is not a PID in decimal", types.RendezVousInvalidUsername, user)
		}
		if !LooksLikeJWT(info.Token) {
			return auth.Account{}, refuse(fmt.Errorf("%w: not a Switch ID token (token type %d)", ErrMalformed, info.TokenType))
		}
		if _, err := c.Check(info.Token, types.PID(pid)); err != nil {
			return auth.Account{}, err
		}
		a, err := accts.AccountByPID(ctx, types.PID(pid))
		if errors.Is(err, auth.ErrNoAccount) {
			return auth.Account{PID: types.PID(pid), Name: user}, nil
		}
		return a, err
	}
}
