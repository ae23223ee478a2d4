// Package nattraversal implements the NAT Traversal protocol (protocol 3,
// https://nintendo-wiki.pretendo.network/docs/nex/protocols/nat-traversal):
// RequestProbeInitiation(Ext) asks the server to tell other stations to probe
// the caller (the server calls InitiateProbe on their secure connections);
// ReportNATProperties records the caller's NAT mapping and filtering, which the
// Secure Connection server then writes into the caller's station urls (natm,
// natf); ReportNATTraversalResult(Detail) record how a probe went;
// GetRelaySignatureKey says there is no relay server.
package nattraversal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
	natproto "github.com/gamewire/gamewire/nex/protocols/nattraversal"
	natwiiu "github.com/gamewire/gamewire/nex/protocols/nattraversalwiiu"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Protocol is the protocol id.
const Protocol = natproto.NATTraversalProtocolID

// Method ids.
const (
	MethodRequestProbeInitiation         = natproto.NATTraversalMethodRequestProbeInitiation
	MethodInitiateProbe                  = natproto.NATTraversalMethodInitiateProbe
	MethodRequestProbeInitiationExt      = natproto.NATTraversalMethodRequestProbeInitiationExt
	MethodReportNATTraversalResult       = natproto.NATTraversalMethodReportNATTraversalResult
	MethodReportNATProperties            = natproto.NATTraversalMethodReportNATProperties
	MethodGetRelaySignatureKey           = natproto.NATTraversalMethodGetRelaySignatureKey
	MethodReportNATTraversalResultDetail = natproto.NATTraversalMethodReportNATTraversalResultDetail
)

// MaxTargets bounds the url list of one probe request.
const MaxTargets = 64

// Stations is what the server needs of the Secure Connection server: the
// caller's public url, and where to record NAT properties.
type Stations interface {
	PublicURL(p *rmc.Peer) (types.StationURL, bool)
	SetNATProperties(p *rmc.Peer, mapping, filtering uint32) bool
}

// Result is one reported traversal result.
type Result struct {
	// Peer is the connection that reported it.
	Peer    *rmc.Peer
	PID     types.PID
	CID     uint32 // the target's Rendez-Vous connection id
	Success bool
	Detail  int32
	RTT     uint32 // milliseconds (0 when the platform does not send it)
}

// RelaySignatureKey is GetRelaySignatureKey's answer (the nat-traversal page,
// method 6): the relay server a client may fall back to when probing fails,
// and the server's time.
type RelaySignatureKey struct {
	RelayMode        int32
	CurrentUTCTime   types.DateTime
	Address          string
	Port             uint16
	RelayAddressType int32
	GameServerID     uint32
}

// Server answers NAT Traversal through the generated dispatchers
// (nex/protocols/nattraversal, and nattraversalwiiu for the Wii U's
// ReportNATTraversalResult). Hub and Stations are required for probes and NAT
// properties.
type Server struct {
	Hub      *notifications.Hub
	Stations Stations
	// GameServerID is the game server id GetRelaySignatureKey answers (a
	// title's server id, nex/games); 0 when not known.
	GameServerID uint32
	// OnResult receives traversal results (the secure server counts them in
	// the matchmaking store); they are logged at debug level either way.
	OnResult func(ctx context.Context, r Result)
	// OnProperties, when set, receives the NAT properties a station reported
	// (after Stations recorded them in its urls): the secure server keeps them
	// in the matchmaking store for NAT-aware auto-matchmaking. An error it
	// returns is the method's answer.
	OnProperties func(ctx context.Context, p *rmc.Peer, props Properties) error
	// Elsewhere, when set, relays a probe request to a target not connected
	// to this server (secure nodes sharing a store: the target's node).
	Elsewhere func(ctx context.Context, target types.PID, probe types.StationURL) error
	Logger    *slog.Logger

	probes, results, failures atomic.Uint64
}

// Stats returns the probe requests relayed and the results reported (and how
// many of them failed).
func (s *Server) Stats() (probes, results, failures uint64) {
	return s.probes.Load(), s.results.Load(), s.failures.Load()
}

// reportResultSize is the size of ReportNATTraversalResult's parameters
// without the Wii U's rtt: cid (u32) and result (bool).
const reportResultSize = 4 + 1

