package nodes

import "context"

// Message is one piece of mail between secure nodes: something a node has to
// send to a connection that is on another node (a notification, a NAT probe
// request). Kind says what the payload is; the store does not look inside.
type Message struct {
	// PID is the player the message is for (0 when the payload says).
	PID uint64
	// Kind names the payload's format (e.g. "matchmaking", "probe").
	Kind string
	// Payload is the message, in a canonical encoding the receiving node
	// re-encodes for its connection's settings.
	Payload []byte
}

// MaxMailPayload bounds one message's payload; Post refuses larger ones.
const MaxMailPayload = 64 << 10

// Mailbox carries messages between the secure nodes sharing a store, addressed
// by node id. Every node takes its own mail in a loop and hands it to its
// connections.
type Mailbox interface {
	// Post queues msgs for node, in order, in one transaction.
	Post(ctx context.Context, node string, msgs ...Message) error
	// Take removes and returns up to max of node's oldest messages, oldest
	// first. Messages posted by one caller come out in the order posted.
	Take(ctx context.Context, node string, max int) ([]Message, error)
}

// Stations is one node's record of a player's station urls (its secure
// connections' registrations there).
type Stations struct {
	Node string
	PID  uint64
	URLs []string
}

// Directory records the station urls of each player on each node, so a node
// can give its clients the urls of players connected elsewhere.
type Directory interface {
	// SetStations replaces what node recorded for pid; no urls removes the
	// record (the player's last connection there ended).
	SetStations(ctx context.Context, node string, pid uint64, urls []string) error
	// StationsOf returns every node's record for pid, by node.
	StationsOf(ctx context.Context, pid uint64) ([]Stations, error)
	// ClearStations removes every record of node (it restarted, or stopped).
	ClearStations(ctx context.Context, node string) error
}

// Exchange is what secure nodes sharing a store pass each other through it:
// mail and station urls (accounts.Store and pgstore.Store implement it).
type Exchange interface {
	Mailbox
	Directory
}

// Listener is a Mailbox that can wake its taker when mail arrives instead of
// being polled (PostgreSQL's LISTEN/NOTIFY); a node still polls, less often,
// in case a wake-up is lost.
type Listener interface {
	// Listen returns a channel that receives (coalesced) when mail for node
	// may have arrived, until ctx ends; then the channel is closed.
	Listen(ctx context.Context, node string) (<-chan struct{}, error)
}
