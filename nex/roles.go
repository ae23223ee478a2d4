package nex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gamewire/gamewire/nex/auth"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/types"
	"github.com/gamewire/gamewire/prudp"
)

// Role selects which of a game's two servers a process runs. A game outgrowing
// one machine runs one authentication process and several secure nodes that
// share a store (PostgreSQL, nex/pgstore): the nodes announce themselves in
// Server.Nodes and the authentication server hands each login the least-loaded
// live one.
type Role uint8

const (
	// RoleAll runs the authentication and the secure server in one process
	// (the default; what `gamewire serve` runs).
	RoleAll Role = iota
	// RoleAuth runs only the authentication server; Server.Nodes is required,
	// and logins go to the least-loaded live secure node in it.
	RoleAuth
	// RoleSecure runs only a secure server, which announces its station url and
	// load in Server.Nodes every HeartbeatInterval.
	RoleSecure
)

// String returns the role's command-line name.
func (r Role) String() string {
	switch r {
	case RoleAll:
		return "all"
	case RoleAuth:
		return "auth"
	case RoleSecure:
		return "secure"
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// ParseRole parses a role's command-line name: all, auth or secure.
func ParseRole(s string) (Role, error) {
	for _, r := range []Role{RoleAll, RoleAuth, RoleSecure} {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("nex: unknown role %q (want all, auth or secure)", s)
}

// Defaults of the node registry's timing.
const (
	DefaultHeartbeatInterval = 2 * time.Second
	// DefaultNodeTimeout is how old a node's heartbeat may be for it to get
	// logins: a node that stops heartbeating is out of rotation within this.
	DefaultNodeTimeout = 3 * DefaultHeartbeatInterval
)

func (s *Server) heartbeatInterval() time.Duration {
	if s.HeartbeatInterval > 0 {
		return s.HeartbeatInterval
	}
	return DefaultHeartbeatInterval
}

func (s *Server) nodeTimeout() time.Duration {
	if s.NodeTimeout > 0 {
		return s.NodeTimeout
	}
	return 3 * s.heartbeatInterval()
}

// checkRole says what is missing for the role, given the sockets Serve got.
func (s *Server) checkRole(authPC, securePC prudp.PacketConn) error {
	switch s.Role {
	case RoleAll:
		if authPC == nil || securePC == nil {
			return errors.New("nex: role all needs both an authentication and a secure socket")
		}
	case RoleAuth:
		if authPC == nil {
			return errors.New("nex: role auth needs the authentication socket")
		}
		if s.Nodes == nil {
			return errors.New("nex: role auth needs Server.Nodes, the registry its secure nodes announce themselves in")
		}
	case RoleSecure:
		if securePC == nil {
			return errors.New("nex: role secure needs the secure socket")
		}
		if s.Nodes == nil {
			return errors.New("nex: role secure needs Server.Nodes, the registry to announce itself in")
		}
	default:
		return fmt.Errorf("nex: unknown %v", s.Role)
	}
	return nil
}

// pickNode is the authentication server's auth.Server.SecureURLFor in RoleAuth.
func (s *Server) pickNode(ctx context.Context, a auth.Account) (types.StationURL, error) {
	n, err := s.Nodes.Pick(ctx, s.nodeTimeout())
	if errors.Is(err, nodes.ErrNoNode) {
		return types.StationURL{}, fmt.Errorf("%w (none heartbeat within %v with room): is a `serve --role secure` node running on the same store?", err, s.nodeTimeout())
	}
	if err != nil {
		return types.StationURL{}, err
	}
	u, err := types.ParseStationURLString(n.URL)
	if err != nil {
		return types.StationURL{}, fmt.Errorf("nex: node %q announced a bad station url %q: %w", n.ID, n.URL, err)
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex login sent to node", slog.Uint64("pid", uint64(a.PID)),
			slog.String("node", n.ID), slog.Int("load", n.Load))
	}
	return u, nil
}

// nodeID is the name this secure node announces itself under.
func (s *Server) nodeID(url types.StationURL) string {
	if s.Node != "" {
		return s.Node
	}
	port, _ := url.Get("port")
	return url.Address() + ":" + port
}

// ErrNodeIDTaken is returned by Serve in RoleSecure when another live node
// is registered under this node's id (Server.Node): two nodes announcing
// one id would overwrite each other's record, and every login would go to
// one of them.
var ErrNodeIDTaken = errors.New("nex: node id taken by another live node")

// checkNodeID refuses to start a secure node whose id a live node (heartbeat
// within the node timeout) holds with another station url. The same url is
// this node restarted after a crash (its address is bound here now), which
// takes its record over.
func (s *Server) checkNodeID(ctx context.Context, url types.StationURL) error {
	id := s.nodeID(url)
	ns, err := s.Nodes.Nodes(ctx)
	if err != nil {
		return fmt.Errorf("nex: reading the node registry: %w", err)
	}
	for _, n := range ns {
		if n.ID != id || n.URL == url.String() {
			continue
		}
		if age := time.Since(n.Heartbeat); age < s.nodeTimeout() {
			return fmt.Errorf("%w: node %q is %s (heartbeat %v ago); give this node another --node-id, or stop that one (its record lapses %v after its last heartbeat)",
				ErrNodeIDTaken, id, n.URL, age.Round(time.Millisecond), s.nodeTimeout())
		}
	}
	return nil
}

// heartbeat announces the secure node with its current load until ctx ends, then
// withdraws it (a clean shutdown takes it out of rotation at once).
func (s *Server) heartbeat(ctx context.Context, srv *prudp.Server, url types.StationURL) {
	id := s.nodeID(url)
	announce := func() {
		n := nodes.Node{ID: id, URL: url.String(), Load: srv.Stats().Connections, Capacity: s.NodeCapacity}
		actx, cancel := context.WithTimeout(ctx, s.heartbeatInterval())
		defer cancel()
		if err := s.Nodes.Announce(actx, n); err != nil {
			s.beatingSince.Store(0)
			if s.Logger != nil && ctx.Err() == nil {
				s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex node heartbeat failed", slog.String("node", id), slog.String("error", err.Error()))
			}
			return
		}
		s.beatingSince.CompareAndSwap(0, time.Now().UnixNano())
	}
	announce()
	t := time.NewTicker(s.heartbeatInterval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := s.Nodes.Withdraw(wctx, id); err != nil && s.Logger != nil {
				s.Logger.LogAttrs(wctx, slog.LevelWarn, "nex node withdraw failed", slog.String("node", id), slog.String("error", err.Error()))
			}
			cancel()
			return
		case <-t.C:
			announce()
		}
	}
}
