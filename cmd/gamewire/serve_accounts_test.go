package main

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/nasc"
	"github.com/gamewire/gamewire/nex/nnas"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
	"github.com/gamewire/gamewire/prudp/kerberos"
	"github.com/gamewire/gamewire/prudp/lite"
)

// addWithStdin runs an accounts command that reads its password from stdin.
func addWithStdin(t *testing.T, password string, args ...string) string {
	t.Helper()
	out := &syncWriter{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := executeCLI(ctx, strings.NewReader(password+"\n"), out, out, append(args, "--password-stdin")...); err != nil {
		t.Fatalf("gamewire %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out.String()
}

func httpDo(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestServeAccountServices is issue 26's done-when on gamewire's side: serve
// with --account-listen and a required token policy; an NNID made with
// accounts nnid add logs in to NNAS with its password hash, gets a nex_token
// for the game server id, and logs in to the NEX server with the PID, the NEX
// password and the token (LoginEx, RegisterEx); a 3DS account's NASC LOGIN
// gives a locator and token that log in the same way; no token, another
// player's or a token of another game are refused with the protocol's codes;
// accounts nnid disable refuses the NNID's logins (AccountDisabled) and
// tokens (0108) until enable.
func TestServeAccountServices(t *testing.T) {
	dir := t.TempDir()
	addWithStdin(t, "correct horse", "accounts", "nnid", "add", "WiiUPlayer", "--pid", "1750000001", "--data", dir)
	addWithStdin(t, "3ds-nex-password", "accounts", "add", "--pid", "1800000123", "--data", dir)
	web := freeTCPAddr(t)
	addr, out, _ := startServeNEX(t, dir, "--account-listen", web, "--game-server-id", "1010EB00", "--token", "required")
	if !strings.Contains(out.String(), "tokens: required, game server id 1010EB00") || !strings.Contains(out.String(), "account services on http://"+web) {
		t.Fatalf("banner:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := "http://" + web

	// Wii U: NNAS.
	form := url.Values{"grant_type": {"password"}, "user_id": {"WiiUPlayer"}, "password_type": {"hash"},
		"password": {credentials.PasswordHash(1750000001, "correct horse")}}
	req, _ := http.NewRequest("POST", base+"/v1/api/oauth20/access_token/generate", strings.NewReader(form.Encode()))
	req.Header.Set("X-Nintendo-Client-ID", nnas.WiiUClientID)
	req.Header.Set("X-Nintendo-Client-Secret", nnas.WiiUClientSecret)
	st, body := httpDo(t, req)
	var o struct {
		Token string `xml:"access_token>token"`
	}
	if err := xml.Unmarshal(body, &o); st != 200 || err != nil {
		t.Fatalf("access token: %d %s", st, body)
	}
	req, _ = http.NewRequest("GET", base+"/v1/api/provider/nex_token/@me?game_server_id=1010EB00", nil)
	req.Header.Set("Authorization", "Bearer "+o.Token)
	st, body = httpDo(t, req)
	var nt struct {
		Host     string `xml:"host"`
		Password string `xml:"nex_password"`
		PID      uint64 `xml:"pid"`
		Port     int    `xml:"port"`
		Token    string `xml:"token"`
	}
	if err := xml.Unmarshal(body, &nt); st != 200 || err != nil || nt.PID != 1750000001 || "127.0.0.1:"+strconv.Itoa(nt.Port) != addr {
		t.Fatalf("nex_token: %d %s (serve at %s)", st, body, addr)
	}
	login := func(user, password, token string, class string) error {
		lc := nex.LoginConfig{User: user, Password: password, Config: prudp.Config{AccessKey: defaultAccessKey}}
		if token != "" {
			lc.AuthInfo = &auth.AuthenticationInfo{Token: token, NGSVersion: 3, HasV3Fields: true}
			lc.LoginData = &secure.LoginData{Class: class, Token: token}
		}
		sess, err := nex.Login(ctx, addr, lc)
		if err == nil {
			sess.Close(ctx)
		}
		return err
	}
	if err := login("1750000001", nt.Password, nt.Token, secure.NintendoLoginDataName); err != nil {
		t.Fatalf("NEX login with the nex_token: %v", err)
	}
	if err := login("1750000001", nt.Password, "", ""); !errors.Is(err, types.AuthenticationValidationFailed) {
		t.Errorf("NEX login without a token: %v", err)
	}
	if err := login("1750000001", "correct horse", nt.Token, secure.NintendoLoginDataName); !errors.Is(err, nex.ErrWrongPassword) {
		t.Errorf("NEX login with the console's account password: %v", err)
	}

	// Disabling the NNID stops the token it already has, and new ones.
	if _, err := runCLI(t, "accounts", "nnid", "disable", "wiiuplayer", "--data", dir); err != nil {
		t.Fatal(err)
	}
	if err := login("1750000001", nt.Password, nt.Token, secure.NintendoLoginDataName); !errors.Is(err, types.RendezVousAccountDisabled) {
		t.Errorf("NEX login of a disabled NNID: %v", err)
	}
	req, _ = http.NewRequest("POST", base+"/v1/api/oauth20/access_token/generate", strings.NewReader(form.Encode()))
	req.Header.Set("X-Nintendo-Client-ID", nnas.WiiUClientID)
	req.Header.Set("X-Nintendo-Client-Secret", nnas.WiiUClientSecret)
	if st, body := httpDo(t, req); st != 400 || !strings.Contains(string(body), "<code>0108</code>") {
		t.Errorf("access token of a disabled NNID: %d %s", st, body)
	}
	if _, err := runCLI(t, "accounts", "nnid", "enable", "WiiUPlayer", "--data", dir); err != nil {
		t.Fatal(err)
	}
	if err := login("1750000001", nt.Password, nt.Token, secure.NintendoLoginDataName); err != nil {
		t.Errorf("NEX login after enabling the NNID again: %v", err)
	}

	// 3DS: NASC.
	f := func(gameID string) string {
		return nasc.Encode("gameid", gameID, "titleid", "0004000000030600", "action", "LOGIN", "userid", "1800000123",
			"uidhmac", "0123abcd", "csnum", "CW123456789", "macadr", "40f407000001", "fcdcert", strings.Repeat("\x01", 272))
	}
	req, _ = http.NewRequest("POST", base+"/ac", strings.NewReader(f("1010EB00")))
	req.Header.Add("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Add("Content-Type", "application/x-www-form-urlencoded")
	st, body = httpDo(t, req)
	r, err := nasc.ParseRequest(body)
	if st != 200 || err != nil || r["returncd"] != "001" || r["locator"] != addr {
		t.Fatalf("NASC LOGIN: %d %q %v", st, body, err)
	}
	token3ds := credentials.NintendoBase64([]byte(r["token"]))
	if err := login("1800000123", "3ds-nex-password", token3ds, secure.AccountExtraInfoName); err != nil {
		t.Fatalf("NEX login with the NASC token: %v", err)
	}
	if err := login("1750000001", nt.Password, token3ds, secure.NintendoLoginDataName); !errors.Is(err, types.AuthenticationPrincipalIDUnmatched) {
		t.Errorf("NEX login with another player's token: %v", err)
	}
	req, _ = http.NewRequest("POST", base+"/ac", strings.NewReader(f("00003200")))
	st, body = httpDo(t, req)
	if r, _ := nasc.ParseRequest(body); r["returncd"] != nasc.CodeGameUnavailable {
		t.Errorf("NASC LOGIN for another game: %d %q", st, body)
	}
}

// TestServeSwitchIDTokens: serve --dialect nex-lite --switch-jwks pins the
// key set of keygen switch-issuer; a Switch-profile login (NEX 4
// ValidateAndRequestTicketWithCustomData, token type 2) with an ID token from
// that key for the user and title succeeds without a password (the ticket
// opens with the pSourceKey the server hands back); a token from another key,
// for another title, or for another user is refused.
func TestServeSwitchIDTokens(t *testing.T) {
	dir := t.TempDir()
	if _, err := runCLI(t, "keygen", "switch-issuer", "--out", filepath.Join(dir, "iss")); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "keygen", "switch-issuer", "--out", filepath.Join(dir, "other")); err != nil {
		t.Fatal(err)
	}
	const title = "01009B90006DC000"
	mint := func(key, pid, title string) string {
		s, err := runCLI(t, "keygen", "switch-token", "--key", filepath.Join(dir, key, "issuer.pem"), "--pid", pid, "--title-id", title)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	addr := freeTCPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runCLIContext(t, ctx, out, "serve", "--dialect", "nex-lite", "--listen", addr, "--data", filepath.Join(dir, "data"),
			"--switch-jwks", filepath.Join(dir, "iss", "jwks.json"), "--switch-title-id", title)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out)
		}
	}()
	lctx, lcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer lcancel()
	login := func(user, token string) error {
		sess, err := nex.Login(lctx, "ws://"+addr+"/", nex.LoginConfig{User: user,
			AuthInfo:   &auth.AuthenticationInfo{Token: token, NGSVersion: 4, HasV3Fields: true, TokenType: 2},
			Config:     prudp.Config{Dialect: prudp.NEXLite, AccessKey: defaultAccessKey, Port: 1, Kerberos: kerberos.Switch},
			Derivation: auth.DeriveSwitch, Options: auth.Options{NEX4: true},
			Dial: func(ctx context.Context, url string, c *prudp.Config) (*prudp.Conn, error) {
				return lite.Dial(ctx, url, c, nil)
			}})
		if err == nil {
			sess.Close(lctx)
		}
		return err
	}
	const user = "81985529216486895" // 0x0123456789abcdef
	good := mint("iss", user, title)
	for {
		err := login(user, good)
		if err == nil {
			break
		}
		if lctx.Err() != nil || !strings.Contains(err.Error(), "connect") {
			t.Fatalf("Switch login with a pinned-key ID token: %v\n%s", err, out)
		}
		time.Sleep(20 * time.Millisecond) // serve is still starting
	}
	for _, tc := range []struct {
		name, user, token string
		want              types.Result
	}{
		{"another key", user, mint("other", user, title), types.AuthenticationValidationFailed},
		{"another title", user, mint("iss", user, "0100000000010000"), types.AuthenticationValidationFailed},
		{"another user", "81985529216486896", good, types.AuthenticationPrincipalIDUnmatched},
	} {
		if err := login(tc.user, tc.token); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "iss", "issuer.pem")); err != nil || !strings.Contains(string(b), "Key-Id:") {
		t.Errorf("issuer.pem: %v", err)
	}
}
