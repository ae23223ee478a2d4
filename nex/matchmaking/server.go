// Package matchmaking implements the matchmaking protocols of NEX: Match Making
// (21), Match Making Ext (50) and Matchmake Extension (109), over gatherings and
// matchmake sessions kept in a Store (pages: match-making, match-making-ext,
// matchmake-extension and match-making types on
// https://nintendo-wiki.pretendo.network/docs/nex/protocols/).
//
// Every change is one Store transaction, so concurrent clients cannot over-fill
// a session or end up in sessions of their own while one could take them; the
// notifications a change causes (notifications.md) go out through a
// notifications.Hub in the order the changes were committed.
package matchmaking

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Protocol ids.
const (
	ProtocolMatchMaking        uint16 = 21
	ProtocolMatchMakingExt     uint16 = 50
	ProtocolMatchmakeExtension uint16 = 109
)

// Match Making (21) method ids.
const (
	MethodRegisterGathering           uint32 = 1
	MethodUnregisterGathering         uint32 = 2
	MethodUnregisterGatherings        uint32 = 3
	MethodUpdateGathering             uint32 = 4
	MethodParticipate                 uint32 = 11
	MethodCancelParticipation         uint32 = 12
	MethodGetParticipants             uint32 = 13
	MethodGetDetailedParticipants     uint32 = 15
	MethodGetParticipantsURLs         uint32 = 16
	MethodFindByID                    uint32 = 20
	MethodFindBySingleID              uint32 = 21
	MethodFindByOwner                 uint32 = 22
	MethodFindByParticipants          uint32 = 23
	MethodUpdateSessionURL            uint32 = 27
	MethodGetSessionURL               uint32 = 28
	MethodGetState                    uint32 = 29
	MethodSetState                    uint32 = 30
	MethodDeleteGathering             uint32 = 33
	MethodMigrateGatheringOwnershipV1 uint32 = 36
	MethodUpdateSessionHostV1         uint32 = 40
	MethodGetSessionURLs              uint32 = 41
	MethodUpdateSessionHost           uint32 = 42
	MethodUpdateGatheringOwnership    uint32 = 43
	MethodMigrateGatheringOwnership   uint32 = 44
)

// Match Making Ext (50) method ids.
const (
	MethodEndParticipation           uint32 = 1
	MethodExtGetParticipants         uint32 = 2
	MethodExtGetDetailedParticipants uint32 = 3
	MethodExtGetParticipantsURLs     uint32 = 4
)

// Matchmake Extension (109) method ids.
const (
	MethodCloseParticipation                                 uint32 = 1
	MethodOpenParticipation                                  uint32 = 2
	MethodAutoMatchmakePostpone                              uint32 = 3
	MethodBrowseMatchmakeSession                             uint32 = 4
	MethodBrowseMatchmakeSessionWithHostUrls                 uint32 = 5
	MethodCreateMatchmakeSession                             uint32 = 6
	MethodJoinMatchmakeSession                               uint32 = 7
	MethodModifyCurrentGameAttribute                         uint32 = 8
	MethodUpdateNotificationData                             uint32 = 9
	MethodGetFriendNotificationData                          uint32 = 10
	MethodUpdateApplicationBuffer                            uint32 = 11
	MethodUpdateMatchmakeSessionAttribute                    uint32 = 12
	MethodGetlstFriendNotificationData                       uint32 = 13
	MethodUpdateMatchmakeSession                             uint32 = 14
	MethodAutoMatchmakeWithSearchCriteriaPostpone            uint32 = 15
	MethodGetPlayingSession                                  uint32 = 16
	MethodGetMyBlockList                                     uint32 = 24
	MethodAddToBlockList                                     uint32 = 25
	MethodRemoveFromBlockList                                uint32 = 26
	MethodClearMyBlockList                                   uint32 = 27
	MethodJoinMatchmakeSessionEx                             uint32 = 30
	MethodGetSimplePlayingSession                            uint32 = 31
	MethodAutoMatchmakeWithGatheringIDPostpone               uint32 = 33
	MethodUpdateProgressScore                                uint32 = 34
	MethodGenerateMatchmakeSessionSystemPassword             uint32 = 36
	MethodClearMatchmakeSessionSystemPassword                uint32 = 37
	MethodCreateMatchmakeSessionWithParam                    uint32 = 38
	MethodJoinMatchmakeSessionWithParam                      uint32 = 39
	MethodAutoMatchmakeWithParamPostpone                     uint32 = 40
	MethodFindMatchmakeSessionByGatheringIDDetail            uint32 = 41
	MethodBrowseMatchmakeSessionNoHolder                     uint32 = 42
	MethodBrowseMatchmakeSessionWithHostUrlsNoHolder         uint32 = 43
	MethodUpdateMatchmakeSessionPart                         uint32 = 44
	MethodFindMatchmakeSessionByGatheringID                  uint32 = 48
	MethodFindMatchmakeSessionBySingleGatheringID            uint32 = 49
	MethodFindMatchmakeSessionByOwner                        uint32 = 50
	MethodFindMatchmakeSessionByParticipant                  uint32 = 51
	MethodBrowseMatchmakeSessionNoHolderNoResultRange        uint32 = 52
	MethodBrowseMatchmakeSessionWithHostUrlsNoHolderNoResult uint32 = 53
)

// Stations gives the station urls of a PID's connection (the secure server's
// registrations), for the participant url methods.
type Stations interface {
	StationURLs(pid types.PID) []types.StationURL
}

// MaxNotificationTypesAsked bounds the types one GetlstFriendNotificationData
// asks for.
const MaxNotificationTypesAsked = 64

// Server answers the three matchmaking protocols. Store is required; Hub
// carries notifications (none without it); Stations answers url queries (empty
// lists without it).
type Server struct {
	Store    Store
	Hub      *notifications.Hub
	Stations Stations
	// Node names this secure server in the store (participants are tagged with
	// it so a restart can clear them); default "local".
	Node string
	// Mail, for secure nodes sharing a store, carries the notifications for
	// participants that joined on another node to that node (its loop hands
	// them to Receive there); nil sends every notification to Hub.
	Mail nodes.Mailbox
	// Logger receives store failures.
	Logger *slog.Logger
	// OfficialOwners are the PIDs whose communities are official
	// (FindOfficialCommunity); none by default.
	OfficialOwners []types.PID
	// Friends, when set, closes friends sessions (SystemFriends) to all but
	// their owner's friends: searches leave them out, joins are refused
	// (friends.go); and it says whose notification data
	// (UpdateNotificationData) a player reads and is sent. nil: nobody has
	// friends, so the friends' notification lists are empty.
	Friends friends.Friends
	// NAT orders the sessions an auto-matchmake may join by the NAT
	// properties players reported, when Store is a NATStore (nat.go); the
	// zero value prefers reachable sessions by their owner.
	NAT NATOrder

	seq     sequencer
	conns   sync.Map // *rmc.Peer -> uint64
	nextCon atomic.Uint64

	natPreferred, natRefused atomic.Uint64 // NATStats
}

