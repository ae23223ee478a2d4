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
		lr, err := ParseLoginResponse(resp.Data, s)
		if err != nil {
			t.Fatal(err)
		}
		if lr.Result != types.ResultSuccess || lr.PID != PIDGuest || lr.BuildName != DefaultBuildName ||
			lr.Connection.RegularURL.String() != srv.SecureURL.String() {
			t.Fatalf("%+v", lr)
		}
		if s.StructureHeader && (lr.Connection.Version != 1 || lr.Connection.CurrentUTCTime != types.DateTimeFromTime(testNow)) {
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
	params, _ := AppendLoginRequest(nil, "nobody")
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
	params, _ := AppendLoginRequest(nil, "GuEsT")
	lr, err := ParseLoginResponse(call(t, srv, types.Settings{}, MethodLogin, params).Data, types.Settings{})
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
	lr, err := ParseLoginResponse(call(t, srv, s, MethodLoginEx, params).Data, s)
	if err != nil || lr.Result != types.ResultSuccess || lr.PID != PIDGuest || lr.SourceKey != "" {
		t.Fatalf("LoginEx: %+v %v", lr, err)
	}
	// NEX 4 appends pSourceKey: an empty String after strReturnMsg.
	if d := call(t, srv, s, MethodLoginEx, params).Data; !bytes.HasSuffix(d, append(append([]byte{byte(len(DefaultBuildName) + 1), 0}, DefaultBuildName...), 0, 1, 0, 0)) {
		t.Fatalf("no pSourceKey after the build name: %x", d[len(d)-8:])
	}
	// Servers that enforce the extra data refuse plain Login.
	lp, _ := AppendLoginRequest(nil, "guest")
	lr, err = ParseLoginResponse(call(t, srv, s, MethodLogin, lp).Data, s)
	if err != nil || lr.Result != types.AuthenticationValidationFailed || len(lr.Ticket) != 0 {
		t.Fatalf("Login on a validating server: %+v %v", lr, err)
	}
	srv.Maintenance = true
	lr, _ = ParseLoginResponse(call(t, srv, s, MethodLoginEx, params).Data, s)
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
			params, _ := (&TicketRequest{Source: tt.source, Target: tt.target}).Append(nil, s, Options{})
			resp := call(t, srv, s, MethodRequestTicket, params)
			tr, err := ParseTicketResponse(resp.Data, s)
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
	p := ValidateParam{PlatformType: 3, UserName: "guest", ExtraData: types.AnyDataHolder{TypeName: "NullData", Data: types.AppendData(types.AppendData(nil, s), s)},
		APIVersionGeneral: 40601}
	params, err := p.Append(nil, s, srv.Options)
	if err != nil {
		t.Fatal(err)
	}
	resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, params)
	r := types.NewReader(resp.Data, s)
	v := ReadValidateResult(&r, "result", srv.Options)
	if err := r.Done(); err != nil || v.SourcePID != PIDGuest || v.ServiceNodeURL.String() != srv.SecureURL.String() {
		t.Fatalf("%+v %v", v, err)
	}
	p.UserName = "nobody"
	params, _ = p.Append(nil, s, srv.Options)
	if resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, params); resp.Result != types.RendezVousInvalidUsername {
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
	p := ValidateParam{PlatformType: 1, UserName: "guest", ExtraData: types.AnyDataHolder{TypeName: "NullData", Data: types.AppendData(types.AppendData(nil, s), s)},
		APIVersionGeneral: 40400}
	params, err := p.Append(nil, s, srv.Options)
	if err != nil {
		t.Fatal(err)
	}
	resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, params)
	r := types.NewReader(resp.Data, s)
	v := ReadValidateResult(&r, "result", srv.Options)
	if err := r.Done(); err != nil || v.SourcePID != PIDGuest || len(v.Ticket) == 0 {
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

	p := ValidateParam{PlatformType: 3, UserName: "guest", APIVersionGeneral: 40601,
		ExtraData: types.AnyDataHolder{TypeName: "NullData", Data: types.AppendData(types.AppendData(nil, s), s)}}
	v, err := c.ValidateAndRequestTicketWithParam(ctx, p)
	if err != nil || v.SourcePID != PIDGuest || len(v.Ticket) == 0 || v.ServiceNodeURL.String() != srv.SecureURL.String() {
		t.Fatalf("guest: %+v %v", v, err)
	}
	p.UserName = "nobody"
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
		lr, err := ParseLoginResponse(call(t, srv, s, MethodLoginEx, params).Data, s)
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
	p := ValidateParam{PlatformType: 3, UserName: "1000", ExtraData: h}
	params, _ := p.Append(nil, s, srv.Options)
	r := types.NewReader(call(t, srv, s, MethodValidateAndRequestTicketWithParam, params).Data, s)
	v := ReadValidateResult(&r, "result", srv.Options)
	if r.Done() != nil || len(v.SourceKey) != 32 || v.SourcePID != 1000 {
		t.Fatalf("WithParam token login: %+v %v", v, r.Err())
	}
	p.ExtraData, _ = (&AuthenticationInfo{Token: "bad", NGSVersion: 4, HasV3Fields: true}).Holder(s)
	params, _ = p.Append(nil, s, srv.Options)
	if resp := call(t, srv, s, MethodValidateAndRequestTicketWithParam, params); resp.Result != types.AuthenticationValidationFailed {
		t.Fatalf("WithParam bad token: %v", resp.Result)
	}
}

