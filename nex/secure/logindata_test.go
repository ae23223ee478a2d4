package secure

import (
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

func TestLoginDataRoundTrip(t *testing.T) {
	for _, st := range []types.Settings{types.SettingsForMinorVersion(2, 4), types.SettingsForMinorVersion(4, 4)} {
		for _, d := range []LoginData{
			{Class: NintendoLoginDataName, Token: "dG9rZW4="},
			{Class: AccountExtraInfoName, Token: "dG9rZW4*", LocalFriendCode: 0x1234, MoveCount: 2},
		} {
			h, err := d.Holder(st)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseLoginData(h, st)
			if err != nil || got != d {
				t.Errorf("%+v: parsed %+v, %v", d, got, err)
			}
		}
	}
	if _, err := ParseLoginData(types.AnyDataHolder{TypeName: "NullData"}, types.Settings{PIDSize: 4}); err == nil {
		t.Error("NullData parsed as login data")
	}
}

// FuzzParseLoginData feeds hCustomData bodies of each class to
// ParseLoginData.
func FuzzParseLoginData(f *testing.F) {
	st := types.SettingsForMinorVersion(4, 4)
	for _, d := range []LoginData{{Class: NintendoLoginDataName, Token: "abc"}, {Class: AccountExtraInfoName, Token: "x", MoveCount: 1}} {
		h, _ := d.Holder(st)
		f.Add(uint8(0), h.Data)
		f.Add(uint8(1), h.Data)
	}
	classes := []string{NintendoLoginDataName, AccountExtraInfoName, AuthenticationInfoName}
	f.Fuzz(func(t *testing.T, class uint8, data []byte) {
		h := types.AnyDataHolder{TypeName: classes[int(class)%len(classes)], Data: data}
		for _, s := range []types.Settings{st, types.SettingsForMinorVersion(0, 4)} {
			if d, err := ParseLoginData(h, s); err == nil && d.Class != h.TypeName {
				t.Fatalf("class %q parsed as %q", h.TypeName, d.Class)
			}
		}
	})
}
