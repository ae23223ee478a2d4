package nnas

import (
	"testing"
)

// FuzzParseTokenRequest feeds access token request forms to the parser.
func FuzzParseTokenRequest(f *testing.F) {
	f.Add("grant_type=password&user_id=WiiUPlayer&password=2b5cba4d2a4e3f0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899&password_type=hash")
	f.Add("grant_type=refresh_token&refresh_token=00112233445566778899aabbccddeeff00112233")
	f.Add("grant_type=%zz")
	f.Fuzz(func(t *testing.T, body string) {
		r, err := ParseTokenRequest(body)
		if err == nil && r.GrantType != "password" && r.GrantType != "refresh_token" {
			t.Fatalf("accepted grant type %q", r.GrantType)
		}
	})
}

// FuzzParsePerson feeds account creation bodies to the parser.
func FuzzParsePerson(f *testing.F) {
	f.Add([]byte(`<person><birth_date>1990-05-04</birth_date><user_id>NewPlayer</user_id><password>s3cret-pw</password>` +
		`<country>US</country><email><address>a@b.c</address></email><mii><name>N</name><data>AAEC</data></mii></person>`))
	f.Add([]byte(`<person><user_id>x</user_id></person>`))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><person>&a;</person>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePerson(b)
		if err == nil && (len(p.Password) < 6 || len(p.UserID) < 6) {
			t.Fatalf("accepted %+v", p)
		}
	})
}
