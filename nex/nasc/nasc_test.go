package nasc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/nasc"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

const gameServerID = 0x00030600

// form is a LOGIN request as NintendoClients' NASCClient builds it.
func form(action string, fields map[string]string) string {
	f := map[string]string{"gameid": "00030600", "sdkver": "000000", "titleid": "0004000000030600", "gamecd": "AMKP",
		"gamever": "0010", "mediatype": "1", "makercd": "01", "unitcd": "2", "macadr": "40f407000001", "bssid": "000000000000",
		"apinfo": "01:0000000000", "fcdcert": strings.Repeat("\x01", 272), "devname": "", "servertype": "L1", "fpdver": "000F",
		"devtime": "261127090000", "lang": "01", "region": "01", "csnum": "CW123456789", "action": action, "ingamesn": ""}
	for k, v := range fields {
		if v == "-" {
			delete(f, k)
		} else {
			f[k] = v
		}
	}
	var kv []string
	for k, v := range f {
		kv = append(kv, k, v)
	}
	return nasc.Encode(kv...)
}

func post(t *testing.T, base, body string) map[string]string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/ac", strings.NewReader(body))
	// A real 3DS sends Content-Type twice.
	req.Header.Add("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Add("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "CTR FPD/000F")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	r, err := nasc.ParseRequest(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return r
}

