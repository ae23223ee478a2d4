// Package health implements the Health protocol (protocol 18,
// nintendo-wiki "Health (18)"), which monitoring tools call on a NEX server:
// PingDaemon, PingDatabase, RunSanityCheck and FixSanityErrors, each taking no
// parameters and answering one Bool. The Server is the generated
// HealthHandler (nex/protocols/health) behind the generated dispatcher.
package health

import (
	"context"
	"log/slog"

	healthproto "github.com/gamewire/gamewire/nex/protocols/health"
	"github.com/gamewire/gamewire/nex/rmc"
)

// Method ids of the Health protocol.
const (
	MethodPingDaemon      = healthproto.HealthMethodPingDaemon
	MethodPingDatabase    = healthproto.HealthMethodPingDatabase
	MethodRunSanityCheck  = healthproto.HealthMethodRunSanityCheck
	MethodFixSanityErrors = healthproto.HealthMethodFixSanityErrors
)

// Server answers the Health protocol. Register it with
// mux.HandleProtocol(rmc.ProtocolHealth, srv). The zero value answers true to
// everything except the database ping, which is true only when no check is set.
type Server struct {
	// PingDatabase checks the account store (for example accounts.Store.Ping);
	// nil answers true.
	PingDatabase func(ctx context.Context) error
	// SanityCheck runs a consistency check for RunSanityCheck and FixSanityErrors
	// (fix is true for the latter); nil answers true.
	SanityCheck func(ctx context.Context, fix bool) error
	// Logger receives failed checks.
	Logger *slog.Logger
}

// handler is the Server as the generated HealthHandler (its fields take the
// methods' names).
type handler struct{ s *Server }

var _ healthproto.HealthHandler = handler{}

// ServeRMC implements rmc.Handler with the generated dispatcher: parameters
// (there are none) are Core::InvalidArgument, unknown methods
// Core::NotImplemented.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return healthproto.ServeHealth(handler{s}, ctx, c, out)
}

// PingDaemon answers true: the server runs.
func (handler) PingDaemon(context.Context, *rmc.Call) (bool, error) { return true, nil }

// PingDatabase answers whether the database check passes.
func (h handler) PingDatabase(ctx context.Context, c *rmc.Call) (bool, error) {
	if h.s.PingDatabase == nil {
		return true, nil
	}
	return h.s.passed(ctx, c, h.s.PingDatabase(ctx)), nil
}

// RunSanityCheck answers whether the sanity check passes.
func (h handler) RunSanityCheck(ctx context.Context, c *rmc.Call) (bool, error) {
	return h.s.sanity(ctx, c, false), nil
}

// FixSanityErrors answers whether the sanity check, fixing what it can, passes.
func (h handler) FixSanityErrors(ctx context.Context, c *rmc.Call) (bool, error) {
	return h.s.sanity(ctx, c, true), nil
}

func (s *Server) sanity(ctx context.Context, c *rmc.Call, fix bool) bool {
	if s.SanityCheck == nil {
		return true
	}
	return s.passed(ctx, c, s.SanityCheck(ctx, fix))
}

// passed reports whether a check passed, logging its failure.
func (s *Server) passed(ctx context.Context, c *rmc.Call, err error) bool {
	if err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex health check failed", slog.Uint64("method", uint64(c.Method)), slog.String("error", err.Error()))
	}
	return err == nil
}