// ServeRMC implements rmc.Handler with the generated dispatchers: NATTraversal's,
// or NATTraversal_WiiU's for a ReportNATTraversalResult longer than the 3DS's
// and NintendoClients' (the Wii U and the Switch send the rtt; nothing else
// tells the forms apart). InitiateProbe is the server's call to clients: it
// is refused with Core::NotImplemented before its parameters are read.
// Parameters that do not decode are Core::InvalidArgument.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	switch {
	case c.Method == MethodInitiateProbe:
		return out, types.CoreNotImplemented
	case c.Method == MethodReportNATTraversalResult && len(c.Params) > reportResultSize:
		return natwiiu.ServeNATTraversalWiiU(wiiuHandler{handler{s}}, ctx, c, out)
	}
	return natproto.ServeNATTraversal(handler{s}, ctx, c, out)
}

// handler is the Server as the generated NATTraversalHandler.
type handler struct{ s *Server }

// wiiuHandler is the Server as NATTraversal_WiiU's handler: the rtt in
// ReportNATTraversalResult.
type wiiuHandler struct{ handler }

var (
	_ natproto.NATTraversalHandler    = handler{}
	_ natwiiu.NATTraversalWiiUHandler = wiiuHandler{}
)

// RequestProbeInitiation asks each target to probe the caller as the server
// sees it (its public url).
func (h handler) RequestProbeInitiation(ctx context.Context, c *rmc.Call, targets []types.StationURL) error {
	if err := checkTargets(targets); err != nil {
		return err
	}
	u, ok := h.s.Stations.PublicURL(c.Peer)
	if !ok {
		return types.RendezVousNotAuthenticated
	}
	return h.s.probe(ctx, targets, u)
}

// RequestProbeInitiationExt asks each target to probe the station given.
func (h handler) RequestProbeInitiationExt(ctx context.Context, c *rmc.Call, targets []types.StationURL, probe types.StationURL) error {
	if err := checkTargets(targets); err != nil {
		return err
	}
	return h.s.probe(ctx, targets, probe)
}

// InitiateProbe is the server's call to clients, not answered (ServeRMC
// refuses it first).
func (handler) InitiateProbe(context.Context, *rmc.Call, types.StationURL) error {
	return types.CoreNotImplemented
}

// checkTargets bounds a probe request: at most MaxTargets urls, each naming
// its station's PID.
func checkTargets(targets []types.StationURL) error {
	if len(targets) > MaxTargets {
		return fmt.Errorf("%w: %d probe targets, at most %d", types.CoreInvalidArgument, len(targets), MaxTargets)
	}
	for _, t := range targets {
		if t.PID() == 0 {
			return fmt.Errorf("%w: probe target %q has no PID", types.CoreInvalidArgument, t)
		}
	}
	return nil
}

// probe asks each target's connections to probe station probe (here, or on its
// node through Elsewhere); targets not reachable are logged.
func (s *Server) probe(ctx context.Context, targets []types.StationURL, probe types.StationURL) error {
	for _, t := range targets {
		pid := t.PID()
		err := InitiateProbe(ctx, s.Hub, pid, probe)
		if errors.Is(err, notifications.ErrOffline) && s.Elsewhere != nil {
			err = s.Elsewhere(ctx, pid, probe)
		}
		if err == nil {
			s.probes.Add(1)
		} else if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex nat traversal: probe target not reachable", slog.Uint64("pid", uint64(pid)),
				slog.String("error", err.Error()))
		}
	}
	return nil
}

// InitiateProbe calls InitiateProbe on every connection of pid on hub (the
// generated request, in each connection's settings): probe the station probe.
// notifications.ErrOffline when pid has none.
func InitiateProbe(ctx context.Context, hub *notifications.Hub, pid types.PID, probe types.StationURL) error {
	return hub.Call(ctx, pid, Protocol, MethodInitiateProbe, func(w *types.Writer, _ types.Version) {
		(&natproto.NATTraversalInitiateProbeRequest{StationToProbe: probe}).Append(w)
	})
}

// ReportNATProperties records the caller's NAT mapping and filtering in its
// station urls and hands them to OnProperties.
func (h handler) ReportNATProperties(ctx context.Context, c *rmc.Call, mapping natproto.NATMapping, filtering natproto.NATFiltering, rtt uint32) error {
	s := h.s
	natm, natf := uint32(mapping), uint32(filtering)
	if !s.Stations.SetNATProperties(c.Peer, natm, natf) {
		return types.RendezVousNotAuthenticated
	}
	if s.OnProperties != nil {
		if err := s.OnProperties(ctx, c.Peer, Properties{Mapping: natm, Filtering: natf, RTT: rtt}); err != nil {
			return err
		}
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex nat properties", slog.Uint64("pid", uint64(c.Peer.PID)),
			slog.Uint64("natm", uint64(natm)), slog.Uint64("natf", uint64(natf)), slog.Uint64("rtt", uint64(rtt)))
	}
	return nil
}

