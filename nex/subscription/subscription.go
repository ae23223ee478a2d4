// Package subscription serves the Subscription protocol (117, nintendo-wiki
// "Subscription (117)"), which Pokémon X/Y and Omega Ruby/Alpha Sapphire use
// for their Player Search System: each player publishes a buffer of presence
// data (opaque to the server), follows other players (targets), reads the
// data of its friends, its targets, given players and the players active
// lately, and keeps a privacy level. The generated codecs are
// nex/protocols/subscription; the state is in a Store (the SQLite and
// PostgreSQL stores' Subscriptions, internal/sqlstore; Memory in memory).
//
// What the methods do is this package's reading of the public facts: the
// wiki page for the wire formats and Pretendo Network's pokemon-gen6 server
// (github.com/PretendoNetwork/pokemon-gen6, read for facts only) for what
// the game expects. docs/games.md lists the judgement calls.
package subscription

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	"github.com/gamewire/gamewire/nex/notifications"
	sub "github.com/gamewire/gamewire/nex/protocols/subscription"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the Subscription protocol's id.
const ProtocolID = sub.SubscriptionProtocolID

// Notification types the server sends (category 112, "Subscription event",
// nintendo-wiki "Notification Types"; the subtypes as Pretendo Network's
// server sends them): a player's data went (NotificationCleared) or was
// published or changed (NotificationChanged).
const (
	NotificationCleared uint32 = 112000
	NotificationChanged uint32 = 112001
)

// Defaults of the limits (Config).
const (
	// DefaultMaxDataSize bounds a player's data buffer.
	DefaultMaxDataSize = 4096
	// DefaultMaxTargets bounds a player's targets, and the players one
	// GetSubscriptionData asks for.
	DefaultMaxTargets = 256
	// DefaultMaxActivePlayers bounds GetActivePlayerSubscriptionData's
	// answer (Pretendo Network's server answers at most 100).
	DefaultMaxActivePlayers = 100
	// DefaultActiveWindow is how recently a player must have published its
	// data to be listed as active.
	DefaultActiveWindow = time.Hour
	// DefaultPrivacyLevel is GetPrivacyLevel's answer for a player who never
	// set one: 1, what Pretendo Network's server answers for everyone.
	DefaultPrivacyLevel = 1
	// MaxNotified bounds the players one change notifies.
	MaxNotified = 512
)

// Record is a player's published data as the store keeps it.
type Record struct {
	PID     types.PID
	Content []byte
	// Unknown1 and Unknown2 are CreateMySubscriptionData's two values of
	// unknown meaning, kept as the last create sent them.
	Unknown1 uint32
	Unknown2 bool
	Created  time.Time
	Updated  time.Time
}

// Store keeps the players' data, targets and privacy levels.
type Store interface {
	// PutData publishes r (replacing pid's record): a create (create true)
	// sets every field, an update keeps Unknown1, Unknown2 and Created of a
	// record that exists.
	PutData(ctx context.Context, r Record, create bool) error
	// ClearData removes pid's record and targets.
	ClearData(ctx context.Context, pid types.PID) error
	// Data returns the records of pids that have one, in the order of pids.
	Data(ctx context.Context, pids []types.PID) ([]Record, error)
	// Active returns up to limit records updated at since or later, newest
	// first, without exclude's.
	Active(ctx context.Context, exclude types.PID, since time.Time, limit int) ([]Record, error)
	// AddTargets adds targets to pid's (each once); when that makes more than
	// max, it fails with an error wrapping Core::InvalidArgument and nothing
	// changes.
	AddTargets(ctx context.Context, pid types.PID, targets []types.PID, max int) error
	// DeleteTargets removes targets from pid's.
	DeleteTargets(ctx context.Context, pid types.PID, targets []types.PID) error
	// ReplaceTargets makes targets pid's targets (at most max, as AddTargets).
	ReplaceTargets(ctx context.Context, pid types.PID, targets []types.PID, max int) error
	// Targets returns pid's targets in the order they were added.
	Targets(ctx context.Context, pid types.PID) ([]types.PID, error)
	// Watchers returns up to limit players whose targets include pid.
	Watchers(ctx context.Context, pid types.PID, limit int) ([]types.PID, error)
	// SetPrivacyLevel records pid's privacy level.
	SetPrivacyLevel(ctx context.Context, pid types.PID, level uint32) error
	// PrivacyLevel returns pid's privacy level; ok is false when none is set.
	PrivacyLevel(ctx context.Context, pid types.PID) (level uint32, ok bool, err error)
}