// TestValidateCrossplayRoundTrip: with Options.Crossplay the param and result
// carry the platform fields (Authentication_Crossplay's structures) and read
// back; without, they are not on the wire.
func TestValidateCrossplayRoundTrip(t *testing.T) {
	s := types.Settings{PIDSize: 8, StructureHeader: true, Version: 40601}
	h, err := (&AuthenticationInfo{Token: "t", NGSVersion: 4, HasV3Fields: true, TokenType: 2}).Holder(s)
	if err != nil {
		t.Fatal(err)
	}
	p := ValidateParam{PlatformType: 3, UserName: "1000", ExtraData: h, APIVersionGeneral: 40601, APIVersionCustom: 7, PlatformTypeForPlatformPID: 1}
	res := ValidateResult{SourcePID: 1 << 40, Ticket: []byte{1, 2}, ReturnMsg: "b", SourceKey: "k", PlatformPID: 1000}
	var sizes [2]int
	for i, o := range []Options{{NEX4: true}, {NEX4: true, Crossplay: true}} {
		b, err := p.Append(nil, s, o)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = len(b)
		r := types.NewReader(b, s)
		got := ReadValidateParam(&r, "param", o)
		want := p
		if !o.Crossplay {
			want.PlatformTypeForPlatformPID = 0
		}
		if err := r.Done(); err != nil || got.UserName != want.UserName || got.PlatformTypeForPlatformPID != want.PlatformTypeForPlatformPID ||
			got.ExtraData.TypeName != AuthenticationInfoName || !bytes.Equal(got.ExtraData.Data, h.Data) || got.APIVersionCustom != 7 {
			t.Fatalf("%+v: param %+v %v", o, got, err)
		}
		if info, err := ParseAuthenticationInfo(got.ExtraData, s); err != nil || info.Token != "t" || info.TokenType != 2 {
			t.Fatalf("%+v: extra data %+v %v", o, info, err)
		}
		b, err = res.Append(nil, s, o)
		if err != nil {
			t.Fatal(err)
		}
		r = types.NewReader(b, s)
		gr := ReadValidateResult(&r, "result", o)
		wantPID := types.PID(1000)
		if !o.Crossplay {
			wantPID = 0
		}
		if err := r.Done(); err != nil || gr.SourcePID != res.SourcePID || gr.PlatformPID != wantPID || gr.SourceKey != "k" {
			t.Fatalf("%+v: result %+v %v", o, gr, err)
		}
	}
	if sizes[1] != sizes[0]+1 {
		t.Fatalf("crossplay param %d bytes, plain %d", sizes[1], sizes[0])
	}
}
