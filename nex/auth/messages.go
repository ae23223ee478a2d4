// Package auth implements the Ticket Granting protocol (protocol 10,
// nintendo-wiki "Ticket Granting (10)"): the server side as an RMC handler that
// issues Kerberos tickets (nintendo-wiki "Kerberos Authentication") for the accounts of an
// Accounts store, and the client side calls. It covers Login, LoginEx,
// RequestTicket, GetPID, GetName and the NEX 4 ValidateAndRequestTicketWithParam.
//
// Every parameter and result is decoded and encoded by the generated code of
// nex/protocols/authentication and nex/protocols/authenticationcrossplay. The
// protocol has three described forms on one id: Authentication (NEX 1 to 3),
// Authentication_NX (NEX 4: source keys, method 6 as
// ValidateAndRequestTicketWithParam) and Authentication_Crossplay (platform
// fields); the server and the client choose one per call by the connection's
// NEX version and Options (docs/nex.md "One protocol id, several shapes").
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
	MethodLogin                             = authproto.AuthenticationMethodLogin
	MethodLoginEx                           = authproto.AuthenticationMethodLoginEx
	MethodRequestTicket                     = authproto.AuthenticationMethodRequestTicket
	MethodGetPID                            = authproto.AuthenticationMethodGetPID
	MethodGetName                           = authproto.AuthenticationMethodGetName
	MethodLoginWithContext                  = authproto.AuthenticationMethodLoginWithContext
	MethodValidateAndRequestTicketWithParam = authproto.AuthenticationNXMethodValidateAndRequestTicketWithParam
)

// PlatformType is a crossplay user's console family (nintendo-wiki "Ticket
// Granting (10)", "Platform type"; the description's enum, generated).
type PlatformType = crossproto.PlatformType

// Platform types.
const (
	Platform3DS    = crossproto.PlatformTypeNintendo3DS
	PlatformWiiU   = crossproto.PlatformTypeWiiU
	PlatformSwitch = crossproto.PlatformTypeSwitch
)

// Options are the protocol revisions that change the bytes of its messages.
type Options struct {
	// NEX4 speaks Authentication_NX to every connection: pSourceKey in the
	// LoginEx and RequestTicket responses, method 6 as
	// ValidateAndRequestTicketWithParam. A connection whose NEX version is 4.0
	// or later gets this without it.
	NEX4 bool
	// Crossplay speaks Authentication_Crossplay, the form of games with
	// crossplay between Switch and 3DS / Wii U (RequestTicket's platformType,
	// the Param's platformTypeForPlatformPid, the Result's platformPid). It is
	// a variant of Authentication_NX, so it implies NEX4.
	Crossplay bool
}

// shape is the described form of Ticket Granting a call is answered or made in.
type shape uint8

const (
	shapeAuthentication shape = iota // Authentication (NEX 1 to 3)
	shapeNX                          // Authentication_NX (NEX 4 and later)
	shapeCrossplay                   // Authentication_Crossplay
)

// shape chooses the form for a connection with settings st: Crossplay, then
// NEX 4 (Options.NEX4, or the connection's NEX version 4.0 or later:
// types.Settings.NEXVersion, serve's --nex-version or --game; Monster Hunter
// XX on the 3DS, NEX 4.4, logs in with method 6 that way).
func (o Options) shape(st types.Settings) shape {
	switch {
	case o.Crossplay:
		return shapeCrossplay
	case o.NEX4 || st.NEXVersion() >= types.Version4:
		return shapeNX
	}
	return shapeAuthentication
}

// RVConnectionData is where the secure server is (the generated structure:
// from revision 1, NEX 3.5, the server's time).
type RVConnectionData = authproto.RVConnectionData

// LoginResponse is the response of Login and LoginEx (and, without BuildName and
// SourceKey, of LoginWithContext).
type LoginResponse struct {
	Result     types.Result     // %retval%
	PID        types.PID        // pidPrincipal
	Ticket     []byte           // pbufResponse: the sealed Kerberos ticket
	Connection RVConnectionData // pConnectionData: where the secure server is
	BuildName  string           // strReturnMsg
	// SourceKey (pSourceKey, LoginEx on NEX 4+ only): when a non-empty hex string,
	// the key that decrypts the ticket instead of the password's.
	SourceKey string
}

