package matchmaking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gamewire/gamewire/nex/notifications"
	"github.com/gamewire/gamewire/nex/protocols/common"
	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/protocols/notification"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// The three protocols as the generated handler interfaces
// (nex/protocols/matchmaking): the generated dispatchers decode the parameters in
// the connection's settings (its NEX version, structure headers and reading of the
// disputed gates, which they learn per connection: docs/nex.md "Disputed gates")
// and encode the results; a parameter that does not decode answers
// Core::InvalidArgument. Methods not listed answer Core::NotImplemented.

// MatchMaking is the server's Match Making (21) handler.
type MatchMaking struct {
	mm.UnimplementedMatchMaking
	S *Server
}

// MatchMakingExt is the server's Match Making Ext (50) handler.
type MatchMakingExt struct {
	mm.UnimplementedMatchMakingExt
	S *Server
}

// Extension is the server's Matchmake Extension (109) handler. A game's variant
// of MatchmakeExtension (MatchmakeExtension_MK8, ...) embeds it for the methods
// it inherits and registers its own on the Mux.
type Extension struct {
	mm.UnimplementedMatchmakeExtension
	S *Server
}

// MatchMaking returns the server's Match Making handler.
func (s *Server) MatchMaking() *MatchMaking { return &MatchMaking{S: s} }

// MatchMakingExt returns the server's Match Making Ext handler.
func (s *Server) MatchMakingExt() *MatchMakingExt { return &MatchMakingExt{S: s} }

// Extension returns the server's Matchmake Extension handler.
func (s *Server) Extension() *Extension { return &Extension{S: s} }

var (
	_ mm.MatchMakingHandler        = (*MatchMaking)(nil)
	_ mm.MatchMakingExtHandler     = (*MatchMakingExt)(nil)
	_ mm.MatchmakeExtensionHandler = (*Extension)(nil)
)

// succeeded is a method's boolean result: true when err is nil.
func succeeded(err error) (bool, error) { return err == nil, err }

// sessionParam is the MatchmakeSession a Data<Gathering> parameter holds.
func sessionParam(a types.AnyData, field string) (MatchmakeSession, error) {
	ms, isSession, err := FromAnyData(a)
	if err != nil {
		return ms, badRequest(fmt.Errorf("%s: %w", field, err))
	}
	if !isSession {
		return ms, badRequest(fmt.Errorf("%s: a %s where a MatchmakeSession is needed", field, a.ClassName()))
	}
	return ms, nil
}

func wires(ms []MatchmakeSession) []mm.MatchmakeSession {
	out := make([]mm.MatchmakeSession, len(ms))
	for i := range ms {
		out[i] = ms[i].Wire()
	}
	return out
}

func holders(ms []MatchmakeSession) []types.AnyData {
	out := make([]types.AnyData, len(ms))
	for i := range ms {
		out[i] = ms[i].AnyData()
	}
	return out
}

func pids(ps []Participant) []types.PID {
	out := make([]types.PID, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out
}

func details(ps []Participant) []ParticipantDetails {
	out := make([]ParticipantDetails, len(ps))
	for i, p := range ps {
		out[i] = ParticipantDetails{PID: p.PID, Name: fmt.Sprint(p.PID), Message: p.Message, Participants: uint16(p.SlotCount())}
	}
	return out
}

// found returns the sessions a query finds that the caller may see, concealed
// for it (conceal).
func (s *Server) found(ctx context.Context, c *rmc.Call, q Query) ([]MatchmakeSession, error) {
	found, err := s.Store.Find(ctx, q)
	if err != nil {
		return nil, storeErr(err)
	}
	return s.shown(ctx, c.Peer.PID, found)
}

// shown keeps the sessions pid may see (visible) and conceals them for it
// (concealAll).
func (s *Server) shown(ctx context.Context, pid types.PID, found []MatchmakeSession) ([]MatchmakeSession, error) {
	found, err := s.visible(ctx, pid, found)
	if err != nil {
		return nil, err
	}
	if err := s.concealAll(ctx, pid, found); err != nil {
		return nil, err
	}
	return found, nil
}

// slotsFrom is a participation count parameter on the wire from NEX 3.4: 1 before.
func slotsFrom(c *rmc.Call, n uint16) uint16 {
	if c.Peer.Settings.NEXVersion() < types.Version3_4 {
		return 1
	}
	return n
}

// RegisterGathering creates a gathering owned by the caller.
func (h *MatchMaking) RegisterGathering(ctx context.Context, c *rmc.Call, gathering types.AnyData) (uint32, error) {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return 0, err
	}
	ch, err := h.S.Store.Create(ctx, newSession(ms), h.S.participant(c, 1, ""))
	if err != nil {
		return 0, storeErr(err)
	}
	h.S.created(ctx, c, ch)
	return ch.Session.ID, nil
}

// UnregisterGathering deletes a gathering the caller owns.
func (h *MatchMaking) UnregisterGathering(ctx context.Context, c *rmc.Call, gid uint32) (bool, error) {
	ch, err := h.S.Store.Delete(ctx, gid, owner(c.Peer.PID))
	if err != nil {
		return false, storeErr(err)
	}
	h.S.notify(ctx, ch, c.Peer.PID, "", reasonEnded, false)
	return true, nil
}

// DeleteGathering is UnregisterGathering.
func (h *MatchMaking) DeleteGathering(ctx context.Context, c *rmc.Call, gid uint32) (bool, error) {
	return h.UnregisterGathering(ctx, c, gid)
}

