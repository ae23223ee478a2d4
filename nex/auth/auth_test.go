package auth

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/internal/testutil"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp/kerberos"
)

var testNow = time.Date(2026, 11, 22, 9, 37, 11, 0, time.UTC)

const rvPassword = "rv-secret"

// testAccounts derives the keys once: each derivation is ~65,000 MD5 rounds.
var testAccounts = sync.OnceValue(func() *Memory {
	m := new(Memory)
	m.Add(PIDQuazalAuthentication, "Quazal Authentication", "auth-secret")
	m.Add(PIDQuazalRendezVous, "Quazal Rendez-Vous", rvPassword)
	m.Add(PIDGuest, "guest", GuestPassword)
	m.Add(1000, "1000", "hunter2")
	return m
})

func testServer(s types.Settings) *Server {
	u, _ := types.ParseStationURLString("prudps:/address=127.0.0.1;port=60001;CID=1;PID=2;sid=1;stream=10;type=2")
	return &Server{Accounts: testAccounts(), SecureURL: u, Now: func() time.Time { return testNow }}
}

// call feeds one request message to the server and returns the response message.
func call(t *testing.T, srv *Server, s types.Settings, method uint32, params []byte) rmc.Response {
	t.Helper()
	msg, err := (&rmc.Request{Protocol: rmc.ProtocolTicketGranting, CallID: 7, Method: method, Params: params}).Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	mux := rmc.NewMux()
	mux.HandleProtocol(rmc.ProtocolTicketGranting, srv)
	out, err := rmc.Dispatch(context.Background(), mux, &rmc.Peer{Settings: s}, msg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, n, err := rmc.ParseResponse(out)
	if err != nil || n != len(out) || resp.CallID != 7 {
		t.Fatalf("response %x: %v", out, err)
	}
	return resp
}

func TestLoginGuest(t *testing.T) {
	for _, s := range []types.Settings{{}, {StructureHeader: true}, {PIDSize: 8, StructureHeader: true}} {
		srv := testServer(s)
		// Login request parameters: String "guest" (golden, types.md).
		params := testutil.Unhex(t, "0600 677565737400")
		resp := call(t, srv, s, MethodLogin, params)
		if resp.IsError() || resp.Method != MethodLogin {
			t.Fatalf("%+v", resp)
		}
		lr, err := parseLogin(resp.Data, s)
		if err != nil {
			t.Fatal(err)
		}
		if lr.Result != types.ResultSuccess || lr.PID != PIDGuest || lr.BuildName != DefaultBuildName ||
			lr.Connection.MainStation.String() != srv.SecureURL.String() {
			t.Fatalf("%+v", lr)
		}
		if s.StructureHeader && lr.Connection.ServerTime != types.DateTimeFromTime(testNow) {
			t.Fatalf("connection data %+v", lr.Connection)
		}
		// The ticket opens with the key of the published guest password and names
		// the secure server; its internal ticket opens with the secure server's key.
		ks := kerberos.Settings{PIDSize: s.PIDSize}
		guestKey := kerberos.DeriveKey(GuestPassword, 100)
		tk, err := kerberos.OpenTicket(lr.Ticket, guestKey[:], ks)
		if err != nil {
			t.Fatal(err)
		}
		if tk.TargetPID != 2 || len(tk.SessionKey) != 32 {
			t.Fatalf("ticket %+v", tk)
		}
		rvKey := kerberos.DeriveKey(rvPassword, 2)
		info, err := kerberos.OpenInternal(tk.Internal, rvKey[:], ks)
		if err != nil {
			t.Fatal(err)
		}
		if info.SourcePID != 100 || !bytes.Equal(info.SessionKey, tk.SessionKey) || info.Validate(testNow, 0) != nil {
			t.Fatalf("internal ticket %+v", info)
		}
		// A wrong password cannot open it.
		wrong := kerberos.DeriveKey("wrong", 100)
		if _, err := kerberos.OpenTicket(lr.Ticket, wrong[:], ks); !errors.Is(err, kerberos.ErrBadHMAC) {
			t.Fatalf("wrong password: %v", err)
		}
	}
}

func TestLoginUnknownUser(t *testing.T) {
	srv := testServer(types.Settings{})
	params := loginRequest(t, "nobody")
	resp := call(t, srv, types.Settings{}, MethodLogin, params)
	// %retval% RendezVous::InvalidUsername, then empty PID, Buffer,
	// RVConnectionData (two empty StationURLs around an empty List) and String.
	want := testutil.Unhex(t, "64000380 00000000 00000000 0100 00 00000000 0100 00 0100 00")
	if resp.IsError() || !bytes.Equal(resp.Data, want) {
		t.Fatalf("got %x\nwant %x", resp.Data, want)
	}
}

func TestLoginCaseInsensitive(t *testing.T) {
	srv := testServer(types.Settings{})
	params := loginRequest(t, "GuEsT")
	lr, err := parseLogin(call(t, srv, types.Settings{}, MethodLogin, params).Data, types.Settings{})
	if err != nil || lr.PID != PIDGuest {
		t.Fatalf("%+v %v", lr, err)
	}
}

func TestLoginExAndValidation(t *testing.T) {
	s := types.Settings{StructureHeader: true}
	info := AuthenticationInfo{Token: "token", NGSVersion: 3, HasV3Fields: true, TokenType: 1, ServerVersion: 2011}
	h, err := info.Holder(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseAuthenticationInfo(h, s)
	if err != nil || back != info {
		t.Fatalf("AuthenticationInfo round trip %+v %v", back, err)
	}
	w := types.NewWriter(nil, s)
	w.String("guest")
	w.AnyDataHolder(h)
	params, _ := w.Bytes()

	srv := testServer(s)
	srv.RequireExtraData = true
	srv.Options.NEX4 = true
	lr, err := parseLogin(call(t, srv, s, MethodLoginEx, params).Data, s)
	if err != nil || lr.Result != types.ResultSuccess || lr.PID != PIDGuest || lr.SourceKey != "" {
		t.Fatalf("LoginEx: %+v %v", lr, err)
	}
	// NEX 4 appends pSourceKey: an empty String after strReturnMsg.
	if d := call(t, srv, s, MethodLoginEx, params).Data; !bytes.HasSuffix(d, append(append([]byte{byte(len(DefaultBuildName) + 1), 0}, DefaultBuildName...), 0, 1, 0, 0)) {
		t.Fatalf("no pSourceKey after the build name: %x", d[len(d)-8:])
	}
	// Servers that enforce the extra data refuse plain Login.
	lp := loginRequest(t, "guest")
	lr, err = parseLogin(call(t, srv, s, MethodLogin, lp).Data, s)
	if err != nil || lr.Result != types.AuthenticationValidationFailed || len(lr.Ticket) != 0 {
		t.Fatalf("Login on a validating server: %+v %v", lr, err)
	}
	srv.Maintenance = true
	lr, _ = parseLogin(call(t, srv, s, MethodLoginEx, params).Data, s)
	if lr.Result != types.AuthenticationUnderMaintenance {
		t.Fatalf("maintenance: %v", lr.Result)
	}
}

func TestRequestTicket(t *testing.T) {
	s := types.Settings{}
	srv := testServer(s)
	for _, tt := range []struct {
		name           string
		source, target types.PID
		want           types.Result
	}{
		{"valid", 1000, 2, types.ResultSuccess},
		{"unknown source", 4242, 2, types.CoreAccessDenied},
		{"unknown target", 1000, 4242, types.CoreAccessDenied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Request: PID source, PID target (4 bytes each here).
			params := encode(t, s, &authproto.AuthenticationRequestTicketRequest{Source: tt.source, Target: tt.target})
			resp := call(t, srv, s, MethodRequestTicket, params)
			tr, err := parseTicket(resp.Data, s)
			if err != nil || tr.Result != tt.want {
				t.Fatalf("%+v %v", tr, err)
			}
			if tt.want.IsError() {
				if !bytes.Equal(resp.Data, testutil.Unhex(t, "06000180 00000000")) {
					t.Fatalf("refusal bytes %x", resp.Data)
				}
				return
			}
			key := kerberos.DeriveKey("hunter2", 1000)
			tk, err := kerberos.OpenTicket(tr.Ticket, key[:], kerberos.Settings{})
			if err != nil || tk.TargetPID != uint64(tt.target) {
				t.Fatalf("ticket %+v %v", tk, err)
			}
		})
	}
}

func TestGetPIDAndName(t *testing.T) {
	s := types.Settings{}
	srv := testServer(s)
	for _, tt := range []struct {
		method uint32
		params string
		want   string
	}{
		{MethodGetPID, "0600 677565737400", "64000000"},                            // "guest" -> 100
		{MethodGetPID, "0500 6e6f706500", "00000000"},                              // "nope" -> 0
		{MethodGetName, "02000000", "1300 5175617a616c2052656e64657a2d566f757300"}, // 2 -> "Quazal Rendez-Vous"
		{MethodGetName, "39050000", "0100 00"},                                     // 1337 -> ""
		{MethodGetPID, "0600 6775657374", ""},                                      // no terminator: InvalidArgument
	} {
		resp := call(t, srv, s, tt.method, testutil.Unhex(t, tt.params))
		if tt.want == "" {
			if resp.Result != types.CoreInvalidArgument {
				t.Fatalf("%s: %v", tt.params, resp.Result)
			}
			continue
		}
		if resp.IsError() || !bytes.Equal(resp.Data, testutil.Unhex(t, tt.want)) {
			t.Fatalf("%s: got %x (%v), want %s", tt.params, resp.Data, resp.Result, tt.want)
		}
	}
}

func TestValidateWithParam(t *testing.T) {
	s := types.Settings{PIDSize: 8, StructureHeader: true}
	srv := testServer(s)
	srv.Options = Options{NEX4: true}
	p := ValidateParam{Platform: 3, Username: "guest", Data: nullData(s), NEXVersion: 40601}
	resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, paramRequest(t, s, srv.Options, p))
	v, err := parseResult(resp.Data, s, srv.Options)
	if err != nil || v.PID != PIDGuest || v.ServerURL.String() != srv.SecureURL.String() {
		t.Fatalf("%+v %v", v, err)
	}
	p.Username = "nobody"
	if resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, paramRequest(t, s, srv.Options, p)); resp.Result != types.RendezVousInvalidUsername {
		t.Fatalf("unknown user: %v", resp.Result)
	}
	// Before NEX 4, method 6 is LoginWithContext, whose login data is
	// undocumented: refused plainly.
	srv.Options.NEX4 = false
	if resp := call(t, srv, types.Settings{StructureHeader: true, Version: 30600}, 6, nil); resp.Result != types.CoreNotImplemented {
		t.Fatalf("LoginWithContext: %v", resp.Result)
	}
}

