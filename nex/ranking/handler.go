package ranking

import (
	"context"
	"fmt"

	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// handler is the Server as the generated rk.RankingHandler: every method of
// the protocol with its parameters decoded (by the connection's NEX version)
// and its results encoded by nex/protocols/ranking. Each converts the wire
// types to the package's (wire.go) and runs the method's logic on the
// caller's PID.
type handler struct{ s *Server }

var _ rk.RankingHandler = handler{}

// ParamError answers parameters that do not decode with
// Ranking::InvalidArgument naming the field (rmc.ParamErrorer).
func (handler) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %w", types.RankingInvalidArgument, err)
}

func (h handler) UploadScore(ctx context.Context, c *rmc.Call, sd rk.RankingScoreData, uid uint64) error {
	return h.s.uploadScore(ctx, c.Peer.PID, uid, scoreDataFrom(sd))
}

func (h handler) DeleteScore(ctx context.Context, c *rmc.Call, cat uint32, uid uint64) error {
	return h.s.deleteScore(ctx, c.Peer.PID, uid, cat)
}

func (h handler) DeleteAllScores(ctx context.Context, c *rmc.Call, uid uint64) error {
	_, err := h.s.Store.DeleteAllScores(ctx, c.Peer.PID, uid)
	return err
}

func (h handler) UploadCommonData(ctx context.Context, c *rmc.Call, data []byte, uid uint64) error {
	return h.s.uploadCommonData(ctx, c.Peer.PID, uid, data)
}

func (h handler) DeleteCommonData(ctx context.Context, c *rmc.Call, uid uint64) error {
	ok, err := h.s.Store.DeleteCommonData(ctx, c.Peer.PID, uid)
	if err == nil && !ok {
		err = fmt.Errorf("%w: no common data for unique id %d", types.RankingNotFound, uid)
	}
	return err
}

func (h handler) GetCommonData(ctx context.Context, c *rmc.Call, uid uint64) ([]byte, error) {
	return h.s.Store.CommonData(ctx, c.Peer.PID, uid)
}

func (h handler) ChangeAttributes(ctx context.Context, c *rmc.Call, cat uint32, p rk.RankingChangeAttributesParam, uid uint64) error {
	return h.s.changeAttributes(ctx, c.Peer.PID, uid, cat, false, changeParamFrom(p))
}

func (h handler) ChangeAllAttributes(ctx context.Context, c *rmc.Call, p rk.RankingChangeAttributesParam, uid uint64) error {
	return h.s.changeAttributes(ctx, c.Peer.PID, uid, 0, true, changeParamFrom(p))
}

// GetRanking answers for pid, or for the caller when pid is 0.
func (h handler) GetRanking(ctx context.Context, c *rmc.Call, mode uint8, cat uint32, op rk.RankingOrderParam, uid uint64, pid types.PID) (rk.RankingResult, error) {
	if pid == 0 {
		pid = c.Peer.PID
	}
	res, err := h.s.GetRanking(ctx, mode, cat, orderParamFrom(op), uid, pid)
	return res.wire(), err
}

// GetApproxOrder ranks score among the category's entries; the unique id and
// PID do not change the answer.
func (h handler) GetApproxOrder(ctx context.Context, c *rmc.Call, cat uint32, op rk.RankingOrderParam, score uint32, _ uint64, _ types.PID) (uint32, error) {
	return h.s.approxOrder(ctx, cat, orderParamFrom(op), score)
}

func (h handler) GetStats(ctx context.Context, c *rmc.Call, cat uint32, op rk.RankingOrderParam, flags uint32) (rk.RankingStats, error) {
	st, err := h.s.stats(ctx, cat, orderParamFrom(op), flags)
	return st.wire(), err
}

// GetRankingByPIDList ranks the listed players' entries; the mode does not
// change the answer.
func (h handler) GetRankingByPIDList(ctx context.Context, c *rmc.Call, pids []types.PID, _ uint8, cat uint32, op rk.RankingOrderParam, uid uint64) (rk.RankingResult, error) {
	res, err := h.s.byList(ctx, cat, orderParamFrom(op), pids, uid, nil)
	return res.wire(), err
}

// GetRankingByUniqueIdList ranks the listed unique ids' entries; the mode does
// not change the answer.
func (h handler) GetRankingByUniqueIdList(ctx context.Context, c *rmc.Call, ids []uint64, _ uint8, cat uint32, op rk.RankingOrderParam, uid uint64) (rk.RankingResult, error) {
	res, err := h.s.byList(ctx, cat, orderParamFrom(op), nil, uid, ids)
	return res.wire(), err
}

func (h handler) GetCachedTopXRanking(ctx context.Context, c *rmc.Call, cat uint32, op rk.RankingOrderParam) (rk.RankingCachedResult, error) {
	res, err := h.s.cachedTopX(ctx, cat, orderParamFrom(op))
	return res.wire(), err
}

func (h handler) GetCachedTopXRankings(ctx context.Context, c *rmc.Call, cats []uint32, ops []rk.RankingOrderParam) ([]rk.RankingCachedResult, error) {
	if len(cats) != len(ops) {
		return nil, fmt.Errorf("%w: %d categories but %d order params", types.RankingInvalidArgument, len(cats), len(ops))
	}
	out := make([]rk.RankingCachedResult, len(cats))
	for i := range cats {
		res, err := h.s.cachedTopX(ctx, cats[i], orderParamFrom(ops[i]))
		if err != nil {
			return nil, err
		}
		out[i] = res.wire()
	}
	return out, nil
}