// UnregisterGatherings deletes the gatherings of gids the caller owns; false
// when one could not be.
func (h *MatchMaking) UnregisterGatherings(ctx context.Context, c *rmc.Call, gids []uint32) (bool, error) {
	if len(gids) > MaxBrowseResults {
		return false, fmt.Errorf("%w: %d gatherings", types.CoreInvalidArgument, len(gids))
	}
	ok := true
	for _, gid := range gids {
		ch, err := h.S.Store.Delete(ctx, gid, owner(c.Peer.PID))
		if err != nil {
			ok = false
			continue
		}
		h.S.notify(ctx, ch, c.Peer.PID, "", reasonEnded, false)
	}
	return ok, nil
}

// UpdateGathering replaces a session the caller owns (but its owner, host and key).
func (h *MatchMaking) UpdateGathering(ctx context.Context, c *rmc.Call, gathering types.AnyData) (bool, error) {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return false, err
	}
	if _, err := h.S.update(ctx, c, ms.ID, func(cur *MatchmakeSession) error {
		keep := *cur
		*cur = ms
		cur.Owner, cur.Host, cur.SessionKey = keep.Owner, keep.Host, keep.SessionKey
		return nil
	}); err != nil {
		return false, err
	}
	return true, nil
}

// Participate joins the caller to a gathering.
func (h *MatchMaking) Participate(ctx context.Context, c *rmc.Call, gid uint32, message string) (bool, error) {
	_, err := h.S.join(ctx, c, gid, 1, message, Passwords{})
	return succeeded(err)
}

// CancelParticipation takes the caller out of a gathering.
func (h *MatchMaking) CancelParticipation(ctx context.Context, c *rmc.Call, gid uint32, message string) (bool, error) {
	return succeeded(h.S.leave(ctx, c, gid, message, reasonCancelled))
}

func (s *Server) participants(ctx context.Context, gid uint32) (MatchmakeSession, []Participant, error) {
	ms, ps, err := s.Store.Get(ctx, gid)
	if err != nil {
		return ms, nil, storeErr(err)
	}
	return ms, ps, nil
}

// GetParticipants lists a gathering's participants.
func (h *MatchMaking) GetParticipants(ctx context.Context, c *rmc.Call, gid uint32) ([]types.PID, error) {
	_, ps, err := h.S.participants(ctx, gid)
	return pids(ps), err
}

// GetDetailedParticipants lists a gathering's participants with their messages.
func (h *MatchMaking) GetDetailedParticipants(ctx context.Context, c *rmc.Call, gid uint32) ([]ParticipantDetails, error) {
	_, ps, err := h.S.participants(ctx, gid)
	return details(ps), err
}

// GetParticipantsURLs lists the station urls of a gathering's participants.
func (h *MatchMaking) GetParticipantsURLs(ctx context.Context, c *rmc.Call, gid uint32) ([]types.StationURL, error) {
	_, ps, err := h.S.participants(ctx, gid)
	return h.S.participantURLs(ps), err
}

// GetSessionURLs lists the urls of a session's host.
func (h *MatchMaking) GetSessionURLs(ctx context.Context, c *rmc.Call, gid uint32) ([]types.StationURL, error) {
	ms, _, err := h.S.participants(ctx, gid)
	if err != nil {
		return nil, err
	}
	return h.S.sessionURLs(&ms), nil
}

// UpdateSessionURL records the url the session's host gives.
func (h *MatchMaking) UpdateSessionURL(ctx context.Context, c *rmc.Call, gid uint32, url string) (bool, error) {
	if err := checkSessionURL(url); err != nil {
		return false, err
	}
	pid := c.Peer.PID
	if _, err := h.S.Store.Update(ctx, gid, func(ms *MatchmakeSession, _ []Participant) error {
		if ms.Host != pid {
			return fmt.Errorf("%w: PID %d does not host gathering %d (UpdateSessionURL)", ResultPermissionDenied, pid, gid)
		}
		ms.SessionURL = url
		return nil
	}); err != nil {
		return false, storeErr(err)
	}
	return true, nil
}

// GetSessionURL returns the url the host gave, else its first registered one.
func (h *MatchMaking) GetSessionURL(ctx context.Context, c *rmc.Call, gid uint32) (bool, string, error) {
	ms, _, err := h.S.participants(ctx, gid)
	if err != nil {
		return false, "", err
	}
	if ms.SessionURL != "" {
		return true, ms.SessionURL, nil
	}
	if us := h.S.urls(ms.Host); len(us) > 0 {
		return true, us[0].String(), nil
	}
	return true, "", nil
}

// FindByID returns the gatherings of ids the caller may see.
func (h *MatchMaking) FindByID(ctx context.Context, c *rmc.Call, ids []uint32) ([]types.AnyData, error) {
	found, err := h.S.found(ctx, c, Query{GIDs: ids})
	return holders(found), err
}

// FindBySingleID returns one gathering, and whether it exists.
func (h *MatchMaking) FindBySingleID(ctx context.Context, c *rmc.Call, gid uint32) (bool, types.AnyData, error) {
	ms, ps, err := h.S.Store.Get(ctx, gid)
	if errors.Is(err, ResultSessionVoid) {
		return false, types.AnyData{}, nil
	} else if err != nil {
		return false, types.AnyData{}, storeErr(err)
	}
	conceal(&ms, c.Peer.PID, participantOf(ps, c.Peer.PID))
	return true, ms.AnyData(), nil
}

// FindByOwner returns the gatherings an owner has.
func (h *MatchMaking) FindByOwner(ctx context.Context, c *rmc.Call, id types.PID, rr common.ResultRange) ([]types.AnyData, error) {
	found, err := h.S.found(ctx, c, Query{Owner: id, Offset: rr.Offset, Size: rr.Size})
	return holders(found), err
}