// TestValidateWithParamByVersion: a 3DS connection at NEX 4.4 (Monster Hunter
// XX: 4-byte PIDs, serve --game setting the version) logs in with method 6 as
// ValidateAndRequestTicketWithParam without Options.NEX4.
func TestValidateWithParamByVersion(t *testing.T) {
	s := types.Settings{StructureHeader: true, Version: 40400}
	srv := testServer(s)
	p := ValidateParam{Platform: 1, Username: "guest", Data: nullData(s), NEXVersion: 40400}
	resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, paramRequest(t, s, srv.Options, p))
	v, err := parseResult(resp.Data, s, srv.Options)
	if err != nil || v.PID != PIDGuest || len(v.Ticket) == 0 {
		t.Fatalf("%+v %v", v, err)
	}
}

func TestClientOverPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := types.Settings{StructureHeader: true}
	mux := rmc.NewMux()
	mux.HandleProtocol(rmc.ProtocolTicketGranting, testServer(s))
	a, b := rmc.Pipe()
	defer a.Close()
	go rmc.Serve(ctx, b, mux, &rmc.Peer{Settings: s}, nil)
	rc := rmc.NewClient(a, rmc.ClientConfig{Settings: s})
	defer rc.Close()
	c := &Client{RMC: rc}

	lr, err := c.Login(ctx, "guest")
	if err != nil || lr.PID != PIDGuest {
		t.Fatalf("Login: %+v %v", lr, err)
	}
	if _, err := c.Login(ctx, "nobody"); !errors.Is(err, types.RendezVousInvalidUsername) {
		t.Fatalf("unknown user: %v", err)
	}
	if tr, err := c.RequestTicket(ctx, 100, 2); err != nil || len(tr.Ticket) == 0 {
		t.Fatalf("RequestTicket: %v", err)
	}
	if _, err := c.RequestTicket(ctx, 100, 999); !errors.Is(err, types.CoreAccessDenied) {
		t.Fatalf("RequestTicket to nobody: %v", err)
	}
	if pid, err := c.GetPID(ctx, "Quazal Rendez-Vous"); err != nil || pid != 2 {
		t.Fatalf("GetPID: %d %v", pid, err)
	}
	if name, err := c.GetName(ctx, 100); err != nil || name != "guest" {
		t.Fatalf("GetName: %q %v", name, err)
	}
}

