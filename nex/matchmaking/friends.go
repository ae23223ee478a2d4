package matchmaking

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gamewire/gamewire/nex/types"
)

// Matchmake system types (m_MatchmakeSystemType; NintendoClients'
// MatchmakeSystem).
const (
	SystemGlobal  uint32 = 1
	SystemFriends uint32 = 2 // a session open to its owner's friends only
)

// friendOnly reports whether pid may not see or join ms: a friends session
// (SystemFriends) of an owner pid is not a friend of. Without Server.Friends
// every session is open, as before friend lists were known.
func (s *Server) friendOnly(ctx context.Context, pid types.PID, ms *MatchmakeSession) (bool, error) {
	if s.Friends == nil || ms.MatchmakeSystemType != SystemFriends || ms.Owner == pid {
		return false, nil
	}
	ok, err := s.Friends.AreFriends(ctx, ms.Owner, pid)
	return !ok, err
}

// visible drops from found the friends sessions pid may not see.
func (s *Server) visible(ctx context.Context, pid types.PID, found []MatchmakeSession) ([]MatchmakeSession, error) {
	if s.Friends == nil {
		return found, nil
	}
	out := found[:0:0]
	for i := range found {
		hide, err := s.friendOnly(ctx, pid, &found[i])
		if err != nil {
			return nil, err
		}
		if !hide {
			out = append(out, found[i])
		}
	}
	return out, nil
}

// checkJoin refuses a stranger's join of a friends session with
// RendezVous::NotFriend.
func (s *Server) checkJoin(ctx context.Context, pid types.PID, gid uint32) error {
	if s.Friends == nil && s.Hooks.MayJoin == nil {
		return nil
	}
	ms, _, err := s.Store.Get(ctx, gid)
	if err != nil {
		return storeErr(err)
	}
	if s.Friends != nil {
		hide, err := s.friendOnly(ctx, pid, &ms)
		if err == nil && hide {
			err = fmt.Errorf("%w: gathering %d is open to its owner's friends only", types.RendezVousNotFriend, gid)
		}
		if err != nil {
			return err
		}
	}
	if s.Hooks.MayJoin != nil {
		return s.Hooks.MayJoin(ctx, pid, &ms)
	}
	return nil
}

// autoFriends auto-matchmakes into a friends session: the first open one of
// a friend that fits ms, else a new one (the store's own matching would put
// a stranger into any friends session).
func (s *Server) autoFriends(ctx context.Context, pid types.PID, ms MatchmakeSession) ([]uint32, error) {
	c := AutoCriteria(&ms).SearchCriteria
	c.MatchmakeSystemType = strconv.FormatUint(uint64(SystemFriends), 10)
	found, err := s.Store.Browse(ctx, c, 0, MaxBrowseResults)
	if err != nil {
		return nil, storeErr(err)
	}
	if found, err = s.visible(ctx, pid, found); err != nil {
		return nil, err
	}
	gids := make([]uint32, 0, len(found))
	for _, f := range found {
		if f.Owner != pid {
			gids = append(gids, f.ID)
		}
	}
	return gids, nil
}