// Config is what an operator sets; zero fields take the defaults above.
type Config struct {
	MaxDataSize      int
	MaxTargets       int
	MaxActivePlayers int
	// ActiveWindow: a negative value lists every player with data.
	ActiveWindow time.Duration
	// DefaultPrivacyLevel: nil answers DefaultPrivacyLevel.
	DefaultPrivacyLevel *uint32
}

// Server answers Subscription.
type Server struct {
	// Store keeps the state; nil keeps it in memory (Memory).
	Store Store
	// Friends are the friend lists GetFriendSubscriptionData and the
	// notifications read (nex/friends' interface); nil: no friends.
	Friends friends.Friends
	// Hub sends the notifications to the players online on this server;
	// nil sends none.
	Hub *notifications.Hub
	// Notify, when set, sends the notifications instead of Hub: nex.Server's
	// NotifyAnywhere reaches players on the other secure nodes too.
	Notify func(ctx context.Context, pid types.PID, ev notifications.Event) error
	Config Config
	// Now returns the time; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger

	mem Memory
}

func (s *Server) store() Store {
	if s.Store != nil {
		return s.Store
	}
	return &s.mem
}

var _ sub.SubscriptionHandler = (*Server)(nil)

// Register registers s for Subscription on mux.
func (s *Server) Register(mux *rmc.Mux) { sub.RegisterSubscription(mux, s) }

// ServeRMC implements rmc.Handler through the generated codec.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	return sub.ServeSubscription(s, ctx, c, out)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func (s *Server) maxTargets() int { return orDefault(s.Config.MaxTargets, DefaultMaxTargets) }

// caller is the authenticated caller's PID.
func caller(c *rmc.Call) (types.PID, error) {
	if c.Peer == nil || c.Peer.PID == 0 {
		return 0, types.RendezVousNotAuthenticated
	}
	return c.Peer.PID, nil
}

// pids checks a list of players a client sent: at most the target limit,
// no zero PID; duplicates go (the first kept).
func (s *Server) pids(what string, list []types.PID) ([]types.PID, error) {
	max := s.maxTargets()
	out := make([]types.PID, 0, min(len(list), max))
	seen := make(map[types.PID]bool, min(len(list), max))
	for i, p := range list {
		if p == 0 {
			return nil, fmt.Errorf("%w: %s item %d is PID 0", types.CoreInvalidArgument, what, i)
		}
		if seen[p] {
			continue
		}
		if len(out) == max {
			return nil, fmt.Errorf("%w: more than %d %s", types.CoreInvalidArgument, max, what)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

func (s *Server) put(ctx context.Context, c *rmc.Call, r Record, create bool) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	if max := orDefault(s.Config.MaxDataSize, DefaultMaxDataSize); len(r.Content) > max {
		return fmt.Errorf("%w: subscription data of %d bytes (at most %d)", types.CoreInvalidArgument, len(r.Content), max)
	}
	now := s.now()
	r.PID, r.Created, r.Updated = pid, now, now
	if err := s.store().PutData(ctx, r, create); err != nil {
		return err
	}
	s.notify(ctx, pid, NotificationChanged)
	return nil
}

// CreateMySubscriptionData implements sub.SubscriptionHandler: publishes the
// caller's data, replacing what it published before (the store outlives
// connections, so a player who left without clearing is not refused); the
// principal id is the caller's, whatever the structure says.
func (s *Server) CreateMySubscriptionData(ctx context.Context, c *rmc.Call, unknown1 uint32, param sub.SubscriptionData, unknown2 bool) error {
	return s.put(ctx, c, Record{Content: param.Content, Unknown1: unknown1, Unknown2: unknown2}, true)
}

// UpdateMySubscriptionData implements sub.SubscriptionHandler: replaces the
// caller's data (publishing it when there was none).
func (s *Server) UpdateMySubscriptionData(ctx context.Context, c *rmc.Call, param sub.SubscriptionData) error {
	return s.put(ctx, c, Record{Content: param.Content}, false)
}

// ClearMySubscriptionData implements sub.SubscriptionHandler: removes the
// caller's data and targets.
func (s *Server) ClearMySubscriptionData(ctx context.Context, c *rmc.Call) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	if err := s.store().ClearData(ctx, pid); err != nil {
		return err
	}
	s.notify(ctx, pid, NotificationCleared)
	return nil
}

// AddTarget implements sub.SubscriptionHandler.
func (s *Server) AddTarget(ctx context.Context, c *rmc.Call, targets []types.PID) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	if targets, err = s.pids("targets", targets); err != nil {
		return err
	}
	return s.store().AddTargets(ctx, pid, targets, s.maxTargets())
}