// Register adds the three protocols to mux.
func (s *Server) Register(mux *rmc.Mux) {
	mux.HandleProtocol(ProtocolMatchMaking, rmc.HandlerFunc(s.serveMatchMaking))
	mux.HandleProtocol(ProtocolMatchMakingExt, rmc.HandlerFunc(s.serveMatchMakingExt))
	mux.HandleProtocol(ProtocolMatchmakeExtension, rmc.HandlerFunc(s.serveExtension))
}

func (s *Server) node() string {
	if s.Node == "" {
		return "local"
	}
	return s.Node
}

// Start clears what this node's connections left in the store before a
// restart (they are all gone); the other participants of their gatherings are
// told as if those connections had just ended.
func (s *Server) Start(ctx context.Context) error {
	_, err := s.ReapNode(ctx, s.node())
	return err
}

// ReapNode removes the participations of every connection a node recorded (a
// node that restarted, or one that stopped heartbeating), telling the others
// of each gathering as for a disconnect (3007). It returns how many left.
func (s *Server) ReapNode(ctx context.Context, node string) (int, error) {
	cs, err := s.Store.ResetNode(ctx, node)
	if err != nil {
		return 0, err
	}
	for _, c := range cs {
		var who types.PID
		if c.Left != nil {
			who = c.Left.PID
		}
		s.notify(ctx, c, who, "", reasonDisconnected, false)
	}
	if len(cs) > 0 && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelInfo, "nex matchmaking: removed the participants of a node's ended connections",
			slog.String("node", node), slog.Int("participants", len(cs)))
	}
	return len(cs), nil
}

// Disconnect cleanup retries: a store that is briefly unreachable (a database
// restart) must not leave the participations of a connection that ended
// meanwhile in their gatherings for good.
const (
	disconnectRetryFirst = 100 * time.Millisecond
	disconnectRetryMax   = 5 * time.Second
	// DisconnectRetryFor bounds how long Disconnected keeps retrying; after
	// that the participations stay until the node restarts (Start) or is
	// reaped.
	DisconnectRetryFor = 10 * time.Minute
)