// FindByParticipants returns the gatherings any of pids takes part in.
func (h *MatchMaking) FindByParticipants(ctx context.Context, c *rmc.Call, list []types.PID) ([]types.AnyData, error) {
	if len(list) > MaxBrowseResults {
		return nil, fmt.Errorf("%w: %d PIDs", types.CoreInvalidArgument, len(list))
	}
	var all []MatchmakeSession
	seen := map[uint32]bool{}
	for _, p := range list {
		found, err := h.S.Store.Find(ctx, Query{Participant: p})
		if err != nil {
			return nil, storeErr(err)
		}
		for _, m := range found {
			if !seen[m.ID] {
				seen[m.ID] = true
				all = append(all, m)
			}
		}
	}
	if err := h.S.concealAll(ctx, c.Peer.PID, all); err != nil {
		return nil, err
	}
	return holders(all), nil
}

// GetState returns a gathering's state.
func (h *MatchMaking) GetState(ctx context.Context, c *rmc.Call, gid uint32) (bool, uint32, error) {
	ms, _, err := h.S.participants(ctx, gid)
	if err != nil {
		return false, 0, err
	}
	return true, ms.State, nil
}

// SetState sets the state of a gathering the caller owns.
func (h *MatchMaking) SetState(ctx context.Context, c *rmc.Call, gid uint32, state uint32) (bool, error) {
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.State = state; return nil })
	return succeeded(err)
}

// UpdateSessionHostV1 makes the caller the session's host.
func (h *MatchMaking) UpdateSessionHostV1(ctx context.Context, c *rmc.Call, gid uint32) error {
	return h.S.updateHost(ctx, c, gid, false)
}

// UpdateSessionHost makes the caller the session's host, and its owner when
// isMigrateOwner is set.
func (h *MatchMaking) UpdateSessionHost(ctx context.Context, c *rmc.Call, gid uint32, isMigrateOwner bool) error {
	return h.S.updateHost(ctx, c, gid, isMigrateOwner)
}

// updateHost: any participant may become the host; isMigrateOwner is the
// owner's only: ownership moves by the owner's own migration or by the server
// when the owner leaves (docs/nex.md "Passwords and ownership"), never by a
// participant's claim.
func (s *Server) updateHost(ctx context.Context, c *rmc.Call, gid uint32, migrate bool) error {
	pid := c.Peer.PID
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
		return storeErr(err)
	}
	s.notify(ctx, ch, pid, "", reasonEnded, prevHost != pid)
	return nil
}

// MigrateGatheringOwnershipV1 hands the gathering to one of potentialOwners.
func (h *MatchMaking) MigrateGatheringOwnershipV1(ctx context.Context, c *rmc.Call, gid uint32, potentialOwners []types.PID) (bool, error) {
	_, err := h.S.migrate(ctx, c, gid, potentialOwners)
	return succeeded(err)
}

// MigrateGatheringOwnership hands the gathering to one of potentialOwners.
func (h *MatchMaking) MigrateGatheringOwnership(ctx context.Context, c *rmc.Call, gid uint32, potentialOwners []types.PID, participantsOnly bool) error {
	_, err := h.S.migrate(ctx, c, gid, potentialOwners)
	return err
}

// UpdateGatheringOwnership hands the gathering to another participant.
func (h *MatchMaking) UpdateGatheringOwnership(ctx context.Context, c *rmc.Call, gid uint32, participantsOnly bool) (bool, error) {
	_, err := h.S.migrate(ctx, c, gid, nil)
	return succeeded(err)
}

// EndParticipation takes the caller out of a gathering.
func (h *MatchMakingExt) EndParticipation(ctx context.Context, c *rmc.Call, gid uint32, message string) (bool, error) {
	return succeeded(h.S.leave(ctx, c, gid, message, reasonEnded))
}

// GetParticipants lists a gathering's participants (every one on record is
// active).
func (h *MatchMakingExt) GetParticipants(ctx context.Context, c *rmc.Call, gid uint32, onlyActive bool) ([]types.PID, error) {
	_, ps, err := h.S.participants(ctx, gid)
	return pids(ps), err
}

// GetDetailedParticipants lists a gathering's participants with their messages.
func (h *MatchMakingExt) GetDetailedParticipants(ctx context.Context, c *rmc.Call, gid uint32, onlyActive bool) ([]ParticipantDetails, error) {
	_, ps, err := h.S.participants(ctx, gid)
	return details(ps), err
}

// GetParticipantsURLs lists the participants' urls of each gathering of gids
// that exists.
func (h *MatchMakingExt) GetParticipantsURLs(ctx context.Context, c *rmc.Call, gids []uint32) ([]GatheringURLs, error) {
	if len(gids) > MaxBrowseResults {
		return nil, fmt.Errorf("%w: %d gatherings", types.CoreInvalidArgument, len(gids))
	}
	var list []GatheringURLs
	for _, gid := range gids {
		_, ps, err := h.S.Store.Get(ctx, gid)
		if errors.Is(err, ResultSessionVoid) {
			continue
		} else if err != nil {
			return nil, storeErr(err)
		}
		list = append(list, GatheringURLs{GID: gid, URLs: h.S.participantURLs(ps)})
	}
	return list, nil
}

// CloseParticipation closes a session the caller owns to newcomers.
func (h *Extension) CloseParticipation(ctx context.Context, c *rmc.Call, gid uint32) error {
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.OpenParticipation = false; return nil })
	return err
}

// OpenParticipation opens a session the caller owns to newcomers.
func (h *Extension) OpenParticipation(ctx context.Context, c *rmc.Call, gid uint32) error {
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.OpenParticipation = true; return nil })
	return err
}

