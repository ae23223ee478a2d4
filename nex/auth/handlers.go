package auth

import (
	"context"
	"errors"

	authproto "github.com/gamewire/gamewire/nex/protocols/authentication"
	crossproto "github.com/gamewire/gamewire/nex/protocols/authenticationcrossplay"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// The Server behind the generated dispatchers: one handler per described form
// of Ticket Granting, as the three forms share method names with other
// parameters and results (RequestTicket) and so cannot be one Go type.
// ServeRMC chooses the form per call (Options.shape).
var (
	_ authproto.AuthenticationHandler           = handler{}
	_ authproto.AuthenticationNXHandler         = nxHandler{}
	_ crossproto.AuthenticationCrossplayHandler = crossplayHandler{}
)

// handler is the Server as Authentication (NEX 1 to 3).
type handler struct{ s *Server }

// Login answers Login; a server that requires the extra data refuses it with
// Authentication::ValidationFailed.
func (h handler) Login(ctx context.Context, c *rmc.Call, username string) (types.Result, types.PID, []byte, RVConnectionData, string, error) {
	res := types.ResultSuccess
	if h.s.RequireExtraData {
		res = types.AuthenticationValidationFailed
	}
	r, err := h.s.login(ctx, c, username, res, nil, false)
	return r.Result, r.PID, r.Ticket, r.Connection, r.BuildName, err
}

// LoginEx answers LoginEx without a source key.
func (h handler) LoginEx(ctx context.Context, c *rmc.Call, username string, extra types.AnyData) (types.Result, types.PID, []byte, RVConnectionData, string, error) {
	r, err := h.s.loginEx(ctx, c, username, extra, false)
	return r.Result, r.PID, r.Ticket, r.Connection, r.BuildName, err
}

// RequestTicket answers RequestTicket without a source key.
func (h handler) RequestTicket(ctx context.Context, c *rmc.Call, source, target types.PID) (types.Result, []byte, error) {
	r, err := h.s.requestTicket(ctx, c, source, target)
	return r.Result, r.Ticket, err
}

// GetPID answers the PID of a user name, 0 when there is none.
func (h handler) GetPID(ctx context.Context, c *rmc.Call, username string) (types.PID, error) {
	a, err := h.s.Accounts.AccountByName(ctx, username)
	if errors.Is(err, ErrNoAccount) {
		return 0, nil
	}
	return a.PID, err
}

// GetName answers the name of a PID, "" when there is none.
func (h handler) GetName(ctx context.Context, c *rmc.Call, pid types.PID) (string, error) {
	a, err := h.s.Accounts.AccountByPID(ctx, pid)
	if errors.Is(err, ErrNoAccount) {
		return "", nil
	}
	return a.Name, err
}

// LoginWithContext is not answered (ServeRMC refuses it before its parameters
// are read): its loginData is undocumented.
func (handler) LoginWithContext(context.Context, *rmc.Call, types.AnyData) (types.Result, types.PID, []byte, RVConnectionData, error) {
	return 0, 0, nil, RVConnectionData{}, types.CoreNotImplemented
}

// nxHandler is the Server as Authentication_NX (NEX 4 and later): source keys,
// token logins, method 6 as ValidateAndRequestTicketWithParam.
type nxHandler struct{ s *Server }

// ValidateAndRequestTicket is Login.
func (h nxHandler) ValidateAndRequestTicket(ctx context.Context, c *rmc.Call, username string) (types.Result, types.PID, []byte, RVConnectionData, string, error) {
	return handler(h).Login(ctx, c, username)
}

// ValidateAndRequestTicketWithCustomData is LoginEx with the source key:
// ValidateToken may authenticate by the AuthenticationInfo.
func (h nxHandler) ValidateAndRequestTicketWithCustomData(ctx context.Context, c *rmc.Call, username string, extra types.AnyData) (types.Result, types.PID, []byte, RVConnectionData, string, string, error) {
	r, err := h.s.loginEx(ctx, c, username, extra, true)
	return r.Result, r.PID, r.Ticket, r.Connection, r.BuildName, r.SourceKey, err
}

// RequestTicket answers RequestTicket with an empty source key (the ticket
// opens with the source's password key).
func (h nxHandler) RequestTicket(ctx context.Context, c *rmc.Call, source, target types.PID) (types.Result, []byte, string, error) {
	r, err := h.s.requestTicket(ctx, c, source, target)
	return r.Result, r.Ticket, r.SourceKey, err
}

// GetPID is Authentication's.
func (h nxHandler) GetPID(ctx context.Context, c *rmc.Call, username string) (types.PID, error) {
	return handler(h).GetPID(ctx, c, username)
}

// GetName is Authentication's.
func (h nxHandler) GetName(ctx context.Context, c *rmc.Call, pid types.PID) (string, error) {
	return handler(h).GetName(ctx, c, pid)
}

// ValidateAndRequestTicketWithParam answers the Switch's login (and Monster
// Hunter XX's at NEX 4.4).
func (h nxHandler) ValidateAndRequestTicketWithParam(ctx context.Context, c *rmc.Call, param authproto.ValidateAndRequestTicketParam) (authproto.ValidateAndRequestTicketResult, error) {
	p := crossParam(&param)
	v, err := h.s.validateWithParam(ctx, c, &p)
	return plainResult(&v), err
}

// crossplayHandler is the Server as Authentication_Crossplay: Authentication_NX
// with the platform fields.
type crossplayHandler struct{ nxHandler }

// RequestTicket is Authentication_NX's; the platform type does not change the
// ticket.
func (h crossplayHandler) RequestTicket(ctx context.Context, c *rmc.Call, platformType PlatformType, source, target types.PID) (types.Result, []byte, string, error) {
	return h.nxHandler.RequestTicket(ctx, c, source, target)
}

// ValidateAndRequestTicketWithParam answers with the user's PID as the
// platform PID too (gamewire's accounts have one PID on every platform).
func (h crossplayHandler) ValidateAndRequestTicketWithParam(ctx context.Context, c *rmc.Call, param ValidateParam) (ValidateResult, error) {
	return h.s.validateWithParam(ctx, c, &param)
}