// DeleteTarget implements sub.SubscriptionHandler.
func (s *Server) DeleteTarget(ctx context.Context, c *rmc.Call, targets []types.PID) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	if targets, err = s.pids("targets", targets); err != nil {
		return err
	}
	return s.store().DeleteTargets(ctx, pid, targets)
}

// ClearTarget implements sub.SubscriptionHandler.
func (s *Server) ClearTarget(ctx context.Context, c *rmc.Call) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	return s.store().ReplaceTargets(ctx, pid, nil, s.maxTargets())
}

// wire converts records to the structure the methods answer.
func wire(rs []Record) []sub.SubscriptionData {
	out := make([]sub.SubscriptionData, len(rs))
	for i, r := range rs {
		out[i] = sub.SubscriptionData{PrincipalID: r.PID, Content: r.Content}
	}
	return out
}

// friendsOf returns pid's friends, none without a friends source.
func (s *Server) friendsOf(ctx context.Context, pid types.PID) ([]types.PID, error) {
	if s.Friends == nil {
		return nil, nil
	}
	return s.Friends.FriendsOf(ctx, pid)
}

// GetFriendSubscriptionData implements sub.SubscriptionHandler: the data of
// the caller's friends who published some, in the friend list's order.
func (s *Server) GetFriendSubscriptionData(ctx context.Context, c *rmc.Call) ([]sub.SubscriptionData, error) {
	pid, err := caller(c)
	if err != nil {
		return nil, err
	}
	fs, err := s.friendsOf(ctx, pid)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	rs, err := s.store().Data(ctx, fs)
	return wire(rs), err
}

func (s *Server) targetsData(ctx context.Context, pid types.PID) ([]sub.SubscriptionData, error) {
	ts, err := s.store().Targets(ctx, pid)
	if err != nil || len(ts) == 0 {
		return nil, err
	}
	rs, err := s.store().Data(ctx, ts)
	return wire(rs), err
}

// GetTargetSubscriptionData implements sub.SubscriptionHandler: the data of
// the caller's targets who published some, in the targets' order.
func (s *Server) GetTargetSubscriptionData(ctx context.Context, c *rmc.Call) ([]sub.SubscriptionData, error) {
	pid, err := caller(c)
	if err != nil {
		return nil, err
	}
	return s.targetsData(ctx, pid)
}

// GetActivePlayerSubscriptionData implements sub.SubscriptionHandler: the
// players (other than the caller) who published data within the active
// window, newest first. How many: unknown1 + unknown2 (Pretendo Network read
// the count so from the official server's answers), capped at the limit;
// 0 asks for the limit. unknown3's meaning is not known and it is not used.
// Each entry's flag is true: its meaning is not known and true is the one
// value a public server answers.
func (s *Server) GetActivePlayerSubscriptionData(ctx context.Context, c *rmc.Call, unknown1, unknown2, unknown3 uint32) ([]sub.ActivePlayerSubscriptionData, error) {
	pid, err := caller(c)
	if err != nil {
		return nil, err
	}
	limit := orDefault(s.Config.MaxActivePlayers, DefaultMaxActivePlayers)
	if n := uint64(unknown1) + uint64(unknown2); n > 0 && n < uint64(limit) {
		limit = int(n)
	}
	var since time.Time
	if w := s.Config.ActiveWindow; w >= 0 {
		since = s.now().Add(-cmp.Or(w, DefaultActiveWindow))
	}
	rs, err := s.store().Active(ctx, pid, since, limit)
	if err != nil {
		return nil, err
	}
	out := make([]sub.ActivePlayerSubscriptionData, len(rs))
	for i, d := range wire(rs) {
		out[i] = sub.ActivePlayerSubscriptionData{SubscriptionData: d, Unknown: true}
	}
	return out, nil
}

