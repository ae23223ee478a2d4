package matchmaking

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

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
