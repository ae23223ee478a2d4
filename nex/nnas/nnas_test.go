package nnas_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex"
	"github.com/gamewire/gamewire/nex/accounts"
	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/credentials"
	"github.com/gamewire/gamewire/nex/nnas"
	"github.com/gamewire/gamewire/nex/secure"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

const gameServerID = 0x1010EB00

// flow runs a NEX server (required token policy) and the NNAS endpoints on
// one SQLite store, as serve does.
type flow struct {
	store *accounts.Store
	creds credentials.Store
	http  *httptest.Server
	nex   string
}

func startFlow(t *testing.T, allowRegistration bool) *flow {
	t.Helper()
	ctx := context.Background()
	store, _, err := accounts.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	creds := store.Credentials()
	secret, err := creds.TokenSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := credentials.NewKeys(secret)
	if err != nil {
		t.Fatal(err)
	}
	checker := &credentials.Checker{Policy: credentials.PolicyRequired, Keys: keys, GameServerID: gameServerID}
	srv := &nex.Server{Accounts: store, Auth: auth.Server{CheckToken: checker.CheckAuth}, CheckRegister: checker.CheckRegister}
	a, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(a, b) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, prudp.ErrServerClosed) {
			t.Error(err)
		}
	})
	port := a.LocalAddr().(*net.UDPAddr).Port
	ns := &nnas.Server{Store: creds, Keys: keys, AllowRegistration: allowRegistration,
		NEXServerFor: func(_ context.Context, id uint32) (credentials.NEXServer, bool) {
			return credentials.NEXServer{Host: "127.0.0.1", Port: port}, id == gameServerID
		}}
	hs := httptest.NewServer(ns.Handler())
	t.Cleanup(hs.Close)
	return &flow{store: store, creds: creds, http: hs, nex: a.LocalAddr().String()}
}

