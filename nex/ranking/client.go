package ranking

import (
	"context"

	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Caller makes RMC calls; *rmc.Client is one (a logged-in session's RMC).
type Caller = rmc.Caller

// Client calls the Ranking protocol of a server through the generated
// rk.RankingClient: parameters and results are encoded at the caller's
// settings (its NEX version gates RankingRankData's updateTime).
type Client struct {
	C Caller
}

func (c *Client) wire() rk.RankingClient { return rk.RankingClient{C: c.C} }

// UploadScore uploads a score.
func (c *Client) UploadScore(ctx context.Context, s ScoreData, uniqueID uint64) error {
	return c.wire().UploadScore(ctx, s.wire(), uniqueID)
}

// DeleteScore deletes one's score in a category.
func (c *Client) DeleteScore(ctx context.Context, category uint32, uniqueID uint64) error {
	return c.wire().DeleteScore(ctx, category, uniqueID)
}

// UploadCommonData replaces one's common data.
func (c *Client) UploadCommonData(ctx context.Context, data []byte, uniqueID uint64) error {
	return c.wire().UploadCommonData(ctx, data, uniqueID)
}

// GetCommonData returns one's common data.
func (c *Client) GetCommonData(ctx context.Context, uniqueID uint64) ([]byte, error) {
	return c.wire().GetCommonData(ctx, uniqueID)
}

// GetRanking reads a ranking in one of the modes; pid 0 means oneself.
func (c *Client) GetRanking(ctx context.Context, mode uint8, category uint32, op OrderParam, uniqueID uint64, pid types.PID) (Result, error) {
	res, err := c.wire().GetRanking(ctx, mode, category, op.wire(), uniqueID, pid)
	return resultFrom(res), err
}

// GetApproxOrder returns the rank a score would have.
func (c *Client) GetApproxOrder(ctx context.Context, category uint32, op OrderParam, score uint32, uniqueID uint64, pid types.PID) (uint32, error) {
	return c.wire().GetApproxOrder(ctx, category, op.wire(), score, uniqueID, pid)
}

// GetStats returns a category's statistics (flags: the Stat* bits).
func (c *Client) GetStats(ctx context.Context, category uint32, op OrderParam, flags uint32) (Stats, error) {
	st, err := c.wire().GetStats(ctx, category, op.wire(), flags)
	if err != nil {
		return Stats{}, err
	}
	return statsFrom(st)
}

// DeleteAllScores deletes one's scores in every category.
func (c *Client) DeleteAllScores(ctx context.Context, uniqueID uint64) error {
	return c.wire().DeleteAllScores(ctx, uniqueID)
}

// DeleteCommonData deletes one's common data.
func (c *Client) DeleteCommonData(ctx context.Context, uniqueID uint64) error {
	return c.wire().DeleteCommonData(ctx, uniqueID)
}

// ChangeAttributes changes the groups or param of one's score in a category.
func (c *Client) ChangeAttributes(ctx context.Context, category uint32, p ChangeAttributesParam, uniqueID uint64) error {
	return c.wire().ChangeAttributes(ctx, category, p.wire(), uniqueID)
}

// ChangeAllAttributes changes the groups or param of all one's scores.
func (c *Client) ChangeAllAttributes(ctx context.Context, p ChangeAttributesParam, uniqueID uint64) error {
	return c.wire().ChangeAllAttributes(ctx, p.wire(), uniqueID)
}

// GetRankingByPIDList ranks the entries of the listed players under uniqueID.
func (c *Client) GetRankingByPIDList(ctx context.Context, pids []types.PID, mode uint8, category uint32, op OrderParam, uniqueID uint64) (Result, error) {
	res, err := c.wire().GetRankingByPIDList(ctx, pids, mode, category, op.wire(), uniqueID)
	return resultFrom(res), err
}

// GetRankingByUniqueIDList ranks the entries of the listed unique ids.
func (c *Client) GetRankingByUniqueIDList(ctx context.Context, ids []uint64, mode uint8, category uint32, op OrderParam, uniqueID uint64) (Result, error) {
	res, err := c.wire().GetRankingByUniqueIdList(ctx, ids, mode, category, op.wire(), uniqueID)
	return resultFrom(res), err
}

// GetCachedTopXRanking returns a category's top entries as the server cached them.
func (c *Client) GetCachedTopXRanking(ctx context.Context, category uint32, op OrderParam) (CachedResult, error) {
	res, err := c.wire().GetCachedTopXRanking(ctx, category, op.wire())
	return cachedResultFrom(res), err
}
