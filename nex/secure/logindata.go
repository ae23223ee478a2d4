package secure

import (
	"fmt"

	"github.com/gamewire/gamewire/nex/auth"
	friendsproto "github.com/gamewire/gamewire/nex/protocols/friends"
	secureproto "github.com/gamewire/gamewire/nex/protocols/secure"
	"github.com/gamewire/gamewire/nex/types"
)

// Class names of RegisterEx's hCustomData (nintendo-wiki "Secure Connection
// (11)", "Account Management (25)"; github.com/PretendoNetwork/nintendo-wiki).
const (
	// NintendoLoginDataName is the Wii U's: String token (NNAS nex_token).
	NintendoLoginDataName = "NintendoLoginData"
	// AccountExtraInfoName is the 3DS's: u64 local friend code, u32 move
	// count, String token (NASC, in NASC base64).
	AccountExtraInfoName = "AccountExtraInfo"
	// AuthenticationInfoName: String token, u32 NGS version, ... (a Data).
	AuthenticationInfoName = "AuthenticationInfo"
)

// LoginData is the token RegisterEx's hCustomData carries, with the 3DS's
// extra fields.
type LoginData struct {
	Class           string
	Token           string
	LocalFriendCode uint64 // AccountExtraInfo only
	MoveCount       uint32 // AccountExtraInfo only
}

// ParseLoginData reads the token out of hCustomData: NintendoLoginData,
// AccountExtraInfo, or AuthenticationInfo (whose first field, after its Data
// parent, is the token), with their generated codecs (nex/protocols/secure and
// friends; auth.ParseAuthenticationInfo) at the connection's settings. Other classes are
// an error.
func ParseLoginData(h types.AnyDataHolder, s types.Settings) (LoginData, error) {
	r := types.NewReader(h.Data, s)
	d := LoginData{Class: h.TypeName}
	switch h.TypeName {
	case NintendoLoginDataName:
		var v secureproto.NintendoLoginData
		v.Read(&r, h.TypeName)
		d.Token = v.Token
	case AccountExtraInfoName:
		var v friendsproto.AccountExtraInfo
		v.Read(&r, h.TypeName)
		d.LocalFriendCode, d.MoveCount, d.Token = v.LocalFriendCode, v.MoveCount, v.Token
	case AuthenticationInfoName:
		a, err := auth.ParseAuthenticationInfo(h, s)
		if err != nil {
			return d, fmt.Errorf("secure: %w", err)
		}
		d.Token = a.Token
		return d, nil
	default:
		return d, fmt.Errorf("secure: login data of class %q, want %s, %s or %s", h.TypeName,
			NintendoLoginDataName, AccountExtraInfoName, AuthenticationInfoName)
	}
	if err := r.Done(); err != nil {
		return d, fmt.Errorf("secure: %s: %w", h.TypeName, err)
	}
	return d, nil
}

// Holder wraps d in an AnyDataHolder of its Class (NintendoLoginData or
// AccountExtraInfo), as a console sends it.
func (d *LoginData) Holder(s types.Settings) (types.AnyDataHolder, error) {
	w := types.NewWriter(nil, s)
	switch d.Class {
	case NintendoLoginDataName:
		(&secureproto.NintendoLoginData{Token: d.Token}).Append(&w)
	case AccountExtraInfoName:
		(&friendsproto.AccountExtraInfo{LocalFriendCode: d.LocalFriendCode, MoveCount: d.MoveCount, Token: d.Token}).Append(&w)
	default:
		return types.AnyDataHolder{}, fmt.Errorf("secure: cannot write login data of class %q", d.Class)
	}
	b, err := w.Bytes()
	return types.AnyDataHolder{TypeName: d.Class, Data: b}, err
}
