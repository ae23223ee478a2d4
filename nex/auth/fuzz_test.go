package auth

import (
	"testing"

	"github.com/gamewire/gamewire/nex/types"
)

// FuzzParseLoginResponse feeds arbitrary bytes to every Ticket Granting decoder
// (responses, AuthenticationInfo, ValidateAndRequestTicketParam/Result) with the
// three settings in use, checking no panic and round trips.
func FuzzParseLoginResponse(f *testing.F) {
	for _, s := range []types.Settings{{}, {StructureHeader: true}} {
		srv := testServer(s)
		srv.Now = nil
		lr := LoginResponse{Result: types.ResultSuccess, PID: 100, Ticket: []byte{1, 2, 3}, Connection: srv.connectionData(srv.SecureURL, types.Settings{StructureHeader: true}), BuildName: "b"}
		b, _ := lr.Append(nil, s, true)
		f.Add(b)
		tr := TicketResponse{Ticket: []byte{9}}
		b, _ = tr.Append(nil, s, false)
		f.Add(b)
		h, _ := (&AuthenticationInfo{Token: "t", NGSVersion: 3, HasV3Fields: true}).Holder(s)
		f.Add(h.Data)
		p := ValidateParam{UserName: "guest", ExtraData: h}
		b, _ = p.Append(nil, s, Options{})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []types.Settings{{}, {StructureHeader: true}, {PIDSize: 8, StructureHeader: true}} {
			if lr, err := ParseLoginResponse(b, s); err == nil {
				enc, err := lr.Append(nil, s, lr.SourceKey != "")
				if err != nil {
					t.Fatal(err)
				}
				lr2, err := ParseLoginResponse(enc, s)
				if err != nil || lr2.PID != lr.PID || lr2.Result != lr.Result || string(lr2.Ticket) != string(lr.Ticket) ||
					lr2.BuildName != lr.BuildName || lr2.Connection.RegularURL.String() != lr.Connection.RegularURL.String() {
					t.Fatalf("login response round trip: %v", err)
				}
			}
			_, _ = ParseTicketResponse(b, s)
			_, _ = ParseAuthenticationInfo(types.AnyDataHolder{TypeName: AuthenticationInfoName, Data: b}, s)
			for _, o := range []Options{{}, {NEX4: true, Crossplay: true}} {
				r := types.NewReader(b, s)
				ReadValidateParam(&r, "param", o)
				_ = r.Done()
				r = types.NewReader(b, s)
				ReadValidateResult(&r, "result", o)
				_ = r.Done()
				r = types.NewReader(b, s)
				ReadTicketRequest(&r, o)
				_ = r.Done()
			}
		}
	})
}
