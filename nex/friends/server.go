// Package friends is the 3DS and Wii U friends server: Friends_V1 (101, the
// 3DS: friend codes, profile, Mii, presence) and Friends_V2 (102, the Wii U:
// friend requests, block list, presence), on the code nex/desc/gen writes
// from nex/desc/defs/friends.nexd (nex/protocols/friends), with their state in
// a Store (nex/accounts for SQLite, nex/pgstore for PostgreSQL) and presence
// changes, requests and friendships told to the players' online friends
// through NintendoNotification (100) calls, across secure nodes through the
// store's mailbox.
//
// Both protocols see one friend graph: a 3DS player adding a friend code
// sends a request (without a message) that a Wii U player sees and accepts,
// and two players asking each other become friends. Friends (AreFriends,
// FriendsOf) is what the other services use (ranking's friends filter,
// DataStore's friends permission, friend-only matchmake sessions).
//
// Judgement calls (docs/nex.md "Friends"): facts come from NintendoClients'
// friends.proto and nintendonotification.proto and from reading the
// notification types Pretendo's friends server sends; fields nobody has
// named are sent back as received or zero.
package friends

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/nodes"
	"github.com/gamewire/gamewire/nex/protocols/account"
	fp "github.com/gamewire/gamewire/nex/protocols/friends"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Protocol ids.
const (
	ProtocolV1           uint16 = 101 // Friends_V1, the 3DS
	ProtocolV2           uint16 = 102 // Friends_V2, the Wii U
	ProtocolNotification uint16 = 100 // NintendoNotification, server to client
)

// Sizes the services accept (FPD::SizeLimitExceeded beyond). The consoles'
// own limits are smaller (a 3DS comment is 16 characters, a Mii 96 bytes);
// these leave room without letting one player fill the store.
const (
	MaxComment         = 256      // bytes of a comment (UTF-8)
	MaxMessage         = 512      // bytes of a request message or presence description
	MaxAppData         = 1024     // bytes of a presence's application data
	MaxMiiData         = 1024     // bytes of one Mii
	MaxMiiList         = 100      // Miis of a 3DS Mii list
	MaxPlayed          = 100      // games of a "played recently" list
	MaxPicture         = 64 << 10 // bytes of a 3DS profile picture
	MaxListParam       = 1000     // entries of a list parameter (PIDs, keys, ids)
	DefaultRequestTTL  = 30 * 24 * time.Hour
	DefaultRequestRate = 30 // friend requests a player may send per RequestWindow
	RequestWindow      = time.Minute
	DefaultMaxFanout   = 200 // notifications one change sends at most
	// DefaultMaxNotifications bounds the persistent notifications kept for
	// one player (the oldest go first).
	DefaultMaxNotifications = 100
	// NotificationTTL is how long a persistent notification is kept.
	NotificationTTL = DefaultRequestTTL
	mailKind        = "friends"
)

// Server answers Friends_V1 and Friends_V2 calls. Fields configure it before
// Register; Store is required.
type Server struct {
	Store Store
	// Hub reaches this node's connections (nex.Server's); nil sends no
	// notifications.
	Hub Caller
	// Node names this secure node in the store's presence records; default
	// "local".
	Node string
	// Mail carries notifications for players on other secure nodes (the
	// store's mailbox, nex.Server wires it on RoleSecure); nil: none.
	Mail nodes.Mailbox
	// Limits bound friend lists, pending requests and block lists.
	Limits Limits
	// RequestTTL is how long a friend request waits; default DefaultRequestTTL.
	RequestTTL time.Duration
	// RequestRate is how many friend requests a player may send per
	// RequestWindow (FPD::RequestLimitExceed beyond); default
	// DefaultRequestRate, negative for no limit.
	RequestRate int
	// MaxFanout bounds the notifications one change sends; default
	// DefaultMaxFanout.
	MaxFanout int
	// MaxNotifications bounds the persistent notifications kept for one
	// offline player; default DefaultMaxNotifications, negative keeps none.
	MaxNotifications int
	// Names resolves a name to a PID for AddFriendByName (the account
	// store); nil takes names in decimal as PIDs only.
	Names func(ctx context.Context, name string) (types.PID, error)
	// Now returns the time; default time.Now.
	Now func() time.Time
	// Logger receives store and delivery failures.
	Logger *slog.Logger

	rate rateLimiter
}

// Caller sends server-to-client calls (notifications.Hub has it).
type Caller interface {
	Call(ctx context.Context, pid types.PID, protocol uint16, method uint32, params func(w *types.Writer, v types.Version)) error
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Server) node() string {
	if s.Node == "" {
		return "local"
	}
	return s.Node
}

func (s *Server) ttl() time.Duration {
	if s.RequestTTL > 0 {
		return s.RequestTTL
	}
	return DefaultRequestTTL
}

func (s *Server) fanout() int {
	if s.MaxFanout > 0 {
		return s.MaxFanout
	}
	return DefaultMaxFanout
}

// Register serves both protocols on mux, and AccountManagement's
// NintendoCreateAccount (account.go).
func (s *Server) Register(mux *rmc.Mux) {
	fp.RegisterFriendsV1(mux, v1{s})
	fp.RegisterFriendsV2(mux, v2{s})
	account.RegisterAccountMethods(mux, accountManagement{}, account.AccountMethodNintendoCreateAccount)
}

