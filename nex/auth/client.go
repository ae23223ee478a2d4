package auth

import (
	"context"
	"fmt"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	crossproto "github.com/gamewire/gamewire/nex/protocols/authenticationcrossplay"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Client makes Ticket Granting calls over an RMC client (a connection to the
// authentication server) with the generated clients of the form its Options
// and the connection's NEX version give (Authentication, Authentication_NX or
// Authentication_Crossplay). Results other than success are returned as errors
// that wrap the types.Result, so errors.Is(err, types.RendezVousInvalidUsername)
// works.
type Client struct {
	RMC     rmc.Caller
	Options Options
}

func (c *Client) shape() shape { return c.Options.shape(c.RMC.Settings()) }

// Login calls Login (ValidateAndRequestTicket) for name. The response's ticket is
// still sealed; open it with the password's key (see nex.Login for the whole flow).
func (c *Client) Login(ctx context.Context, name string) (LoginResponse, error) {
	var r LoginResponse
	var err error
	r.Result, r.PID, r.Ticket, r.Connection, r.BuildName, err = authproto.NewAuthenticationClient(c.RMC).Login(ctx, name)
	return loginResult(name, r, err)
}

// LoginEx calls LoginEx (ValidateAndRequestTicketWithCustomData) with extra data,
// usually an AuthenticationInfo holder. A server may answer a source key
// (pSourceKey) whatever the client expected: the response is read in the other
// form (with or without it) when it does not decode in the expected one.
func (c *Client) LoginEx(ctx context.Context, name string, extra types.AnyDataHolder) (LoginResponse, error) {
	rec := &keepResponse{Caller: c.RMC}
	var r LoginResponse
	var err error
	if c.shape() == shapeAuthentication {
		r.Result, r.PID, r.Ticket, r.Connection, r.BuildName, err = authproto.NewAuthenticationClient(rec).LoginEx(ctx, name, types.AnyData{Raw: extra})
		if rec.undecoded(err) {
			var resp authproto.AuthenticationNXValidateAndRequestTicketWithCustomDataResponse
			if rec.read(&resp) == nil {
				r = LoginResponse{Result: resp.Result, PID: resp.PID, Ticket: resp.Ticket, Connection: resp.ConnectionData,
					BuildName: resp.ServerName, SourceKey: resp.SourceKey}
				err = nil
			}
		}
	} else {
		r.Result, r.PID, r.Ticket, r.Connection, r.BuildName, r.SourceKey, err = authproto.NewAuthenticationNXClient(rec).ValidateAndRequestTicketWithCustomData(ctx, name, types.AnyData{Raw: extra})
		if rec.undecoded(err) {
			var resp authproto.AuthenticationLoginExResponse
			if rec.read(&resp) == nil {
				r = LoginResponse{Result: resp.Result, PID: resp.PID, Ticket: resp.Ticket, Connection: resp.ConnectionData, BuildName: resp.ServerName}
				err = nil
			}
		}
	}
	return loginResult(name, r, err)
}

// loginResult is a Login or LoginEx answer as Client returns it.
func loginResult(name string, r LoginResponse, err error) (LoginResponse, error) {
	if err != nil {
		return LoginResponse{}, fmt.Errorf("login as %q: %w", name, err)
	}
	if r.Result.IsError() {
		return r, fmt.Errorf("login as %q refused: %w", name, r.Result)
	}
	return r, nil
}

// RequestTicket asks for a ticket from source to target, sealed with the
// source's key. The crossplay form sends the Wii U's platform type. As with
// LoginEx, the response is read with or without a source key, whichever
// decodes.
func (c *Client) RequestTicket(ctx context.Context, source, target types.PID) (TicketResponse, error) {
	rec := &keepResponse{Caller: c.RMC}
	var r TicketResponse
	var err error
	switch c.shape() {
	case shapeAuthentication:
		r.Result, r.Ticket, err = authproto.NewAuthenticationClient(rec).RequestTicket(ctx, source, target)
	case shapeNX:
		r.Result, r.Ticket, r.SourceKey, err = authproto.NewAuthenticationNXClient(rec).RequestTicket(ctx, source, target)
	case shapeCrossplay:
		r.Result, r.Ticket, r.SourceKey, err = crossproto.NewAuthenticationCrossplayClient(rec).RequestTicket(ctx, PlatformWiiU, source, target)
	}
	if rec.undecoded(err) {
		if c.shape() == shapeAuthentication {
			var resp authproto.AuthenticationNXRequestTicketResponse
			if rec.read(&resp) == nil {
				r, err = TicketResponse{Result: resp.Result, Ticket: resp.Ticket, SourceKey: resp.Key}, nil
			}
		} else {
			var resp authproto.AuthenticationRequestTicketResponse
			if rec.read(&resp) == nil {
				r, err = TicketResponse{Result: resp.Result, Ticket: resp.Ticket}, nil
			}
		}
	}
	if err != nil {
		return TicketResponse{}, fmt.Errorf("request ticket %d -> %d: %w", source, target, err)
	}
	if r.Result.IsError() {
		return r, fmt.Errorf("request ticket %d -> %d refused: %w", source, target, r.Result)
	}
	return r, nil
}

// GetPID returns the PID of a user name, 0 when there is none.
func (c *Client) GetPID(ctx context.Context, name string) (types.PID, error) {
	return authproto.NewAuthenticationClient(c.RMC).GetPID(ctx, name)
}

// GetName returns the name of a PID, "" when there is none.
func (c *Client) GetName(ctx context.Context, pid types.PID) (string, error) {
	return authproto.NewAuthenticationClient(c.RMC).GetName(ctx, pid)
}

// ValidateAndRequestTicketWithParam calls method 6 of NEX 4.4+: in
// Authentication_NX's form, or with Options.Crossplay in
// Authentication_Crossplay's (p's PlatformTypeForPlatformPID and the result's
// PlatformPID are on the wire only then).
func (c *Client) ValidateAndRequestTicketWithParam(ctx context.Context, p ValidateParam) (ValidateResult, error) {
	var v ValidateResult
	var err error
	if c.Options.Crossplay {
		v, err = crossproto.NewAuthenticationCrossplayClient(c.RMC).ValidateAndRequestTicketWithParam(ctx, p)
	} else {
		var pv authproto.ValidateAndRequestTicketResult
		pv, err = authproto.NewAuthenticationNXClient(c.RMC).ValidateAndRequestTicketWithParam(ctx, plainParam(&p))
		v = crossResult(&pv)
	}
	if err != nil {
		return ValidateResult{}, fmt.Errorf("login as %q: %w", p.Username, err)
	}
	return v, nil
}

// keepResponse is an rmc.Caller that keeps the last call's response, for
// reading it in another described form when the generated client's does not
// decode it.
type keepResponse struct {
	rmc.Caller
	data []byte
	ok   bool // the call itself succeeded
}

// Call makes the call and keeps its response.
func (k *keepResponse) Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error) {
	data, err := k.Caller.Call(ctx, protocol, method, params)
	k.data, k.ok = data, err == nil
	return data, err
}

// undecoded reports whether err, a generated client's, is its response's
// decoding error (the call succeeded).
func (k *keepResponse) undecoded(err error) bool { return err != nil && k.ok }

// read decodes the kept response into resp (a generated response) to its end.
func (k *keepResponse) read(resp interface{ Read(*types.Reader) }) error {
	r := types.NewReader(k.data, k.Settings())
	resp.Read(&r)
	return r.Done()
}