// Disconnected removes a connection's participations and tells the others;
// the transport calls it when a secure connection ends. When the store fails
// it retries, backing off up to disconnectRetryMax, for DisconnectRetryFor or
// until ctx ends.
func (s *Server) Disconnected(ctx context.Context, p *rmc.Peer) {
	v, ok := s.conns.LoadAndDelete(p)
	if !ok {
		return
	}
	var cs []Change
	var err error
	giveUp := time.Now().Add(DisconnectRetryFor)
	for wait := disconnectRetryFirst; ; wait = min(2*wait, disconnectRetryMax) {
		if cs, err = s.Store.Disconnect(ctx, s.node(), v.(uint64)); err == nil {
			break
		}
		last := time.Now().Add(wait).After(giveUp)
		if s.Logger != nil {
			msg := "nex matchmaking: disconnect cleanup failed; retrying"
			if last {
				msg = "nex matchmaking: disconnect cleanup failed; giving up (the node's restart clears it)"
			}
			s.Logger.LogAttrs(ctx, slog.LevelWarn, msg, slog.Uint64("pid", uint64(p.PID)), slog.String("error", err.Error()))
		}
		if last {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	for _, c := range cs {
		s.notify(ctx, c, p.PID, "", reasonDisconnected, false)
	}
}

func (s *Server) connID(p *rmc.Peer) uint64 {
	if v, ok := s.conns.Load(p); ok {
		return v.(uint64)
	}
	v, _ := s.conns.LoadOrStore(p, s.nextCon.Add(1))
	return v.(uint64)
}

func (s *Server) participant(c *rmc.Call, slots uint16, msg string) Participant {
	return Participant{PID: c.Peer.PID, Slots: slots, Message: msg, Node: s.node(), Conn: s.connID(c.Peer)}
}

// notify hands a change's notifications to the sequencer.
func (s *Server) notify(ctx context.Context, c Change, actor types.PID, msg string, why reason, hostChanged bool) {
	if s.Hub == nil {
		return
	}
	d := delivery{seq: c.Seq, events: events(c, actor, msg, why, hostChanged)}
	// Participants on other nodes are told through their node's mailbox,
	// sequenced there with the node's own changes (remote.go); without a
	// mailbox only this node's connections are told.
	var fresh, gone bool
	if s.Mail != nil {
		d.events, fresh, gone = s.route(ctx, c, d.events)
	}
	s.seq.submit(context.WithoutCancel(ctx), c.Session.ID, d, c.Deleted || gone, fresh, s.send)
}

func (s *Server) version(c *rmc.Call) types.Version {
	if s.Hub == nil {
		return notifications.DefaultVersion(c.Peer.Settings)
	}
	return s.Hub.VersionOf(c.Peer)
}

func (s *Server) learn(c *rmc.Call, v types.Version) {
	if s.Hub != nil {
		s.Hub.Learn(c.Peer, v)
	}
}

func badRequest(err error) error { return fmt.Errorf("%w: %w", types.CoreInvalidArgument, err) }

// storeErr passes Results through and hides other failures behind
// Core::Exception (logged by rmc.Dispatch).
func storeErr(err error) error {
	var res types.Result
	if errors.As(err, &res) {
		return err
	}
	return fmt.Errorf("matchmaking store: %w", err)
}

// readGathering reads a Data<Gathering> parameter holding a MatchmakeSession.
func (s *Server) readGathering(c *rmc.Call, r *types.Reader, field string) (MatchmakeSession, error) {
	h := r.AnyDataHolder(field)
	if r.Err() != nil {
		return MatchmakeSession{}, r.Err()
	}
	ms, isSession, v, err := ParseHolder(h, c.Peer.Settings, s.version(c))
	if err != nil {
		return ms, fmt.Errorf("%s: %w", field, err)
	}
	if !isSession {
		return ms, fmt.Errorf("%s: a %s where a MatchmakeSession is needed", field, h.TypeName)
	}
	s.learn(c, v)
	return ms, nil
}

func (s *Server) writeHolder(w *types.Writer, c *rmc.Call, ms *MatchmakeSession) {
	// Validate bounds every string, so encoding cannot fail here; a failure
	// would still stick in w and fail the call.
	h, _ := ms.Holder(c.Peer.Settings, s.version(c))
	w.AnyDataHolder(h)
}

// newSession prepares a client's session for creation: a fresh session key,
// the server-owned fields reset.
func newSession(ms MatchmakeSession) MatchmakeSession {
	ms.ID, ms.ParticipationCount = 0, 0
	ms.SessionKey = make([]byte, 32)
	rand.Read(ms.SessionKey)
	return ms
}

// owner fails an update unless pid owns the gathering.
func owner(pid types.PID) func(ms *MatchmakeSession, ps []Participant) error {
	return func(ms *MatchmakeSession, ps []Participant) error {
		if ms.Owner != pid {
			return fmt.Errorf("%w: PID %d does not own gathering %d", ResultPermissionDenied, pid, ms.ID)
		}
		return nil
	}
}

// conceal clears what a reader of a session may not see: the session key
// unless pid takes part in it (member), the user password unless pid owns it
// (docs/nex.md "Passwords and ownership").
func conceal(ms *MatchmakeSession, pid types.PID, member bool) {
	if !member {
		ms.SessionKey = nil
	}
	if ms.Owner != pid {
		ms.UserPassword = ""
	}
}

// concealAll conceals each of ms for pid; which of them pid takes part in is
// one Find per MaxBrowseResults sessions.
func (s *Server) concealAll(ctx context.Context, pid types.PID, ms []MatchmakeSession) error {
	member := map[uint32]bool{}
	for start := 0; start < len(ms); start += MaxBrowseResults {
		part := ms[start:min(start+MaxBrowseResults, len(ms))]
		gids := make([]uint32, len(part))
		for i := range part {
			gids[i] = part[i].ID
		}
		in, err := s.Store.Find(ctx, Query{GIDs: gids, Participant: pid, Size: MaxBrowseResults})
		if err != nil {
			return storeErr(err)
		}
		for _, m := range in {
			member[m.ID] = true
		}
	}
	for i := range ms {
		conceal(&ms[i], pid, member[ms[i].ID])
	}
	return nil
}

func participantOf(ps []Participant, pid types.PID) bool {
	for _, p := range ps {
		if p.PID == pid {
			return true
		}
	}
	return false
}

// update runs an owner-only change and notifies.
func (s *Server) update(ctx context.Context, c *rmc.Call, gid uint32, f func(ms *MatchmakeSession) error) (Change, error) {
	check := owner(c.Peer.PID)
	var hostBefore types.PID
	ch, err := s.Store.Update(ctx, gid, func(ms *MatchmakeSession, ps []Participant) error {
		if err := check(ms, ps); err != nil {
			return err
		}
		hostBefore = ms.Host
		return f(ms)
	})
	if err != nil {
		return ch, storeErr(err)
	}
	s.notify(ctx, ch, c.Peer.PID, "", reasonEnded, ch.Session.Host != hostBefore)
	return ch, nil
}

// autoMatchmake runs one auto-matchmake and notifies.
func (s *Server) autoMatchmake(ctx context.Context, c *rmc.Call, crit []SearchCriteria, ms MatchmakeSession, slots uint16, msg string) (MatchmakeSession, error) {
	if s.Friends != nil && ms.MatchmakeSystemType == SystemFriends && slots <= 1 {
		gids, err := s.autoFriends(ctx, c.Peer.PID, ms)
		if err != nil {
			return ms, err
		}
		return s.joinFirst(ctx, c, gids, ms, msg)
	}
	ch, err := s.autoMatchmakeStore(ctx, crit, newSession(ms), s.participant(c, slots, msg))
	if err != nil {
		return ms, storeErr(err)
	}
	s.notify(ctx, ch, c.Peer.PID, msg, reasonEnded, false)
	conceal(&ch.Session, c.Peer.PID, true)
	return ch.Session, nil
}

func (s *Server) join(ctx context.Context, c *rmc.Call, gid uint32, slots uint16, msg string, pw Passwords) (MatchmakeSession, error) {
	if err := s.checkJoin(ctx, c.Peer.PID, gid); err != nil {
		return MatchmakeSession{}, err
	}
	ch, err := s.Store.Join(ctx, gid, s.participant(c, slots, msg), pw)
	if err != nil {
		return MatchmakeSession{}, storeErr(err)
	}
	s.notify(ctx, ch, c.Peer.PID, msg, reasonEnded, false)
	conceal(&ch.Session, c.Peer.PID, true)
	return ch.Session, nil
}

func (s *Server) leave(ctx context.Context, c *rmc.Call, gid uint32, msg string, why reason) error {
	ch, err := s.Store.Leave(ctx, gid, c.Peer.PID)
	if err != nil {
		return storeErr(err)
	}
	s.notify(ctx, ch, c.Peer.PID, msg, why, false)
	return nil
}

func (s *Server) urls(pid types.PID) []types.StationURL {
	if s.Stations == nil {
		return nil
	}
	return s.Stations.StationURLs(pid)
}

// participantURLs are the urls of a gathering's participants.
func (s *Server) participantURLs(ps []Participant) []types.StationURL {
	var out []types.StationURL
	for _, p := range ps {
		out = append(out, s.urls(p.PID)...)
	}
	return out
}

// sessionURLs are the urls of a session's host: the one the host gave
// (UpdateSessionURL) first, then those its connection registered.
func (s *Server) sessionURLs(ms *MatchmakeSession) []types.StationURL {
	us := s.urls(ms.Host)
	if ms.SessionURL == "" {
		return us
	}
	u, err := types.ParseStationURLString(ms.SessionURL)
	if err != nil { // checked when stored
		return us
	}
	return append([]types.StationURL{u}, us...)
}

// MaxSessionURL bounds the url UpdateSessionURL stores.
const MaxSessionURL = 1024

// checkSessionURL refuses a url UpdateSessionURL must not store: too long, or
// not a station url.
func checkSessionURL(url string) error {
	if len(url) > MaxSessionURL {
		return fmt.Errorf("%w: session url of %d bytes, at most %d", types.CoreInvalidArgument, len(url), MaxSessionURL)
	}
	if _, err := types.ParseStationURLString(url); err != nil {
		return fmt.Errorf("%w: session url: %w", types.CoreInvalidArgument, err)
	}
	return nil
}

// friendsOf returns pid's friends (none without Friends).
func (s *Server) friendsOf(ctx context.Context, pid types.PID) ([]types.PID, error) {
	if s.Friends == nil {
		return nil, nil
	}
	fs, err := s.Friends.FriendsOf(ctx, pid)
	if err != nil {
		return nil, storeErr(fmt.Errorf("friends of PID %d: %w", pid, err))
	}
	return fs, nil
}

// notifyFriends sends a player's new notification data to its friends
// connected to this node (the Hub's); friends on other secure nodes read it
// with GetFriendNotificationData.
func (s *Server) notifyFriends(ctx context.Context, ev notifications.Event) {
	if s.Hub == nil {
		return
	}
	friends, err := s.friendsOf(ctx, ev.Source)
	if err != nil {
		if s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelWarn, "matchmaking: friends not read for a notification", slog.Uint64("pid", uint64(ev.Source)), slog.String("error", err.Error()))
		}
		return
	}
	for _, f := range friends {
		s.Hub.Notify(ctx, f, ev) // an error is a connection that went: logged by the Hub
	}
}

