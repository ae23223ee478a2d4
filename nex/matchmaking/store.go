package matchmaking

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/types"
)

// Result codes of the RendezVous module that matchmaking answers with
// (NintendoClients' nintendo/nex/errors.py names them). A Store returns them,
// possibly wrapped, and the handlers send them as they are.
const (
	ResultSessionFull                  types.Result = 0x800300C8 // RendezVous::SessionFull
	ResultInvalidGatheringPassword     types.Result = 0x800300C9 // RendezVous::InvalidGatheringPassword
	ResultNotParticipatedGathering     types.Result = 0x800300D4 // RendezVous::NotParticipatedGathering
	ResultUserPasswordUnmatch          types.Result = 0x800300D5 // RendezVous::MatchmakeSessionUserPasswordUnmatch
	ResultSystemPasswordUnmatch        types.Result = 0x800300D6 // RendezVous::MatchmakeSessionSystemPasswordUnmatch
	ResultAlreadyParticipatedGathering types.Result = 0x800300D8 // RendezVous::AlreadyParticipatedGathering
	ResultPermissionDenied             types.Result = 0x800300D9 // RendezVous::PermissionDenied
	ResultSessionClosed                types.Result = 0x800300DB // RendezVous::SessionClosed
	ResultSessionVoid                               = types.RendezVousSessionVoid
)

// Limits on what a client may store in a gathering; larger values are refused
// with Core::InvalidArgument. NEX clients keep six attributes
// (NintendoClients' server classes compare exactly six); buffers are bounded so
// a session row stays small.
const (
	MaxAttributes        = 6
	MaxApplicationBuffer = 2048
	MaxDescription       = 256
	MaxPassword          = 64
	MaxMatchmakeParams   = 32
	MaxSearchCriteria    = 16
	MaxBrowseResults     = 100
	// MaxBlockList is how many players one player may block.
	MaxBlockList = 100
	// MaxNotificationTypes is how many types of notification data one
	// player keeps (UpdateNotificationData; one entry per type).
	MaxNotificationTypes = 16
	// MaxNotificationText bounds a notification's string.
	MaxNotificationText = 256
)

// CheckNotification refuses notification data a store must not keep.
func CheckNotification(ev *notifications.Event) error {
	if len(ev.StrParam) > MaxNotificationText {
		return fmt.Errorf("%w: notification string of %d bytes, at most %d", types.CoreInvalidArgument, len(ev.StrParam), MaxNotificationText)
	}
	return nil
}

// PlayerStore keeps what matchmaking knows of a player apart from its
// gatherings: the notification data it publishes to its friends
// (UpdateNotificationData) and its block list.
type PlayerStore interface {
	// SetNotification keeps ev (Source the player, Type the kind; Param3 and
	// Map are not kept) in place of the player's earlier data of that type.
	SetNotification(ctx context.Context, ev notifications.Event) error
	// Notifications returns the data the players pids keep of types typs.
	Notifications(ctx context.Context, pids []types.PID, typs []uint32) ([]notifications.Event, error)
	// BlockList returns the players pid blocks, in PID order.
	BlockList(ctx context.Context, pid types.PID) ([]types.PID, error)
	// Block adds players to pid's block list (at most MaxBlockList in all).
	Block(ctx context.Context, pid types.PID, blocked []types.PID) error
	// Unblock removes players from pid's block list; nil clears it.
	Unblock(ctx context.Context, pid types.PID, blocked []types.PID) error
}

// Participant is one member of a gathering.
type Participant struct {
	PID types.PID
	// Slots is how many players of this console take part (participationCount);
	// 0 counts as 1.
	Slots   uint16
	Message string // join message
	// Node and Conn name the secure connection the participant joined on: the
	// secure server (Server.Node) and its connection there. When that connection
	// ends, Disconnect removes the participant.
	Node string
	Conn uint64
}

// SlotCount returns the participant's slot count, at least 1.
func (p Participant) SlotCount() int {
	if p.Slots == 0 {
		return 1
	}
	return int(p.Slots)
}

