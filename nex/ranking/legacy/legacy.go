// Package legacy serves the legacy Ranking protocol (112) of NEX 2 games
// (nintendo-wiki "Ranking - Legacy (112)"; Puyo Puyo!! 20th Anniversary) on
// the generated nex/protocols/rankinglegacy code, backed by the same
// ranking.Store as the NEX 3 Ranking service (ranking.Server): its categories,
// quota, argument checks and error mapping.
//
// A legacy score is two 32-bit values plus an unknown u8 and u32 per entry;
// the Store keeps one score, a u64 param and group bytes per entry. The
// mapping (a judgement call, docs/nex.md "Legacy Ranking"): scores[0] is the
// ranked score, param holds scores[1] in its low and unknown2 in its high 32
// bits, and the first group byte is unknown1, so an entry reads back as it
// was uploaded. An upload replaces the caller's entry (ranking.UpdateDeleteOld);
// a category created by a legacy upload ranks higher scores first.
//
// The wiki gives every response an s16 status whose value is fixed per method
// (50 for uploads and deletions, 100 for DeleteAllScore, 20 for reads); those
// are sent. The limit of UploadScoreWithLimit and UploadScoresWithLimit has no
// known effect (the wiki: "It is unknown how the limit affects the score";
// Pretendo's server ignores it too): the score is stored as UploadScore stores
// it.
package legacy

import (
	"context"
	"errors"
	"fmt"

	"github.com/gamewire/gamewire/nex/protocols/rankinglegacy"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Status values of the responses' s16 (nintendo-wiki).
const (
	StatusWrite     int16 = 50  // uploads and deletions
	StatusDeleteAll int16 = 100 // DeleteAllScore
	StatusRead      int16 = 20  // GetTopScore, GetCommonData
)

// Methods are the legacy methods the Server answers; the others of the
// protocol's id stay with whatever else is registered for it.
var Methods = []uint32{
	rankinglegacy.RankingLegacyMethodUploadScore,
	rankinglegacy.RankingLegacyMethodUploadScores,
	rankinglegacy.RankingLegacyMethodDeleteScore,
	rankinglegacy.RankingLegacyMethodDeleteAllScore,
	rankinglegacy.RankingLegacyMethodUploadCommonData,
	rankinglegacy.RankingLegacyMethodDeleteCommonData,
	rankinglegacy.RankingLegacyMethodGetTopScore,
	rankinglegacy.RankingLegacyMethodGetCommonData,
	rankinglegacy.RankingLegacyMethodUploadScoreWithLimit,
	rankinglegacy.RankingLegacyMethodUploadScoresWithLimit,
}

// Server answers the legacy Ranking methods of Methods from a ranking.Server's
// Store. Register it with Register.
type Server struct {
	// Ranking is the NEX 3 Ranking service whose Store, categories, quota
	// and error mapping the legacy methods share; required.
	Ranking *ranking.Server
}

// Register registers s on mux for each method of Methods, ahead of a Ranking
// protocol handler on the same id (rmc.Mux's per-method precedence).
func (s *Server) Register(mux *rmc.Mux) {
	for _, m := range Methods {
		mux.Handle(rankinglegacy.RankingLegacyProtocolID, m, s)
	}
}

// ServeRMC implements rmc.Handler: the Ranking service's PrepareCall (its
// categories, authentication and NEX version), the generated dispatcher, and
// its Result for failures.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if s.Ranking == nil {
		return out, errors.New("ranking/legacy: Server.Ranking is required")
	}
	c, err := s.Ranking.PrepareCall(ctx, c)
	if err != nil {
		return out, err
	}
	out, err = rankinglegacy.ServeRankingLegacy(handler{r: s.Ranking}, ctx, c, out)
	return out, s.Ranking.Result(ctx, c.Method, err)
}

// handler implements the generated handler on the Store.
type handler struct {
	r *ranking.Server
	rankinglegacy.UnimplementedRankingLegacy
}

var _ rankinglegacy.RankingLegacyHandler = handler{}

// ParamError answers parameters that do not decode with
// Ranking::InvalidArgument (rmc.ParamErrorer).
func (handler) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %w", types.RankingInvalidArgument, err)
}

// score is a legacy score as the Store keeps it (the package comment).
func score(category uint32, scores []uint32, unknown1 uint8, unknown2 uint32) (ranking.ScoreData, error) {
	if len(scores) != 2 {
		return ranking.ScoreData{}, fmt.Errorf("%w: %d scores, want 2 (nintendo-wiki: every score holds two values)",
			types.RankingInvalidArgument, len(scores))
	}
	return ranking.ScoreData{Category: category, Score: scores[0], OrderBy: ranking.OrderDescending,
		UpdateMode: ranking.UpdateDeleteOld, Groups: []byte{unknown1}, Param: uint64(scores[1]) | uint64(unknown2)<<32}, nil
}

