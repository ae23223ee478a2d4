// Package health implements the Health protocol (protocol 18,
// nintendo-wiki "Health (18)"), which monitoring tools call on a NEX server:
// PingDaemon, PingDatabase, RunSanityCheck and FixSanityErrors, each taking no
// parameters and answering one Bool.
package health

import (
	"context"
	"log/slog"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Method ids of the Health protocol.
const (
	MethodPingDaemon      uint32 = 1
	MethodPingDatabase    uint32 = 2
	MethodRunSanityCheck  uint32 = 3
	MethodFixSanityErrors uint32 = 4
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

// ServeRMC implements rmc.Handler.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if len(c.Params) != 0 {
		return out, types.CoreInvalidArgument
	}
	var err error
	switch c.Method {
	case MethodPingDaemon:
	case MethodPingDatabase:
		if s.PingDatabase != nil {
			err = s.PingDatabase(ctx)
		}
	case MethodRunSanityCheck, MethodFixSanityErrors:
		if s.SanityCheck != nil {
			err = s.SanityCheck(ctx, c.Method == MethodFixSanityErrors)
		}
	default:
		return out, types.CoreNotImplemented
	}
	if err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex health check failed", slog.Uint64("method", uint64(c.Method)), slog.String("error", err.Error()))
	}
	return types.AppendBool(out, err == nil), nil
}
