package matchmaking

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// serveCommunity answers the community methods of Matchmake Extension (109)
// when the Store also implements CommunityStore, Core::NotImplemented
// otherwise (and for every other method it is handed).
func (s *Server) serveCommunity(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	cs, ok := s.Store.(CommunityStore)
	if !ok {
		return out, types.CoreNotImplemented
	}
	r := c.Reader()
	w := types.NewWriter(out, c.Peer.Settings)
	pid := c.Peer.PID
	done := func() error {
		if err := r.Done(); err != nil {
			return badRequest(err)
		}
		return nil
	}
	now := types.DateTimeFromTime(time.Now())
	switch c.Method {
	case MethodCreateCommunity:
		g := ReadPersistentGathering(&r, "community")
		msg := r.String("strMessage")
		if err := done(); err != nil {
			return out, err
		}
		created, err := cs.CreateCommunity(ctx, g, s.participant(c, 1, msg), slices.Contains(s.OfficialOwners, pid))
		if err != nil {
			return out, storeErr(err)
		}
		w.U32(created.ID)
	case MethodUpdateCommunity:
		g := ReadPersistentGathering(&r, "community")
		if err := done(); err != nil {
			return out, err
		}
		_, err := cs.UpdateCommunity(ctx, g.ID, func(cur *PersistentGathering) error {
			if cur.Owner != pid {
				return fmt.Errorf("%w: PID %d does not own community %d", ResultPermissionDenied, pid, cur.ID)
			}
			applyCommunity(cur, &g)
			return nil
		})
		if err != nil {
			return out, storeErr(err)
		}
	case MethodJoinCommunity:
		gid := r.U32("gid")
		msg := r.String("strMessage")
		pw := r.String("strPassword")
		if err := done(); err != nil {
			return out, err
		}
		if _, err := cs.JoinCommunity(ctx, gid, s.participant(c, 1, msg), pw, now); err != nil {
			return out, storeErr(err)
		}
	case MethodFindCommunityByGatheringID, MethodGetSimpleCommunity:
		field := "lstGid"
		if c.Method == MethodGetSimpleCommunity {
			field = "gatheringIdList"
		}
		gids := types.ReadList(&r, field, (*types.Reader).U32)
		if err := done(); err != nil {
			return out, err
		}
		if len(gids) > MaxBrowseResults {
			return out, fmt.Errorf("%w: %d gathering ids, at most %d", types.CoreInvalidArgument, len(gids), MaxBrowseResults)
		}
		if len(gids) == 0 {
			types.WriteList(&w, []SimpleCommunity(nil), nil)
			return w.Bytes()
		}
		found, err := cs.FindCommunities(ctx, CommunityQuery{GIDs: gids})
		if err != nil {
			return out, storeErr(err)
		}
		if c.Method == MethodGetSimpleCommunity {
			types.WriteList(&w, found, func(w *types.Writer, g PersistentGathering) {
				sc := SimpleCommunity{GID: g.ID, MatchmakeSessionCount: g.MatchmakeSessionCount}
				sc.Append(w)
			})
			return w.Bytes()
		}
		s.writeCommunities(&w, pid, found)
	case MethodFindOfficialCommunity, MethodFindCommunityByParticipant, MethodFindCommunityByOwner:
		var q CommunityQuery
		switch c.Method {
		case MethodFindOfficialCommunity:
			q.Official = true
			q.Available = r.Bool("isAvailableOnly")
			q.Now = now
		case MethodFindCommunityByParticipant:
			q.Participant = r.PID("pid")
		default:
			// The page gives no parameters; Pretendo's Monster Hunter XX variant
			// takes an id and a ResultRange: read as PID + ResultRange.
			q.Owner = r.PID("id")
		}
		rr := r.ResultRange("resultRange")
		if err := done(); err != nil {
			return out, err
		}
		if (c.Method != MethodFindOfficialCommunity && q.Owner == 0 && q.Participant == 0) ||
			(c.Method == MethodFindOfficialCommunity && len(s.OfficialOwners) == 0) {
			s.writeCommunities(&w, pid, nil)
			return w.Bytes()
		}
		q.Offset, q.Size = rr.Offset, min(rr.Size, MaxBrowseResults)
		found, err := cs.FindCommunities(ctx, q)
		if err != nil {
			return out, storeErr(err)
		}
		s.writeCommunities(&w, pid, found)
	default:
		return out, types.CoreNotImplemented
	}
	return w.Bytes()
}

// writeCommunities writes a List<PersistentGathering>; only the owner sees a
// community's password.
func (s *Server) writeCommunities(w *types.Writer, viewer types.PID, gs []PersistentGathering) {
	types.WriteList(w, gs, func(w *types.Writer, g PersistentGathering) {
		if g.Owner != viewer {
			g.Password = ""
		}
		g.Append(w)
	})
}

// applyCommunity copies what a client may change (UpdateCommunity) from g into
// cur: everything but the id, owner, host and the server-owned counts.
func applyCommunity(cur, g *PersistentGathering) {
	cur.MinParticipants, cur.MaxParticipants = g.MinParticipants, g.MaxParticipants
	cur.ParticipationPolicy, cur.PolicyArgument = g.ParticipationPolicy, g.PolicyArgument
	cur.Flags, cur.State, cur.Description = g.Flags, g.State, g.Description
	cur.CommunityType, cur.Password = g.CommunityType, g.Password
	cur.Attributes = g.Attributes
	cur.ApplicationBuffer = append([]byte(nil), g.ApplicationBuffer...)
	cur.ParticipationStartDate, cur.ParticipationEndDate = g.ParticipationStartDate, g.ParticipationEndDate
}

// checkParticipation enforces gidForParticipationCheck (CreateMatchmakeSessionParam,
// JoinMatchmakeSessionParam, AutoMatchmakeParam): when not 0, the caller and its
// additional participants must be members of that gathering, a community (when
// the Store keeps them) or a matchmake session, else
// RendezVous::NotParticipatedGathering; an unknown gathering is
// RendezVous::SessionVoid. Community membership is never withdrawn, so checking
// before the change is enough; a session participant could leave in between
// (the page gives the field no more meaning than its name).
func (s *Server) checkParticipation(ctx context.Context, caller types.PID, gid uint32, extra []types.PID) error {
	if gid == 0 {
		return nil
	}
	if len(extra) > MaxBrowseResults {
		return fmt.Errorf("%w: %d additional participants", types.CoreInvalidArgument, len(extra))
	}
	pids := append([]types.PID{caller}, extra...)
	if cs, ok := s.Store.(CommunityStore); ok {
		found, err := cs.FindCommunities(ctx, CommunityQuery{GIDs: []uint32{gid}})
		if err != nil {
			return storeErr(err)
		}
		if len(found) == 1 {
			for _, pid := range pids {
				in, err := cs.FindCommunities(ctx, CommunityQuery{GIDs: []uint32{gid}, Participant: pid})
				if err != nil {
					return storeErr(err)
				}
				if len(in) == 0 {
					return fmt.Errorf("%w: PID %d is not a member of community %d", ResultNotParticipatedGathering, pid, gid)
				}
			}
			return nil
		}
	}
	_, ps, err := s.Store.Get(ctx, gid)
	if err != nil {
		return storeErr(err)
	}
	for _, pid := range pids {
		if !participantOf(ps, pid) {
			return fmt.Errorf("%w: PID %d is not in gathering %d", ResultNotParticipatedGathering, pid, gid)
		}
	}
	return nil
}