func (f *flow) do(t *testing.T, method, path, bearer, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Nintendo-Client-ID", nnas.WiiUClientID)
	req.Header.Set("X-Nintendo-Client-Secret", nnas.WiiUClientSecret)
	req.Header.Set("X-Nintendo-Title-ID", "000500001010EC00")
	if body != "" && method == http.MethodPost && strings.HasPrefix(body, "grant_type") {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type oauth struct {
	Token   string `xml:"access_token>token"`
	Refresh string `xml:"access_token>refresh_token"`
	Expires int    `xml:"access_token>expires_in"`
}

type nexToken struct {
	Host     string `xml:"host"`
	Password string `xml:"nex_password"`
	PID      uint64 `xml:"pid"`
	Port     int    `xml:"port"`
	Token    string `xml:"token"`
}

type nnasErr struct {
	Code string `xml:"error>code"`
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := xml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// TestNEXTokenLogsIn: an NNID logs in with its password hash, gets a NEX
// token for the game, and logs in to the NEX server with the PID, the NEX
// password and the token (LoginEx, RegisterEx); the refresh token gives new
// tokens; wrong passwords, bad bearer tokens and unknown games are refused
// with NNAS's codes.
func TestNEXTokenLogsIn(t *testing.T) {
	f := startFlow(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := credentials.NewVerifier(credentials.PasswordHash(1750000001, "correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := f.creds.CreateNNID(ctx, credentials.NNID{PID: 1750000001, UserID: "WiiUPlayer", Country: "NL", Region: 4, MiiName: "Mii"}, v)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"password"}, "user_id": {"wiiuplayer"},
		"password": {credentials.PasswordHash(n.PID, "correct horse")}, "password_type": {"hash"}}
	st, body := f.do(t, "POST", "/v1/api/oauth20/access_token/generate", "", form.Encode())
	if st != 200 {
		t.Fatalf("access token: %d %s", st, body)
	}
	o := decode[oauth](t, body)
	if len(o.Token) != 32 || len(o.Refresh) != 40 || o.Expires != 3600 {
		t.Fatalf("%+v", o)
	}
	st, body = f.do(t, "GET", "/v1/api/provider/nex_token/@me?game_server_id=1010EB00", o.Token, "")
	if st != 200 {
		t.Fatalf("nex_token: %d %s", st, body)
	}
	nt := decode[nexToken](t, body)
	if nt.PID != uint64(n.PID) || nt.Password != n.NEXPassword || nt.Host != "127.0.0.1" {
		t.Fatalf("%+v", nt)
	}
	info := &auth.AuthenticationInfo{Token: nt.Token, NGSVersion: 3, HasV3Fields: true, TokenType: 1}
	sess, err := nex.Login(ctx, net.JoinHostPort(nt.Host, strconv.Itoa(nt.Port)), nex.LoginConfig{
		User: strconv.FormatUint(nt.PID, 10), Password: nt.Password, AuthInfo: info,
		LoginData: &secure.LoginData{Class: secure.NintendoLoginDataName, Token: nt.Token}})
	if err != nil {
		t.Fatalf("NEX login with the nex_token: %v", err)
	}
	sess.RMC.Close()
	sess.Conn.Abort()
	if sess.PID != n.PID {
		t.Fatalf("logged in as %d", sess.PID)
	}
	// The console's account password is no NEX password.
	if _, err := nex.Login(ctx, f.nex, nex.LoginConfig{User: strconv.FormatUint(nt.PID, 10), Password: "correct horse",
		AuthInfo: info}); !errors.Is(err, nex.ErrWrongPassword) {
		t.Errorf("NEX login with the account password: %v", err)
	}
	// Another player's token.
	v2, _ := credentials.NewVerifier(credentials.PasswordHash(1750000002, "pw2pw2"))
	if _, err := f.creds.CreateNNID(ctx, credentials.NNID{PID: 1750000002, UserID: "Other1"}, v2); err != nil {
		t.Fatal(err)
	}
	other, _, _ := f.creds.NNIDByPID(ctx, 1750000002)
	if _, err := nex.Login(ctx, f.nex, nex.LoginConfig{User: "1750000002", Password: other.NEXPassword,
		AuthInfo: info}); !errors.Is(err, types.AuthenticationPrincipalIDUnmatched) {
		t.Errorf("another player's token: %v", err)
	}

	st, body = f.do(t, "POST", "/v1/api/oauth20/access_token/generate", "",
		url.Values{"grant_type": {"refresh_token"}, "refresh_token": {o.Refresh}}.Encode())
	if st != 200 || decode[oauth](t, body).Token == "" {
		t.Fatalf("refresh: %d %s", st, body)
	}
	st, body = f.do(t, "GET", "/v1/api/people/@me/profile", o.Token, "")
	if st != 200 || !strings.Contains(string(body), "<user_id>WiiUPlayer</user_id>") {
		t.Fatalf("profile: %d %s", st, body)
	}
	st, body = f.do(t, "GET", "/v1/api/admin/mapped_ids?input_type=user_id&output_type=pid&input=wiiuplayer,nobody", "", "")
	if st != 200 || !strings.Contains(string(body), "<out_id>1750000001</out_id>") || !strings.Contains(string(body), "<in_id>nobody</in_id><out_id></out_id>") {
		t.Fatalf("mapped_ids: %d %s", st, body)
	}
	st, body = f.do(t, "GET", "/v1/api/miis?pids=1750000001", "", "")
	if st != 200 || !strings.Contains(string(body), "<name>Mii</name>") {
		t.Fatalf("miis: %d %s", st, body)
	}

	for _, tc := range []struct {
		name, method, path, bearer, body string
		status                           int
		code                             string
	}{
		{"wrong password", "POST", "/v1/api/oauth20/access_token/generate", "",
			url.Values{"grant_type": {"password"}, "user_id": {"WiiUPlayer"}, "password": {credentials.PasswordHash(n.PID, "wrong")}, "password_type": {"hash"}}.Encode(), 400, "0106"},
		{"unknown NNID", "POST", "/v1/api/oauth20/access_token/generate", "",
			url.Values{"grant_type": {"password"}, "user_id": {"nobody"}, "password": {"x"}}.Encode(), 400, "0106"},
		{"bad grant", "POST", "/v1/api/oauth20/access_token/generate", "", "grant_type=magic", 400, "0004"},
		{"refresh token as bearer", "GET", "/v1/api/people/@me/profile", o.Refresh, "", 401, "0005"},
		{"no bearer", "GET", "/v1/api/people/@me/profile", "", "", 401, "0005"},
		{"unknown game", "GET", "/v1/api/provider/nex_token/@me?game_server_id=00003200", o.Token, "", 400, "1021"},
		{"no game", "GET", "/v1/api/provider/nex_token/@me", o.Token, "", 400, "0118"},
		{"registration off", "POST", "/v1/api/people", "", "<person/>", 403, "0007"},
	} {
		st, body := f.do(t, tc.method, tc.path, tc.bearer, tc.body)
		if st != tc.status || decode[nnasErr](t, body).Code != tc.code {
			t.Errorf("%s: %d %s, want %d and code %s", tc.name, st, body, tc.status, tc.code)
		}
	}
}

// TestCreateAccount: with registration allowed, POST people creates an NNID
// that logs in with its password.
func TestCreateAccount(t *testing.T) {
	f := startFlow(t, true)
	person := `<?xml version="1.0"?><person><birth_date>1990-05-04</birth_date><user_id>NewPlayer</user_id>` +
		`<password>s3cret-pw</password><country>US</country><language>en</language><tz_name>America/New_York</tz_name>` +
		`<email><address>new@example.com</address></email><mii><name>Newbie</name><data>AAEC</data></mii><gender>F</gender></person>`
	st, body := f.do(t, "POST", "/v1/api/people", "", person)
	if st != 200 {
		t.Fatalf("create: %d %s", st, body)
	}
	pid := decode[struct {
		PID uint64 `xml:"pid"`
	}](t, body).PID
	st, body = f.do(t, "POST", "/v1/api/oauth20/access_token/generate", "",
		url.Values{"grant_type": {"password"}, "user_id": {"NewPlayer"}, "password": {"s3cret-pw"}}.Encode())
	if st != 200 {
		t.Fatalf("login of the new account %d: %d %s", pid, st, body)
	}
	if st, body = f.do(t, "POST", "/v1/api/people", "", person); st != 400 || decode[nnasErr](t, body).Code != "0100" {
		t.Errorf("second creation: %d %s", st, body)
	}
}

// TestBodyBounds: an access token form over MaxFormBody and a person over
// MaxXMLBody are refused (0002) without being read whole; mapped_ids over
// MaxLookups ids is refused.
func TestBodyBounds(t *testing.T) {
	f := startFlow(t, true)
	big := "grant_type=password&user_id=x&password=" + strings.Repeat("a", nnas.MaxFormBody)
	if st, body := f.do(t, "POST", "/v1/api/oauth20/access_token/generate", "", big); st != 400 || decode[nnasErr](t, body).Code != "0002" {
		t.Errorf("big form: %d %s", st, body)
	}
	person := "<person><user_id>" + strings.Repeat("a", nnas.MaxXMLBody) + "</user_id></person>"
	if st, body := f.do(t, "POST", "/v1/api/people", "", person); st != 400 || decode[nnasErr](t, body).Code != "0002" {
		t.Errorf("big person: %d %s", st, body)
	}
	many := strings.TrimSuffix(strings.Repeat("1,", nnas.MaxLookups+1), ",")
	if st, body := f.do(t, "GET", "/v1/api/admin/mapped_ids?input_type=pid&output_type=user_id&input="+many, "", ""); st != 400 || decode[nnasErr](t, body).Code != "0002" {
		t.Errorf("%d lookups: %d %s", nnas.MaxLookups+1, st, body)
	}
}