// TestClientValidateWithParamOverPipe: the client's NEX 4.4 login (method 6)
// against the server, for a known and an unknown user.
func TestClientValidateWithParamOverPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := types.Settings{PIDSize: 8, StructureHeader: true}
	srv := testServer(s)
	srv.Options = Options{NEX4: true}
	mux := rmc.NewMux()
	mux.HandleProtocol(rmc.ProtocolTicketGranting, srv)
	a, b := rmc.Pipe()
	defer a.Close()
	go rmc.Serve(ctx, b, mux, &rmc.Peer{Settings: s}, nil)
	rc := rmc.NewClient(a, rmc.ClientConfig{Settings: s})
	defer rc.Close()
	c := &Client{RMC: rc, Options: srv.Options}

	p := ValidateParam{Platform: 3, Username: "guest", NEXVersion: 40601, Data: nullData(s)}
	v, err := c.ValidateAndRequestTicketWithParam(ctx, p)
	if err != nil || v.PID != PIDGuest || len(v.Ticket) == 0 || v.ServerURL.String() != srv.SecureURL.String() {
		t.Fatalf("guest: %+v %v", v, err)
	}
	p.Username = "nobody"
	if _, err := c.ValidateAndRequestTicketWithParam(ctx, p); !errors.Is(err, types.RendezVousInvalidUsername) || !strings.Contains(err.Error(), `"nobody"`) {
		t.Fatalf("unknown user: %v", err)
	}
}