// GetSubscriptionData implements sub.SubscriptionHandler: the data of the
// players asked for who published some, in the order asked (a player without
// data is left out, as the target methods do).
func (s *Server) GetSubscriptionData(ctx context.Context, c *rmc.Call, pids []types.PID) ([]sub.SubscriptionData, error) {
	if _, err := caller(c); err != nil {
		return nil, err
	}
	pids, err := s.pids("players", pids)
	if err != nil || len(pids) == 0 {
		return nil, err
	}
	rs, err := s.store().Data(ctx, pids)
	return wire(rs), err
}

// ReplaceTargetAndGetSubscriptionData implements sub.SubscriptionHandler:
// makes targets the caller's targets and answers their data, as
// GetTargetSubscriptionData.
func (s *Server) ReplaceTargetAndGetSubscriptionData(ctx context.Context, c *rmc.Call, targets []types.PID) ([]sub.SubscriptionData, error) {
	pid, err := caller(c)
	if err != nil {
		return nil, err
	}
	if targets, err = s.pids("targets", targets); err != nil {
		return nil, err
	}
	if err := s.store().ReplaceTargets(ctx, pid, targets, s.maxTargets()); err != nil {
		return nil, err
	}
	return s.targetsData(ctx, pid)
}

// SetPrivacyLevel implements sub.SubscriptionHandler: records the caller's
// level. What the levels mean is not public: the server keeps the value and
// filters nothing by it.
func (s *Server) SetPrivacyLevel(ctx context.Context, c *rmc.Call, level uint32) error {
	pid, err := caller(c)
	if err != nil {
		return err
	}
	return s.store().SetPrivacyLevel(ctx, pid, level)
}

// GetPrivacyLevel implements sub.SubscriptionHandler: the caller's level,
// the configured default when it never set one.
func (s *Server) GetPrivacyLevel(ctx context.Context, c *rmc.Call) (uint32, error) {
	pid, err := caller(c)
	if err != nil {
		return 0, err
	}
	level, ok, err := s.store().PrivacyLevel(ctx, pid)
	if err != nil || ok {
		return level, err
	}
	if d := s.Config.DefaultPrivacyLevel; d != nil {
		return *d, nil
	}
	return DefaultPrivacyLevel, nil
}

// notify tells pid's friends and the players targeting pid, those online
// (on this server with Hub, anywhere with Notify), that pid's data changed
// (typ). Failures are logged, not
// returned: the change is made.
func (s *Server) notify(ctx context.Context, pid types.PID, typ uint32) {
	send := s.Notify
	if send == nil && s.Hub != nil {
		send = s.Hub.Notify
	}
	if send == nil {
		return
	}
	to, err := s.friendsOf(ctx, pid)
	if err == nil {
		var ws []types.PID
		ws, err = s.store().Watchers(ctx, pid, MaxNotified)
		to = append(to, ws...)
	}
	if err != nil && s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex: subscription notification recipients not read", slog.Uint64("pid", uint64(pid)),
			slog.String("error", err.Error()))
	}
	slices.Sort(to)
	to = slices.Compact(to)
	if len(to) > MaxNotified {
		to = to[:MaxNotified]
	}
	ev := notifications.Event{Source: pid, Type: typ}
	for _, p := range to {
		if p == pid {
			continue
		}
		if err := send(ctx, p, ev); err != nil && !errors.Is(err, notifications.ErrOffline) && s.Logger != nil {
			s.Logger.LogAttrs(ctx, slog.LevelDebug, "nex: subscription notification not sent", slog.Uint64("pid", uint64(p)),
				slog.String("error", err.Error()))
		}
	}
}
