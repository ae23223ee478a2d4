package nex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/matchmaking"
	"github.com/gamewire/gamewire/nex/nattraversal"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Across nodes (docs/nex.md): secure nodes with an Exchange (by default their
// Nodes registry, when it is one: accounts.Store, pgstore.Store) pass each
// other the notifications and NAT probe requests for players connected
// elsewhere, and publish their players' station urls so the other nodes can
// hand them out.

// mailPoll is how often a node looks for mail when its mailbox was empty.
const mailPoll = 10 * time.Millisecond

// listenPoll is how often a node whose store wakes it (nodes.Listener)
// looks for mail all the same.
const listenPoll = 250 * time.Millisecond

// mailBatch is the most messages one Take returns.
const mailBatch = 64

// probeKind is the nodes.Message kind of a relayed NAT probe request: PID is
// the target, the payload the station url to probe.
const probeKind = "probe"

// notifyKind is the nodes.Message kind of a relayed notification event
// (NotifyAnywhere): PID is the recipient, the payload the event in
// mailEventSettings.
const notifyKind = "notification"

// mailEventSettings encode a relayed event: the NEX 4 layout, which carries
// every field.
var mailEventSettings = types.Settings{PIDSize: 8, StructureHeader: true, Version: types.Version4}

// crossNode holds a secure node's link to the others.
type crossNode struct {
	ex nodes.Exchange // nil: none
	// publishing serializes publishStations, so the record a PID ends with
	// is what the last of several concurrent changes saw.
	publishing sync.Mutex
}

// startCrossNode wires matchmaking, NAT traversal and the Secure Connection
// server to the other nodes when s runs as a secure node with an Exchange.
// Called by startMultiplayer before the matchmaking server starts.
func (s *Server) startCrossNode(ctx context.Context) {
	ex := s.Exchange
	if ex == nil {
		ex, _ = s.Nodes.(nodes.Exchange)
	}
	if ex == nil {
		return
	}
	s.cross.ex = ex
	// What this node recorded before a restart is gone with its connections.
	if err := ex.ClearStations(ctx, s.Node); err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: clearing this node's station urls failed", slog.String("error", err.Error()))
	}
	s.dropMail(ctx, s.Node)
	s.secure.Changed = s.publishStations
	s.mm.Stations = nodeStations{s}
	s.mm.Mail = ex
	s.nat.Elsewhere = s.relayProbe
	go s.takeMail(ctx)
}

// publishStations records pid's station urls on this node in the directory
// (none: the record goes). It runs on the handler of the registration, so
// the urls are in the store before the client's next call.
func (s *Server) publishStations(pid types.PID) {
	s.cross.publishing.Lock()
	defer s.cross.publishing.Unlock()
	urls := s.secure.StationURLs(pid)
	strs := make([]string, len(urls))
	for i, u := range urls {
		strs[i] = u.String()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	if err := s.cross.ex.SetStations(ctx, s.Node, uint64(pid), strs); err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: publishing station urls failed", slog.Uint64("pid", uint64(pid)),
			slog.String("error", err.Error()))
	}
}

// stationsForgotten republishes the urls of an ended connection's PID (none
// left here: the record goes), off the transport's goroutine.
func (s *Server) stationsForgotten(p *rmc.Peer) {
	if s.cross.ex != nil && p.PID != 0 {
		go s.publishStations(p.PID)
	}
}

// nodeStations answers matchmaking's url queries: this node's registrations,
// else what the other nodes published.
type nodeStations struct{ s *Server }

func (n nodeStations) StationURLs(pid types.PID) []types.StationURL {
	s := n.s
	if urls := s.secure.StationURLs(pid); len(urls) > 0 {
		return urls
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	recs, err := s.cross.ex.StationsOf(ctx, uint64(pid))
	if err != nil {
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: station urls of another node not read", slog.Uint64("pid", uint64(pid)),
				slog.String("error", err.Error()))
		}
		return nil
	}
	var out []types.StationURL
	for _, r := range recs {
		for _, str := range r.URLs {
			if u, err := types.ParseStationURLString(str); err == nil {
				out = append(out, u)
			}
		}
	}
	return out
}

