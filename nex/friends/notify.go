package friends

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gamewire/gamewire/nex/nodes"
	nn "github.com/gamewire/gamewire/nex/protocols/nintendonotification"
	"github.com/gamewire/gamewire/nex/types"
)

// NintendoNotification event types the friends server sends (the type numbers
// Pretendo's friends server uses and the nintendo-wiki's Nintendo
// Notification Events page lists; NintendoClients' nintendonotification.proto
// names 10, 24, 26, 30 and 33). A 3DS is told through
// ProcessNintendoNotificationEvent (method 1), a Wii U through method 2.
const (
	Event3DSPresence    uint32 = 1  // NintendoPresence
	Event3DSFavorite    uint32 = 2  // GameKey
	Event3DSComment     uint32 = 3  // NintendoNotificationEventGeneral, text = comment
	Event3DSMii         uint32 = 5  // NintendoNotificationEventGeneral
	Event3DSFriended    uint32 = 7  // NintendoNotificationEventGeneral, param3 = DateTime of the friendship
	Event3DSRemoved     uint32 = 8  // NintendoNotificationEventGeneral: a friend deleted your friend card
	Event3DSInvitation  uint32 = 9  // NintendoNotificationEventGeneral: a friend sent you an invitation
	EventOffline        uint32 = 10 // NintendoNotificationEventGeneral, param2 = DateTime last online
	EventWiiUPresence   uint32 = 24 // NintendoPresenceV2
	EventWiiUUnfriended uint32 = 26 // NintendoNotificationEventGeneral
	EventWiiURequest    uint32 = 27 // FriendRequest
	EventWiiUFriended   uint32 = 30 // FriendInfo
)

// mailSettings is the canonical encoding of a notification passed to another
// node, which decodes it and writes it in its connection's settings.
var mailSettings = types.Settings{PIDSize: 8, StructureHeader: true}

// event builds the notification for a recipient on platform; ok false sends
// nothing to that platform.
type event func(platform uint8) (ev nn.NintendoNotificationEvent, ok bool)

func methodFor(platform uint8) uint32 {
	if platform == Platform3DS {
		return nn.NintendoNotificationMethodProcessNintendoNotificationEvent
	}
	return nn.NintendoNotificationMethodProcessNintendoNotificationEventAlt
}

// tell sends build's event to those of to who are online, on this node
// through Hub, elsewhere through Mail; at most MaxFanout of them. It returns
// those of them who are offline.
func (s *Server) tell(ctx context.Context, to []types.PID, build event) (offline []types.PID) {
	if len(to) > s.fanout() {
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex friends: notification fan-out cut", slog.Int("recipients", len(to)), slog.Int("max", s.fanout()))
		}
		to = to[:s.fanout()]
	}
	online, err := s.Store.Presences(ctx, to)
	if err != nil {
		s.warn(ctx, "presences not read for a notification", 0, err)
		return nil
	}
	mail := map[string][]nodes.Message{}
	for _, pid := range to {
		np, ok := online[pid]
		if !ok {
			offline = append(offline, pid)
			continue
		}
		if s.Hub == nil && s.Mail == nil {
			continue
		}
		ev, ok := build(np.Platform)
		if !ok {
			continue
		}
		method := methodFor(np.Platform)
		if np.Node == s.node() || s.Mail == nil {
			if s.Hub != nil {
				s.deliver(ctx, pid, method, ev)
			}
			continue
		}
		w := types.NewWriter([]byte{byte(method)}, mailSettings)
		ev.Append(&w)
		b, err := w.Bytes()
		if err != nil || len(b) > nodes.MaxMailPayload {
			s.warn(ctx, "notification for another node not encoded", pid, fmt.Errorf("%d bytes: %v", len(b), err))
			continue
		}
		mail[np.Node] = append(mail[np.Node], nodes.Message{PID: uint64(pid), Kind: mailKind, Payload: b})
	}
	for node, ms := range mail {
		if err := s.Mail.Post(ctx, node, ms...); err != nil {
			s.warn(ctx, "notifications for node "+node+" not posted", 0, err)
		}
	}
	return offline
}

// keep stores n for each of to (who were offline when it happened): a
// persistent notification their next login shows (UpdateAndGetAllInformation).
func (s *Server) keep(ctx context.Context, to []types.PID, n Notification) {
	max := s.MaxNotifications
	if max == 0 {
		max = DefaultMaxNotifications
	}
	if max < 0 {
		return
	}
	n.At = s.now()
	for _, pid := range to {
		n.PID = pid
		if _, err := s.Store.AddNotification(ctx, n, max); err != nil {
			s.warn(ctx, "persistent notification not kept", pid, err)
		}
	}
}

func (s *Server) deliver(ctx context.Context, pid types.PID, method uint32, ev nn.NintendoNotificationEvent) {
	err := s.Hub.Call(ctx, pid, ProtocolNotification, method, func(w *types.Writer, _ types.Version) { ev.Append(w) })
	if err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex friends: notification not sent", slog.Uint64("pid", uint64(pid)),
			slog.Uint64("type", uint64(ev.Type)), slog.String("error", err.Error()))
	}
}

// MailKind is the nodes.Message kind of the notifications secure nodes pass
// each other for the friends server (Receive).
const MailKind = mailKind

// Receive delivers a notification another node posted (MailKind) to this
// node's connections of its player.
func (s *Server) Receive(ctx context.Context, m nodes.Message) error {
	if len(m.Payload) < 1 {
		return fmt.Errorf("friends: empty mail")
	}
	r := types.NewReader(m.Payload[1:], mailSettings)
	var ev nn.NintendoNotificationEvent
	ev.Read(&r, "event")
	if err := r.Done(); err != nil {
		return fmt.Errorf("friends: mail for PID %d: %w", m.PID, err)
	}
	if s.Hub == nil {
		return nil
	}
	s.deliver(ctx, types.PID(m.PID), uint32(m.Payload[0]), ev)
	return nil
}