func (s *Server) hostURLs(ms []MatchmakeSession) []GatheringURLs {
	out := make([]GatheringURLs, 0, len(ms))
	for _, m := range ms {
		out = append(out, GatheringURLs{GID: m.ID, URLs: s.urls(m.Host)})
	}
	return out
}

// serveMatchMaking answers Match Making (21).
func (s *Server) serveMatchMaking(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r := c.Reader()
	w := types.NewWriter(out, c.Peer.Settings)
	pid := c.Peer.PID
	switch c.Method {
	case MethodRegisterGathering:
		ms, err := s.readGathering(c, &r, "anyGathering")
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			return out, badRequest(err)
		}
		ch, err := s.Store.Create(ctx, newSession(ms), s.participant(c, 1, ""))
		if err != nil {
			return out, storeErr(err)
		}
		w.U32(ch.Session.ID)
	case MethodUnregisterGathering, MethodDeleteGathering:
		gid := r.U32("idGathering")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		ch, err := s.Store.Delete(ctx, gid, owner(pid))
		if err != nil {
			return out, storeErr(err)
		}
		s.notify(ctx, ch, pid, "", reasonEnded, false)
		w.Bool(true)
	case MethodUnregisterGatherings:
		gids := types.ReadList(&r, "lstGatherings", (*types.Reader).U32)
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if len(gids) > MaxBrowseResults {
			return out, fmt.Errorf("%w: %d gatherings", types.CoreInvalidArgument, len(gids))
		}
		ok := true
		for _, gid := range gids {
			ch, err := s.Store.Delete(ctx, gid, owner(pid))
			if err != nil {
				ok = false
				continue
			}
			s.notify(ctx, ch, pid, "", reasonEnded, false)
		}
		w.Bool(ok)
	case MethodUpdateGathering:
		ms, err := s.readGathering(c, &r, "anyGathering")
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			return out, badRequest(err)
		}
		if _, err := s.update(ctx, c, ms.ID, func(cur *MatchmakeSession) error {
			keep := *cur
			*cur = ms
			cur.Owner, cur.Host, cur.SessionKey = keep.Owner, keep.Host, keep.SessionKey
			return nil
		}); err != nil {
			return out, err
		}
		w.Bool(true)
	case MethodParticipate:
		gid := r.U32("idGathering")
		msg := r.String("strMessage")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if _, err := s.join(ctx, c, gid, 1, msg, Passwords{}); err != nil {
			return out, err
		}
		w.Bool(true)
	case MethodCancelParticipation:
		gid := r.U32("idGathering")
		msg := r.String("strMessage")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if err := s.leave(ctx, c, gid, msg, reasonCancelled); err != nil {
			return out, err
		}
		w.Bool(true)
	case MethodGetParticipants, MethodGetDetailedParticipants, MethodGetParticipantsURLs, MethodGetSessionURLs:
		gid := r.U32("idGathering")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		ms, ps, err := s.Store.Get(ctx, gid)
		if err != nil {
			return out, storeErr(err)
		}
		switch c.Method {
		case MethodGetParticipants:
			writePIDs(&w, ps)
		case MethodGetDetailedParticipants:
			writeDetails(&w, ps)
		case MethodGetParticipantsURLs:
			types.WriteList(&w, s.participantURLs(ps), (*types.Writer).StationURL)
		default: // the host's urls
			types.WriteList(&w, s.sessionURLs(&ms), (*types.Writer).StationURL)
		}
	case MethodUpdateSessionURL:
		gid := r.U32("idGathering")
		url := r.String("strURL")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if err := checkSessionURL(url); err != nil {
			return out, err
		}
		if _, err := s.Store.Update(ctx, gid, func(ms *MatchmakeSession, _ []Participant) error {
			if ms.Host != pid {
				return fmt.Errorf("%w: PID %d does not host gathering %d (UpdateSessionURL)", ResultPermissionDenied, pid, gid)
			}
			ms.SessionURL = url
			return nil
		}); err != nil {
			return out, storeErr(err)
		}
		w.Bool(true)
	case MethodGetSessionURL:
		gid := r.U32("idGathering")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		ms, _, err := s.Store.Get(ctx, gid)
		if err != nil {
			return out, storeErr(err)
		}
		w.Bool(true)
		if ms.SessionURL != "" {
			w.String(ms.SessionURL)
		} else if us := s.urls(ms.Host); len(us) > 0 {
			w.StationURL(us[0])
		} else {
			w.String("")
		}
	case MethodFindByID:
		gids := types.ReadList(&r, "lstID", (*types.Reader).U32)
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		return s.writeFound(ctx, c, &w, Query{GIDs: gids}, true)
	case MethodFindBySingleID:
		gid := r.U32("id")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		ms, ps, err := s.Store.Get(ctx, gid)
		if errors.Is(err, ResultSessionVoid) {
			w.Bool(false)
			w.AnyDataHolder(types.AnyDataHolder{})
			return w.Bytes()
		} else if err != nil {
			return out, storeErr(err)
		}
		conceal(&ms, pid, participantOf(ps, pid))
		w.Bool(true)
		s.writeHolder(&w, c, &ms)
	case MethodFindByOwner:
		id := r.PID("id")
		rr := r.ResultRange("resultRange")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		return s.writeFound(ctx, c, &w, Query{Owner: id, Offset: rr.Offset, Size: rr.Size}, true)
	case MethodFindByParticipants:
		pids := types.ReadList(&r, "pid", (*types.Reader).PID)
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if len(pids) > MaxBrowseResults {
			return out, fmt.Errorf("%w: %d PIDs", types.CoreInvalidArgument, len(pids))
		}
		var all []MatchmakeSession
		seen := map[uint32]bool{}
		for _, p := range pids {
			found, err := s.Store.Find(ctx, Query{Participant: p})
			if err != nil {
				return out, storeErr(err)
			}
			for _, m := range found {
				if !seen[m.ID] {
					seen[m.ID] = true
					all = append(all, m)
				}
			}
		}
		if err := s.concealAll(ctx, pid, all); err != nil {
			return out, err
		}
		types.WriteList(&w, all, func(w *types.Writer, m MatchmakeSession) { s.writeHolder(w, c, &m) })
	case MethodGetState:
		gid := r.U32("idGathering")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		ms, _, err := s.Store.Get(ctx, gid)
		if err != nil {
			return out, storeErr(err)
		}
		w.Bool(true)
		w.U32(ms.State)
	case MethodSetState:
		gid := r.U32("idGathering")
		state := r.U32("uiNewState")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if _, err := s.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.State = state; return nil }); err != nil {
			return out, err
		}
		w.Bool(true)
	case MethodUpdateSessionHostV1, MethodUpdateSessionHost:
		gid := r.U32("gid")
		migrate := false
		if c.Method == MethodUpdateSessionHost {
			migrate = r.Bool("isMigrateOwner")
		}
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		// Any participant may become the host; isMigrateOwner is the
		// owner's only: ownership moves by the owner's own migration or by
		// the server when the owner leaves (docs/nex.md "Passwords and
		// ownership"), never by a participant's claim.
		var prevHost types.PID
		ch, err := s.Store.Update(ctx, gid, func(ms *MatchmakeSession, ps []Participant) error {
			if !participantOf(ps, pid) {
				return fmt.Errorf("%w: PID %d is not in gathering %d", ResultPermissionDenied, pid, gid)
			}
			if migrate && ms.Owner != pid {
				return fmt.Errorf("%w: PID %d does not own gathering %d (isMigrateOwner)", ResultPermissionDenied, pid, gid)
			}
			prevHost = ms.Host
			if prevHost != pid {
				ms.SessionURL = "" // the previous host's
			}
			ms.Host = pid
			if migrate {
				ms.Owner = pid
			}
			return nil
		})
		if err != nil {
			return out, storeErr(err)
		}
		s.notify(ctx, ch, pid, "", reasonEnded, prevHost != pid)
	case MethodMigrateGatheringOwnershipV1, MethodMigrateGatheringOwnership, MethodUpdateGatheringOwnership:
		gid := r.U32("gid")
		var candidates []types.PID
		if c.Method != MethodUpdateGatheringOwnership {
			candidates = types.ReadList(&r, "lstPotentialNewOwnersID", (*types.Reader).PID)
		}
		if c.Method != MethodMigrateGatheringOwnershipV1 {
			r.Bool("participantsOnly")
		}
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		_, err := s.migrate(ctx, c, gid, candidates)
		if err != nil {
			return out, err
		}
		if c.Method != MethodMigrateGatheringOwnership {
			w.Bool(true)
		}
	default:
		return out, types.CoreNotImplemented
	}
	return w.Bytes()
}

