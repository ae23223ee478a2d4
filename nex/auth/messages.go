// Package auth implements the Ticket Granting protocol (protocol 10,
// nintendo-wiki "Ticket Granting (10)"): the server side as an RMC handler that
// issues Kerberos tickets (nintendo-wiki "Kerberos Authentication") for the accounts of an
// Accounts store, and the client side calls. It covers Login, LoginEx,
// RequestTicket, GetPID, GetName and the NEX 4 ValidateAndRequestTicketWithParam.
//
// The message codecs here (request and response structures with Append and Parse)
// are shared by the server, the client and anyone decoding captured traffic.
package auth

import (
	"fmt"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	crossproto "github.com/gamewire/gamewire/nex/protocols/authenticationcrossplay"
	"github.com/gamewire/gamewire/nex/types"
)

// Method ids of the Ticket Granting protocol. NEX 4 renamed 1 and 2
// (ValidateAndRequestTicket, ValidateAndRequestTicketWithCustomData) without
// changing them; 6 is LoginWithContext up to NEX 3 and
// ValidateAndRequestTicketWithParam from NEX 4.
const (
	MethodLogin                             uint32 = 1
	MethodLoginEx                           uint32 = 2
	MethodRequestTicket                     uint32 = 3
	MethodGetPID                            uint32 = 4
	MethodGetName                           uint32 = 5
	MethodLoginWithContext                  uint32 = 6
	MethodValidateAndRequestTicketWithParam uint32 = 6
)

// Platform types ("Platform type" in authentication.md).
const (
	Platform3DS    uint8 = 1
	PlatformWiiU   uint8 = 2
	PlatformSwitch uint8 = 3
)

// Options are the protocol revisions that change the bytes of its messages.
type Options struct {
	// NEX4 adds pSourceKey to the LoginEx and RequestTicket responses and makes
	// method 6 ValidateAndRequestTicketWithParam, for every connection; a
	// connection whose NEX version is 4.0 or later gets this without it.
	NEX4 bool
	// Crossplay adds the platform type fields of games with crossplay between
	// Switch and 3DS / Wii U (RequestTicket's platformType, the Param's
	// platformTypeForPlatformPid, the Result's platformPid).
	Crossplay bool
}

// LoginResponse is the response of Login and LoginEx (and, without BuildName and
// SourceKey, of LoginWithContext).
type LoginResponse struct {
	Result     types.Result           // %retval%
	PID        types.PID              // pidPrincipal
	Ticket     []byte                 // pbufResponse: the sealed Kerberos ticket
	Connection types.RVConnectionData // pConnectionData: where the secure server is
	BuildName  string                 // strReturnMsg
	// SourceKey (pSourceKey, LoginEx on NEX 4+ only): when a non-empty hex string,
	// the key that decrypts the ticket instead of the password's.
	SourceKey string
}

// Append appends r. withSourceKey writes pSourceKey (LoginEx on NEX 4+).
func (r *LoginResponse) Append(b []byte, s types.Settings, withSourceKey bool) ([]byte, error) {
	w := types.NewWriter(b, s)
	w.Result(r.Result)
	w.PID(r.PID)
	w.Buffer(r.Ticket)
	w.RVConnectionData(r.Connection)
	w.String(r.BuildName)
	if withSourceKey {
		w.String(r.SourceKey)
	}
	return w.Bytes()
}

// ParseLoginResponse decodes a Login or LoginEx response; pSourceKey is read when
// bytes remain after strReturnMsg. Ticket aliases b.
func ParseLoginResponse(b []byte, s types.Settings) (LoginResponse, error) {
	r := types.NewReader(b, s)
	var v LoginResponse
	v.Result = r.Result("%retval%")
	v.PID = r.PID("pidPrincipal")
	v.Ticket = r.Buffer("pbufResponse")
	v.Connection = r.RVConnectionData("pConnectionData")
	v.BuildName = r.String("strReturnMsg")
	if r.Err() == nil && r.Remaining() > 0 {
		v.SourceKey = r.String("pSourceKey")
	}
	if err := r.Done(); err != nil {
		return LoginResponse{}, fmt.Errorf("Login response: %w", err)
	}
	return v, nil
}

// TicketResponse is the response of RequestTicket.
type TicketResponse struct {
	Result    types.Result // %retval%
	Ticket    []byte       // bufResponse
	SourceKey string       // pSourceKey, NEX 4+
}

// Append appends r; withSourceKey writes pSourceKey (NEX 4+).
func (r *TicketResponse) Append(b []byte, s types.Settings, withSourceKey bool) ([]byte, error) {
	w := types.NewWriter(b, s)
	w.Result(r.Result)
	w.Buffer(r.Ticket)
	if withSourceKey {
		w.String(r.SourceKey)
	}
	return w.Bytes()
}

// ParseTicketResponse decodes a RequestTicket response (pSourceKey when present).
func ParseTicketResponse(b []byte, s types.Settings) (TicketResponse, error) {
	r := types.NewReader(b, s)
	var v TicketResponse
	v.Result = r.Result("%retval%")
	v.Ticket = r.Buffer("bufResponse")
	if r.Err() == nil && r.Remaining() > 0 {
		v.SourceKey = r.String("pSourceKey")
	}
	if err := r.Done(); err != nil {
		return TicketResponse{}, fmt.Errorf("RequestTicket response: %w", err)
	}
	return v, nil
}