// AutoMatchmakePostpone joins a session like the given one or creates it.
func (h *Extension) AutoMatchmakePostpone(ctx context.Context, c *rmc.Call, gathering types.AnyData, message string) (types.AnyData, error) {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return types.AnyData{}, err
	}
	joined, err := h.S.autoMatchmake(ctx, c, nil, ms, 1, message)
	if err != nil {
		return types.AnyData{}, err
	}
	return joined.AnyData(), nil
}

// AutoMatchmakeWithSearchCriteriaPostpone joins the first session one of the
// criteria finds, or creates the given one.
func (h *Extension) AutoMatchmakeWithSearchCriteriaPostpone(ctx context.Context, c *rmc.Call, searchCriteria []mm.MatchmakeSessionSearchCriteria, gathering types.AnyData, message string) (types.AnyData, error) {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return types.AnyData{}, err
	}
	joined, err := h.S.autoMatchmake(ctx, c, criteriaFromWire(searchCriteria), ms, 1, message)
	if err != nil {
		return types.AnyData{}, err
	}
	return joined.AnyData(), nil
}

// AutoMatchmakeWithGatheringIdPostpone joins the first of gids that takes the
// caller, or creates the given session.
func (h *Extension) AutoMatchmakeWithGatheringIdPostpone(ctx context.Context, c *rmc.Call, gids []uint32, gathering types.AnyData, message string) (types.AnyData, error) {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return types.AnyData{}, err
	}
	var joined MatchmakeSession
	if gids != nil {
		joined, err = h.S.joinFirst(ctx, c, gids, ms, message)
	} else {
		joined, err = h.S.autoMatchmake(ctx, c, nil, ms, 1, message)
	}
	if err != nil {
		return types.AnyData{}, err
	}
	return joined.AnyData(), nil
}

// AutoMatchmakeWithParamPostpone joins a session the criteria find, or creates
// the given one, and returns it.
func (h *Extension) AutoMatchmakeWithParamPostpone(ctx context.Context, c *rmc.Call, p mm.AutoMatchmakeParam) (mm.MatchmakeSession, error) {
	if err := h.S.checkParticipation(ctx, c.Peer.PID, p.GIDForParticipationCheck, p.Participants); err != nil {
		return mm.MatchmakeSession{}, err
	}
	var crit []SearchCriteria
	if len(p.SearchCriteria) > 0 {
		crit = criteriaFromWire(p.SearchCriteria) // none: like AutoMatchmake_Postpone
	}
	joined, err := h.S.autoMatchmake(ctx, c, crit, SessionFromWire(&p.Session), p.NumParticipants, p.JoinMessage)
	if err != nil {
		return mm.MatchmakeSession{}, err
	}
	return joined.Wire(), nil
}

// browse lists the sessions the criteria select that the caller may see.
func (s *Server) browse(ctx context.Context, c *rmc.Call, g *mm.MatchmakeSessionSearchCriteria, rr types.ResultRange) ([]MatchmakeSession, error) {
	crit := CriteriaFromWire(g)
	found, err := s.Store.Browse(ctx, crit, rr.Offset, rr.Size)
	if err != nil {
		return nil, storeErr(err)
	}
	return s.shown(ctx, c.Peer.PID, found)
}

// noRange is the result range of the browse methods without one: the
// criteria's (NEX 4), else MaxBrowseResults sessions.
func noRange(g *mm.MatchmakeSessionSearchCriteria) types.ResultRange {
	if g.Range.Size != 0 {
		return types.ResultRange(g.Range)
	}
	return types.ResultRange{Size: MaxBrowseResults}
}

// BrowseMatchmakeSession lists the sessions the criteria select, as holders.
func (h *Extension) BrowseMatchmakeSession(ctx context.Context, c *rmc.Call, searchCriteria mm.MatchmakeSessionSearchCriteria, rr common.ResultRange) ([]types.AnyData, error) {
	found, err := h.S.browse(ctx, c, &searchCriteria, types.ResultRange(rr))
	return holders(found), err
}

// BrowseMatchmakeSessionWithHostUrls also gives the hosts' urls.
func (h *Extension) BrowseMatchmakeSessionWithHostUrls(ctx context.Context, c *rmc.Call, searchCriteria mm.MatchmakeSessionSearchCriteria, rr common.ResultRange) ([]types.AnyData, []GatheringURLs, error) {
	found, err := h.S.browse(ctx, c, &searchCriteria, types.ResultRange(rr))
	return holders(found), h.S.hostURLs(found), err
}

// BrowseMatchmakeSessionNoHolder lists the sessions the criteria select.
func (h *Extension) BrowseMatchmakeSessionNoHolder(ctx context.Context, c *rmc.Call, searchCriteria mm.MatchmakeSessionSearchCriteria, rr common.ResultRange) ([]mm.MatchmakeSession, error) {
	found, err := h.S.browse(ctx, c, &searchCriteria, types.ResultRange(rr))
	return wires(found), err
}

// BrowseMatchmakeSessionWithHostUrlsNoHolder also gives the hosts' urls.
func (h *Extension) BrowseMatchmakeSessionWithHostUrlsNoHolder(ctx context.Context, c *rmc.Call, searchCriteria mm.MatchmakeSessionSearchCriteria, rr common.ResultRange) ([]mm.MatchmakeSession, []GatheringURLs, error) {
	found, err := h.S.browse(ctx, c, &searchCriteria, types.ResultRange(rr))
	return wires(found), h.S.hostURLs(found), err
}

