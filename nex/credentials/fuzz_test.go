package credentials

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// FuzzCheck feeds token strings to a checker that accepts every format: no
// panic, and anything accepted is a NEX token of the PID asked for.
func FuzzCheck(f *testing.F) {
	k := testKeys(f)
	pk, _ := ParsePretendoKey(strings.Repeat("1f", 32))
	good := Token{Type: TypeNEX, PID: 42, Expires: t0.Add(time.Hour)}
	f.Add(base64.StdEncoding.EncodeToString(k.Seal(good)), uint64(42))
	f.Add(NintendoBase64(pk.Seal(good)), uint64(42))
	f.Add("eyJhbGciOiJSUzI1NiJ9.e30.AAAA", uint64(1))
	f.Add("", uint64(0))
	c := &Checker{Policy: PolicyRequired, Keys: k, Pretendo: pk, Now: func() time.Time { return t0 }}
	f.Fuzz(func(t *testing.T, token string, pid uint64) {
		got, err := c.Check(token, types.PID(pid))
		if err == nil && (got.PID != types.PID(pid) || got.Type != TypeNEX) {
			t.Fatalf("accepted %+v for PID %d", got, pid)
		}
	})
}

// FuzzOpenOAuth feeds bearer tokens to OpenOAuth.
func FuzzOpenOAuth(f *testing.F) {
	k := testKeys(f)
	f.Add(k.SealOAuth(OAuthToken{Type: TypeAccess, PID: 7, Expires: t0.Add(time.Hour)}))
	f.Add(k.SealOAuth(OAuthToken{Type: TypeRefresh, PID: 7, Expires: t0.Add(time.Hour)}))
	f.Add("zz")
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []uint8{TypeAccess, TypeRefresh} {
			if got, err := k.OpenOAuth(s, typ, t0); err == nil && got.Type != typ {
				t.Fatalf("type %d accepted as %d", got.Type, typ)
			}
		}
	})
}

// FuzzVerifyIDToken feeds JWTs to a verifier with one pinned key.
func FuzzVerifyIDToken(f *testing.F) {
	iss, err := NewIssuer("https://baas.example")
	if err != nil {
		f.Fatal(err)
	}
	jwks, _ := iss.JWKS()
	path := filepath.Join(f.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		f.Fatal(err)
	}
	v, err := NewIDTokenVerifier(context.Background(), path)
	if err != nil {
		f.Fatal(err)
	}
	tok, _ := iss.Mint(0x0123456789abcdef, 1, t0, time.Hour)
	f.Add(tok)
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := v.Verify(s, t0); err == nil && id.PID == 0 && s != tok {
			t.Fatalf("accepted %q as %+v", s, id)
		}
	})
}