// migrate moves ownership of gid from the caller (its owner) to the first of
// candidates that takes part, or to the earliest other participant.
func (s *Server) migrate(ctx context.Context, c *rmc.Call, gid uint32, candidates []types.PID) (Change, error) {
	pid := c.Peer.PID
	ch, err := s.Store.Update(ctx, gid, func(ms *MatchmakeSession, ps []Participant) error {
		if ms.Owner != pid {
			return fmt.Errorf("%w: PID %d does not own gathering %d", ResultPermissionDenied, pid, gid)
		}
		for _, cand := range candidates {
			if cand != pid && participantOf(ps, cand) {
				ms.Owner = cand
				return nil
			}
		}
		for _, p := range ps {
			if p.PID != pid {
				ms.Owner = p.PID
				return nil
			}
		}
		return fmt.Errorf("%w: nobody else in gathering %d", types.CoreInvalidArgument, gid)
	})
	if err != nil {
		return ch, storeErr(err)
	}
	s.notify(ctx, ch, pid, "", reasonEnded, false)
	return ch, nil
}

func writePIDs(w *types.Writer, ps []Participant) {
	types.WriteList(w, ps, func(w *types.Writer, p Participant) { w.PID(p.PID) })
}

func writeDetails(w *types.Writer, ps []Participant) {
	types.WriteList(w, ps, func(w *types.Writer, p Participant) {
		d := ParticipantDetails{PID: p.PID, Name: fmt.Sprint(p.PID), Message: p.Message, Participants: uint16(p.SlotCount())}
		d.Append(w)
	})
}

// writeFound writes the gatherings a query finds, as holders or as plain
// MatchmakeSession structures.
func (s *Server) writeFound(ctx context.Context, c *rmc.Call, w *types.Writer, q Query, holders bool) ([]byte, error) {
	found, err := s.Store.Find(ctx, q)
	if err != nil {
		return w.B, storeErr(err)
	}
	if found, err = s.visible(ctx, c.Peer.PID, found); err != nil {
		return w.B, err
	}
	if err := s.writeSessions(ctx, w, c, found, holders); err != nil {
		return w.B, err
	}
	return w.Bytes()
}

// writeSessions writes sessions for the caller (concealed: conceal), as
// holders or as plain MatchmakeSession structures.
func (s *Server) writeSessions(ctx context.Context, w *types.Writer, c *rmc.Call, ms []MatchmakeSession, holders bool) error {
	if err := s.concealAll(ctx, c.Peer.PID, ms); err != nil {
		return err
	}
	v := s.version(c)
	types.WriteList(w, ms, func(w *types.Writer, m MatchmakeSession) {
		if holders {
			s.writeHolder(w, c, &m)
		} else {
			m.Append(w, v)
		}
	})
	return nil
}

// serveMatchMakingExt answers Match Making Ext (50).
func (s *Server) serveMatchMakingExt(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r := c.Reader()
	w := types.NewWriter(out, c.Peer.Settings)
	switch c.Method {
	case MethodEndParticipation:
		gid := r.U32("idGathering")
		msg := r.String("strMessage")
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if err := s.leave(ctx, c, gid, msg, reasonEnded); err != nil {
			return out, err
		}
		w.Bool(true)
	case MethodExtGetParticipants, MethodExtGetDetailedParticipants:
		gid := r.U32("idGathering")
		r.Bool("bOnlyActive") // every participant on record is active
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		_, ps, err := s.Store.Get(ctx, gid)
		if err != nil {
			return out, storeErr(err)
		}
		if c.Method == MethodExtGetParticipants {
			writePIDs(&w, ps)
		} else {
			writeDetails(&w, ps)
		}
	case MethodExtGetParticipantsURLs:
		gids := types.ReadList(&r, "lstGatherings", (*types.Reader).U32)
		if err := r.Done(); err != nil {
			return out, badRequest(err)
		}
		if len(gids) > MaxBrowseResults {
			return out, fmt.Errorf("%w: %d gatherings", types.CoreInvalidArgument, len(gids))
		}
		var list []GatheringURLs
		for _, gid := range gids {
			_, ps, err := s.Store.Get(ctx, gid)
			if errors.Is(err, ResultSessionVoid) {
				continue
			} else if err != nil {
				return out, storeErr(err)
			}
			list = append(list, GatheringURLs{GID: gid, URLs: s.participantURLs(ps)})
		}
		types.WriteList(&w, list, func(w *types.Writer, u GatheringURLs) { u.Append(w) })
	default:
		return out, types.CoreNotImplemented
	}
	return w.Bytes()
}

