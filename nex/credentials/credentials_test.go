package credentials

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func testKeys(t testing.TB) *Keys {
	k, err := NewKeys(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestCheckResults(t *testing.T) {
	k := testKeys(t)
	good := Token{Type: TypeNEX, System: SystemWiiU, PID: 1800000123, Expires: t0.Add(time.Hour), TitleID: 0x000500001010EC00, GameServerID: 0x1010EB00}
	c := &Checker{Policy: PolicyRequired, Keys: k, GameServerID: 0x1010EB00, Now: func() time.Time { return t0 }}
	enc := func(t Token) string { return base64.StdEncoding.EncodeToString(k.Seal(t)) }
	if got, err := c.Check(enc(good), good.PID); err != nil || got != good {
		t.Fatalf("good token: %+v, %v", got, err)
	}
	// NASC base64 decodes the same.
	if _, err := c.Check(NintendoBase64(k.Seal(good)), good.PID); err != nil {
		t.Fatalf("NASC base64: %v", err)
	}
	other, err := NewKeys(bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	expired, wrongGame, disabled, service := good, good, good, good
	expired.Expires = t0
	wrongGame.GameServerID = 0x1010EA00
	disabled.AccessLevel = -1
	service.Type = TypeService
	tampered := k.Seal(good)
	tampered[5] ^= 1
	for _, tc := range []struct {
		name  string
		token string
		pid   types.PID
		want  types.Result
		err   error
	}{
		{"expired", enc(expired), good.PID, types.AuthenticationTokenExpired, ErrExpired},
		{"other player", enc(good), good.PID + 1, types.AuthenticationPrincipalIDUnmatched, ErrWrongPID},
		{"other game", enc(wrongGame), good.PID, types.AuthenticationValidationFailed, ErrWrongGame},
		{"disabled", enc(disabled), good.PID, types.RendezVousAccountDisabled, ErrDisabled},
		{"service token", enc(service), good.PID, types.AuthenticationValidationFailed, ErrWrongType},
		{"tampered", base64.StdEncoding.EncodeToString(tampered), good.PID, types.AuthenticationValidationFailed, ErrBadMAC},
		{"other key", base64.StdEncoding.EncodeToString(other.Seal(good)), good.PID, types.AuthenticationValidationFailed, ErrBadMAC},
		{"garbage", "not base64!", good.PID, types.AuthenticationValidationFailed, ErrMalformed},
		{"short", "AAAA", good.PID, types.AuthenticationValidationFailed, ErrMalformed},
		{"huge", strings.Repeat("A", 4096), good.PID, types.AuthenticationValidationFailed, ErrMalformed},
	} {
		_, err := c.Check(tc.token, tc.pid)
		if !errors.Is(err, tc.err) || Result(err) != tc.want {
			t.Errorf("%s: %v (result %v), want %v and %v", tc.name, err, Result(err), tc.err, tc.want)
		}
	}
}

func TestLoginPolicy(t *testing.T) {
	k := testKeys(t)
	tok := base64.StdEncoding.EncodeToString(k.Seal(Token{Type: TypeNEX, PID: 5, Expires: t0.Add(time.Hour)}))
	now := func() time.Time { return t0 }
	for _, tc := range []struct {
		p             Policy
		none, bad, ok bool // accepted without a token, with a bad one, with a good one
	}{
		{PolicyRequired, false, false, true},
		{PolicyOptional, true, false, true},
		{PolicyOff, true, true, true},
	} {
		c := &Checker{Policy: tc.p, Keys: k, Now: now}
		if got := c.Login(5, "", false) == nil; got != tc.none {
			t.Errorf("%v without a token: accepted %v", tc.p, got)
		}
		if got := c.Login(6, tok, true) == nil; got != tc.bad {
			t.Errorf("%v with another's token: accepted %v", tc.p, got)
		}
		if got := c.Login(5, tok, true) == nil; got != tc.ok {
			t.Errorf("%v with a good token: accepted %v", tc.p, got)
		}
	}
	if err := (&Checker{Policy: PolicyRequired, Keys: k}).Login(5, "", false); Result(err) != types.AuthenticationValidationFailed {
		t.Errorf("required without a token: %v", err)
	}
}

func TestDefaultPolicy(t *testing.T) {
	for v, want := range map[int]Policy{0: PolicyOptional, 10203: PolicyOptional, 20600: PolicyRequired,
		30500: PolicyOptional, 40000: PolicyRequired, 40601: PolicyRequired} {
		if got := DefaultPolicy(v); got != want {
			t.Errorf("DefaultPolicy(%d) = %v, want %v", v, got, want)
		}
	}
	for _, s := range []string{"required", "optional", "off"} {
		p, err := ParsePolicy(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParsePolicy("maybe"); err == nil {
		t.Error("ParsePolicy(maybe): no error")
	}
}

func TestOAuthTokens(t *testing.T) {
	k := testKeys(t)
	a := k.SealOAuth(OAuthToken{Type: TypeAccess, PID: 1800000123, Expires: t0.Add(AccessTokenExpiry)})
	r := k.SealOAuth(OAuthToken{Type: TypeRefresh, PID: 1800000123, Expires: t0.Add(RefreshTokenExpiry)})
	if len(a) != 32 || len(r) != 40 {
		t.Fatalf("lengths %d and %d, want 32 and 40", len(a), len(r))
	}
	if got, err := k.OpenOAuth(a, TypeAccess, t0); err != nil || got.PID != 1800000123 {
		t.Fatalf("access: %+v %v", got, err)
	}
	if _, err := k.OpenOAuth(r, TypeRefresh, t0.Add(11*time.Hour)); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if _, err := k.OpenOAuth(a, TypeAccess, t0.Add(AccessTokenExpiry)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired access token: %v", err)
	}
	if _, err := k.OpenOAuth(r, TypeAccess, t0); !errors.Is(err, ErrMalformed) {
		t.Errorf("refresh token as access token: %v", err)
	}
	b := []byte(a)
	b[0] ^= 1
	if b[0] == a[0] || !isHex(b[0]) {
		b[0] = 'f'
		if a[0] == 'f' {
			b[0] = 'e'
		}
	}
	if _, err := k.OpenOAuth(string(b), TypeAccess, t0); !errors.Is(err, ErrBadMAC) && !errors.Is(err, ErrWrongType) {
		t.Errorf("tampered access token: %v", err)
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func TestPretendoTokens(t *testing.T) {
	key, err := ParsePretendoKey(strings.Repeat("1f", 32))
	if err != nil {
		t.Fatal(err)
	}
	tok := Token{System: System3DS, Type: TypeNEX, PID: 1750000000, Expires: t0.Add(time.Hour), TitleID: 0x0004013000003202}
	raw := key.Seal(tok)
	if len(raw) != PretendoTokenLen || len(NintendoBase64(raw)) != 48 {
		t.Fatalf("token of %d bytes, %d characters", len(raw), len(NintendoBase64(raw)))
	}
	c := &Checker{Policy: PolicyRequired, Pretendo: key, Now: func() time.Time { return t0 }}
	if got, err := c.Check(NintendoBase64(raw), tok.PID); err != nil || got != tok {
		t.Fatalf("Pretendo token: %+v %v", got, err)
	}
	other, _ := ParsePretendoKey(strings.Repeat("2e", 32))
	if _, err := (&Checker{Pretendo: other, Now: c.Now}).Check(NintendoBase64(raw), tok.PID); Result(err) != types.AuthenticationValidationFailed {
		t.Errorf("other key: %v", err)
	}
	if _, err := c.Check(NintendoBase64(raw), tok.PID+1); Result(err) != types.AuthenticationPrincipalIDUnmatched {
		t.Errorf("other PID: %v", err)
	}
	if _, err := ParsePretendoKey("abcd"); err == nil {
		t.Error("short key accepted")
	}
}

func TestSwitchIDTokens(t *testing.T) {
	iss, err := NewIssuer("https://baas.example")
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := iss.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := NewIDTokenVerifier(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	const title = 0x01009B90006DC000
	v.TitleID, v.Issuer = title, "https://baas.example"
	const pid = types.PID(0x0123456789abcdef)
	tok, err := iss.Mint(pid, title, t0, 3*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !LooksLikeJWT(tok) {
		t.Fatalf("LooksLikeJWT(%q) is false", tok)
	}
	id, err := v.Verify(tok, t0.Add(time.Minute))
	if err != nil || id.PID != pid || id.TitleID != title {
		t.Fatalf("Verify: %+v %v", id, err)
	}
	c := &Checker{Policy: PolicyRequired, Switch: v, Now: func() time.Time { return t0 }}
	if _, err := c.Check(tok, pid); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if _, err := c.Check(tok, pid+1); Result(err) != types.AuthenticationPrincipalIDUnmatched {
		t.Errorf("other PID: %v", err)
	}
	if _, err := v.Verify(tok, t0.Add(4*time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
	otherTitle, _ := iss.Mint(pid, 0x0100000000010000, t0, time.Hour)
	if _, err := v.Verify(otherTitle, t0); !errors.Is(err, ErrWrongTitle) {
		t.Errorf("other title: %v", err)
	}
	stranger, _ := NewIssuer("https://baas.example")
	stranger.KID = iss.KID
	forged, _ := stranger.Mint(pid, title, t0, time.Hour)
	if _, err := v.Verify(forged, t0); !errors.Is(err, ErrBadSignature) {
		t.Errorf("other key: %v", err)
	}
	// alg none and HS256 are refused before any key is looked at.
	parts := strings.Split(tok, ".")
	for _, h := range []string{`{"alg":"none","kid":"` + iss.KID + `"}`, `{"alg":"HS256","kid":"` + iss.KID + `"}`} {
		bad := base64.RawURLEncoding.EncodeToString([]byte(h)) + "." + parts[1] + "." + parts[2]
		if _, err := v.Verify(bad, t0); err == nil {
			t.Errorf("%s accepted", h)
		}
	}
	pemKey, err := iss.MarshalPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseIssuer(pemKey, iss.Issuer)
	if err != nil || back.KID != iss.KID {
		t.Fatalf("ParseIssuer: %v", err)
	}
	again, _ := back.Mint(pid, title, t0, time.Hour)
	if _, err := v.Verify(again, t0); err != nil {
		t.Errorf("token of the reread key: %v", err)
	}
}

func TestNintendoBase64(t *testing.T) {
	b := []byte{0xfb, 0xff, 0xfe, 0x01}
	s := NintendoBase64(b)
	if s != ".--.AQ**" {
		t.Errorf("NintendoBase64 = %q", s)
	}
	back, err := ParseNintendoBase64(s)
	if err != nil || !bytes.Equal(back, b) {
		t.Errorf("ParseNintendoBase64 = %x %v", back, err)
	}
}