func general(typ uint32, from types.PID, g nn.NintendoNotificationEventGeneral) nn.NintendoNotificationEvent {
	return nn.NintendoNotificationEvent{Type: typ, PID: from, Data: types.AnyData{Object: &g}}
}

// onlineFriends returns pid's friends (all of them: tell looks up who is
// online).
func (s *Server) friendsToTell(ctx context.Context, pid types.PID) []types.PID {
	fs, err := s.Store.FriendsOf(ctx, pid)
	if err != nil {
		s.warn(ctx, "friend list not read for a notification", pid, err)
	}
	return fs
}

// presenceChanged tells pid's friends its presence (unless pid hides it).
func (s *Server) presenceChanged(ctx context.Context, pid types.PID, p Presence) {
	prof, err := s.Store.Profile(ctx, pid)
	if err != nil {
		s.warn(ctx, "profile not read", pid, err)
		return
	}
	if prof.HideOnline {
		return
	}
	if prof.HideTitle {
		p.Game = GameKey{}
	}
	s.tell(ctx, s.friendsToTell(ctx, pid), func(platform uint8) (nn.NintendoNotificationEvent, bool) {
		if platform == Platform3DS {
			v1 := presenceV1(p)
			return nn.NintendoNotificationEvent{Type: Event3DSPresence, PID: pid, Data: types.AnyData{Object: &v1}}, true
		}
		v2 := presenceV2(pid, p, true)
		return nn.NintendoNotificationEvent{Type: EventWiiUPresence, PID: pid, Data: types.AnyData{Object: &v2}}, true
	})
}

func (s *Server) wentOffline(ctx context.Context, pid types.PID) {
	at := uint64(types.DateTimeFromTime(s.now()))
	s.tell(ctx, s.friendsToTell(ctx, pid), func(uint8) (nn.NintendoNotificationEvent, bool) {
		return general(EventOffline, pid, nn.NintendoNotificationEventGeneral{Param2: at}), true
	})
}

// requestSent tells a Wii U recipient of a request.
func (s *Server) requestSent(ctx context.Context, r Request) {
	info, err := s.basicInfos(ctx, []types.PID{r.Sender})
	if err != nil {
		s.warn(ctx, "sender not read for a request notification", r.Sender, err)
		return
	}
	fr := friendRequest(r, info[r.Sender])
	off := s.tell(ctx, []types.PID{r.Recipient}, func(platform uint8) (nn.NintendoNotificationEvent, bool) {
		return nn.NintendoNotificationEvent{Type: EventWiiURequest, PID: r.Sender, Data: types.AnyData{Object: &fr}}, platform != Platform3DS
	})
	s.keep(ctx, off, Notification{Type: EventWiiURequest, From: r.Sender, Text: r.Message})
}

// befriended tells other that pid (who accepted, or added back) is its
// friend now; pid learns it from its own call's answer.
func (s *Server) befriended(ctx context.Context, pid, other types.PID, since time.Time) {
	infos, err := s.friendInfos(ctx, []Link{{PID: pid, Since: since}})
	if err != nil {
		s.warn(ctx, "friend info not read for a notification", pid, err)
		return
	}
	info := infos[0]
	at := uint64(types.DateTimeFromTime(since))
	off := s.tell(ctx, []types.PID{other}, func(platform uint8) (nn.NintendoNotificationEvent, bool) {
		if platform == Platform3DS {
			return general(Event3DSFriended, pid, nn.NintendoNotificationEventGeneral{Param3: at}), true
		}
		return nn.NintendoNotificationEvent{Type: EventWiiUFriended, PID: pid, Data: types.AnyData{Object: &info}}, true
	})
	s.keep(ctx, off, Notification{Type: EventWiiUFriended, From: pid})
}

// unfriended tells other that pid ended their friendship (friendship true:
// a 3DS is told its friend card was deleted) or withdrew its friend request
// (friendship false: only a Wii U, which lists received requests, is told).
func (s *Server) unfriended(ctx context.Context, pid, other types.PID, friendship bool) {
	off := s.tell(ctx, []types.PID{other}, func(platform uint8) (nn.NintendoNotificationEvent, bool) {
		if platform == Platform3DS {
			return general(Event3DSRemoved, pid, nn.NintendoNotificationEventGeneral{}), friendship
		}
		return general(EventWiiUUnfriended, pid, nn.NintendoNotificationEventGeneral{}), true
	})
	s.keep(ctx, off, Notification{Type: EventWiiUUnfriended, From: pid})
}

// invited tells pid's 3DS friends among to that pid invites them (event 9;
// the nintendo-wiki lists it for the 3DS only, so a Wii U invitee is not
// told). The event's fields carry nothing more (no published meaning): the
// console reads what to join from the inviter's presence.
func (s *Server) invited(ctx context.Context, pid types.PID, to []types.PID) {
	s.tell(ctx, to, func(platform uint8) (nn.NintendoNotificationEvent, bool) {
		return general(Event3DSInvitation, pid, nn.NintendoNotificationEventGeneral{}), platform == Platform3DS
	})
}

// profileChanged tells pid's 3DS friends of a new comment, favourite game or
// Mii (a Wii U reads them with the friend list).
func (s *Server) profileChanged(ctx context.Context, pid types.PID, build func() nn.NintendoNotificationEvent) {
	ev := build()
	s.tell(ctx, s.friendsToTell(ctx, pid), func(platform uint8) (nn.NintendoNotificationEvent, bool) {
		return ev, platform == Platform3DS
	})
}
