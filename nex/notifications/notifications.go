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
// 4 (the upper halves are dropped then); Param3 exists from NEX 3.4; Map only in
// NEX 4 revision 1 (written as revision 1 when it has entries).
type Event struct {
	Source   types.PID // m_pidSource
	Type     uint32    // m_uiType
	Param1   uint64    // m_uiParam1
	Param2   uint64    // m_uiParam2
	StrParam string    // m_strParam
	Param3   uint64    // m_uiParam3, 3.4
	Map      []types.Pair[string, types.Variant]
}

// Append writes e in version v.
func (e *Event) Append(w *types.Writer, v types.Version) {
	rev := uint8(0)
	if v >= types.Version4 && len(e.Map) > 0 {
		rev = 1
	}
	m := w.BeginStructure(rev)
	w.PID(e.Source)
	w.U32(e.Type)
	if v >= types.Version4 {
		w.U64(e.Param1)
		w.U64(e.Param2)
		w.String(e.StrParam)
		w.U64(e.Param3)
		if rev == 1 {
			types.WriteList(w, e.Map, func(w *types.Writer, kv types.Pair[string, types.Variant]) {
				w.String(kv.Key)
				w.Variant(kv.Value)
			})
		}
	} else {
		w.U32(uint32(e.Param1))
		w.U32(uint32(e.Param2))
		w.String(e.StrParam)
		if v >= types.Version3_4 {
			w.U32(uint32(e.Param3))
		}
	}
	w.EndStructure(m)
}

// ReadEvent reads a NotificationEvent written in version v.
func ReadEvent(r *types.Reader, v types.Version) Event {
	var e Event
	m := r.EnterStructure("oEvent")
	e.Source = r.PID("m_pidSource")
	e.Type = r.U32("m_uiType")
	if v >= types.Version4 {
		e.Param1 = r.U64("m_uiParam1")
		e.Param2 = r.U64("m_uiParam2")
		e.StrParam = r.String("m_strParam")
		e.Param3 = r.U64("m_uiParam3")
		if m.Version >= 1 {
			e.Map = types.ReadMap(r, "m_mapParam", (*types.Reader).String, (*types.Reader).Variant)
		}
	} else {
		e.Param1 = uint64(r.U32("m_uiParam1"))
		e.Param2 = uint64(r.U32("m_uiParam2"))
		e.StrParam = r.String("m_strParam")
		if v >= types.Version3_4 {
			e.Param3 = uint64(r.U32("m_uiParam3"))
		}
	}
	r.LeaveStructure(m)
	return e
}

// DefaultVersion is the NEX version of a connection (types.Settings.NEXVersion):
// the configured one (nex.Server.NEXVersion, serve --nex-version or --game), else
// 4.0 with 8-byte PIDs (Switch), 3.5 with structure headers (the first version that
// has them), 3.4 otherwise. Structures a client sends with a
// revision in their header refine it (Hub.Learn).
func DefaultVersion(s types.Settings) types.Version { return s.NEXVersion() }

// Sender is how a Hub reaches a connection: prudp.Conn has this method.
type Sender interface {
	Send(ctx context.Context, substream uint8, data []byte) error
}

// Hub sends server-to-client calls on the secure connections of this server.
// The transport adds each connection's peer once it is authenticated (Add) and
// removes it when it ends (Remove). The zero value works.
type Hub struct {
	// Version, when set, is the NEX version of every connection; zero derives
	// it per connection (DefaultVersion, refined by Learn).
	Version types.Version
	// Logger receives failed sends.
	Logger *slog.Logger

	mu       sync.RWMutex
	byPID    map[types.PID][]*rmc.Peer
	versions map[*rmc.Peer]types.Version
	callID   atomic.Uint32
	sent     atomic.Uint64
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
		h.versions = make(map[*rmc.Peer]types.Version)
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
	delete(h.versions, p)
}

// Learn records the version a connection's structures showed.
func (h *Hub) Learn(p *rmc.Peer, v types.Version) {
	if h.Version != 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.versions != nil {
		h.versions[p] = v
	}
}

// VersionOf returns the NEX version a connection is spoken to in.
func (h *Hub) VersionOf(p *rmc.Peer) types.Version {
	if h.Version != 0 {
		return h.Version
	}
	h.mu.RLock()
	v, ok := h.versions[p]
	h.mu.RUnlock()
	if ok {
		return v
	}
	return DefaultVersion(p.Settings)
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
// connection's settings and version) to every connection of pid. Responses are
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
		params(&w, h.VersionOf(p))
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
	return h.Call(ctx, pid, Protocol, MethodProcessNotificationEvent, func(w *types.Writer, v types.Version) { ev.Append(w, v) })
}

// Handler is the client side: it decodes ProcessNotificationEvent calls and
// hands the events to F. Register it on the client's rmc.Mux for Protocol.
type Handler struct {
	// Version is the NEX version the server writes events in (DefaultVersion
	// of the connection's settings when zero).
	Version types.Version
	F       func(ctx context.Context, ev Event)
}

// ServeRMC implements rmc.Handler. It never answers (ErrNoResponse).
func (h *Handler) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if c.Method != MethodProcessNotificationEvent {
		return out, types.CoreNotImplemented
	}
	v := h.Version
	if v == 0 {
		v = DefaultVersion(c.Peer.Settings)
	}
	r := c.Reader()
	ev := ReadEvent(&r, v)
	if err := r.Done(); err != nil {
		return out, fmt.Errorf("%w: %w", types.CoreInvalidArgument, err)
	}
	if h.F != nil {
		h.F(ctx, ev)
	}
	return out, rmc.ErrNoResponse
}