// BrowseMatchmakeSessionNoHolderNoResultRange lists the sessions the criteria
// select (the criteria's range, else MaxBrowseResults).
func (h *Extension) BrowseMatchmakeSessionNoHolderNoResultRange(ctx context.Context, c *rmc.Call, searchCriteria mm.MatchmakeSessionSearchCriteria) ([]mm.MatchmakeSession, error) {
	found, err := h.S.browse(ctx, c, &searchCriteria, noRange(&searchCriteria))
	return wires(found), err
}

// BrowseMatchmakeSessionWithHostUrlsNoHolderNoResultRange also gives the hosts' urls.
func (h *Extension) BrowseMatchmakeSessionWithHostUrlsNoHolderNoResultRange(ctx context.Context, c *rmc.Call, searchCriteria mm.MatchmakeSessionSearchCriteria) ([]mm.MatchmakeSession, []GatheringURLs, error) {
	found, err := h.S.browse(ctx, c, &searchCriteria, noRange(&searchCriteria))
	return wires(found), h.S.hostURLs(found), err
}

// CreateMatchmakeSession creates a session owned by the caller and returns its
// id and session key.
func (h *Extension) CreateMatchmakeSession(ctx context.Context, c *rmc.Call, gathering types.AnyData, description string, numParticipants uint16) (uint32, []byte, error) {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return 0, nil, err
	}
	ch, err := h.S.Store.Create(ctx, newSession(ms), h.S.participant(c, slotsFrom(c, numParticipants), description))
	if err != nil {
		return 0, nil, storeErr(err)
	}
	h.S.created(ctx, c, ch)
	return ch.Session.ID, ch.Session.SessionKey, nil
}

// CreateMatchmakeSessionWithParam creates a session and returns it.
func (h *Extension) CreateMatchmakeSessionWithParam(ctx context.Context, c *rmc.Call, p mm.CreateMatchmakeSessionParam) (mm.MatchmakeSession, error) {
	if err := h.S.checkParticipation(ctx, c.Peer.PID, p.GIDForParticipationCheck, p.AdditionalParticipants); err != nil {
		return mm.MatchmakeSession{}, err
	}
	ch, err := h.S.Store.Create(ctx, newSession(SessionFromWire(&p.Session)), h.S.participant(c, p.NumParticipants, p.JoinMessage))
	if err != nil {
		return mm.MatchmakeSession{}, storeErr(err)
	}
	h.S.created(ctx, c, ch)
	return ch.Session.Wire(), nil
}

// UpdateNotificationData records the caller's notification data of one type
// and sends it to its friends here.
func (h *Extension) UpdateNotificationData(ctx context.Context, c *rmc.Call, typ uint32, param1, param2 types.PID, param3 string) error {
	ev := notifications.Event{Source: c.Peer.PID, Type: typ, Param1: uint64(param1), Param2: uint64(param2), StrParam: param3}
	if err := h.S.Store.SetNotification(ctx, ev); err != nil {
		return storeErr(err)
	}
	h.S.notifyFriends(ctx, ev)
	return nil
}

// GetFriendNotificationData returns the friends' notification data of a type.
func (h *Extension) GetFriendNotificationData(ctx context.Context, c *rmc.Call, typ int32) ([]notification.NotificationEvent, error) {
	return h.S.friendNotifications(ctx, c, []uint32{uint32(typ)})
}

// GetlstFriendNotificationData returns the friends' notification data of the
// given types.
func (h *Extension) GetlstFriendNotificationData(ctx context.Context, c *rmc.Call, typs []uint32) ([]notification.NotificationEvent, error) {
	return h.S.friendNotifications(ctx, c, typs)
}

func (s *Server) friendNotifications(ctx context.Context, c *rmc.Call, typs []uint32) ([]notification.NotificationEvent, error) {
	if len(typs) > MaxNotificationTypesAsked {
		return nil, fmt.Errorf("%w: %d notification types asked, at most %d", types.CoreInvalidArgument, len(typs), MaxNotificationTypesAsked)
	}
	friends, err := s.friendsOf(ctx, c.Peer.PID)
	if err != nil {
		return nil, err
	}
	evs, err := s.Store.Notifications(ctx, friends, typs)
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]notification.NotificationEvent, len(evs))
	for i := range evs {
		out[i] = evs[i].Wire()
	}
	return out, nil
}

// GetMyBlackList returns the caller's block list.
func (h *Extension) GetMyBlackList(ctx context.Context, c *rmc.Call) ([]types.PID, error) {
	l, err := h.S.Store.BlockList(ctx, c.Peer.PID)
	if err != nil {
		return nil, storeErr(err)
	}
	return l, nil
}

// AddToBlackList adds pids to the caller's block list.
func (h *Extension) AddToBlackList(ctx context.Context, c *rmc.Call, list []types.PID) error {
	if err := h.S.Store.Block(ctx, c.Peer.PID, list); err != nil {
		return storeErr(err)
	}
	return nil
}

// RemoveFromBlackList removes pids from the caller's block list.
func (h *Extension) RemoveFromBlackList(ctx context.Context, c *rmc.Call, list []types.PID) error {
	if list == nil {
		list = []types.PID{} // an empty list removes nobody (nil clears)
	}
	if err := h.S.Store.Unblock(ctx, c.Peer.PID, list); err != nil {
		return storeErr(err)
	}
	return nil
}

// ClearMyBlackList empties the caller's block list.
func (h *Extension) ClearMyBlackList(ctx context.Context, c *rmc.Call) error {
	if err := h.S.Store.Unblock(ctx, c.Peer.PID, nil); err != nil {
		return storeErr(err)
	}
	return nil
}