// TestLoginLocatorAndToken: LOGIN for an existing account gives the locator
// and a token that, with the console's own NEX password, logs in to the NEX
// server (token checked at LoginEx and RegisterEx); unknown accounts, other
// games and first contacts without self-registration are refused with
// NASC's codes; with self-registration a first contact gets an account.
func TestLoginLocatorAndToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Add(ctx, accounts.NewAccount{PID: 1800000123, Password: "3ds-nex-password"}); err != nil {
		t.Fatal(err)
	}
	secret, err := store.Credentials().TokenSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := credentials.NewKeys(secret)
	checker := &credentials.Checker{Policy: credentials.PolicyRequired, Keys: keys, GameServerID: gameServerID}
	srv := &nex.Server{Accounts: store, Auth: auth.Server{CheckToken: checker.CheckAuth}, CheckRegister: checker.CheckRegister}
	a, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	b, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(a, b) }()
	defer func() {
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
			t.Error(err)
		}
	}()
	port := a.LocalAddr().(*net.UDPAddr).Port
	ns := &nasc.Server{Accounts: store, Keys: keys, NEXServerFor: func(_ context.Context, id uint32) (credentials.NEXServer, bool) {
		return credentials.NEXServer{Host: "127.0.0.1", Port: port}, id == gameServerID
	}}
	hs := httptest.NewServer(ns.Handler())
	defer hs.Close()

	r := post(t, hs.URL, form("LOGIN", map[string]string{"userid": "1800000123", "uidhmac": "0123abcd"}))
	if r["returncd"] != "001" || r["retry"] != "0" || r["locator"] != "127.0.0.1:"+strconv.Itoa(port) || len(r["datetime"]) != 14 {
		t.Fatalf("LOGIN: %q", r)
	}
	token := credentials.NintendoBase64([]byte(r["token"]))
	info := &auth.AuthenticationInfo{Token: token, NGSVersion: 2, HasV3Fields: true, TokenType: 0}
	sess, err := nex.Login(ctx, r["locator"], nex.LoginConfig{User: "1800000123", Password: "3ds-nex-password", AuthInfo: info,
		LoginData: &secure.LoginData{Class: secure.AccountExtraInfoName, Token: token, LocalFriendCode: 1, MoveCount: 0}})
	if err != nil {
		t.Fatalf("NEX login with the NASC token: %v", err)
	}
	sess.RMC.Close()
	sess.Conn.Abort()
	if _, err := nex.Login(ctx, r["locator"], nex.LoginConfig{User: "guest", Password: auth.GuestPassword, AuthInfo: info}); !errors.Is(err, types.AuthenticationPrincipalIDUnmatched) {
		t.Errorf("the token for another PID: %v", err)
	}

	if r := post(t, hs.URL, form("SVCLOC", map[string]string{"userid": "1800000123", "uidhmac": "0123abcd", "svc": "0000", "keyhash": "01234567"})); r["returncd"] != "007" || r["statusdata"] != "Y" || r["servicetoken"] == "" {
		t.Errorf("SVCLOC: %q", r)
	}
	for _, tc := range []struct {
		name string
		body string
		code string
	}{
		{"unknown account", form("LOGIN", map[string]string{"userid": "1800000999", "uidhmac": "0123abcd"}), nasc.CodeBadPIDHMAC},
		{"other game", form("LOGIN", map[string]string{"gameid": "00003200", "userid": "1800000123"}), nasc.CodeGameUnavailable},
		{"bad game id", form("LOGIN", map[string]string{"gameid": "zz", "userid": "1800000123"}), nasc.CodeBadGameID},
		{"no fcdcert", form("LOGIN", map[string]string{"fcdcert": "-", "userid": "1800000123"}), nasc.CodeBadParameter},
		{"first contact, registration off", form("LOGIN", map[string]string{"passwd": "new-password"}), nasc.CodeRegistrationFailed},
		{"unknown action", form("PARSE", map[string]string{"userid": "1800000123"}), nasc.CodeBadParameter},
		{"not NASC base64", "action=%%%", nasc.CodeBadParameter},
	} {
		r := post(t, hs.URL, tc.body)
		if r["returncd"] != tc.code || r["retry"] != "1" {
			t.Errorf("%s: %q, want returncd %s", tc.name, r, tc.code)
		}
	}
	ns.Register = func(ctx context.Context, password string) (types.PID, error) {
		a, err := store.Add(ctx, accounts.NewAccount{Password: password})
		return a.PID, err
	}
	r = post(t, hs.URL, form("LOGIN", map[string]string{"passwd": "new-password"}))
	if r["returncd"] != "001" {
		t.Fatalf("first contact with self-registration: %q", r)
	}
	tok, err := keys.Open([]byte(r["token"]))
	if err != nil {
		t.Fatal(err)
	}
	sess, err = nex.Login(ctx, r["locator"], nex.LoginConfig{User: strconv.FormatUint(uint64(tok.PID), 10), Password: "new-password",
		AuthInfo:  &auth.AuthenticationInfo{Token: credentials.NintendoBase64([]byte(r["token"])), NGSVersion: 2},
		LoginData: &secure.LoginData{Class: secure.AccountExtraInfoName, Token: credentials.NintendoBase64([]byte(r["token"]))}})
	if err != nil {
		t.Fatalf("login of the registered account %d: %v", tok.PID, err)
	}
	sess.RMC.Close()
	sess.Conn.Abort()
}

// FuzzParseRequest feeds request bodies to the form decoder.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(form("LOGIN", map[string]string{"userid": "1800000123", "uidhmac": "0123abcd"})))
	f.Add([]byte("action=TE9HSU4*&gameid=%%"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := nasc.ParseRequest(b)
		if err == nil && len(r) > nasc.MaxFields {
			t.Fatalf("%d fields", len(r))
		}
	})
}

// TestBodyBound: a request over MaxBody is answered 109 without being read
// whole; one with more than MaxFields fields too.
func TestBodyBound(t *testing.T) {
	ns := &nasc.Server{}
	hs := httptest.NewServer(ns.Handler())
	defer hs.Close()
	if r := post(t, hs.URL, "action="+strings.Repeat("A", nasc.MaxBody)); r["returncd"] != nasc.CodeBadParameter {
		t.Errorf("big body: %q", r)
	}
	if r := post(t, hs.URL, strings.Repeat("a=QQ**&", nasc.MaxFields)+"b=QQ**"); r["returncd"] != nasc.CodeBadParameter {
		t.Errorf("%d fields: %q", nasc.MaxFields+1, r)
	}
}
