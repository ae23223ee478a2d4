package secure

import (
	"fmt"

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
// parent, is the token). Other classes are an error.
func ParseLoginData(h types.AnyDataHolder, s types.Settings) (LoginData, error) {
	r := types.NewReader(h.Data, s)
	d := LoginData{Class: h.TypeName}
	switch h.TypeName {
	case NintendoLoginDataName:
		m := r.EnterStructure(h.TypeName)
		d.Token = r.String("token")
		r.LeaveStructure(m)
	case AccountExtraInfoName:
		m := r.EnterStructure(h.TypeName)
		d.LocalFriendCode = r.U64("LocalFriendCode")
		d.MoveCount = r.U32("MoveCount")
		d.Token = r.String("NEXToken")
		r.LeaveStructure(m)
	case AuthenticationInfoName:
		r.ReadData("Data")
		m := r.EnterStructure(h.TypeName)
		d.Token = r.String("m_authToken")
		r.U32("m_ngsVersion")
		if r.Err() == nil && r.Remaining() >= 5 {
			r.U8("m_authTokenType")
			r.U32("m_serverVersion")
		}
		r.LeaveStructure(m)
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
	m := w.BeginStructure(0)
	switch d.Class {
	case NintendoLoginDataName:
		w.String(d.Token)
	case AccountExtraInfoName:
		w.U64(d.LocalFriendCode)
		w.U32(d.MoveCount)
		w.String(d.Token)
	default:
		return types.AnyDataHolder{}, fmt.Errorf("secure: cannot write login data of class %q", d.Class)
	}
	w.EndStructure(m)
	b, err := w.Bytes()
	return types.AnyDataHolder{TypeName: d.Class, Data: b}, err
}