// TicketResponse is the response of RequestTicket.
type TicketResponse struct {
	Result    types.Result // %retval%
	Ticket    []byte       // bufResponse
	SourceKey string       // pSourceKey, NEX 4+
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

// otherInfoLayout is st with the NEX version of AuthenticationInfo's other
// layout: NEX 2's (without token_type and server_version) for a connection of
// NEX 3.0 or later, NEX 3.0's otherwise.
func otherInfoLayout(st types.Settings) types.Settings {
	if st.NEXVersion() >= v3Version {
		st.Version = nex2Version
	} else {
		st.Version = v3Version
	}
	return st
}

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
	if a, oerr := parseAuthenticationInfo(h.Data, otherInfoLayout(s)); oerr == nil {
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
	return fromGenerated(&v, s), nil
}

// fromGenerated is the AuthenticationInfo v, decoded at settings s.
func fromGenerated(v *authproto.AuthenticationInfo, s types.Settings) AuthenticationInfo {
	return AuthenticationInfo{Token: v.Token, NGSVersion: v.NgsVersion, HasV3Fields: s.NEXVersion() >= v3Version,
		TokenType: v.TokenType, ServerVersion: v.ServerVersion}
}

// authenticationInfo is the AuthenticationInfo a decoded holder carries (read
// at settings s), or an error naming the class it carries instead.
func authenticationInfo(a types.AnyData, s types.Settings) (AuthenticationInfo, error) {
	if v, ok := a.Object.(*authproto.AuthenticationInfo); ok {
		return fromGenerated(v, s), nil
	}
	return AuthenticationInfo{}, fmt.Errorf("extra data is %q, want %s", a.ClassName(), AuthenticationInfoName)
}

// ValidateParam is the ValidateAndRequestTicketParam structure (NEX 4.4+) in
// its crossplay form (Authentication_Crossplay's, generated): without
// Options.Crossplay, PlatformTypeForPlatformPID is not on the wire.
type ValidateParam = crossproto.ValidateAndRequestTicketParamCrossplay

// ValidateResult is the ValidateAndRequestTicketResult structure in its
// crossplay form (generated): without Options.Crossplay, PlatformPID is not on
// the wire.
type ValidateResult = crossproto.ValidateAndRequestTicketResultCrossplay

// plainParam is p without the crossplay field (Authentication_NX's structure).
func plainParam(p *ValidateParam) authproto.ValidateAndRequestTicketParam {
	return authproto.ValidateAndRequestTicketParam{Platform: p.Platform, Username: p.Username, Data: p.Data,
		SkipVersionCheck: p.SkipVersionCheck, NEXVersion: p.NEXVersion, ClientVersion: p.ClientVersion}
}

// crossParam is Authentication_NX's p in the crossplay form (no platform type).
func crossParam(p *authproto.ValidateAndRequestTicketParam) ValidateParam {
	return ValidateParam{Platform: p.Platform, Username: p.Username, Data: p.Data,
		SkipVersionCheck: p.SkipVersionCheck, NEXVersion: p.NEXVersion, ClientVersion: p.ClientVersion}
}

// plainResult is v without the crossplay field (Authentication_NX's structure).
func plainResult(v *ValidateResult) authproto.ValidateAndRequestTicketResult {
	return authproto.ValidateAndRequestTicketResult{PID: v.PID, Ticket: v.Ticket, ServerURL: v.ServerURL,
		ServerTime: v.ServerTime, ServerName: v.ServerName, SourceKey: v.SourceKey}
}

// crossResult is Authentication_NX's v in the crossplay form (no platform PID).
func crossResult(v *authproto.ValidateAndRequestTicketResult) ValidateResult {
	return ValidateResult{PID: v.PID, Ticket: v.Ticket, ServerURL: v.ServerURL,
		ServerTime: v.ServerTime, ServerName: v.ServerName, SourceKey: v.SourceKey}
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
