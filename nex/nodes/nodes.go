// Package nodes is the registry of secure servers (nodes) that share one store,
// for a game run by several machines: each secure node registers its station url
// and current load and renews that record by heartbeat; the authentication server
// hands each login the least-loaded live node. A node whose heartbeat is older
// than the registry's liveness window is out of rotation, without anyone having to
// remove it.
//
// The registry is an interface over the shared store (nex/accounts for SQLite,
// nex/pgstore for PostgreSQL); choosing a node is one indexed query, so any number
// of authentication servers can share it.
package nodes

import (
	"context"
	"errors"
	"time"
)

// Node is one secure server as the registry records it.
type Node struct {
	// ID names the node; unique in the registry (a host name, or host:port).
	ID string
	// URL is the station url clients are given to reach the node's secure server.
	URL string
	// Load is the node's current number of connections (what Pick balances).
	Load int
	// Capacity is the most connections the node accepts; 0 means no limit.
	Capacity int
	// Heartbeat is when the node last renewed its record (set by the registry).
	Heartbeat time.Time
}

// ErrNoNode is returned by Pick when no live node with room is registered.
var ErrNoNode = errors.New("nodes: no live secure node")

// Registry stores the nodes.
type Registry interface {
	// Announce registers the node or renews its record: URL, load and capacity
	// are replaced and the heartbeat set to the store's current time.
	Announce(ctx context.Context, n Node) error
	// Pick returns the live node (heartbeat within maxAge) with the lowest load
	// that has room, and counts one more connection against it so concurrent
	// logins spread instead of all picking the same node before it heartbeats.
	Pick(ctx context.Context, maxAge time.Duration) (Node, error)
	// Withdraw removes the node (a clean shutdown).
	Withdraw(ctx context.Context, id string) error
	// Nodes lists every registered node, live or not, by id.
	Nodes(ctx context.Context) ([]Node, error)
}
