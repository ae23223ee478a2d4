package auth

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Client makes Ticket Granting calls over an RMC client (a connection to the
// authentication server). Results other than success are returned as errors that
// wrap the types.Result, so errors.Is(err, types.RendezVousInvalidUsername) works.
type Client struct {
	RMC     *rmc.Client
	Options Options
}

func (c *Client) settings() types.Settings { return c.RMC.Settings() }

// AppendLoginRequest appends the parameters of Login: the user name.
func AppendLoginRequest(b []byte, name string) ([]byte, error) { return types.AppendString(b, name) }

// Login calls Login (ValidateAndRequestTicket) for name. The response's ticket is
// still sealed; open it with the password's key (see nex.Login for the whole flow).
func (c *Client) Login(ctx context.Context, name string) (LoginResponse, error) {
	params, err := AppendLoginRequest(nil, name)
	if err != nil {
		return LoginResponse{}, err
	}
	return c.login(ctx, MethodLogin, name, params)
}

// LoginEx calls LoginEx (ValidateAndRequestTicketWithCustomData) with extra data,
// usually an AuthenticationInfo holder.
func (c *Client) LoginEx(ctx context.Context, name string, extra types.AnyDataHolder) (LoginResponse, error) {
	w := types.NewWriter(nil, c.settings())
	w.String(name)
	w.AnyDataHolder(extra)
	params, err := w.Bytes()
	if err != nil {
		return LoginResponse{}, err
	}
	return c.login(ctx, MethodLoginEx, name, params)
}

func (c *Client) login(ctx context.Context, method uint32, name string, params []byte) (LoginResponse, error) {
	data, err := c.RMC.Call(ctx, rmc.ProtocolTicketGranting, method, params)
	if err != nil {
		return LoginResponse{}, fmt.Errorf("login as %q: %w", name, err)
	}
	resp, err := ParseLoginResponse(data, c.settings())
	if err != nil {
		return LoginResponse{}, fmt.Errorf("login as %q: %w", name, err)
	}
	if resp.Result.IsError() {
		return resp, fmt.Errorf("login as %q refused: %w", name, resp.Result)
	}
	return resp, nil
}

// RequestTicket asks for a ticket from source to target, sealed with the source's key.
func (c *Client) RequestTicket(ctx context.Context, source, target types.PID) (TicketResponse, error) {
	req := TicketRequest{PlatformType: PlatformWiiU, Source: source, Target: target}
	params, err := req.Append(nil, c.settings(), c.Options)
	if err != nil {
		return TicketResponse{}, err
	}
	data, err := c.RMC.Call(ctx, rmc.ProtocolTicketGranting, MethodRequestTicket, params)
	if err != nil {
		return TicketResponse{}, fmt.Errorf("request ticket %d -> %d: %w", source, target, err)
	}
	resp, err := ParseTicketResponse(data, c.settings())
	if err != nil {
		return TicketResponse{}, err
	}
	if resp.Result.IsError() {
		return resp, fmt.Errorf("request ticket %d -> %d refused: %w", source, target, resp.Result)
	}
	return resp, nil
}

// GetPID returns the PID of a user name, 0 when there is none.
func (c *Client) GetPID(ctx context.Context, name string) (types.PID, error) {
	params, err := types.AppendString(nil, name)
	if err != nil {
		return 0, err
	}
	data, err := c.RMC.Call(ctx, rmc.ProtocolTicketGranting, MethodGetPID, params)
	if err != nil {
		return 0, err
	}
	r := types.NewReader(data, c.settings())
	pid := r.PID("%retval%")
	return pid, r.Done()
}

// GetName returns the name of a PID, "" when there is none.
func (c *Client) GetName(ctx context.Context, pid types.PID) (string, error) {
	params, err := types.AppendPID(nil, c.settings(), pid)
	if err != nil {
		return "", err
	}
	data, err := c.RMC.Call(ctx, rmc.ProtocolTicketGranting, MethodGetName, params)
	if err != nil {
		return "", err
	}
	r := types.NewReader(data, c.settings())
	name := r.String("%retval%")
	return name, r.Done()
}

// ValidateAndRequestTicketWithParam calls method 6 of NEX 4.4+.
func (c *Client) ValidateAndRequestTicketWithParam(ctx context.Context, p ValidateParam) (ValidateResult, error) {
	params, err := p.Append(nil, c.settings(), c.Options)
	if err != nil {
		return ValidateResult{}, err
	}
	data, err := c.RMC.Call(ctx, rmc.ProtocolTicketGranting, MethodValidateAndRequestTicketWithParam, params)
	if err != nil {
		return ValidateResult{}, fmt.Errorf("login as %q: %w", p.UserName, err)
	}
	r := types.NewReader(data, c.settings())
	v := ReadValidateResult(&r, "result", c.Options)
	return v, r.Done()
}
