package ranking

import (
	"fmt"

	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
)

// Conversions between the package's structures and the generated wire ones
// (nex/protocols/ranking, from nex/desc/defs/ranking.nexd).

func scoreDataFrom(s rk.RankingScoreData) ScoreData {
	return ScoreData{Category: s.Category, Score: s.Score, OrderBy: s.Order, UpdateMode: s.UpdateMode, Groups: s.Groups, Param: s.Param}
}

func (s ScoreData) wire() rk.RankingScoreData {
	return rk.RankingScoreData{Category: s.Category, Score: s.Score, Order: s.OrderBy, UpdateMode: s.UpdateMode, Groups: s.Groups, Param: s.Param}
}

func orderParamFrom(p rk.RankingOrderParam) OrderParam {
	return OrderParam{OrderCalc: p.OrderCalc, GroupIndex: p.GroupIndex, GroupNum: p.GroupNum, TimeScope: p.TimeScope, Offset: p.Offset, Length: p.Count}
}

func (p OrderParam) wire() rk.RankingOrderParam {
	return rk.RankingOrderParam{OrderCalc: p.OrderCalc, GroupIndex: p.GroupIndex, GroupNum: p.GroupNum, TimeScope: p.TimeScope, Offset: p.Offset, Count: p.Length}
}

func changeParamFrom(p rk.RankingChangeAttributesParam) ChangeAttributesParam {
	return ChangeAttributesParam{Flag: p.Flags, Groups: p.Groups, Param: p.Param}
}

func (p ChangeAttributesParam) wire() rk.RankingChangeAttributesParam {
	return rk.RankingChangeAttributesParam{Flags: p.Flag, Groups: p.Groups, Param: p.Param}
}

func (d RankData) wire() rk.RankingRankData {
	return rk.RankingRankData{PID: d.PID, UniqueID: d.UniqueID, Rank: d.Order, Category: d.Category, Score: d.Score,
		Groups: d.Groups, Param: d.Param, CommonData: d.CommonData, UpdateTime: d.UpdateTime}
}

func rankDataFrom(d rk.RankingRankData) RankData {
	return RankData{PID: d.PID, UniqueID: d.UniqueID, Order: d.Rank, Category: d.Category, Score: d.Score,
		Groups: d.Groups, Param: d.Param, CommonData: d.CommonData, UpdateTime: d.UpdateTime}
}

func (res Result) wire() rk.RankingResult {
	w := rk.RankingResult{Total: res.TotalCount, SinceTime: res.SinceTime}
	if len(res.Data) > 0 {
		w.Data = make([]rk.RankingRankData, len(res.Data))
		for i, d := range res.Data {
			w.Data[i] = d.wire()
		}
	}
	return w
}

func resultFrom(w rk.RankingResult) Result {
	res := Result{TotalCount: w.Total, SinceTime: w.SinceTime}
	if len(w.Data) > 0 {
		res.Data = make([]RankData, len(w.Data))
		for i, d := range w.Data {
			res.Data[i] = rankDataFrom(d)
		}
	}
	return res
}

func (c CachedResult) wire() rk.RankingCachedResult {
	return rk.RankingCachedResult{RankingResult: c.Result.wire(), CreatedTime: c.CreatedTime, ExpiredTime: c.ExpiredTime, MaxLength: c.MaxLength}
}

func cachedResultFrom(w rk.RankingCachedResult) CachedResult {
	return CachedResult{Result: resultFrom(w.RankingResult), CreatedTime: w.CreatedTime, ExpiredTime: w.ExpiredTime, MaxLength: w.MaxLength}
}

func (s Stats) wire() rk.RankingStats {
	return rk.RankingStats{Stats: append([]float64(nil), s[:]...)}
}

// statsFrom checks that a RankingStats has its five values (nintendo-wiki:
// "The statsList always has 5 entries").
func statsFrom(w rk.RankingStats) (Stats, error) {
	var s Stats
	if len(w.Stats) != len(s) {
		return s, fmt.Errorf("ranking: RankingStats.stats has %d values, want %d", len(w.Stats), len(s))
	}
	copy(s[:], w.Stats)
	return s, nil
}