// serveExtension answers Matchmake Extension (109).
func (s *Server) serveExtension(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r := c.Reader()
	w := types.NewWriter(out, c.Peer.Settings)
	v := s.version(c)
	pid := c.Peer.PID
	done := func() error {
		if err := r.Done(); err != nil {
			return badRequest(err)
		}
		return nil
	}
	switch c.Method {
	case MethodCloseParticipation, MethodOpenParticipation:
		gid := r.U32("gid")
		if err := done(); err != nil {
			return out, err
		}
		open := c.Method == MethodOpenParticipation
		if _, err := s.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.OpenParticipation = open; return nil }); err != nil {
			return out, err
		}
	case MethodAutoMatchmakePostpone, MethodAutoMatchmakeWithSearchCriteriaPostpone, MethodAutoMatchmakeWithGatheringIDPostpone:
		var crit []SearchCriteria
		var gids []uint32
		switch c.Method {
		case MethodAutoMatchmakeWithSearchCriteriaPostpone:
			crit = types.ReadList(&r, "lstSearchCriteria", func(r *types.Reader, f string) SearchCriteria { return ReadSearchCriteria(r, f, v) })
			if crit == nil {
				crit = []SearchCriteria{}
			}
		case MethodAutoMatchmakeWithGatheringIDPostpone:
			gids = types.ReadList(&r, "lstGid", (*types.Reader).U32)
		}
		ms, err := s.readGathering(c, &r, "anyGathering")
		msg := r.String("strMessage")
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			return out, badRequest(err)
		}
		var joined MatchmakeSession
		if gids != nil {
			joined, err = s.joinFirst(ctx, c, gids, ms, msg)
		} else {
			joined, err = s.autoMatchmake(ctx, c, crit, ms, 1, msg)
		}
		if err != nil {
			return out, err
		}
		s.writeHolder(&w, c, &joined)
	case MethodAutoMatchmakeWithParamPostpone:
		p, pv := ReadAutoMatchmakeParam(&r, "autoMatchmakeParam", v)
		if err := done(); err != nil {
			return out, err
		}
		if err := s.checkParticipation(ctx, pid, p.GIDForParticipationCheck, p.AdditionalParticipants); err != nil {
			return out, err
		}
		s.learn(c, pv)
		crit := p.SearchCriteria
		if crit == nil {
			crit = []SearchCriteria{}
		}
		if len(crit) == 0 {
			crit = nil // no criteria: like AutoMatchmake_Postpone
		}
		joined, err := s.autoMatchmake(ctx, c, crit, p.Session, p.ParticipationCount, p.JoinMessage)
		if err != nil {
			return out, err
		}
		joined.Append(&w, pv)
	case MethodBrowseMatchmakeSession, MethodBrowseMatchmakeSessionWithHostUrls, MethodBrowseMatchmakeSessionNoHolder,
		MethodBrowseMatchmakeSessionWithHostUrlsNoHolder, MethodBrowseMatchmakeSessionNoHolderNoResultRange,
		MethodBrowseMatchmakeSessionWithHostUrlsNoHolderNoResult:
		crit := ReadSearchCriteria(&r, "searchCriteria", v)
		rr := types.ResultRange{Size: MaxBrowseResults}
		if c.Method != MethodBrowseMatchmakeSessionNoHolderNoResultRange && c.Method != MethodBrowseMatchmakeSessionWithHostUrlsNoHolderNoResult {
			rr = r.ResultRange("resultRange")
		} else if crit.ResultRange.Size != 0 {
			rr = crit.ResultRange
		}
		if err := done(); err != nil {
			return out, err
		}
		found, err := s.Store.Browse(ctx, crit, rr.Offset, rr.Size)
		if err != nil {
			return out, storeErr(err)
		}
		if found, err = s.visible(ctx, pid, found); err != nil {
			return out, err
		}
		holders := c.Method == MethodBrowseMatchmakeSession || c.Method == MethodBrowseMatchmakeSessionWithHostUrls
		if err := s.writeSessions(ctx, &w, c, found, holders); err != nil {
			return out, err
		}
		switch c.Method {
		case MethodBrowseMatchmakeSessionWithHostUrls, MethodBrowseMatchmakeSessionWithHostUrlsNoHolder, MethodBrowseMatchmakeSessionWithHostUrlsNoHolderNoResult:
			types.WriteList(&w, s.hostURLs(found), func(w *types.Writer, u GatheringURLs) { u.Append(w) })
		}
	case MethodCreateMatchmakeSession:
		ms, err := s.readGathering(c, &r, "anyGathering")
		msg := r.String("strMessage")
		slots := uint16(1)
		if v >= types.Version3_4 {
			slots = r.U16("participationCount")
		}
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			return out, badRequest(err)
		}
		ch, err := s.Store.Create(ctx, newSession(ms), s.participant(c, slots, msg))
		if err != nil {
			return out, storeErr(err)
		}
		w.U32(ch.Session.ID)
		if v >= types.Version3 {
			w.Buffer(ch.Session.SessionKey)
		}
	case MethodCreateMatchmakeSessionWithParam:
		p, pv := ReadCreateParam(&r, "createMatchmakeSessionParam", v)
		if err := done(); err != nil {
			return out, err
		}
		if err := s.checkParticipation(ctx, pid, p.GIDForParticipationCheck, p.AdditionalParticipants); err != nil {
			return out, err
		}
		s.learn(c, pv)
		ch, err := s.Store.Create(ctx, newSession(p.Session), s.participant(c, p.ParticipationCount, p.JoinMessage))
		if err != nil {
			return out, storeErr(err)
		}
		ch.Session.Append(&w, pv)
	case MethodUpdateNotificationData:
		ev := notifications.Event{Source: pid, Type: r.U32("uiType"), Param1: uint64(r.PID("uiParam1")), Param2: uint64(r.PID("uiParam2")), StrParam: r.String("strParam")}
		if err := done(); err != nil {
			return out, err
		}
		if err := s.Store.SetNotification(ctx, ev); err != nil {
			return out, storeErr(err)
		}
		s.notifyFriends(ctx, ev)
	case MethodGetFriendNotificationData, MethodGetlstFriendNotificationData:
		var typs []uint32
		if c.Method == MethodGetFriendNotificationData {
			typs = []uint32{uint32(r.S32("uiType"))}
		} else {
			typs = types.ReadList(&r, "lstTypes", (*types.Reader).U32)
		}
		if err := done(); err != nil {
			return out, err
		}
		if len(typs) > MaxNotificationTypesAsked {
			return out, fmt.Errorf("%w: %d notification types asked, at most %d", types.CoreInvalidArgument, len(typs), MaxNotificationTypesAsked)
		}
		friends, err := s.friendsOf(ctx, pid)
		if err != nil {
			return out, err
		}
		evs, err := s.Store.Notifications(ctx, friends, typs)
		if err != nil {
			return out, storeErr(err)
		}
		types.WriteList(&w, evs, func(w *types.Writer, ev notifications.Event) { ev.Append(w, v) })
	case MethodGetMyBlockList:
		if err := done(); err != nil {
			return out, err
		}
		l, err := s.Store.BlockList(ctx, pid)
		if err != nil {
			return out, storeErr(err)
		}
		types.WriteList(&w, l, (*types.Writer).PID)
	case MethodAddToBlockList, MethodRemoveFromBlockList, MethodClearMyBlockList:
		var pids []types.PID
		if c.Method != MethodClearMyBlockList {
			pids = types.ReadList(&r, "lstPrincipalId", (*types.Reader).PID)
		}
		if err := done(); err != nil {
			return out, err
		}
		var err error
		switch c.Method {
		case MethodAddToBlockList:
			err = s.Store.Block(ctx, pid, pids)
		case MethodRemoveFromBlockList:
			if pids == nil {
				pids = []types.PID{} // an empty list removes nobody (nil clears)
			}
			err = s.Store.Unblock(ctx, pid, pids)
		default:
			err = s.Store.Unblock(ctx, pid, nil)
		}
		if err != nil {
			return out, storeErr(err)
		}
	case MethodJoinMatchmakeSession, MethodJoinMatchmakeSessionEx:
		gid := r.U32("gid")
		msg := r.String("strMessage")
		slots := uint16(1)
		var pw Passwords
		if c.Method == MethodJoinMatchmakeSessionEx {
			pw.IgnoreBlockList = r.Bool("dontCareMyBlackList")
			if v >= types.Version3_4 {
				slots = r.U16("participationCount")
			}
		}
		if err := done(); err != nil {
			return out, err
		}
		ms, err := s.join(ctx, c, gid, slots, msg, pw)
		if err != nil {
			return out, err
		}
		if v >= types.Version3 || c.Method == MethodJoinMatchmakeSessionEx {
			w.Buffer(ms.SessionKey)
		}
	case MethodJoinMatchmakeSessionWithParam:
		p := ReadJoinParam(&r, "joinMatchmakeSessionParam", v)
		if err := done(); err != nil {
			return out, err
		}
		if err := s.checkParticipation(ctx, pid, p.GIDForParticipationCheck, p.AdditionalParticipants); err != nil {
			return out, err
		}
		ms, err := s.join(ctx, c, p.GID, max(p.ParticipationCount, 1), p.JoinMessage, Passwords{User: p.UserPassword, System: p.SystemPassword})
		if err != nil {
			return out, err
		}
		ms.Append(&w, v)
	case MethodModifyCurrentGameAttribute:
		gid := r.U32("gid")
		idx := r.U32("attribIndex")
		val := r.U32("newValue")
		if err := done(); err != nil {
			return out, err
		}
		if idx >= MaxAttributes {
			return out, fmt.Errorf("%w: attribute index %d", types.CoreInvalidArgument, idx)
		}
		if _, err := s.update(ctx, c, gid, func(ms *MatchmakeSession) error {
			for len(ms.Attributes) <= int(idx) {
				ms.Attributes = append(ms.Attributes, 0)
			}
			ms.Attributes[idx] = val
			return nil
		}); err != nil {
			return out, err
		}
	case MethodUpdateApplicationBuffer:
		gid := r.U32("gid")
		buf := r.Buffer("applicationBuffer")
		if err := done(); err != nil {
			return out, err
		}
		buf = append([]byte(nil), buf...)
		// Any participant may update the buffer (games keep per-player data
		// in it); the size limit is Validate's.
		ch, err := s.Store.Update(ctx, gid, func(ms *MatchmakeSession, ps []Participant) error {
			if !participantOf(ps, pid) {
				return fmt.Errorf("%w: PID %d is not in gathering %d", ResultPermissionDenied, pid, gid)
			}
			ms.ApplicationBuffer = buf
			return nil
		})
		if err != nil {
			return out, storeErr(err)
		}
		s.notify(ctx, ch, pid, "", reasonEnded, false)
	case MethodUpdateMatchmakeSessionAttribute:
		gid := r.U32("gid")
		attrs := types.ReadList(&r, "attribs", (*types.Reader).U32)
		if err := done(); err != nil {
			return out, err
		}
		if _, err := s.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.Attributes = attrs; return nil }); err != nil {
			return out, err
		}
	case MethodUpdateMatchmakeSession:
		ms, err := s.readGathering(c, &r, "anyGathering")
		if err == nil {
			err = r.Done()
		}
		if err != nil {
			return out, badRequest(err)
		}
		if _, err := s.update(ctx, c, ms.ID, func(cur *MatchmakeSession) error {
			keep := *cur
			*cur = ms
			cur.Owner, cur.Host, cur.SessionKey, cur.StartedTime = keep.Owner, keep.Host, keep.SessionKey, keep.StartedTime
			return nil
		}); err != nil {
			return out, err
		}
	case MethodUpdateMatchmakeSessionPart:
		p := ReadUpdateParam(&r, "updateMatchmakeSessionParam", v)
		if err := done(); err != nil {
			return out, err
		}
		if p.ModificationFlag&ModifyMaxParticipants != 0 && p.MaxParticipants == 0 {
			return out, fmt.Errorf("%w: maximum participants 0", types.CoreInvalidArgument)
		}
		if _, err := s.update(ctx, c, p.GID, func(ms *MatchmakeSession) error {
			if p.ModificationFlag&ModifyMaxParticipants != 0 && uint32(p.MaxParticipants) < ms.ParticipationCount {
				return fmt.Errorf("%w: maximum %d below the %d participants", types.CoreInvalidArgument, p.MaxParticipants, ms.ParticipationCount)
			}
			p.apply(ms)
			return nil
		}); err != nil {
			return out, err
		}
	case MethodFindMatchmakeSessionByParticipant:
		m := r.EnterStructure("param")
		pids := types.ReadList(&r, "m_principalIdList", (*types.Reader).PID)
		r.U32("m_resultOptions")
		b := r.EnterStructure("m_blockListParam")
		r.U32("optionFlag")
		r.LeaveStructure(b)
		r.LeaveStructure(m)
		if err := done(); err != nil {
			return out, err
		}
		if len(pids) > MaxBrowseResults {
			return out, fmt.Errorf("%w: %d PIDs, at most %d", types.CoreInvalidArgument, len(pids), MaxBrowseResults)
		}
		list, err := s.sessionsOf(ctx, pid, pids)
		if err != nil {
			return out, err
		}
		types.WriteList(&w, list, func(w *types.Writer, res participantSession) {
			m := w.BeginStructure(0) // FindMatchmakeSessionByParticipantResult
			w.PID(res.pid)
			res.ms.Append(w, v)
			w.EndStructure(m)
		})
	case MethodUpdateProgressScore:
		gid := r.U32("gid")
		score := r.U8("progressScore")
		if err := done(); err != nil {
			return out, err
		}
		if score > 100 {
			return out, fmt.Errorf("%w: progress score %d above 100", types.CoreInvalidArgument, score)
		}
		if _, err := s.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.ProgressScore = score; return nil }); err != nil {
			return out, err
		}
	case MethodGenerateMatchmakeSessionSystemPassword, MethodClearMatchmakeSessionSystemPassword:
		gid := r.U32("gid")
		if err := done(); err != nil {
			return out, err
		}
		on := c.Method == MethodGenerateMatchmakeSessionSystemPassword
		if _, err := s.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.SystemPasswordEnabled = on; return nil }); err != nil {
			return out, err
		}
		if on {
			sp, ok := s.Store.(interface {
				SystemPassword(ctx context.Context, gid uint32) (string, error)
			})
			if !ok {
				return out, types.CoreNotImplemented
			}
			pw, err := sp.SystemPassword(ctx, gid)
			if err != nil {
				return out, storeErr(err)
			}
			w.String(pw)
		}
	case MethodGetSimplePlayingSession, MethodGetPlayingSession:
		pids := types.ReadList(&r, "lstPrincipalId", (*types.Reader).PID)
		include := false
		if c.Method == MethodGetSimplePlayingSession {
			include = r.Bool("includeLoginUser")
		}
		if err := done(); err != nil {
			return out, err
		}
		if len(pids) > MaxBrowseResults {
			return out, fmt.Errorf("%w: %d PIDs, at most %d", types.CoreInvalidArgument, len(pids), MaxBrowseResults)
		}
		if include {
			pids = append(pids, pid)
		}
		list, err := s.sessionsOf(ctx, pid, pids)
		if err != nil {
			return out, err
		}
		types.WriteList(&w, list, func(w *types.Writer, p participantSession) {
			if c.Method == MethodGetPlayingSession {
				m := w.BeginStructure(0)
				w.PID(p.pid)
				s.writeHolder(w, c, &p.ms)
				w.EndStructure(m)
				return
			}
			var attr uint32
			if len(p.ms.Attributes) > 0 {
				attr = p.ms.Attributes[0]
			}
			sp := SimplePlayingSession{PID: p.pid, GID: p.ms.ID, GameMode: p.ms.GameMode, Attribute: attr}
			sp.Append(w)
		})
	case MethodFindMatchmakeSessionByGatheringIDDetail, MethodFindMatchmakeSessionBySingleGatheringID:
		gid := r.U32("gid")
		if err := done(); err != nil {
			return out, err
		}
		ms, ps, err := s.Store.Get(ctx, gid)
		if err != nil {
			return out, storeErr(err)
		}
		conceal(&ms, pid, participantOf(ps, pid))
		ms.Append(&w, v)
	case MethodFindMatchmakeSessionByGatheringID:
		gids := types.ReadList(&r, "lstGid", (*types.Reader).U32)
		if err := done(); err != nil {
			return out, err
		}
		return s.writeFound(ctx, c, &w, Query{GIDs: gids}, false)
	case MethodFindMatchmakeSessionByOwner:
		id := r.PID("id")
		rr := r.ResultRange("resultRange")
		if err := done(); err != nil {
			return out, err
		}
		return s.writeFound(ctx, c, &w, Query{Owner: id, Offset: rr.Offset, Size: rr.Size}, false)
	default:
		return s.serveCommunity(ctx, c, out) // community.go
	}
	return w.Bytes()
}

