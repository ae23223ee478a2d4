package matchmaking

import (
	"context"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// The extension seams: what a game's variant of Matchmake Extension (a
// MatchmakeExtension_MK8 method, say) builds on without editing this package.
// The variant embeds *Extension (Server.Extension) for the methods it inherits,
// registers its own on the Mux, and joins, leaves, checks and notifies as the
// service does through the methods below; Hooks put a game's policy into the
// service's own flow.

// Hooks are a game's policy over the generic matchmaking flow (Server.Hooks;
// nex.Server.MatchmakingHooks). Each, when set, runs at its point of every
// method that passes it; a nil hook changes nothing.
type Hooks struct {
	// MayJoin decides whether pid may join the session ms by its id
	// (JoinMatchmakeSession, JoinMatchmakeSessionEx, JoinMatchmakeSessionWithParam,
	// a friends' auto-matchmake trying its friends' sessions, Server.Join),
	// after the service's own checks and before the store adds pid. An error
	// refuses the join and fails the call as a handler's error does (a
	// types.Result is sent as that code). An auto-matchmake that the store
	// matches by search criteria in one transaction does not consult it.
	MayJoin func(ctx context.Context, pid types.PID, ms *MatchmakeSession) error
	// Created runs after a session was created and committed, by any method
	// (CreateMatchmakeSession, CreateMatchmakeSessionWithParam,
	// RegisterGathering, an auto-matchmake that found nothing to join), with
	// the call that created it and the session as stored. It cannot refuse:
	// the session exists and the client is answered.
	Created func(ctx context.Context, c *rmc.Call, ms MatchmakeSession)
}

// Join adds the caller to gathering gid as JoinMatchmakeSession does: the
// friends-only and Hooks.MayJoin checks, the store's (capacity, passwords,
// block lists, participation policy), then the notifications to its
// participants. slots is the number of players the caller brings (1 for
// itself alone); msg the join message. The session is returned as the caller
// may see it.
func (s *Server) Join(ctx context.Context, c *rmc.Call, gid uint32, slots uint16, msg string, pw Passwords) (MatchmakeSession, error) {
	return s.join(ctx, c, gid, slots, msg, pw)
}

// Leave removes the caller from gathering gid as EndParticipation does and
// notifies the remaining participants (ownership moves, or the gathering is
// deleted, as the store decides).
func (s *Server) Leave(ctx context.Context, c *rmc.Call, gid uint32, msg string) error {
	return s.leave(ctx, c, gid, msg, reasonEnded)
}

// Notify sends the notifications of a change a variant committed to the store
// itself (Store.Join, Store.Update, ...): to the gathering's participants, on
// this node or, through Mail, another, in the order the changes were
// committed. actor is the player who made the change, msg its message. A
// change of host is announced by UpdateOwned, which sees it happen.
func (s *Server) Notify(ctx context.Context, ch Change, actor types.PID, msg string) {
	s.notify(ctx, ch, actor, msg, reasonEnded, false)
}

// CheckJoin returns the error a join of gid by pid fails with before the
// store is asked: a friends-only session of someone who is not pid's friend
// (RendezVous::NotFriend), then Hooks.MayJoin's verdict.
func (s *Server) CheckJoin(ctx context.Context, pid types.PID, gid uint32) error {
	return s.checkJoin(ctx, pid, gid)
}

// CheckParticipation is the participation check of the ...WithParam methods
// (gid_for_participation_check): caller and every one of extra must take part
// in gathering gid (a community's members, a session's participants), else
// RendezVous::NotParticipatedGathering. gid 0 checks nothing.
func (s *Server) CheckParticipation(ctx context.Context, caller types.PID, gid uint32, extra []types.PID) error {
	return s.checkParticipation(ctx, caller, gid, extra)
}

// UpdateOwned changes gathering gid as the owner-only methods do (Close and
// OpenParticipation, UpdateSessionHost, ...): f runs in the store's
// transaction when the caller owns the gathering (else
// RendezVous::PermissionDenied), then the participants are notified (a host
// change included).
func (s *Server) UpdateOwned(ctx context.Context, c *rmc.Call, gid uint32, f func(ms *MatchmakeSession) error) (MatchmakeSession, error) {
	ch, err := s.update(ctx, c, gid, f)
	return ch.Session, err
}

// created runs Hooks.Created for a committed change that created a session.
func (s *Server) created(ctx context.Context, c *rmc.Call, ch Change) {
	if s.Hooks.Created != nil {
		s.Hooks.Created(ctx, c, ch.Session)
	}
}
