package matchmaking

import (
	"context"

	"github.com/gamewire/gamewire/nex/types"
)

func (c *Client) communities(r *types.Reader) ([]PersistentGathering, error) {
	list := types.ReadList(r, "lstCommunity", ReadPersistentGathering)
	return list, r.Done()
}

func writeRange(w *types.Writer, rr types.ResultRange) {
	if w.Err() == nil {
		if b, err := rr.Append(w.B, w.S); err == nil {
			w.B = b
		}
	}
}

// CreateCommunity calls CreateCommunity and returns the new community's id.
func (c *Client) CreateCommunity(ctx context.Context, g PersistentGathering, msg string) (uint32, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodCreateCommunity, func(w *types.Writer) {
		g.Append(w)
		w.String(msg)
	})
	if err != nil {
		return 0, err
	}
	gid := r.U32("gid")
	return gid, r.Done()
}

// UpdateCommunity calls UpdateCommunity (g.ID names the community).
func (c *Client) UpdateCommunity(ctx context.Context, g PersistentGathering) error {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodUpdateCommunity, func(w *types.Writer) { g.Append(w) })
	if err != nil {
		return err
	}
	return r.Done()
}

// JoinCommunity calls JoinCommunity.
func (c *Client) JoinCommunity(ctx context.Context, gid uint32, msg, password string) error {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodJoinCommunity, func(w *types.Writer) {
		w.U32(gid)
		w.String(msg)
		w.String(password)
	})
	if err != nil {
		return err
	}
	return r.Done()
}

// FindCommunityByGatheringID calls FindCommunityByGatheringId.
func (c *Client) FindCommunityByGatheringID(ctx context.Context, gids []uint32) ([]PersistentGathering, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodFindCommunityByGatheringID, func(w *types.Writer) {
		types.WriteList(w, gids, (*types.Writer).U32)
	})
	if err != nil {
		return nil, err
	}
	return c.communities(&r)
}

// FindOfficialCommunity calls FindOfficialCommunity.
func (c *Client) FindOfficialCommunity(ctx context.Context, availableOnly bool, rr types.ResultRange) ([]PersistentGathering, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodFindOfficialCommunity, func(w *types.Writer) {
		w.Bool(availableOnly)
		writeRange(w, rr)
	})
	if err != nil {
		return nil, err
	}
	return c.communities(&r)
}

// FindCommunityByParticipant calls FindCommunityByParticipant.
func (c *Client) FindCommunityByParticipant(ctx context.Context, pid types.PID, rr types.ResultRange) ([]PersistentGathering, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodFindCommunityByParticipant, func(w *types.Writer) {
		w.PID(pid)
		writeRange(w, rr)
	})
	if err != nil {
		return nil, err
	}
	return c.communities(&r)
}

// FindCommunityByOwner calls FindCommunityByOwner (method 54; parameters as
// gamewire reads them: docs/nex.md "Communities").
func (c *Client) FindCommunityByOwner(ctx context.Context, pid types.PID, rr types.ResultRange) ([]PersistentGathering, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodFindCommunityByOwner, func(w *types.Writer) {
		w.PID(pid)
		writeRange(w, rr)
	})
	if err != nil {
		return nil, err
	}
	return c.communities(&r)
}

// GetSimpleCommunity calls GetSimpleCommunity.
func (c *Client) GetSimpleCommunity(ctx context.Context, gids []uint32) ([]SimpleCommunity, error) {
	r, err := c.call(ctx, ProtocolMatchmakeExtension, MethodGetSimpleCommunity, func(w *types.Writer) {
		types.WriteList(w, gids, (*types.Writer).U32)
	})
	if err != nil {
		return nil, err
	}
	list := types.ReadList(&r, "lstSimpleCommunityList", ReadSimpleCommunity)
	return list, r.Done()
}