func TestTokenLogin(t *testing.T) {
	s := types.Settings{StructureHeader: true}
	srv := testServer(s)
	srv.Options.NEX4 = true
	srv.ValidateToken = func(ctx context.Context, user string, info AuthenticationInfo) (Account, error) {
		if info.Token != "good" {
			return Account{}, errors.New("bad token")
		}
		return srv.Accounts.AccountByName(ctx, user)
	}
	loginEx := func(token string) LoginResponse {
		h, _ := (&AuthenticationInfo{Token: token, NGSVersion: 4, HasV3Fields: true, TokenType: 2}).Holder(s)
		w := types.NewWriter(nil, s)
		w.String("1000")
		w.AnyDataHolder(h)
		params, _ := w.Bytes()
		lr, err := parseLogin(call(t, srv, s, MethodLoginEx, params).Data, s)
		if err != nil {
			t.Fatal(err)
		}
		return lr
	}
	lr := loginEx("good")
	key, err := hex.DecodeString(lr.SourceKey)
	if err != nil || len(key) != 16 || lr.PID != 1000 {
		t.Fatalf("token login: %+v %v", lr, err)
	}
	// The ticket opens with the key the server sent, not with the password's.
	if _, err := kerberos.OpenTicket(lr.Ticket, key, kerberos.Settings{}); err != nil {
		t.Fatal(err)
	}
	pw := kerberos.DeriveKey("hunter2", 1000)
	if _, err := kerberos.OpenTicket(lr.Ticket, pw[:], kerberos.Settings{}); !errors.Is(err, kerberos.ErrBadHMAC) {
		t.Fatalf("password key opened a token ticket: %v", err)
	}
	if lr := loginEx("bad"); lr.Result != types.AuthenticationValidationFailed || len(lr.Ticket) != 0 {
		t.Fatalf("bad token: %+v", lr)
	}
	// ValidateAndRequestTicketWithParam answers sourceKey the same way.
	h, _ := (&AuthenticationInfo{Token: "good", NGSVersion: 4, HasV3Fields: true}).Holder(s)
	p := ValidateParam{Platform: 3, Username: "1000", Data: types.AnyData{Raw: h}}
	v, err := parseResult(call(t, srv, s, MethodValidateAndRequestTicketWithParam, paramRequest(t, s, srv.Options, p)).Data, s, srv.Options)
	if err != nil || len(v.SourceKey) != 32 || v.PID != 1000 {
		t.Fatalf("WithParam token login: %+v %v", v, err)
	}
	h, _ = (&AuthenticationInfo{Token: "bad", NGSVersion: 4, HasV3Fields: true}).Holder(s)
	p.Data = types.AnyData{Raw: h}
	if resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, paramRequest(t, s, srv.Options, p)); resp.Result != types.AuthenticationValidationFailed {
		t.Fatalf("WithParam bad token: %v", resp.Result)
	}
}

