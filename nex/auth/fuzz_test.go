package auth

import (
	"bytes"
	"context"
	"testing"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	crossproto "github.com/gamewire/gamewire/nex/protocols/authenticationcrossplay"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// FuzzParseLoginResponse feeds arbitrary bytes to every Ticket Granting decoder
// the package uses, all generated: the responses of Login/LoginEx and
// RequestTicket in both forms (with and without a source key), AuthenticationInfo
// in either layout, ValidateAndRequestTicketParam/Result and RequestTicket's
// request in the plain and crossplay forms, and the server's own reading of
// every method's parameters in the three forms (LoginEx's other layout
// included), checking no panic and round trips.
func FuzzParseLoginResponse(f *testing.F) {
	for _, s := range []types.Settings{{}, {StructureHeader: true}} {
		srv := testServer(s)
		conn := srv.connectionData(srv.SecureURL, s)
		f.Add(encode(f, s, &authproto.AuthenticationLoginResponse{Result: types.ResultSuccess, PID: 100, Ticket: []byte{1, 2, 3},
			ConnectionData: conn, ServerName: "b"}))
		f.Add(encode(f, s, &authproto.AuthenticationNXValidateAndRequestTicketWithCustomDataResponse{Result: types.ResultSuccess, PID: 100,
			Ticket: []byte{1, 2, 3}, ConnectionData: conn, ServerName: "b", SourceKey: "00ff"}))
		f.Add(encode(f, s, &authproto.AuthenticationRequestTicketResponse{Ticket: []byte{9}}))
		h, _ := (&AuthenticationInfo{Token: "t", NGSVersion: 3, HasV3Fields: true}).Holder(s)
		f.Add(h.Data)
		f.Add(paramRequest(f, s, Options{}, ValidateParam{Username: "guest", Data: types.AnyData{Raw: h}}))
		w := types.NewWriter(nil, s)
		w.String("guest")
		w.AnyDataHolder(h)
		b, _ := w.Bytes()
		f.Add(b)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []types.Settings{{}, {StructureHeader: true}, {PIDSize: 8, StructureHeader: true}} {
			if lr, err := parseLogin(b, s); err == nil {
				var enc []byte
				if lr.SourceKey == "" {
					enc = encode(t, s, &authproto.AuthenticationLoginExResponse{Result: lr.Result, PID: lr.PID, Ticket: lr.Ticket,
						ConnectionData: lr.Connection, ServerName: lr.BuildName})
				} else {
					enc = encode(t, s, &authproto.AuthenticationNXValidateAndRequestTicketWithCustomDataResponse{Result: lr.Result, PID: lr.PID,
						Ticket: lr.Ticket, ConnectionData: lr.Connection, ServerName: lr.BuildName, SourceKey: lr.SourceKey})
				}
				lr2, err := parseLogin(enc, s)
				if err != nil || lr2.PID != lr.PID || lr2.Result != lr.Result || !bytes.Equal(lr2.Ticket, lr.Ticket) ||
					lr2.BuildName != lr.BuildName || lr2.SourceKey != lr.SourceKey ||
					lr2.Connection.MainStation.String() != lr.Connection.MainStation.String() {
					t.Fatalf("login response round trip: %+v, %+v %v", lr, lr2, err)
				}
			}
			_, _ = parseTicket(b, s)
			_, _ = ParseAuthenticationInfo(types.AnyDataHolder{TypeName: AuthenticationInfoName, Data: b}, s)
			for _, o := range []Options{{NEX4: true}, {Crossplay: true}} {
				_, _ = parseResult(b, s, o)
			}
			var plain authproto.AuthenticationNXValidateAndRequestTicketWithParamRequest
			_ = decode(b, s, &plain)
			var cross crossproto.AuthenticationCrossplayValidateAndRequestTicketWithParamRequest
			_ = decode(b, s, &cross)
			var tr authproto.AuthenticationRequestTicketRequest
			_ = decode(b, s, &tr)
			var ctr crossproto.AuthenticationCrossplayRequestTicketRequest
			_ = decode(b, s, &ctr)

			// The server reads the same bytes as each method's parameters.
			for _, o := range []Options{{}, {NEX4: true}, {Crossplay: true}} {
				srv := testServer(s)
				srv.Options = o
				for m := MethodLogin; m <= MethodValidateAndRequestTicketWithParam; m++ {
					c := &rmc.Call{Request: rmc.Request{Protocol: rmc.ProtocolTicketGranting, Method: m, Params: b}, Peer: &rmc.Peer{Settings: s}}
					_, _ = srv.ServeRMC(ctx, c, nil)
				}
			}
		}
	})
}