// JoinMatchmakeSession joins the caller to a session and returns its key.
func (h *Extension) JoinMatchmakeSession(ctx context.Context, c *rmc.Call, gid uint32, message string) ([]byte, error) {
	ms, err := h.S.join(ctx, c, gid, 1, message, Passwords{})
	if err != nil {
		return nil, err
	}
	return ms.SessionKey, nil
}

// JoinMatchmakeSessionEx joins a session (ignoring the caller's block list
// when asked) and returns its key.
func (h *Extension) JoinMatchmakeSessionEx(ctx context.Context, c *rmc.Call, gid uint32, message string, ignoreBlockList bool, numParticipants uint16) ([]byte, error) {
	ms, err := h.S.join(ctx, c, gid, slotsFrom(c, numParticipants), message, Passwords{IgnoreBlockList: ignoreBlockList})
	if err != nil {
		return nil, err
	}
	return ms.SessionKey, nil
}

// JoinMatchmakeSessionWithParam joins a session and returns it.
func (h *Extension) JoinMatchmakeSessionWithParam(ctx context.Context, c *rmc.Call, p mm.JoinMatchmakeSessionParam) (mm.MatchmakeSession, error) {
	if err := h.S.checkParticipation(ctx, c.Peer.PID, p.GIDForParticipationCheck, p.Participants); err != nil {
		return mm.MatchmakeSession{}, err
	}
	ms, err := h.S.join(ctx, c, p.GID, max(p.NumParticipants, 1), p.JoinMessage, Passwords{User: p.UserPassword, System: p.SystemPassword})
	if err != nil {
		return mm.MatchmakeSession{}, err
	}
	return ms.Wire(), nil
}

// ModifyCurrentGameAttribute sets one attribute of a session the caller owns.
func (h *Extension) ModifyCurrentGameAttribute(ctx context.Context, c *rmc.Call, gid uint32, idx uint32, value uint32) error {
	if idx >= MaxAttributes {
		return fmt.Errorf("%w: attribute index %d", types.CoreInvalidArgument, idx)
	}
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error {
		for len(ms.Attributes) <= int(idx) {
			ms.Attributes = append(ms.Attributes, 0)
		}
		ms.Attributes[idx] = value
		return nil
	})
	return err
}

// UpdateApplicationBuffer sets a session's application buffer: any participant
// may (games keep per-player data in it); the size limit is Validate's.
func (h *Extension) UpdateApplicationBuffer(ctx context.Context, c *rmc.Call, gid uint32, buf []byte) error {
	pid := c.Peer.PID
	ch, err := h.S.Store.Update(ctx, gid, func(ms *MatchmakeSession, ps []Participant) error {
		if !participantOf(ps, pid) {
			return fmt.Errorf("%w: PID %d is not in gathering %d", ResultPermissionDenied, pid, gid)
		}
		ms.ApplicationBuffer = buf
		return nil
	})
	if err != nil {
		return storeErr(err)
	}
	h.S.notify(ctx, ch, pid, "", reasonEnded, false)
	return nil
}

// UpdateMatchmakeSessionAttribute sets the attributes of a session the caller owns.
func (h *Extension) UpdateMatchmakeSessionAttribute(ctx context.Context, c *rmc.Call, gid uint32, attribs []uint32) error {
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.Attributes = attribs; return nil })
	return err
}

// UpdateMatchmakeSession replaces a session the caller owns (but its owner,
// host, key and start time).
func (h *Extension) UpdateMatchmakeSession(ctx context.Context, c *rmc.Call, gathering types.AnyData) error {
	ms, err := sessionParam(gathering, "gathering")
	if err != nil {
		return err
	}
	_, err = h.S.update(ctx, c, ms.ID, func(cur *MatchmakeSession) error {
		keep := *cur
		*cur = ms
		cur.Owner, cur.Host, cur.SessionKey, cur.StartedTime = keep.Owner, keep.Host, keep.SessionKey, keep.StartedTime
		return nil
	})
	return err
}

// UpdateMatchmakeSessionPart changes the fields the parameter's flags select.
func (h *Extension) UpdateMatchmakeSessionPart(ctx context.Context, c *rmc.Call, param mm.UpdateMatchmakeSessionParam) error {
	p := updateFromWire(&param)
	if p.ModificationFlag&ModifyMaxParticipants != 0 && p.MaxParticipants == 0 {
		return fmt.Errorf("%w: maximum participants 0", types.CoreInvalidArgument)
	}
	_, err := h.S.update(ctx, c, p.GID, func(ms *MatchmakeSession) error {
		if p.ModificationFlag&ModifyMaxParticipants != 0 && uint32(p.MaxParticipants) < ms.ParticipationCount {
			return fmt.Errorf("%w: maximum %d below the %d participants", types.CoreInvalidArgument, p.MaxParticipants, ms.ParticipationCount)
		}
		p.apply(ms)
		return nil
	})
	return err
}

// FindMatchmakeSessionByParticipant lists the sessions each PID takes part in.
func (h *Extension) FindMatchmakeSessionByParticipant(ctx context.Context, c *rmc.Call, param mm.FindMatchmakeSessionByParticipantParam) ([]mm.FindMatchmakeSessionByParticipantResult, error) {
	if len(param.PIDs) > MaxBrowseResults {
		return nil, fmt.Errorf("%w: %d PIDs, at most %d", types.CoreInvalidArgument, len(param.PIDs), MaxBrowseResults)
	}
	list, err := h.S.sessionsOf(ctx, c.Peer.PID, param.PIDs)
	if err != nil {
		return nil, err
	}
	out := make([]mm.FindMatchmakeSessionByParticipantResult, len(list))
	for i, p := range list {
		out[i] = mm.FindMatchmakeSessionByParticipantResult{PID: p.pid, Session: p.ms.Wire()}
	}
	return out, nil
}

