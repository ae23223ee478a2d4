// Package notifications implements the Notification Events protocol (protocol
// 14, https://nintendo-wiki.pretendo.network/docs/nex/protocols/notifications):
// the server calls ProcessNotificationEvent on a client's secure connection to
// tell it that something happened (a participant joined or left a gathering,
// ownership moved, a gathering went away, a game's own events). No response is
// sent.
//
// Hub is the server side: it knows the secure connections of each PID on this
// server and sends events (and other server-to-client calls, such as NAT
// traversal's InitiateProbe) on them, reliably and in order on substream 0.
// Handler is the client side.
package notifications

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gamewire/gamewire/nex/protocols/notification"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Protocol is the protocol id, MethodProcessNotificationEvent its one method.
const (
	Protocol                       uint16 = 14
	MethodProcessNotificationEvent uint32 = 1
)

// Notification types ("Notification Types" in notifications.md: category*1000 +
// subtype).
const (
	TypeSessionLaunched          uint32 = 2000
	TypeNewParticipant           uint32 = 3001
	TypeParticipationCancelled   uint32 = 3002
	TypeParticipantDisconnected  uint32 = 3007
	TypeParticipationEnded       uint32 = 3008
	TypeOwnershipChanged         uint32 = 4000
	TypeGatheringUnregistered    uint32 = 109000
	TypeHostChanged              uint32 = 110000
	TypeSystemPasswordChanged    uint32 = 120000
	TypeSystemPasswordCleared    uint32 = 121000
	TypeMatchmakeSystemConfigure uint32 = 119000
)

// Event is the NotificationEvent structure. Params are 32 bits wide before NEX
// 4 (PIDs: the upper halves are dropped then); Param3 exists from NEX 3.4 (the
// consoles' reading of a disputed gate; NintendoClients' from 3.5); Map only in
// NEX 4 revision 1. On the wire it is the generated NotificationEvent
// (nex/protocols/notification), written in the connection's settings.
type Event struct {
	Source   types.PID // m_pidSource
	Type     uint32    // m_uiType
	Param1   uint64    // m_uiParam1
	Param2   uint64    // m_uiParam2
	StrParam string    // m_strParam
	Param3   uint64    // m_uiParam3
	Map      []types.Pair[string, types.Variant]
}

// Wire returns e as the generated structure.
func (e *Event) Wire() notification.NotificationEvent {
	return notification.NotificationEvent{PID: e.Source, Type: notification.NotificationType(e.Type), Param1: types.PID(e.Param1), Param2: types.PID(e.Param2),
		Text: e.StrParam, Param3: types.PID(e.Param3), Map: e.Map}
}

// EventFromWire returns the Event of a generated NotificationEvent.
func EventFromWire(g *notification.NotificationEvent) Event {
	if len(g.Map) == 0 {
		g.Map = nil
	}
	return Event{Source: g.PID, Type: uint32(g.Type), Param1: uint64(g.Param1), Param2: uint64(g.Param2), StrParam: g.Text,
		Param3: uint64(g.Param3), Map: g.Map}
}

// Append writes e in the writer's settings (its NEX version among them).
func (e *Event) Append(w *types.Writer) {
	g := e.Wire()
	g.Append(w)
}

// ReadEvent reads a NotificationEvent in the reader's settings; errors stick in r.
func ReadEvent(r *types.Reader) Event {
	var g notification.NotificationEvent
	g.Read(r, "event")
	return EventFromWire(&g)
}

// DefaultVersion is the NEX version of a connection (types.Settings.NEXVersion):
// the configured one (nex.Server.NEXVersion, serve --nex-version or --game), else
// 4.0 with 8-byte PIDs (Switch), 3.5 with structure headers (the first version that
// has them), 3.4 otherwise.
func DefaultVersion(s types.Settings) types.Version { return s.NEXVersion() }

// Sender is how a Hub reaches a connection: prudp.Conn has this method.
type Sender interface {
	Send(ctx context.Context, substream uint8, data []byte) error
}

// Hub sends server-to-client calls on the secure connections of this server.
// The transport adds each connection's peer once it is authenticated (Add) and
// removes it when it ends (Remove). The zero value works.
type Hub struct {
	// Logger receives failed sends.
	Logger *slog.Logger

	mu     sync.RWMutex
	byPID  map[types.PID][]*rmc.Peer
	callID atomic.Uint32
	sent   atomic.Uint64
}