// TestCrossplayOverPipe: with Options.Crossplay on both ends the client and
// the server speak Authentication_Crossplay: RequestTicket sends the platform
// type, ValidateAndRequestTicketWithParam's param carries the platform type of
// the PID to answer (one byte more) and its result the platform PID; without,
// Authentication_NX's structures. A crossplay client's RequestTicket to a
// plain server leaves a byte over: Core::InvalidArgument.
func TestCrossplayOverPipe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := types.Settings{PIDSize: 8, StructureHeader: true, Version: 40601}
	h, err := (&AuthenticationInfo{Token: "t", NGSVersion: 4, HasV3Fields: true, TokenType: 2}).Holder(s)
	if err != nil {
		t.Fatal(err)
	}
	p := ValidateParam{Platform: 3, Username: "1000", Data: types.AnyData{Raw: h}, NEXVersion: 40601, ClientVersion: 7, PlatformTypeForPlatformPID: 1}
	client := func(srvOpts, o Options) *Client {
		srv := testServer(s)
		srv.Options = srvOpts
		mux := rmc.NewMux()
		mux.HandleProtocol(rmc.ProtocolTicketGranting, srv)
		a, b := rmc.Pipe()
		t.Cleanup(func() { a.Close() })
		go rmc.Serve(ctx, b, mux, &rmc.Peer{Settings: s}, nil)
		rc := rmc.NewClient(a, rmc.ClientConfig{Settings: s})
		t.Cleanup(func() { rc.Close() })
		return &Client{RMC: rc, Options: o}
	}
	for _, o := range []Options{{NEX4: true}, {Crossplay: true}} {
		c := client(o, o)
		v, err := c.ValidateAndRequestTicketWithParam(ctx, p)
		wantPlatformPID := types.PID(0)
		if o.Crossplay {
			wantPlatformPID = 1000
		}
		if err != nil || v.PID != 1000 || v.PlatformPID != wantPlatformPID || len(v.Ticket) == 0 {
			t.Fatalf("%+v: %+v %v", o, v, err)
		}
		if tr, err := c.RequestTicket(ctx, 1000, 2); err != nil || len(tr.Ticket) == 0 {
			t.Fatalf("%+v: RequestTicket: %+v %v", o, tr, err)
		}
	}
	if n, m := len(paramRequest(t, s, Options{Crossplay: true}, p)), len(paramRequest(t, s, Options{}, p)); n != m+1 {
		t.Fatalf("crossplay param %d bytes, plain %d", n, m)
	}
	c := client(Options{NEX4: true}, Options{Crossplay: true})
	if _, err := c.RequestTicket(ctx, 1000, 2); !errors.Is(err, types.CoreInvalidArgument) {
		t.Fatalf("crossplay client, plain server: %v", err)
	}
}

// TestLoginExEitherLayout: LoginEx's AuthenticationInfo is read in the layout
// of the connection's NEX version, else in the other one (NEX 2's without
// token_type and server_version, NEX 3's with them): a NEX 2 game on a server
// whose version is derived (3.4) and a NEX 3 client on a server set to NEX 2
// both log in with their token seen. Extra data that decodes in neither is a
// bad parameter.
func TestLoginExEitherLayout(t *testing.T) {
	for _, tt := range []struct {
		name  string
		st    types.Settings
		hasV3 bool
	}{
		{"NEX 2 info, NEX 3.4 server", types.Settings{}, false},
		{"NEX 3 info, NEX 2 server", types.Settings{Version: 20000}, true},
		{"NEX 3 info, NEX 3.4 server", types.Settings{}, true},
		{"NEX 2 info, NEX 2 server", types.Settings{Version: 20000}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := testServer(tt.st)
			srv.RequireExtraData = true
			var seen *AuthenticationInfo
			srv.CheckToken = func(ctx context.Context, a Account, info *AuthenticationInfo) error {
				seen = info
				return nil
			}
			info := AuthenticationInfo{Token: "tok", NGSVersion: 2, HasV3Fields: tt.hasV3, TokenType: 1, ServerVersion: 7}
			if !tt.hasV3 {
				info.TokenType, info.ServerVersion = 0, 0
			}
			h, err := info.Holder(tt.st)
			if err != nil {
				t.Fatal(err)
			}
			params := encode(t, tt.st, &authproto.AuthenticationLoginExRequest{Username: "guest", ExtraData: types.AnyData{Raw: h}})
			resp := call(t, srv, tt.st, MethodLoginEx, params)
			lr, err := parseLogin(resp.Data, tt.st)
			if err != nil || lr.Result != types.ResultSuccess || lr.PID != PIDGuest || lr.Connection.MainStation.String() != srv.SecureURL.String() {
				t.Fatalf("%+v %v (%v)", lr, err, resp.Result)
			}
			if seen == nil || *seen != info {
				t.Fatalf("CheckToken saw %+v, want %+v", seen, info)
			}
		})
	}
	s := types.Settings{}
	params := encode(t, s, &authproto.AuthenticationLoginExRequest{Username: "guest",
		ExtraData: types.AnyData{Raw: types.AnyDataHolder{TypeName: AuthenticationInfoName, Data: []byte{1, 2, 3}}}})
	if resp := call(t, testServer(s), s, MethodLoginEx, params); resp.Result != types.CoreInvalidArgument {
		t.Fatalf("undecodable AuthenticationInfo: %v", resp.Result)
	}
}