// joinFirst joins the first of gids that takes the caller
// (AutoMatchmakeWithGatheringId_Postpone), or creates ms when none does.
func (s *Server) joinFirst(ctx context.Context, c *rmc.Call, gids []uint32, ms MatchmakeSession, msg string) (MatchmakeSession, error) {
	if len(gids) > MaxBrowseResults {
		return ms, fmt.Errorf("%w: %d gathering ids", types.CoreInvalidArgument, len(gids))
	}
	gids, err := s.rankNAT(ctx, c.Peer.PID, gids)
	if err != nil {
		return ms, err
	}
	for _, gid := range gids {
		joined, err := s.join(ctx, c, gid, 1, msg, Passwords{})
		if err == nil {
			return joined, nil
		}
		var res types.Result
		if !errors.As(err, &res) {
			return ms, err
		}
	}
	ch, err := s.Store.Create(ctx, newSession(ms), s.participant(c, 1, msg))
	if err != nil {
		return ms, storeErr(err)
	}
	return ch.Session, nil
}

// participantSession is one session a PID takes part in.
type participantSession struct {
	pid types.PID
	ms  MatchmakeSession
}

// sessionsOf lists the sessions each of pids takes part in, in the order of
// pids (FindMatchmakeSessionByParticipant, GetPlayingSession).
// They are concealed for caller (conceal).
func (s *Server) sessionsOf(ctx context.Context, caller types.PID, pids []types.PID) ([]participantSession, error) {
	var list []participantSession
	var all []MatchmakeSession
	for _, p := range pids {
		found, err := s.Store.Find(ctx, Query{Participant: p})
		if err != nil {
			return nil, storeErr(err)
		}
		for _, ms := range found {
			list = append(list, participantSession{p, ms})
		}
		all = append(all, found...)
	}
	if err := s.concealAll(ctx, caller, all); err != nil {
		return nil, err
	}
	for i := range list {
		list[i].ms = all[i]
	}
	return list, nil
}