// Add registers a connection's peer (its PID must be set).
func (h *Hub) Add(p *rmc.Peer) {
	if p.PID == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byPID == nil {
		h.byPID = make(map[types.PID][]*rmc.Peer)
	}
	for _, q := range h.byPID[p.PID] {
		if q == p {
			return
		}
	}
	h.byPID[p.PID] = append(h.byPID[p.PID], p)
}

// Remove forgets a connection's peer.
func (h *Hub) Remove(p *rmc.Peer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ps := h.byPID[p.PID]
	for i, q := range ps {
		if q == p {
			ps = append(ps[:i:i], ps[i+1:]...)
			break
		}
	}
	if len(ps) == 0 {
		delete(h.byPID, p.PID)
	} else {
		h.byPID[p.PID] = ps
	}
}

// Online reports whether pid has a connection on this server.
func (h *Hub) Online(pid types.PID) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.byPID[pid]) > 0
}

// Sent returns how many server-to-client calls were queued.
func (h *Hub) Sent() uint64 { return h.sent.Load() }

// ErrOffline: the PID has no connection on this server.
var ErrOffline = errors.New("notifications: no connection for this PID")

// Call sends a request (protocol, method, parameters written by params in each
// connection's settings, v being its NEX version) to every connection of pid. Responses are
// not awaited: the transport drops them.
func (h *Hub) Call(ctx context.Context, pid types.PID, protocol uint16, method uint32, params func(w *types.Writer, v types.Version)) error {
	h.mu.RLock()
	peers := append([]*rmc.Peer(nil), h.byPID[pid]...)
	h.mu.RUnlock()
	if len(peers) == 0 {
		return fmt.Errorf("%w: %d", ErrOffline, pid)
	}
	var errs []error
	for _, p := range peers {
		s, ok := p.Conn.(Sender)
		if !ok {
			continue
		}
		w := types.NewWriter(nil, p.Settings)
		params(&w, p.Settings.NEXVersion())
		b, err := w.Bytes()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		id := h.callID.Add(1)
		req := rmc.Request{Protocol: protocol, CallID: id, Method: method, Params: b}
		msg, err := req.Append(nil)
		if err == nil {
			err = s.Send(ctx, 0, msg)
		}
		if err != nil {
			errs = append(errs, err)
			if h.Logger != nil {
				h.Logger.LogAttrs(ctx, slog.LevelDebug, "nex: server call not sent", slog.Uint64("pid", uint64(pid)),
					slog.Uint64("protocol", uint64(protocol)), slog.String("error", err.Error()))
			}
			continue
		}
		h.sent.Add(1)
	}
	return errors.Join(errs...)
}

// Notify sends ev to every connection of pid.
func (h *Hub) Notify(ctx context.Context, pid types.PID, ev Event) error {
	return h.Call(ctx, pid, Protocol, MethodProcessNotificationEvent, func(w *types.Writer, _ types.Version) { ev.Append(w) })
}

// Handler is the client side: it decodes ProcessNotificationEvent calls (the
// generated notification.NotificationHandler) and hands the events to F.
// Register it on the client's rmc.Mux for Protocol.
type Handler struct {
	// Version, when set, is the NEX version the server writes events in; else
	// the connection's (types.Settings.NEXVersion).
	Version types.Version
	F       func(ctx context.Context, ev Event)
}

// ServeRMC implements rmc.Handler with the generated dispatcher. It never
// answers (ErrNoResponse).
func (h *Handler) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if h.Version != 0 && c.Peer.Settings.Version != h.Version {
		peer := *c.Peer
		peer.Settings.Version = h.Version
		call := *c
		call.Peer = &peer
		c = &call
	}
	return notification.ServeNotification(handler{h}, ctx, c, out)
}

// handler is Handler as the generated NotificationHandler.
type handler struct{ h *Handler }

// ProcessNotificationEvent hands the event to F.
func (h handler) ProcessNotificationEvent(ctx context.Context, _ *rmc.Call, event notification.NotificationEvent) error {
	if h.h.F != nil {
		h.h.F(ctx, EventFromWire(&event))
	}
	return nil
}
