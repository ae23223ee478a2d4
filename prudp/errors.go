package prudp

import "errors"

// Errors returned by the engine. They are wrapped with context (which
// connection, which field), so compare with errors.Is.
var (
	// ErrClosed is returned by operations on a connection or server that was closed locally.
	ErrClosed = errors.New("prudp: connection closed")
	// ErrPeerClosed is returned once the peer disconnected gracefully and every message before its DISCONNECT was delivered.
	ErrPeerClosed = errors.New("prudp: peer disconnected")
	// ErrPeerReset is returned when the peer sent a forced (unreliable) DISCONNECT.
	ErrPeerReset = errors.New("prudp: peer reset the connection")
	// ErrTimeout means a packet was retransmitted the configured number of times without an acknowledgement.
	ErrTimeout = errors.New("prudp: retransmission limit reached")
	// ErrPeerDead means nothing was heard from the peer for the configured idle timeout despite keepalives.
	ErrPeerDead = errors.New("prudp: peer silent")
	// ErrHandshake means the connection handshake failed (refused, bad values, or timed out).
	ErrHandshake = errors.New("prudp: handshake failed")
	// ErrMessageTooLarge means a message exceeds Config.MaxMessageSize (on send or on reassembly).
	ErrMessageTooLarge = errors.New("prudp: message too large")
	// ErrBadFragment means fragment ids of a message were out of order.
	ErrBadFragment = errors.New("prudp: bad fragment sequence")
	// ErrBadSubstream means a substream id beyond the negotiated maximum.
	ErrBadSubstream = errors.New("prudp: substream id out of range")
	// ErrSendQueueFull is returned by non-blocking sends when the send queue is at its limit.
	ErrSendQueueFull = errors.New("prudp: send queue full")
	// ErrOverBudget ends a connection that went on holding more than its
	// share of Config.MaxBuffer while the budget was exhausted.
	ErrOverBudget = errors.New("prudp: connection closed: over the server's buffer budget")
	// ErrServerClosed is returned by Serve after Shutdown or Close.
	ErrServerClosed = errors.New("prudp: server closed")
)