// UpdateProgressScore sets the progress score (0-100) of a session the caller owns.
func (h *Extension) UpdateProgressScore(ctx context.Context, c *rmc.Call, gid uint32, score uint8) error {
	if score > 100 {
		return fmt.Errorf("%w: progress score %d above 100", types.CoreInvalidArgument, score)
	}
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.ProgressScore = score; return nil })
	return err
}

// GenerateMatchmakeSessionSystemPassword gives a session the caller owns a
// system password and returns it (when the Store keeps them).
func (h *Extension) GenerateMatchmakeSessionSystemPassword(ctx context.Context, c *rmc.Call, gid uint32) (string, error) {
	if _, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.SystemPasswordEnabled = true; return nil }); err != nil {
		return "", err
	}
	sp, ok := h.S.Store.(interface {
		SystemPassword(ctx context.Context, gid uint32) (string, error)
	})
	if !ok {
		return "", types.CoreNotImplemented
	}
	pw, err := sp.SystemPassword(ctx, gid)
	if err != nil {
		return "", storeErr(err)
	}
	return pw, nil
}

// ClearMatchmakeSessionSystemPassword clears a session's system password.
func (h *Extension) ClearMatchmakeSessionSystemPassword(ctx context.Context, c *rmc.Call, gid uint32) error {
	_, err := h.S.update(ctx, c, gid, func(ms *MatchmakeSession) error { ms.SystemPasswordEnabled = false; return nil })
	return err
}

func (s *Server) checkPIDs(list []types.PID) error {
	if len(list) > MaxBrowseResults {
		return fmt.Errorf("%w: %d PIDs, at most %d", types.CoreInvalidArgument, len(list), MaxBrowseResults)
	}
	return nil
}

// GetPlayingSession lists the sessions each PID takes part in, as holders.
func (h *Extension) GetPlayingSession(ctx context.Context, c *rmc.Call, list []types.PID) ([]mm.PlayingSession, error) {
	if err := h.S.checkPIDs(list); err != nil {
		return nil, err
	}
	found, err := h.S.sessionsOf(ctx, c.Peer.PID, list)
	if err != nil {
		return nil, err
	}
	out := make([]mm.PlayingSession, len(found))
	for i, p := range found {
		out[i] = mm.PlayingSession{PID: p.pid, Gathering: p.ms.AnyData()}
	}
	return out, nil
}

// GetSimplePlayingSession lists the sessions each PID (and the caller, when
// asked) takes part in, in short.
func (h *Extension) GetSimplePlayingSession(ctx context.Context, c *rmc.Call, list []types.PID, includeLoginUser bool) ([]SimplePlayingSession, error) {
	if err := h.S.checkPIDs(list); err != nil {
		return nil, err
	}
	if includeLoginUser {
		list = append(list, c.Peer.PID)
	}
	found, err := h.S.sessionsOf(ctx, c.Peer.PID, list)
	if err != nil {
		return nil, err
	}
	out := make([]SimplePlayingSession, len(found))
	for i, p := range found {
		var attr uint32
		if len(p.ms.Attributes) > 0 {
			attr = p.ms.Attributes[0]
		}
		out[i] = SimplePlayingSession{PID: p.pid, GID: p.ms.ID, GameMode: p.ms.GameMode, Attribute: attr}
	}
	return out, nil
}

// FindMatchmakeSessionByGatheringIdDetail returns one session.
func (h *Extension) FindMatchmakeSessionByGatheringIdDetail(ctx context.Context, c *rmc.Call, gid uint32) (mm.MatchmakeSession, error) {
	return h.S.findOne(ctx, c, gid)
}

// FindMatchmakeSessionBySingleGatheringId returns one session.
func (h *Extension) FindMatchmakeSessionBySingleGatheringId(ctx context.Context, c *rmc.Call, gid uint32) (mm.MatchmakeSession, error) {
	return h.S.findOne(ctx, c, gid)
}

func (s *Server) findOne(ctx context.Context, c *rmc.Call, gid uint32) (mm.MatchmakeSession, error) {
	ms, ps, err := s.Store.Get(ctx, gid)
	if err != nil {
		return mm.MatchmakeSession{}, storeErr(err)
	}
	conceal(&ms, c.Peer.PID, participantOf(ps, c.Peer.PID))
	return ms.Wire(), nil
}

// FindMatchmakeSessionByGatheringId returns the sessions of gids the caller may see.
func (h *Extension) FindMatchmakeSessionByGatheringId(ctx context.Context, c *rmc.Call, gids []uint32) ([]mm.MatchmakeSession, error) {
	found, err := h.S.found(ctx, c, Query{GIDs: gids})
	return wires(found), err
}

// FindMatchmakeSessionByOwner returns the sessions an owner has.
func (h *Extension) FindMatchmakeSessionByOwner(ctx context.Context, c *rmc.Call, id types.PID, rr common.ResultRange) ([]mm.MatchmakeSession, error) {
	found, err := h.S.found(ctx, c, Query{Owner: id, Offset: rr.Offset, Size: rr.Size})
	return wires(found), err
}

// communities is the Store's CommunityStore, or Core::NotImplemented.
func (s *Server) communities() (CommunityStore, error) {
	cs, ok := s.Store.(CommunityStore)
	if !ok {
		return nil, types.CoreNotImplemented
	}
	return cs, nil
}

// communityList is a List<PersistentGathering> for viewer: only the owner sees
// a community's password.
func communityList(viewer types.PID, gs []PersistentGathering) []mm.PersistentGathering {
	out := make([]mm.PersistentGathering, len(gs))
	for i := range gs {
		g := gs[i]
		if g.Owner != viewer {
			g.Password = ""
		}
		out[i] = g.Wire()
	}
	return out
}

