package auth

import (
	"testing"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	crossproto "github.com/gamewire/gamewire/nex/protocols/authenticationcrossplay"
	"github.com/gamewire/gamewire/nex/types"
)

// The tests' codecs: the generated requests and responses of the three forms.

// encode is v (a generated request, response or structure) at settings s.
func encode(t testing.TB, s types.Settings, v interface{ Append(*types.Writer) }) []byte {
	t.Helper()
	w := types.NewWriter(nil, s)
	v.Append(&w)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode reads b into v (a generated request or response) to its end.
func decode(b []byte, s types.Settings, v interface{ Read(*types.Reader) }) error {
	r := types.NewReader(b, s)
	v.Read(&r)
	return r.Done()
}

// loginRequest is Login's (and ValidateAndRequestTicket's) parameters.
func loginRequest(t testing.TB, name string) []byte {
	return encode(t, types.Settings{}, &authproto.AuthenticationLoginRequest{Username: name})
}

// parseLogin decodes a Login or LoginEx response as a client that does not
// know the server's form does: Authentication's, else Authentication_NX's
// (with the source key).
func parseLogin(b []byte, s types.Settings) (LoginResponse, error) {
	var v authproto.AuthenticationLoginExResponse
	if err := decode(b, s, &v); err == nil {
		return LoginResponse{Result: v.Result, PID: v.PID, Ticket: v.Ticket, Connection: v.ConnectionData, BuildName: v.ServerName}, nil
	}
	var nx authproto.AuthenticationNXValidateAndRequestTicketWithCustomDataResponse
	err := decode(b, s, &nx)
	return LoginResponse{Result: nx.Result, PID: nx.PID, Ticket: nx.Ticket, Connection: nx.ConnectionData, BuildName: nx.ServerName,
		SourceKey: nx.SourceKey}, err
}

// parseTicket decodes a RequestTicket response, with or without a source key.
func parseTicket(b []byte, s types.Settings) (TicketResponse, error) {
	var v authproto.AuthenticationRequestTicketResponse
	if err := decode(b, s, &v); err == nil {
		return TicketResponse{Result: v.Result, Ticket: v.Ticket}, nil
	}
	var nx authproto.AuthenticationNXRequestTicketResponse
	err := decode(b, s, &nx)
	return TicketResponse{Result: nx.Result, Ticket: nx.Ticket, SourceKey: nx.Key}, err
}

// paramRequest is ValidateAndRequestTicketWithParam's parameters in the form o
// gives.
func paramRequest(t testing.TB, s types.Settings, o Options, p ValidateParam) []byte {
	if o.Crossplay {
		return encode(t, s, &crossproto.AuthenticationCrossplayValidateAndRequestTicketWithParamRequest{Param: p})
	}
	return encode(t, s, &authproto.AuthenticationNXValidateAndRequestTicketWithParamRequest{Param: plainParam(&p)})
}

// parseResult decodes ValidateAndRequestTicketWithParam's response in the form o gives.
func parseResult(b []byte, s types.Settings, o Options) (ValidateResult, error) {
	if o.Crossplay {
		var v crossproto.AuthenticationCrossplayValidateAndRequestTicketWithParamResponse
		err := decode(b, s, &v)
		return v.Result, err
	}
	var v authproto.AuthenticationNXValidateAndRequestTicketWithParamResponse
	err := decode(b, s, &v)
	return crossResult(&v.Result), err
}

// nullData is a NullData holder at s.
func nullData(s types.Settings) types.AnyData {
	return types.AnyData{Raw: types.AnyDataHolder{TypeName: "NullData", Data: types.AppendData(types.AppendData(nil, s), s)}}
}
