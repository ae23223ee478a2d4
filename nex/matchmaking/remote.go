package matchmaking

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// MailKind is the nodes.Message kind of the notifications one secure node
// passes to another (Server.Mail, Server.Receive).
const MailKind = "matchmaking"

// mailSettings are the canonical encoding of mail: the newest NotificationEvent
// (NEX 4) with 8-byte PIDs, from which the receiving node writes each event in
// its connection's settings.
var mailSettings = types.Settings{PIDSize: 8, StructureHeader: true, Version: types.Version4}

// MaxMailEvents bounds the events of one change in a piece of mail (a change
// makes at most four).
const MaxMailEvents = 16

// route splits a change's notifications by the node each addressee joined on
// (Participant.Node): what is for this node comes back, to go to the hub; the
// rest is posted to the other nodes' mailboxes. Every other node with a
// participant before or after the change gets the change's seq, even with
// nothing to deliver, so its sequencer never waits for a change it will not
// see; fresh marks a node that had nobody in the gathering before it (the
// changes before this one were none of its business), gone one that has
// nobody left after it (its sequencer forgets the gathering, as when it is
// deleted: the later changes are none of its business).
func (s *Server) route(ctx context.Context, c Change, evs []addressed) (local []addressed, fresh, gone bool) {
	self := s.node()
	nodeOf := make(map[types.PID]string, len(c.Participants)+1)
	before := map[string]bool{}
	after := map[string]bool{}
	involved := map[string]bool{}
	for _, p := range c.Participants {
		nodeOf[p.PID] = p.Node
		involved[p.Node] = true
		after[p.Node] = true
		if c.Joined == nil || p.PID != c.Joined.PID || p.Conn != c.Joined.Conn {
			before[p.Node] = true
		}
	}
	if c.Left != nil {
		before[c.Left.Node] = true
		involved[c.Left.Node] = true
		if _, ok := nodeOf[c.Left.PID]; !ok {
			nodeOf[c.Left.PID] = c.Left.Node
		}
	}
	remote := map[string][]addressed{}
	for n := range involved {
		if n != self {
			remote[n] = nil
		}
	}
	for _, a := range evs {
		var here []types.PID
		there := map[string][]types.PID{}
		for _, pid := range a.to {
			if n, ok := nodeOf[pid]; ok && n != self {
				there[n] = append(there[n], pid)
			} else {
				here = append(here, pid)
			}
		}
		if len(here) > 0 {
			local = append(local, addressed{here, a.ev})
		}
		for n, pids := range there {
			remote[n] = append(remote[n], addressed{pids, a.ev})
		}
	}
	for n, evs := range remote {
		b, err := encodeMail(c.Session.ID, c.Seq, !before[n], c.Deleted || !after[n], evs)
		if err == nil {
			err = s.Mail.Post(ctx, n, nodes.Message{Kind: MailKind, Payload: b})
		}
		if err != nil && s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex matchmaking: notifications for another node not posted",
				slog.String("node", n), slog.Uint64("gathering", uint64(c.Session.ID)), slog.String("error", err.Error()))
		}
	}
	return local, !before[self], !after[self]
}

// Receive delivers the notifications another node posted (a MailKind
// message's payload) to this node's connections, in the gathering's commit
// order with the changes made here.
func (s *Server) Receive(ctx context.Context, payload []byte) error {
	gid, d, fresh, deleted, err := decodeMail(payload)
	if err != nil {
		return err
	}
	if s.Hub == nil {
		return nil
	}
	s.seq.submit(context.WithoutCancel(ctx), gid, d, deleted, fresh, s.send)
	return nil
}

// send hands one notification to the hub (this node's connections).
func (s *Server) send(ctx context.Context, a addressed) {
	for _, pid := range a.to {
		_ = s.Hub.Notify(ctx, pid, a.ev) // a connection that ended meanwhile: nobody to tell
	}
}

// encodeMail writes the notifications of one change for another node.
func encodeMail(gid uint32, seq uint64, fresh, deleted bool, evs []addressed) ([]byte, error) {
	w := types.NewWriter(nil, mailSettings)
	w.U32(gid)
	w.U64(seq)
	w.Bool(fresh)
	w.Bool(deleted)
	types.WriteList(&w, evs, func(w *types.Writer, a addressed) {
		types.WriteList(w, a.to, (*types.Writer).PID)
		a.ev.Append(w)
	})
	return w.Bytes()
}

// decodeMail reads what encodeMail wrote.
func decodeMail(b []byte) (gid uint32, d delivery, fresh, deleted bool, err error) {
	r := types.NewReader(b, mailSettings)
	gid = r.U32("gid")
	d.seq = r.U64("seq")
	fresh = r.Bool("fresh")
	deleted = r.Bool("deleted")
	d.events = types.ReadList(&r, "events", func(r *types.Reader, _ string) addressed {
		var a addressed
		a.to = types.ReadList(r, "to", (*types.Reader).PID)
		a.ev = notifications.ReadEvent(r)
		return a
	})
	if err := r.Done(); err != nil {
		return 0, delivery{}, false, false, fmt.Errorf("matchmaking: mail from another node: %w", err)
	}
	if len(d.events) > MaxMailEvents {
		return 0, delivery{}, false, false, fmt.Errorf("matchmaking: mail from another node: %d events, at most %d", len(d.events), MaxMailEvents)
	}
	return gid, d, fresh, deleted, nil
}
