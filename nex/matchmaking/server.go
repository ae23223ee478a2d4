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
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/notifications"
	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
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
	// Hooks put a game's policy into the service's flow (extend.go): may a
	// player join, after a session is created.
	Hooks Hooks

	seq     sequencer
	conns   sync.Map // *rmc.Peer -> uint64
	nextCon atomic.Uint64

	natPreferred, natRefused atomic.Uint64 // NATStats
}

// Register adds the three protocols to mux, each as its generated handler
// (handlers.go): MatchMaking, MatchMakingExt and Extension. A game's variant
// registers its own methods on mux one by one (they take precedence) and embeds
// the handler whose other methods it keeps.
//
// Methods the handlers do not implement answer Core::NotImplemented before
// their parameters are read (and the community methods when the Store keeps no
// communities), as a server that does not know them would.
func (s *Server) Register(mux *rmc.Mux) {
	mux.HandleProtocol(ProtocolMatchMaking, served{s, mm.NewMatchMakingServer(s.MatchMaking()), matchMakingMethods})
	mux.HandleProtocol(ProtocolMatchMakingExt, served{s, mm.NewMatchMakingExtServer(s.MatchMakingExt()), matchMakingExtMethods})
	mux.HandleProtocol(ProtocolMatchmakeExtension, served{s, mm.NewMatchmakeExtensionServer(s.Extension()), extensionMethods})
}

// The methods handlers.go answers, by protocol; true marks the community
// methods (which need a CommunityStore).
var (
	matchMakingMethods    = methodSet(false, 1, 2, 3, 4, 11, 12, 13, 15, 16, 20, 21, 22, 23, 27, 28, 29, 30, 33, 36, 40, 41, 42, 43, 44)
	matchMakingExtMethods = methodSet(false, 1, 2, 3, 4)
	extensionMethods      = methodSet(false, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 25, 26, 27, 30, 31, 33, 34,
		36, 37, 38, 39, 40, 41, 42, 43, 44, 48, 49, 50, 51, 52, 53)
)

func init() {
	for _, m := range []uint32{MethodCreateCommunity, MethodUpdateCommunity, MethodJoinCommunity, MethodFindCommunityByGatheringID,
		MethodFindOfficialCommunity, MethodFindCommunityByParticipant, MethodGetSimpleCommunity, MethodFindCommunityByOwner} {
		extensionMethods[m] = true
	}
}

func methodSet(community bool, ids ...uint32) map[uint32]bool {
	out := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		out[id] = community
	}
	return out
}

// served answers the methods of set with h (a generated server), the others
// with Core::NotImplemented.
type served struct {
	s   *Server
	h   rmc.Handler
	set map[uint32]bool
}

func (v served) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	community, ok := v.set[c.Method]
	if !ok {
		return out, types.CoreNotImplemented
	}
	if community {
		if _, err := v.s.communities(); err != nil {
			return out, err
		}
	}
	return v.h.ServeRMC(ctx, c, out)
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
	ch, created, err := s.autoMatchmakeStore(ctx, crit, newSession(ms), s.participant(c, slots, msg))
	if err != nil {
		return ms, storeErr(err)
	}
	if created {
		s.created(ctx, c, ch)
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
	s.created(ctx, c, ch)
	return ch.Session, nil
}

// participantSession is one session a PID takes part in.
type participantSession struct {
	pid types.PID
	ms  MatchmakeSession
}

// sessionsOf lists the sessions each of pids takes part in, in the order of
// pids, a PID given twice once (FindMatchmakeSessionByParticipant,
// GetPlayingSession, GetSimplePlayingSession).
// They are concealed for caller (conceal).
func (s *Server) sessionsOf(ctx context.Context, caller types.PID, pids []types.PID) ([]participantSession, error) {
	var list []participantSession
	var all []MatchmakeSession
	for i, p := range pids {
		if slices.Contains(pids[:i], p) {
			continue // named twice (or named and the caller included): listed once
		}
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
