package matchmaking

import (
	"context"

	"github.com/gamewire/gamewire/nex/protocols/common"
	mm "github.com/gamewire/gamewire/nex/protocols/matchmaking"
	"github.com/gamewire/gamewire/nex/types"
)

func communities(list []mm.PersistentGathering, err error) ([]PersistentGathering, error) {
	if err != nil {
		return nil, err
	}
	out := make([]PersistentGathering, len(list))
	for i := range list {
		out[i] = CommunityFromWire(&list[i])
	}
	return out, nil
}

// CreateCommunity calls CreateCommunity and returns the new community's id.
func (c *Client) CreateCommunity(ctx context.Context, g PersistentGathering, msg string) (uint32, error) {
	return c.ext().CreateCommunity(ctx, g.Wire(), msg)
}

// UpdateCommunity calls UpdateCommunity (g.ID names the community).
func (c *Client) UpdateCommunity(ctx context.Context, g PersistentGathering) error {
	return c.ext().UpdateCommunity(ctx, g.Wire())
}

// JoinCommunity calls JoinCommunity.
func (c *Client) JoinCommunity(ctx context.Context, gid uint32, msg, password string) error {
	return c.ext().JoinCommunity(ctx, gid, msg, password)
}

// FindCommunityByGatheringID calls FindCommunityByGatheringId.
func (c *Client) FindCommunityByGatheringID(ctx context.Context, gids []uint32) ([]PersistentGathering, error) {
	return communities(c.ext().FindCommunityByGatheringId(ctx, gids))
}

// FindOfficialCommunity calls FindOfficialCommunity.
func (c *Client) FindOfficialCommunity(ctx context.Context, availableOnly bool, rr types.ResultRange) ([]PersistentGathering, error) {
	return communities(c.ext().FindOfficialCommunity(ctx, availableOnly, common.ResultRange(rr)))
}

// FindCommunityByParticipant calls FindCommunityByParticipant.
func (c *Client) FindCommunityByParticipant(ctx context.Context, pid types.PID, rr types.ResultRange) ([]PersistentGathering, error) {
	return communities(c.ext().FindCommunityByParticipant(ctx, pid, common.ResultRange(rr)))
}

// FindCommunityByOwner calls FindCommunityByOwner (method 54, whose parameters
// the descriptions do not know; gamewire reads them as a PID and a ResultRange:
// docs/nex.md "Communities").
func (c *Client) FindCommunityByOwner(ctx context.Context, pid types.PID, rr types.ResultRange) ([]PersistentGathering, error) {
	st := c.caller().Settings()
	w := types.NewWriter(nil, st)
	w.PID(pid)
	rw := common.ResultRange(rr)
	rw.Append(&w)
	params, err := w.Bytes()
	if err != nil {
		return nil, err
	}
	data, err := c.ext().FindCommunityByOwner(ctx, params)
	if err != nil {
		return nil, err
	}
	r := types.NewReader(data, st)
	list := types.ReadList(&r, "communities", func(r *types.Reader, f string) (g mm.PersistentGathering) {
		g.Read(r, f)
		return
	})
	if err := r.Done(); err != nil {
		return nil, err
	}
	return communities(list, nil)
}

// GetSimpleCommunity calls GetSimpleCommunity.
func (c *Client) GetSimpleCommunity(ctx context.Context, gids []uint32) ([]SimpleCommunity, error) {
	return c.ext().GetSimpleCommunity(ctx, gids)
}