// CreateCommunity creates a community owned by the caller.
func (h *Extension) CreateCommunity(ctx context.Context, c *rmc.Call, community mm.PersistentGathering, message string) (uint32, error) {
	cs, err := h.S.communities()
	if err != nil {
		return 0, err
	}
	created, err := cs.CreateCommunity(ctx, CommunityFromWire(&community), h.S.participant(c, 1, message), slices.Contains(h.S.OfficialOwners, c.Peer.PID))
	if err != nil {
		return 0, storeErr(err)
	}
	return created.ID, nil
}

// UpdateCommunity changes a community the caller owns.
func (h *Extension) UpdateCommunity(ctx context.Context, c *rmc.Call, community mm.PersistentGathering) error {
	cs, err := h.S.communities()
	if err != nil {
		return err
	}
	g := CommunityFromWire(&community)
	pid := c.Peer.PID
	_, err = cs.UpdateCommunity(ctx, g.ID, func(cur *PersistentGathering) error {
		if cur.Owner != pid {
			return fmt.Errorf("%w: PID %d does not own community %d", ResultPermissionDenied, pid, cur.ID)
		}
		applyCommunity(cur, &g)
		return nil
	})
	if err != nil {
		return storeErr(err)
	}
	return nil
}

// JoinCommunity makes the caller a member of a community.
func (h *Extension) JoinCommunity(ctx context.Context, c *rmc.Call, gid uint32, message string, password string) error {
	cs, err := h.S.communities()
	if err != nil {
		return err
	}
	if _, err := cs.JoinCommunity(ctx, gid, h.S.participant(c, 1, message), password, types.DateTimeFromTime(time.Now())); err != nil {
		return storeErr(err)
	}
	return nil
}

func (s *Server) communitiesByID(ctx context.Context, gids []uint32) ([]PersistentGathering, error) {
	cs, err := s.communities()
	if err != nil {
		return nil, err
	}
	if len(gids) > MaxBrowseResults {
		return nil, fmt.Errorf("%w: %d gathering ids, at most %d", types.CoreInvalidArgument, len(gids), MaxBrowseResults)
	}
	if len(gids) == 0 {
		return nil, nil
	}
	found, err := cs.FindCommunities(ctx, CommunityQuery{GIDs: gids})
	if err != nil {
		return nil, storeErr(err)
	}
	return found, nil
}

// FindCommunityByGatheringId returns the communities of gids.
func (h *Extension) FindCommunityByGatheringId(ctx context.Context, c *rmc.Call, gids []uint32) ([]mm.PersistentGathering, error) {
	found, err := h.S.communitiesByID(ctx, gids)
	return communityList(c.Peer.PID, found), err
}

// GetSimpleCommunity returns the session counts of the communities of gids.
func (h *Extension) GetSimpleCommunity(ctx context.Context, c *rmc.Call, gids []uint32) ([]SimpleCommunity, error) {
	found, err := h.S.communitiesByID(ctx, gids)
	out := make([]SimpleCommunity, len(found))
	for i, g := range found {
		out[i] = SimpleCommunity{GID: g.ID, MatchmakeSessionCount: g.MatchmakeSessionCount}
	}
	return out, err
}

// findCommunities runs a community query for the find methods.
func (s *Server) findCommunities(ctx context.Context, c *rmc.Call, q CommunityQuery, rr common.ResultRange) ([]mm.PersistentGathering, error) {
	cs, err := s.communities()
	if err != nil {
		return nil, err
	}
	if (!q.Official && q.Owner == 0 && q.Participant == 0) || (q.Official && len(s.OfficialOwners) == 0) {
		return nil, nil
	}
	q.Offset, q.Size = rr.Offset, min(rr.Size, MaxBrowseResults)
	found, err := cs.FindCommunities(ctx, q)
	if err != nil {
		return nil, storeErr(err)
	}
	return communityList(c.Peer.PID, found), nil
}

// FindOfficialCommunity lists the official communities (open now, when asked).
func (h *Extension) FindOfficialCommunity(ctx context.Context, c *rmc.Call, availableOnly bool, rr common.ResultRange) ([]mm.PersistentGathering, error) {
	return h.S.findCommunities(ctx, c, CommunityQuery{Official: true, Available: availableOnly, Now: types.DateTimeFromTime(time.Now())}, rr)
}

// FindCommunityByParticipant lists the communities a PID is a member of.
func (h *Extension) FindCommunityByParticipant(ctx context.Context, c *rmc.Call, pid types.PID, rr common.ResultRange) ([]mm.PersistentGathering, error) {
	return h.S.findCommunities(ctx, c, CommunityQuery{Participant: pid}, rr)
}

// FindCommunityByOwner lists the communities a PID owns. The descriptions do
// not know its parameters (the wiki page gives none); Pretendo's Monster Hunter
// XX variant takes an id and a ResultRange: read as PID + ResultRange.
func (h *Extension) FindCommunityByOwner(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	r := c.Reader()
	id := r.PID("id")
	var rr common.ResultRange
	rr.Read(&r, "range")
	if err := r.Done(); err != nil {
		return out, badRequest(fmt.Errorf("MatchmakeExtension.FindCommunityByOwner: %w", err))
	}
	list, err := h.S.findCommunities(ctx, c, CommunityQuery{Owner: id}, rr)
	if err != nil {
		return out, err
	}
	w := types.NewWriter(out, c.Peer.Settings)
	w.Count(len(list))
	for i := range list {
		list[i].Append(&w)
	}
	return w.Bytes()
}
