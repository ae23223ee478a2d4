package nex

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
)

// multiplayer is the part of Server that serves the multiplayer protocols:
// matchmaking (21, 50, 109) over Server.Matchmaking, NAT Traversal (3), and the
// notifications (14) they send through the hub of secure connections.
type multiplayer struct {
	hub notifications.Hub
	mm  matchmaking.Server
	nat nattraversal.Server
	// cross links a secure node to the others sharing its store (crossnode.go).
	cross crossNode
	// beatingSince is when this secure node's heartbeats started to succeed
	// without a failure since (Unix nanoseconds; 0: the last one failed, or
	// none yet). reapNodes judges the others only once it is old enough.
	beatingSince atomic.Int64
}

// Hub returns the hub of secure connections that notifications go through.
func (s *Server) Hub() *notifications.Hub { return &s.hub }

// MatchmakingServer returns the matchmaking handler (nil-Store when
// Matchmaking is not set).
func (s *Server) MatchmakingServer() *matchmaking.Server { return &s.mm }

// NATTraversal returns the NAT Traversal handler, for its counters.
func (s *Server) NATTraversal() *nattraversal.Server { return &s.nat }

// startMultiplayer registers the multiplayer protocols on the secure mux and
// clears what connections of this node left in the store before a restart.
func (s *Server) startMultiplayer(ctx context.Context) error {
	if s.Matchmaking == nil {
		return nil
	}
	s.hub.Logger = s.Logger
	s.mm = matchmaking.Server{Store: s.Matchmaking, Hub: &s.hub, Stations: &s.secure, Node: s.Node, Logger: s.Logger, Friends: s.FriendLists}
	if s.mm.Friends == nil && s.Friends != nil {
		s.mm.Friends = s.Friends.Store
	}
	s.mm.NAT = s.NATMatchmaking
	s.mm.Hooks = s.MatchmakingHooks
	s.nat = nattraversal.Server{Hub: &s.hub, Stations: &s.secure, GameServerID: s.GameServerID, Logger: s.Logger,
		// NAT reports go to the matchmaking store, for NAT-aware
		// auto-matchmaking on every node sharing it.
		OnProperties: s.mm.ReportNAT,
		OnResult: func(ctx context.Context, r nattraversal.Result) {
			if err := s.mm.ReportNATResult(ctx, r.Peer, r.Success); err != nil && s.Logger != nil {
				s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex nat traversal: keeping a result failed", slog.Uint64("pid", uint64(r.PID)),
					slog.String("error", err.Error()))
			}
		}}
	if s.Nodes != nil && s.Role == RoleSecure {
		// Before Start: the notifications of this node's restart reach the
		// players of the other nodes.
		s.startCrossNode(ctx)
	}
	if err := s.mm.Start(ctx); err != nil {
		return fmt.Errorf("nex: matchmaking store: %w", err)
	}
	s.mm.Register(s.Mux)
	s.Mux.HandleProtocol(nattraversal.Protocol, &s.nat)
	if s.Nodes != nil && s.Role == RoleSecure {
		go s.reapNodes(ctx)
	}
	return nil
}

// startFriends wires the friends server to the hub (and, on a secure node
// sharing its store, to the other nodes' mailboxes), clears what this node
// recorded before a restart and registers its protocols.
func (s *Server) startFriends(ctx context.Context) error {
	f := s.Friends
	s.hub.Logger = s.Logger
	f.Hub, f.Node = &s.hub, s.Node
	f.Logger = cmp.Or(f.Logger, s.Logger)
	if s.cross.ex != nil {
		f.Mail = s.cross.ex
	}
	if err := f.Start(ctx); err != nil {
		return fmt.Errorf("nex: friends store: %w", err)
	}
	f.Register(s.Mux)
	go func() {
		// Expired friend requests leave the store.
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := f.Sweep(ctx); err != nil && s.Logger != nil && ctx.Err() == nil {
					s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex friends: expiring requests failed", slog.String("error", err.Error()))
				}
			}
		}
	}()
	return nil
}

// connClosed removes an ended connection from the hub and its participations
// from every gathering (the others are told), and records its player offline
// for the friends server (their friends are told).
func (s *Server) connClosed(p *rmc.Peer) {
	s.hub.Remove(p)
	if s.Friends != nil && p.Scheme == "prudps" {
		go s.Friends.Disconnected(context.WithoutCancel(s.ctx), p)
	}
	if s.Matchmaking != nil {
		// Not on the transport's goroutine: the store's transaction may wait.
		// A server shutting down still cleans up (ResetNode does it at the
		// next start otherwise).
		go s.mm.Disconnected(context.WithoutCancel(s.ctx), p)
	}
}

// reapNodes runs on secure nodes sharing a store: every node timeout it removes
// the participations recorded by nodes whose heartbeat is more than twice the
// timeout old (crashed and not restarted), so their gatherings do not keep
// players that are gone. A node that restarts clears its own (Start).
//
// A node judges the others only while its own heartbeats have been reaching
// the store for that long: when the store was unreachable (a database restart
// or failover), no node could heartbeat, and the first node back must not take
// the others' old heartbeats for crashes and drop every player they have. Ages
// are measured against this node's own latest heartbeat as the store recorded
// it, so the store's clock judges all nodes alike (pgstore: the database's
// now()), whatever the skew of the machines' clocks.
func (s *Server) reapNodes(ctx context.Context) {
	t := time.NewTicker(s.nodeTimeout())
	defer t.Stop()
	window := 2 * s.nodeTimeout()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		since := s.beatingSince.Load()
		if since == 0 || time.Since(time.Unix(0, since)) < window {
			continue
		}
		list, err := s.Nodes.Nodes(ctx)
		if err != nil {
			continue
		}
		ref := time.Now()
		for _, n := range list {
			if n.ID == s.Node {
				ref = n.Heartbeat
			}
		}
		for _, n := range list {
			if n.ID != s.Node && ref.Sub(n.Heartbeat) > window {
				if s.cross.ex != nil {
					_ = s.cross.ex.ClearStations(ctx, n.ID) // retried at the next round if it fails
					s.dropMail(ctx, n.ID)
				}
				if _, err := s.mm.ReapNode(ctx, n.ID); err != nil && s.Logger != nil && ctx.Err() == nil {
					s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex matchmaking: reaping a stopped node failed",
						slog.String("node", n.ID), slog.String("error", err.Error()))
				}
			}
		}
	}
}
