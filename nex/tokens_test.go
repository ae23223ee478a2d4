package nex

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// forge changes one character of a token's MAC.
func forge(tok string) string {
	b := []byte(tok)
	if b[60] == 'A' {
		b[60] = 'B'
	} else {
		b[60] = 'A'
	}
	return string(b)
}

// TestLoginTokenPolicy logs in to a server whose token policy is required
// (nex/credentials.Checker as auth.Server.CheckToken and
// Server.CheckRegister): a password login with the player's own token in
// LoginEx and RegisterEx succeeds; without a token, with another player's,
// an expired one, or a forged one it is refused with the protocol's result.
func TestLoginTokenPolicy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys, err := credentials.NewKeys(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c := &credentials.Checker{Policy: credentials.PolicyRequired, Keys: keys, GameServerID: 0x1010EB00}
	cfg := prudp.Config{}
	srv := &Server{Config: cfg, Auth: auth.Server{CheckToken: c.CheckAuth}, CheckRegister: c.CheckRegister}
	addr := startServer(t, srv)
	tok := func(pid types.PID, exp time.Time, gsid uint32) string {
		return base64.StdEncoding.EncodeToString(keys.Seal(credentials.Token{Type: credentials.TypeNEX, System: credentials.SystemWiiU,
			PID: pid, Expires: exp, GameServerID: gsid}))
	}
	login := func(token, registerToken string, noInfo bool) error {
		lc := LoginConfig{User: "1000", Password: "hunter2", Config: cfg}
		if !noInfo {
			lc.AuthInfo = &auth.AuthenticationInfo{Token: token, NGSVersion: 3, HasV3Fields: true, TokenType: 1}
			lc.LoginData = &secure.LoginData{Class: secure.NintendoLoginDataName, Token: registerToken}
		}
		sess, err := Login(ctx, addr, lc)
		if err == nil {
			closeSession(t, sess)
		}
		return err
	}
	good := tok(1000, now.Add(time.Hour), 0x1010EB00)
	if err := login(good, good, false); err != nil {
		t.Fatalf("own token: %v", err)
	}
	for _, tc := range []struct {
		name            string
		token, register string
		noInfo          bool
		want            types.Result
	}{
		{"no token", "", "", true, types.AuthenticationValidationFailed},
		{"other player", tok(1001, now.Add(time.Hour), 0x1010EB00), good, false, types.AuthenticationPrincipalIDUnmatched},
		{"expired", tok(1000, now.Add(-time.Second), 0x1010EB00), good, false, types.AuthenticationTokenExpired},
		{"other game", tok(1000, now.Add(time.Hour), 0x1010EA00), good, false, types.AuthenticationValidationFailed},
		{"forged", forge(good), good, false, types.AuthenticationValidationFailed},
		{"other player at RegisterEx", good, tok(1001, now.Add(time.Hour), 0x1010EB00), false, types.AuthenticationPrincipalIDUnmatched},
		{"no token at RegisterEx", good, "", false, types.AuthenticationValidationFailed},
	} {
		err := login(tc.token, tc.register, tc.noInfo)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