// scores is the two scores an entry was uploaded with.
func scores(e ranking.Entry) []uint32 { return []uint32{e.Score, uint32(e.Param)} }

func (h handler) upload(ctx context.Context, c *rmc.Call, uid uint32, category uint32, sc []uint32, unknown1 uint8, unknown2 uint32) error {
	sd, err := score(category, sc, unknown1, unknown2)
	if err != nil {
		return err
	}
	return h.r.UploadScore(ctx, c.Peer.PID, uint64(uid), sd)
}

func (h handler) UploadScore(ctx context.Context, c *rmc.Call, uid uint32, category uint32, sc []uint32, unknown1 uint8, unknown2 uint32) (int16, error) {
	return StatusWrite, h.upload(ctx, c, uid, category, sc, unknown1, unknown2)
}

// UploadScores uploads each score in turn; the first failure stops it (the
// scores before stay).
func (h handler) UploadScores(ctx context.Context, c *rmc.Call, uid uint32, list []rankinglegacy.RankingScore) (int16, error) {
	for _, s := range list {
		if err := h.upload(ctx, c, uid, s.Category, s.Scores, s.Unknown1, s.Unknown2); err != nil {
			return 0, err
		}
	}
	return StatusWrite, nil
}

// UploadScoreWithLimit uploads as UploadScore does; the limit has no known
// effect (the package comment).
func (h handler) UploadScoreWithLimit(ctx context.Context, c *rmc.Call, uid uint32, category uint32, sc []uint32, unknown1 uint8, unknown2 uint32, _ uint16) (int16, error) {
	return StatusWrite, h.upload(ctx, c, uid, category, sc, unknown1, unknown2)
}

// UploadScoresWithLimit uploads as UploadScores does.
func (h handler) UploadScoresWithLimit(ctx context.Context, c *rmc.Call, uid uint32, list []rankinglegacy.RankingScoreWithLimit) (int16, error) {
	for _, s := range list {
		if err := h.upload(ctx, c, uid, s.Category, s.Scores, s.Unknown1, s.Unknown2); err != nil {
			return 0, err
		}
	}
	return StatusWrite, nil
}

func (h handler) DeleteScore(ctx context.Context, c *rmc.Call, uid uint32, category uint32) (int16, error) {
	if _, err := h.r.Category(ctx, category); err != nil {
		return 0, err
	}
	ok, err := h.r.Store.DeleteScore(ctx, c.Peer.PID, uint64(uid), category)
	if err == nil && !ok {
		err = fmt.Errorf("%w: no score in category %d under unique id %d", types.RankingNotFound, category, uid)
	}
	return StatusWrite, err
}

func (h handler) DeleteAllScore(ctx context.Context, c *rmc.Call, uid uint32) (int16, error) {
	_, err := h.r.Store.DeleteAllScores(ctx, c.Peer.PID, uint64(uid))
	return StatusDeleteAll, err
}

func (h handler) UploadCommonData(ctx context.Context, c *rmc.Call, uid uint32, data []byte) (int16, error) {
	return StatusWrite, h.r.UploadCommonData(ctx, c.Peer.PID, uint64(uid), data)
}

func (h handler) DeleteCommonData(ctx context.Context, c *rmc.Call, uid uint32) (int16, error) {
	ok, err := h.r.Store.DeleteCommonData(ctx, c.Peer.PID, uint64(uid))
	if err == nil && !ok {
		err = fmt.Errorf("%w: no common data for unique id %d", types.RankingNotFound, uid)
	}
	return StatusWrite, err
}

// GetTopScore returns the caller's two scores in a category.
func (h handler) GetTopScore(ctx context.Context, c *rmc.Call, uid uint32, category uint32) (int16, []uint32, error) {
	cat, err := h.r.Category(ctx, category)
	if err != nil {
		return 0, nil, err
	}
	e, _, err := h.r.Store.Find(ctx, ranking.Query{Category: cat, GroupIndex: ranking.NoGroup}, c.Peer.PID, uint64(uid))
	if errors.Is(err, ranking.ErrNotFound) {
		err = fmt.Errorf("%w: no score in category %d under unique id %d", types.RankingNotFound, category, uid)
	}
	if err != nil {
		return 0, nil, err
	}
	return StatusRead, scores(e), nil
}

// GetCommonData returns the caller's common data; an empty buffer when there
// is none (nintendo-wiki).
func (h handler) GetCommonData(ctx context.Context, c *rmc.Call, uid uint32) (int16, []byte, error) {
	data, err := h.r.Store.CommonData(ctx, c.Peer.PID, uint64(uid))
	if errors.Is(err, ranking.ErrNotFound) {
		return StatusRead, nil, nil
	}
	return StatusRead, data, err
}