// Start clears the presence this node recorded before a restart (its
// connections are gone) and tells those players' friends they went offline.
func (s *Server) Start(ctx context.Context) error {
	if s.Store == nil {
		return fmt.Errorf("friends: Server.Store is required")
	}
	pids, err := s.Store.ClearNode(ctx, s.node())
	if err != nil {
		return err
	}
	for _, pid := range pids {
		s.wentOffline(ctx, pid)
	}
	return nil
}

// Disconnected records an ended connection's player offline and tells their
// friends.
func (s *Server) Disconnected(ctx context.Context, p *rmc.Peer) {
	if p.PID == 0 {
		return
	}
	if on, ok := s.Hub.(interface{ Online(types.PID) bool }); ok && on.Online(p.PID) {
		return // another connection of the player is still here
	}
	ok, err := s.Store.ClearPresence(ctx, p.PID, s.node())
	if err != nil {
		s.warn(ctx, "presence not cleared", p.PID, err)
		return
	}
	_, _ = s.Store.UpdateProfile(ctx, p.PID, func(pr *Profile) error { pr.LastOnline = s.now(); return nil })
	if ok {
		s.wentOffline(ctx, p.PID)
	}
}

// Sweep deletes expired friend requests and persistent notifications older
// than NotificationTTL; run it now and then (serve does).
func (s *Server) Sweep(ctx context.Context) (int64, error) {
	n, err := s.Store.ExpireRequests(ctx, s.now())
	if err != nil {
		return n, err
	}
	m, err := s.Store.ExpireNotifications(ctx, s.now().Add(-NotificationTTL))
	return n + m, err
}

func (s *Server) warn(ctx context.Context, msg string, pid types.PID, err error) {
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex friends: "+msg, slog.Uint64("pid", uint64(pid)), slog.String("error", err.Error()))
	}
}

// checkSize refuses a value longer than max with FPD::SizeLimitExceeded.
func checkSize(what string, n, max int) error {
	if n > max {
		return fmt.Errorf("%w: %s of %d (at most %d)", types.FPDSizeLimitExceeded, what, n, max)
	}
	return nil
}

// checkList refuses a list parameter longer than MaxListParam.
func checkList(what string, n int) error {
	if n > MaxListParam {
		return fmt.Errorf("%w: %s of %d entries (at most %d)", types.FPDInvalidArgument, what, n, MaxListParam)
	}
	return nil
}

// friendsAmong returns the PIDs of want that are friends of pid (pid itself
// too), in want's order without repeats.
func (s *Server) friendsAmong(ctx context.Context, pid types.PID, want []types.PID) ([]types.PID, error) {
	if err := checkList("PID list", len(want)); err != nil {
		return nil, err
	}
	fs, err := s.Store.FriendsOf(ctx, pid)
	if err != nil {
		return nil, err
	}
	ok := map[types.PID]bool{pid: true}
	for _, f := range fs {
		ok[f] = true
	}
	seen := map[types.PID]bool{}
	var out []types.PID
	for _, p := range want {
		if ok[p] && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// sendRequest sends a friend request from me to other, after the rate limit
// and the recipient's preference, and tells the recipient.
func (s *Server) sendRequest(ctx context.Context, me, other types.PID, msg string, game GameKey) (Request, *Link, error) {
	if other == 0 || other == me {
		return Request{}, nil, fmt.Errorf("%w: PID %d", types.FPDInvalidPrincipalID, other)
	}
	if err := checkSize("request message", len(msg), MaxMessage); err != nil {
		return Request{}, nil, err
	}
	rate := s.RequestRate
	if rate == 0 {
		rate = DefaultRequestRate
	}
	if rate > 0 && !s.rate.allow(me, rate, s.now()) {
		return Request{}, nil, fmt.Errorf("%w: PID %d sent %d friend requests in the last %v", types.FPDRequestLimitExceed, me, rate, RequestWindow)
	}
	target, err := s.Store.Profile(ctx, other)
	if err != nil {
		return Request{}, nil, err
	}
	if target.BlockRequests {
		if ok, err := s.Store.AreFriends(ctx, me, other); err != nil || !ok {
			return Request{}, nil, fmt.Errorf("%w: PID %d takes no friend requests", types.FPDFriendRequestNotAllowed, other)
		}
	}
	now := s.now()
	r, link, err := s.Store.SendRequest(ctx, Request{Sender: me, Recipient: other, Message: msg, Game: game,
		Expires: now.Add(s.ttl())}, now, s.Limits)
	if err != nil {
		return r, link, err
	}
	if link != nil {
		s.befriended(ctx, me, other, link.Since)
	} else {
		s.requestSent(ctx, r)
	}
	return r, link, nil
}

// rateLimiter counts each player's friend requests per RequestWindow.
type rateLimiter struct {
	mu     sync.Mutex
	window time.Time
	counts map[types.PID]int
}

func (l *rateLimiter) allow(pid types.PID, rate int, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := now.Truncate(RequestWindow); !w.Equal(l.window) || l.counts == nil {
		l.window, l.counts = w, map[types.PID]int{} // the map holds one window's senders only
	}
	if l.counts[pid] >= rate {
		return false
	}
	l.counts[pid]++
	return true
}
