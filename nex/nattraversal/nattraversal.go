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
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Protocol is the protocol id.
const Protocol uint16 = 3

// Method ids.
const (
	MethodRequestProbeInitiation         uint32 = 1
	MethodInitiateProbe                  uint32 = 2
	MethodRequestProbeInitiationExt      uint32 = 3
	MethodReportNATTraversalResult       uint32 = 4
	MethodReportNATProperties            uint32 = 5
	MethodGetRelaySignatureKey           uint32 = 6
	MethodReportNATTraversalResultDetail uint32 = 7
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

// Append writes k as the method's response.
func (k *RelaySignatureKey) Append(w *types.Writer) {
	w.S32(k.RelayMode)
	w.DateTime(k.CurrentUTCTime)
	w.String(k.Address)
	w.U16(k.Port)
	w.S32(k.RelayAddressType)
	w.U32(k.GameServerID)
}

// ReadRelaySignatureKey reads GetRelaySignatureKey's response; errors are
// left in r.
func ReadRelaySignatureKey(r *types.Reader) RelaySignatureKey {
	return RelaySignatureKey{
		RelayMode:        r.S32("relayMode"),
		CurrentUTCTime:   r.DateTime("currentUTCTime"),
		Address:          r.String("address"),
		Port:             r.U16("port"),
		RelayAddressType: r.S32("relayAddressType"),
		GameServerID:     r.U32("gameServerID"),
	}
}

// Server answers NAT Traversal. Hub and Stations are required for probes and
// NAT properties.
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

// ServeRMC implements rmc.Handler.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r := c.Reader()
	switch c.Method {
	case MethodRequestProbeInitiation, MethodRequestProbeInitiationExt:
		targets := types.ReadList(&r, "urlTargetList", (*types.Reader).StationURL)
		var probe types.StationURL
		if c.Method == MethodRequestProbeInitiationExt {
			probe = r.StationURL("urlStationToProbe")
		}
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
		if len(targets) > MaxTargets {
			return out, fmt.Errorf("%w: %d probe targets, at most %d", types.CoreInvalidArgument, len(targets), MaxTargets)
		}
		if c.Method == MethodRequestProbeInitiation {
			// The station to probe is the caller, as the server sees it.
			u, ok := s.Stations.PublicURL(c.Peer)
			if !ok {
				return out, types.RendezVousNotAuthenticated
			}
			probe = u
		}
		for _, t := range targets {
			pid := t.PID()
			if pid == 0 {
				return out, fmt.Errorf("%w: probe target %q has no PID", types.CoreInvalidArgument, t)
			}
			err := s.Hub.Call(ctx, pid, Protocol, MethodInitiateProbe, func(w *types.Writer, _ types.Version) { w.StationURL(probe) })
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
		return out, nil
	case MethodReportNATProperties:
		natm := r.U32("natmapping")
		natf := r.U32("natfiltering")
		rtt := r.U32("rtt")
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
		if !s.Stations.SetNATProperties(c.Peer, natm, natf) {
			return out, types.RendezVousNotAuthenticated
		}
		if s.OnProperties != nil {
			if err := s.OnProperties(ctx, c.Peer, Properties{Mapping: natm, Filtering: natf, RTT: rtt}); err != nil {
				return out, err
			}
		}
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex nat properties", slog.Uint64("pid", uint64(c.Peer.PID)),
				slog.Uint64("natm", uint64(natm)), slog.Uint64("natf", uint64(natf)), slog.Uint64("rtt", uint64(rtt)))
		}
		return out, nil
	case MethodReportNATTraversalResult, MethodReportNATTraversalResultDetail:
		res := Result{Peer: c.Peer, PID: c.Peer.PID, CID: r.U32("cid"), Success: r.Bool("result")}
		if c.Method == MethodReportNATTraversalResultDetail {
			res.Detail = r.S32("detail")
			res.RTT = r.U32("rtt")
		} else if r.Remaining() == 4 {
			// The rtt is only sent by Wii U and Switch clients.
			res.RTT = r.U32("rtt")
		}
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
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
		return out, nil
	case MethodGetRelaySignatureKey:
		if err := r.Done(); err != nil {
			return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
		}
		// gamewire runs no relay server: relay mode 0, no address, port 0 and
		// address type 0, what Pretendo's nex-protocols-common-go answers too
		// (the page names no values). The time is the server's, in UTC.
		k := RelaySignatureKey{CurrentUTCTime: types.DateTimeFromTime(time.Now().UTC()), GameServerID: s.GameServerID}
		w := types.NewWriter(out, c.Peer.Settings)
		k.Append(&w)
		return w.Bytes()
	}
	return out, types.CoreNotImplemented
}

// Client calls NAT Traversal over a logged-in secure connection.
type Client struct {
	RMC *rmc.Client
}

// ReportNATProperties tells the server the caller's NAT mapping and filtering
// and its round-trip time to the server (milliseconds).
func (c *Client) ReportNATProperties(ctx context.Context, p Properties) error {
	w := types.NewWriter(nil, c.RMC.Settings())
	w.U32(p.Mapping)
	w.U32(p.Filtering)
	w.U32(p.RTT)
	params, err := w.Bytes()
	if err != nil {
		return err
	}
	_, err = c.RMC.Call(ctx, Protocol, MethodReportNATProperties, params)
	return err
}

// ReportNATTraversalResult tells the server how probing the station with
// Rendez-Vous connection id cid went; withRTT adds the round-trip time, as
// Wii U and Switch clients send it.
func (c *Client) ReportNATTraversalResult(ctx context.Context, cid uint32, success, withRTT bool, rtt uint32) error {
	w := types.NewWriter(nil, c.RMC.Settings())
	w.U32(cid)
	w.Bool(success)
	if withRTT {
		w.U32(rtt)
	}
	params, err := w.Bytes()
	if err != nil {
		return err
	}
	_, err = c.RMC.Call(ctx, Protocol, MethodReportNATTraversalResult, params)
	return err
}

// GetRelaySignatureKey asks the server for its relay server.
func (c *Client) GetRelaySignatureKey(ctx context.Context) (RelaySignatureKey, error) {
	data, err := c.RMC.Call(ctx, Protocol, MethodGetRelaySignatureKey, nil)
	if err != nil {
		return RelaySignatureKey{}, err
	}
	r := types.NewReader(data, c.RMC.Settings())
	k := ReadRelaySignatureKey(&r)
	if err := r.Done(); err != nil {
		return RelaySignatureKey{}, fmt.Errorf("nat traversal: GetRelaySignatureKey response: %w", err)
	}
	return k, nil
}