// Change is the state of a gathering after one committed change, which the
// server turns into notifications.
type Change struct {
	Session      MatchmakeSession
	Participants []Participant // after the change
	// Seq counts the changes of this gathering; each committed change has the
	// next number, so notifications can be delivered in commit order.
	Seq uint64
	// Joined or Left is the participant the change added or removed.
	Joined, Left *Participant
	// Deleted: the gathering no longer exists (its last participant or its owner
	// left, or it was unregistered).
	Deleted bool
	// PrevOwner is the previous owner when ownership moved (0 otherwise).
	PrevOwner types.PID
}

// Passwords are what a joining client presents.
type Passwords struct {
	User, System string
	// IgnoreBlockList lets the join through even when the joiner and a
	// participant block one another (JoinMatchmakeSessionEx's
	// ignore_block_list); otherwise such a join is refused.
	IgnoreBlockList bool
}

// Query selects gatherings by id, owner or participant (the fields set are
// ANDed; at least one is set).
type Query struct {
	GIDs        []uint32
	Owner       types.PID
	Participant types.PID
	Offset      uint32
	Size        uint32 // 0: MaxBrowseResults
}

// Store keeps gatherings and their participants. Every method is one database
// transaction: race-freedom (no session over-filled, no two clients each
// creating a session when one could join the other's) comes from the
// transaction, not from a lock in this process, so several secure servers may
// share one database. Errors that clients should see are Results (the
// Result* constants above, Core::InvalidArgument), possibly wrapped.
//
// accounts.Store's Matchmaking returns the SQLite implementation.
type Store interface {
	// Create registers s with a new id and p as its owner, host and first
	// participant.
	Create(ctx context.Context, s MatchmakeSession, p Participant) (Change, error)
	// AutoMatchmake joins p to an open session that matches one of criteria
	// (any, when criteria is nil: then s's own game mode, system type,
	// participant range and attributes must match), or creates s when none
	// fits, in one transaction.
	AutoMatchmake(ctx context.Context, criteria []SearchCriteria, s MatchmakeSession, p Participant) (c Change, created bool, err error)
	// Join adds p to gathering gid.
	Join(ctx context.Context, gid uint32, p Participant, pw Passwords) (Change, error)
	// Leave removes pid from gid; when it was the owner, ownership moves
	// (FlagMigrateOwner) or the gathering is deleted.
	Leave(ctx context.Context, gid uint32, pid types.PID) (Change, error)
	// Disconnect removes the participants of a connection that ended, from
	// every gathering.
	Disconnect(ctx context.Context, node string, conn uint64) ([]Change, error)
	// ResetNode removes every participant a node recorded, as Disconnect does
	// one connection's: the node restarted (its connections are gone) or
	// stopped heartbeating.
	ResetNode(ctx context.Context, node string) ([]Change, error)
	// Get returns a gathering and its participants.
	Get(ctx context.Context, gid uint32) (MatchmakeSession, []Participant, error)
	// Update applies f to gathering gid in a transaction; f sees the current
	// state and fails the update by returning an error.
	Update(ctx context.Context, gid uint32, f func(s *MatchmakeSession, ps []Participant) error) (Change, error)
	// Delete removes gathering gid after f (nil: no check) approves.
	Delete(ctx context.Context, gid uint32, f func(s *MatchmakeSession, ps []Participant) error) (Change, error)
	// Browse returns the sessions that match c, in the order auto-matchmaking
	// reads them (before NAT reorders them, nat.go).
	Browse(ctx context.Context, c SearchCriteria, offset, size uint32) ([]MatchmakeSession, error)
	// Find returns gatherings by id, owner or participant.
	Find(ctx context.Context, q Query) ([]MatchmakeSession, error)
	// AutoMatchmake never joins a player to a session with a participant it
	// blocks or that blocks it; Join refuses that too (unless
	// Passwords.IgnoreBlockList).
	PlayerStore
}