// TicketRequest is the request of RequestTicket.
type TicketRequest struct {
	PlatformType uint8 // only with Options.Crossplay
	Source       types.PID
	Target       types.PID
}

// Append appends r.
func (r *TicketRequest) Append(b []byte, s types.Settings, o Options) ([]byte, error) {
	w := types.NewWriter(b, s)
	if o.Crossplay {
		w.U8(r.PlatformType)
	}
	w.PID(r.Source)
	w.PID(r.Target)
	return w.Bytes()
}

// ReadTicketRequest reads a RequestTicket request.
func ReadTicketRequest(r *types.Reader, o Options) TicketRequest {
	var v TicketRequest
	if o.Crossplay {
		v.PlatformType = r.U8("platformType")
	}
	v.Source = r.PID("idSource")
	v.Target = r.PID("idTarget")
	return v
}

// AuthenticationInfo is the AuthenticationInfo structure (a Data) LoginEx carries
// in its AnyDataHolder; its codec is the generated one (nex/protocols/authentication).
// NEX 3.0 added TokenType and ServerVersion.
type AuthenticationInfo struct {
	Token      string // m_authToken
	NGSVersion uint32 // m_ngsVersion (NEX major version)
	// HasV3Fields: TokenType and ServerVersion are on the wire (NEX 3.0 and
	// later). Holder writes them when set; ParseAuthenticationInfo reads them
	// when the connection's NEX version has them.
	HasV3Fields   bool
	TokenType     uint8  // m_authTokenType: 0 NASC, 1 NNAS, 2 Switch
	ServerVersion uint32 // m_serverVersion
}

// AuthenticationInfoName is the class name in the AnyDataHolder.
const AuthenticationInfoName = "AuthenticationInfo"

// v3Version is the NEX version from which AuthenticationInfo has its NEX 3
// fields; nex2Version one before it.
const (
	v3Version   types.Version = 30000
	nex2Version types.Version = 20000
)

// Holder wraps a in an AnyDataHolder: the Data level, then its own, written at
// s with the NEX 3 fields exactly when HasV3Fields is set.
func (a *AuthenticationInfo) Holder(s types.Settings) (types.AnyDataHolder, error) {
	switch v := s.NEXVersion(); {
	case a.HasV3Fields && v < v3Version:
		s.Version = v3Version
	case !a.HasV3Fields && v >= v3Version:
		s.Version = nex2Version
	}
	w := types.NewWriter(nil, s)
	(&authproto.AuthenticationInfo{Token: a.Token, NgsVersion: a.NGSVersion, TokenType: a.TokenType, ServerVersion: a.ServerVersion}).Append(&w)
	data, err := w.Bytes()
	return types.AnyDataHolder{TypeName: AuthenticationInfoName, Data: data}, err
}

// ParseAuthenticationInfo decodes the data of an AnyDataHolder named
// AuthenticationInfo at the connection's settings: the NEX 3 fields are read
// when its NEX version (types.Settings.NEXVersion) is 3.0 or later. A login
// comes before the server knows much of its client, so when the data does not
// decode at that version it is read in the other layout (NEX 2's without the
// NEX 3 fields, or NEX 3's with them) and accepted when that one decodes to
// its end; the error names the connection's version's layout otherwise.
func ParseAuthenticationInfo(h types.AnyDataHolder, s types.Settings) (AuthenticationInfo, error) {
	if h.TypeName != AuthenticationInfoName {
		return AuthenticationInfo{}, fmt.Errorf("extra data is %q, want %s", h.TypeName, AuthenticationInfoName)
	}
	a, err := parseAuthenticationInfo(h.Data, s)
	if err == nil {
		return a, nil
	}
	other := s
	other.Version = v3Version
	if s.NEXVersion() >= v3Version {
		other.Version = nex2Version
	}
	if a, oerr := parseAuthenticationInfo(h.Data, other); oerr == nil {
		return a, nil
	}
	return AuthenticationInfo{}, err
}

func parseAuthenticationInfo(b []byte, s types.Settings) (AuthenticationInfo, error) {
	r := types.NewReader(b, s)
	var v authproto.AuthenticationInfo
	v.Read(&r, AuthenticationInfoName)
	if err := r.Done(); err != nil {
		return AuthenticationInfo{}, fmt.Errorf("AuthenticationInfo: %w", err)
	}
	return AuthenticationInfo{Token: v.Token, NGSVersion: v.NgsVersion, HasV3Fields: s.NEXVersion() >= v3Version,
		TokenType: v.TokenType, ServerVersion: v.ServerVersion}, nil
}

// ValidateParam is the ValidateAndRequestTicketParam structure (NEX 4.4+).
type ValidateParam struct {
	PlatformType               uint32
	UserName                   string
	ExtraData                  types.AnyDataHolder
	IgnoreAPIVersionCheck      bool
	APIVersionGeneral          uint32
	APIVersionCustom           uint32
	PlatformTypeForPlatformPID uint8 // only with Options.Crossplay
}