// relayProbe is nattraversal.Server.Elsewhere: the request goes to every
// other node that recorded stations of the target.
func (s *Server) relayProbe(ctx context.Context, target types.PID, probe types.StationURL) error {
	return s.postElsewhere(ctx, target, nodes.Message{PID: uint64(target), Kind: probeKind, Payload: []byte(probe.String())})
}

// NotifyAnywhere sends ev to pid's connections on this node, else (a secure
// node with an Exchange) to the other nodes that recorded stations of pid,
// through their mailboxes; notifications.ErrOffline when pid is connected
// nowhere. Services whose players may be on any node (nex/subscription) send
// their events through it.
func (s *Server) NotifyAnywhere(ctx context.Context, pid types.PID, ev notifications.Event) error {
	err := s.hub.Notify(ctx, pid, ev)
	if !errors.Is(err, notifications.ErrOffline) || s.cross.ex == nil {
		return err
	}
	w := types.NewWriter(nil, mailEventSettings)
	ev.Append(&w)
	b, err := w.Bytes()
	if err != nil {
		return err
	}
	return s.postElsewhere(ctx, pid, nodes.Message{PID: uint64(pid), Kind: notifyKind, Payload: b})
}

// postElsewhere posts m to every other node that recorded stations of pid.
func (s *Server) postElsewhere(ctx context.Context, pid types.PID, m nodes.Message) error {
	recs, err := s.cross.ex.StationsOf(ctx, uint64(pid))
	if err != nil {
		return err
	}
	sent := false
	for _, r := range recs {
		if r.Node == s.Node {
			continue
		}
		if err := s.cross.ex.Post(ctx, r.Node, m); err != nil {
			return err
		}
		sent = true
	}
	if !sent {
		return fmt.Errorf("%w: %d (on no node)", notifications.ErrOffline, pid)
	}
	return nil
}

// takeMail hands this node's mail to its connections until ctx ends: every
// mailPoll, or when the store wakes it (nodes.Listener) and every
// listenPoll in case a wake-up was lost.
func (s *Server) takeMail(ctx context.Context) {
	poll := mailPoll
	var wake <-chan struct{}
	if l, ok := s.cross.ex.(nodes.Listener); ok {
		var err error
		if wake, err = l.Listen(ctx, s.Node); err == nil {
			poll = listenPoll
		} else if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: listening for mail failed; polling", slog.String("error", err.Error()))
		}
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		ms, err := s.cross.ex.Take(ctx, s.Node, mailBatch)
		if err != nil && s.Logger != nil && ctx.Err() == nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: taking this node's mail failed", slog.String("error", err.Error()))
		}
		for _, m := range ms {
			s.deliverMail(ctx, m)
		}
		if len(ms) == mailBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// deliverMail hands one message from another node to this node's connections.
func (s *Server) deliverMail(ctx context.Context, m nodes.Message) {
	var err error
	switch m.Kind {
	case matchmaking.MailKind:
		err = s.mm.Receive(ctx, m.Payload)
	case friends.MailKind:
		if s.Friends != nil {
			err = s.Friends.Receive(ctx, m)
		}
	case notifyKind:
		r := types.NewReader(m.Payload, mailEventSettings)
		ev := notifications.ReadEvent(&r)
		if err = r.Done(); err == nil {
			err = s.hub.Notify(ctx, types.PID(m.PID), ev)
		}
	case probeKind:
		var u types.StationURL
		if u, err = types.ParseStationURLString(string(m.Payload)); err == nil {
			err = nattraversal.InitiateProbe(ctx, &s.hub, types.PID(m.PID), u)
		}
	default:
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: mail of an unknown kind dropped", slog.String("kind", m.Kind))
		}
		return
	}
	if err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex: mail from another node not delivered", slog.String("kind", m.Kind),
			slog.Uint64("pid", m.PID), slog.String("error", err.Error()))
	}
}

// dropMail discards the mail of a node that stopped (reapNodes): nobody
// will take it.
func (s *Server) dropMail(ctx context.Context, node string) {
	if s.cross.ex == nil {
		return
	}
	for range 100 { // bounded: at most 6,400 messages a round, the rest next round
		ms, err := s.cross.ex.Take(ctx, node, mailBatch)
		if err != nil || len(ms) < mailBatch {
			return
		}
	}
}
