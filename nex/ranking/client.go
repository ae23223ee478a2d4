package ranking

import (
	"context"
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// Caller makes RMC calls; *rmc.Client is one (a logged-in session's RMC).
type Caller interface {
	Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error)
	Settings() types.Settings
}

// Client calls the Ranking protocol of a server.
type Client struct {
	C Caller
	// WithTime reads RankingRankData's updateTime when the connection has no
	// structure headers (NEX 3.6 and later).
	WithTime bool
}

func (c *Client) call(ctx context.Context, method uint32, params func(w *types.Writer), result func(r *types.Reader)) error {
	w := types.NewWriter(nil, c.C.Settings())
	if params != nil {
		params(&w)
	}
	p, err := w.Bytes()
	if err != nil {
		return err
	}
	data, err := c.C.Call(ctx, ProtocolID, method, p)
	if err != nil {
		return err
	}
	r := types.NewReader(data, c.C.Settings())
	if result != nil {
		result(&r)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("ranking: method %d response: %w", method, err)
	}
	return nil
}

// UploadScore uploads a score.
func (c *Client) UploadScore(ctx context.Context, s ScoreData, uniqueID uint64) error {
	return c.call(ctx, MethodUploadScore, func(w *types.Writer) { s.Append(w); w.U64(uniqueID) }, nil)
}

// DeleteScore deletes one's score in a category.
func (c *Client) DeleteScore(ctx context.Context, category uint32, uniqueID uint64) error {
	return c.call(ctx, MethodDeleteScore, func(w *types.Writer) { w.U32(category); w.U64(uniqueID) }, nil)
}

// UploadCommonData replaces one's common data.
func (c *Client) UploadCommonData(ctx context.Context, data []byte, uniqueID uint64) error {
	return c.call(ctx, MethodUploadCommonData, func(w *types.Writer) { w.Buffer(data); w.U64(uniqueID) }, nil)
}

// GetCommonData returns one's common data.
func (c *Client) GetCommonData(ctx context.Context, uniqueID uint64) ([]byte, error) {
	var data []byte
	err := c.call(ctx, MethodGetCommonData, func(w *types.Writer) { w.U64(uniqueID) },
		func(r *types.Reader) { data = append([]byte(nil), r.Buffer("commonData")...) })
	return data, err
}

// GetRanking reads a ranking in one of the modes; pid 0 means oneself.
func (c *Client) GetRanking(ctx context.Context, mode uint8, category uint32, op OrderParam, uniqueID uint64, pid types.PID) (Result, error) {
	var res Result
	err := c.call(ctx, MethodGetRanking, func(w *types.Writer) {
		w.U8(mode)
		w.U32(category)
		op.Append(w)
		w.U64(uniqueID)
		w.PID(pid)
	}, func(r *types.Reader) { res = ReadResult(r, "pResult", c.WithTime) })
	return res, err
}

// GetApproxOrder returns the rank a score would have.
func (c *Client) GetApproxOrder(ctx context.Context, category uint32, op OrderParam, score uint32, uniqueID uint64, pid types.PID) (uint32, error) {
	var order uint32
	err := c.call(ctx, MethodGetApproxOrder, func(w *types.Writer) {
		w.U32(category)
		op.Append(w)
		w.U32(score)
		w.U64(uniqueID)
		w.PID(pid)
	}, func(r *types.Reader) { order = r.U32("pOrder") })
	return order, err
}

// GetStats returns a category's statistics (flags: the Stat* bits).
func (c *Client) GetStats(ctx context.Context, category uint32, op OrderParam, flags uint32) (Stats, error) {
	var st Stats
	err := c.call(ctx, MethodGetStats, func(w *types.Writer) { w.U32(category); op.Append(w); w.U32(flags) },
		func(r *types.Reader) { st = ReadStats(r, "pStats") })
	return st, err
}