// Append appends p as a structure (the generated
// ValidateAndRequestTicketParam, or with Options.Crossplay
// ValidateAndRequestTicketParamCrossplay).
func (p *ValidateParam) Append(b []byte, s types.Settings, o Options) ([]byte, error) {
	w := types.NewWriter(b, s)
	data := types.AnyData{Raw: p.ExtraData}
	if o.Crossplay {
		(&crossproto.ValidateAndRequestTicketParamCrossplay{Platform: p.PlatformType, Username: p.UserName, Data: data,
			SkipVersionCheck: p.IgnoreAPIVersionCheck, NEXVersion: p.APIVersionGeneral, ClientVersion: p.APIVersionCustom,
			PlatformTypeForPlatformPID: p.PlatformTypeForPlatformPID}).Append(&w)
	} else {
		(&authproto.ValidateAndRequestTicketParam{Platform: p.PlatformType, Username: p.UserName, Data: data,
			SkipVersionCheck: p.IgnoreAPIVersionCheck, NEXVersion: p.APIVersionGeneral, ClientVersion: p.APIVersionCustom}).Append(&w)
	}
	return w.Bytes()
}

// ReadValidateParam reads a ValidateAndRequestTicketParam.
func ReadValidateParam(r *types.Reader, field string, o Options) ValidateParam {
	if o.Crossplay {
		var v crossproto.ValidateAndRequestTicketParamCrossplay
		v.Read(r, field)
		return ValidateParam{PlatformType: v.Platform, UserName: v.Username, ExtraData: RawHolder(v.Data, r.Settings()),
			IgnoreAPIVersionCheck: v.SkipVersionCheck, APIVersionGeneral: v.NEXVersion, APIVersionCustom: v.ClientVersion,
			PlatformTypeForPlatformPID: v.PlatformTypeForPlatformPID}
	}
	var v authproto.ValidateAndRequestTicketParam
	v.Read(r, field)
	return ValidateParam{PlatformType: v.Platform, UserName: v.Username, ExtraData: RawHolder(v.Data, r.Settings()),
		IgnoreAPIVersionCheck: v.SkipVersionCheck, APIVersionGeneral: v.NEXVersion, APIVersionCustom: v.ClientVersion}
}

// RawHolder is a decoded AnyData as the raw holder: its object encoded again at
// s (the bytes it was read from at those settings), or the raw holder kept for
// a class nobody registered.
func RawHolder(a types.AnyData, s types.Settings) types.AnyDataHolder {
	if a.Object == nil {
		return a.Raw
	}
	w := types.NewWriter(nil, s)
	a.Object.Append(&w)
	b, _ := w.Bytes()
	return types.AnyDataHolder{TypeName: a.Object.ClassName(), Data: b}
}

// ValidateResult is the ValidateAndRequestTicketResult structure.
type ValidateResult struct {
	SourcePID      types.PID
	Ticket         []byte
	ServiceNodeURL types.StationURL
	CurrentUTCTime types.DateTime
	ReturnMsg      string
	SourceKey      string
	PlatformPID    types.PID // only with Options.Crossplay
}

// Append appends v as a structure (the generated
// ValidateAndRequestTicketResult, or with Options.Crossplay
// ValidateAndRequestTicketResultCrossplay).
func (v *ValidateResult) Append(b []byte, s types.Settings, o Options) ([]byte, error) {
	w := types.NewWriter(b, s)
	if o.Crossplay {
		(&crossproto.ValidateAndRequestTicketResultCrossplay{PID: v.SourcePID, Ticket: v.Ticket, ServerURL: v.ServiceNodeURL,
			ServerTime: v.CurrentUTCTime, ServerName: v.ReturnMsg, SourceKey: v.SourceKey, PlatformPID: v.PlatformPID}).Append(&w)
	} else {
		(&authproto.ValidateAndRequestTicketResult{PID: v.SourcePID, Ticket: v.Ticket, ServerURL: v.ServiceNodeURL,
			ServerTime: v.CurrentUTCTime, ServerName: v.ReturnMsg, SourceKey: v.SourceKey}).Append(&w)
	}
	return w.Bytes()
}

// ReadValidateResult reads a ValidateAndRequestTicketResult.
func ReadValidateResult(r *types.Reader, field string, o Options) ValidateResult {
	if o.Crossplay {
		var v crossproto.ValidateAndRequestTicketResultCrossplay
		v.Read(r, field)
		return ValidateResult{SourcePID: v.PID, Ticket: v.Ticket, ServiceNodeURL: v.ServerURL, CurrentUTCTime: v.ServerTime,
			ReturnMsg: v.ServerName, SourceKey: v.SourceKey, PlatformPID: v.PlatformPID}
	}
	var v authproto.ValidateAndRequestTicketResult
	v.Read(r, field)
	return ValidateResult{SourcePID: v.PID, Ticket: v.Ticket, ServiceNodeURL: v.ServerURL, CurrentUTCTime: v.ServerTime,
		ReturnMsg: v.ServerName, SourceKey: v.SourceKey}
}