// ReportNATTraversalResult records a result without the round-trip time (the
// 3DS's form, NintendoClients').
func (h handler) ReportNATTraversalResult(ctx context.Context, c *rmc.Call, cid uint32, result bool) error {
	h.s.result(ctx, Result{Peer: c.Peer, PID: c.Peer.PID, CID: cid, Success: result})
	return nil
}

// ReportNATTraversalResult records a result with its round-trip time (the Wii
// U's and the Switch's form).
func (h wiiuHandler) ReportNATTraversalResult(ctx context.Context, c *rmc.Call, cid uint32, result bool, rtt uint32) error {
	h.s.result(ctx, Result{Peer: c.Peer, PID: c.Peer.PID, CID: cid, Success: result, RTT: rtt})
	return nil
}

// ReportNATTraversalResultDetail records a result with its detail and
// round-trip time.
func (h handler) ReportNATTraversalResultDetail(ctx context.Context, c *rmc.Call, cid uint32, result bool, detail int32, rtt uint32) error {
	h.s.result(ctx, Result{Peer: c.Peer, PID: c.Peer.PID, CID: cid, Success: result, Detail: detail, RTT: rtt})
	return nil
}

// result counts a reported result, hands it to OnResult and logs it.
func (s *Server) result(ctx context.Context, res Result) {
	s.results.Add(1)
	if !res.Success {
		s.failures.Add(1)
	}
	if s.OnResult != nil {
		s.OnResult(ctx, res)
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex nat traversal result", slog.Uint64("pid", uint64(res.PID)),
			slog.Uint64("cid", uint64(res.CID)), slog.Bool("success", res.Success), slog.Uint64("rtt", uint64(res.RTT)))
	}
}

// GetRelaySignatureKey answers that gamewire runs no relay server: relay mode
// 0, no address, port 0 and address type 0, what Pretendo's
// nex-protocols-common-go answers too (the page names no values). The time is
// the server's, in UTC.
func (h handler) GetRelaySignatureKey(ctx context.Context, c *rmc.Call) (mode int32, now types.DateTime, address string, port uint16, addressType int32, gameServerID uint32, err error) {
	return 0, types.DateTimeFromTime(time.Now().UTC()), "", 0, 0, h.s.GameServerID, nil
}

// Client calls NAT Traversal over a logged-in secure connection with the
// generated clients.
type Client struct {
	RMC rmc.Caller
}

// ReportNATProperties tells the server the caller's NAT mapping and filtering
// and its round-trip time to the server (milliseconds).
func (c *Client) ReportNATProperties(ctx context.Context, p Properties) error {
	return natproto.NewNATTraversalClient(c.RMC).ReportNATProperties(ctx, natproto.NATMapping(p.Mapping), natproto.NATFiltering(p.Filtering), p.RTT)
}

// ReportNATTraversalResult tells the server how probing the station with
// Rendez-Vous connection id cid went; withRTT adds the round-trip time, as
// Wii U and Switch clients send it (NATTraversal_WiiU's form).
func (c *Client) ReportNATTraversalResult(ctx context.Context, cid uint32, success, withRTT bool, rtt uint32) error {
	if withRTT {
		return natwiiu.NewNATTraversalWiiUClient(c.RMC).ReportNATTraversalResult(ctx, cid, success, rtt)
	}
	return natproto.NewNATTraversalClient(c.RMC).ReportNATTraversalResult(ctx, cid, success)
}

// GetRelaySignatureKey asks the server for its relay server.
func (c *Client) GetRelaySignatureKey(ctx context.Context) (RelaySignatureKey, error) {
	var k RelaySignatureKey
	var err error
	k.RelayMode, k.CurrentUTCTime, k.Address, k.Port, k.RelayAddressType, k.GameServerID, err =
		natproto.NewNATTraversalClient(c.RMC).GetRelaySignatureKey(ctx)
	if err != nil {
		return RelaySignatureKey{}, fmt.Errorf("nat traversal: GetRelaySignatureKey: %w", err)
	}
	return k, nil
}
