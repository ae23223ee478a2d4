// Code below is the hand-written Ranking codec the generated one replaced
// (nex/ranking/types.go before the port), kept as the benchmarks' peer.

package codecbench

import (
	"fmt"

	"github.com/gamewire/gamewire/nex/types"
)

// ScoreData is the RankingScoreData structure: one score as UploadScore sends it.
type ScoreData struct {
	Category   uint32 // category
	Score      uint32 // score
	OrderBy    uint8  // orderBy: OrderDescending or OrderAscending
	UpdateMode uint8  // updateMode: UpdateNormal or UpdateDeleteOld
	Groups     []byte // groups (List<Uint8>)
	Param      uint64 // param
}

// Append writes s as a structure.
func (s ScoreData) Append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U32(s.Category)
	w.U32(s.Score)
	w.U8(s.OrderBy)
	w.U8(s.UpdateMode)
	writeBytesList(w, s.Groups)
	w.U64(s.Param)
	w.EndStructure(m)
}

// ReadScoreData reads a RankingScoreData structure.
func ReadScoreData(r *types.Reader, field string) ScoreData {
	m := r.EnterStructure(field)
	s := ScoreData{Category: r.U32("category"), Score: r.U32("score"), OrderBy: r.U8("orderBy"),
		UpdateMode: r.U8("updateMode"), Groups: readBytesList(r, "groups"), Param: r.U64("param")}
	r.LeaveStructure(m)
	return s
}

// OrderParam is the RankingOrderParam structure: which part of a ranking a query
// wants and how ranks are counted.
type OrderParam struct {
	OrderCalc  uint8  // orderCalculation: OrderCalcStandard (1224) or OrderCalcOrdinal (1234)
	GroupIndex uint8  // groupIndex: which group byte filters (NoGroup: none)
	GroupNum   uint8  // groupNum: the value that group byte must have
	TimeScope  uint8  // timeScope
	Offset     uint32 // offset: base rank, 0 is the first place
	Length     uint8  // length: entries wanted
}

// NoGroup is the groupIndex of an OrderParam that filters on no group (as
// NintendoClients' RankingOrderParam defaults it).
const NoGroup = 255

// Append writes p as a structure.
func (p OrderParam) Append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U8(p.OrderCalc)
	w.U8(p.GroupIndex)
	w.U8(p.GroupNum)
	w.U8(p.TimeScope)
	w.U32(p.Offset)
	w.U8(p.Length)
	w.EndStructure(m)
}

// ReadOrderParam reads a RankingOrderParam structure.
func ReadOrderParam(r *types.Reader, field string) OrderParam {
	m := r.EnterStructure(field)
	p := OrderParam{OrderCalc: r.U8("orderCalculation"), GroupIndex: r.U8("groupIndex"), GroupNum: r.U8("groupNum"),
		TimeScope: r.U8("timeScope"), Offset: r.U32("offset"), Length: r.U8("length")}
	r.LeaveStructure(m)
	return p
}

// RankData is the RankingRankData structure: one entry of a ranking.
// UpdateTime is on the wire only in revision 1 (NEX 3.6 and later).
type RankData struct {
	PID        types.PID      // principalId
	UniqueID   uint64         // uniqueId
	Order      uint32         // order: the rank, from 1
	Category   uint32         // category
	Score      uint32         // score
	Groups     []byte         // groups
	Param      uint64         // param
	CommonData []byte         // commonData
	UpdateTime types.DateTime // updateTime (revision 1)
}

// Append writes d as a structure; withTime writes revision 1 (updateTime).
func (d RankData) Append(w *types.Writer, withTime bool) {
	v := uint8(0)
	if withTime {
		v = 1
	}
	m := w.BeginStructure(v)
	w.PID(d.PID)
	w.U64(d.UniqueID)
	w.U32(d.Order)
	w.U32(d.Category)
	w.U32(d.Score)
	writeBytesList(w, d.Groups)
	w.U64(d.Param)
	w.Buffer(d.CommonData)
	if withTime {
		w.DateTime(d.UpdateTime)
	}
	w.EndStructure(m)
}

// ReadRankData reads a RankingRankData structure; withTime reads updateTime
// (revision 1) when the structure has no header to say so.
func ReadRankData(r *types.Reader, field string, withTime bool) RankData {
	m := r.EnterStructure(field)
	d := RankData{PID: r.PID("principalId"), UniqueID: r.U64("uniqueId"), Order: r.U32("order"), Category: r.U32("category"),
		Score: r.U32("score"), Groups: readBytesList(r, "groups"), Param: r.U64("param"), CommonData: r.Buffer("commonData")}
	if m.Version >= 1 || (m.Version < 0 && withTime) {
		d.UpdateTime = r.DateTime("updateTime")
	}
	d.CommonData = append([]byte(nil), d.CommonData...)
	r.LeaveStructure(m)
	return d
}

// Result is the RankingResult structure.
type Result struct {
	Data       []RankData     // rankDataList
	TotalCount uint32         // totalCount: entries in the (filtered) ranking
	SinceTime  types.DateTime // sinceTime
}

// Append writes res as a structure.
func (res Result) Append(w *types.Writer, withTime bool) {
	m := w.BeginStructure(0)
	types.WriteList(w, res.Data, func(w *types.Writer, d RankData) { d.Append(w, withTime) })
	w.U32(res.TotalCount)
	w.DateTime(res.SinceTime)
	w.EndStructure(m)
}

// ReadResult reads a RankingResult structure.
func ReadResult(r *types.Reader, field string, withTime bool) Result {
	m := r.EnterStructure(field)
	res := Result{Data: types.ReadList(r, "rankDataList", func(r *types.Reader, f string) RankData { return ReadRankData(r, f, withTime) })}
	res.TotalCount = r.U32("totalCount")
	res.SinceTime = r.DateTime("sinceTime")
	r.LeaveStructure(m)
	return res
}

// CachedResult is the RankingCachedResult structure, a RankingResult level
// followed by its own.
type CachedResult struct {
	Result
	CreatedTime types.DateTime // createdTime
	ExpiredTime types.DateTime // expiredTime
	MaxLength   uint8          // maxLength
}

// Append writes c: the RankingResult level, then its own.
func (c CachedResult) Append(w *types.Writer, withTime bool) {
	c.Result.Append(w, withTime)
	m := w.BeginStructure(0)
	w.DateTime(c.CreatedTime)
	w.DateTime(c.ExpiredTime)
	w.U8(c.MaxLength)
	w.EndStructure(m)
}

// ReadCachedResult reads a RankingCachedResult.
func ReadCachedResult(r *types.Reader, field string, withTime bool) CachedResult {
	c := CachedResult{Result: ReadResult(r, field, withTime)}
	m := r.EnterStructure(field)
	c.CreatedTime, c.ExpiredTime, c.MaxLength = r.DateTime("createdTime"), r.DateTime("expiredTime"), r.U8("maxLength")
	r.LeaveStructure(m)
	return c
}

// ChangeAttributesParam is the RankingChangeAttributesParam structure.
type ChangeAttributesParam struct {
	Flag   uint8  // modificationFlag: ChangeGroups, ChangeParam
	Groups []byte // groups
	Param  uint64 // param
}

// Append writes p as a structure.
func (p ChangeAttributesParam) Append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U8(p.Flag)
	writeBytesList(w, p.Groups)
	w.U64(p.Param)
	w.EndStructure(m)
}

// ReadChangeAttributesParam reads a RankingChangeAttributesParam structure.
func ReadChangeAttributesParam(r *types.Reader, field string) ChangeAttributesParam {
	m := r.EnterStructure(field)
	p := ChangeAttributesParam{Flag: r.U8("modificationFlag"), Groups: readBytesList(r, "groups"), Param: r.U64("param")}
	r.LeaveStructure(m)
	return p
}

// Stats is the RankingStats structure: always five values, in the order of the
// stat flags, 0 where the flag was not asked for.
type Stats [5]float64

// Append writes s as a structure.
func (s Stats) Append(w *types.Writer) {
	m := w.BeginStructure(0)
	types.WriteList(w, s[:], (*types.Writer).F64)
	w.EndStructure(m)
}

// ReadStats reads a RankingStats structure.
func ReadStats(r *types.Reader, field string) Stats {
	var s Stats
	m := r.EnterStructure(field)
	l := types.ReadList(r, "statsList", (*types.Reader).F64)
	if r.Err() == nil && len(l) != len(s) {
		r.Fail("statsList", fmt.Errorf("%d values, want %d", len(l), len(s)))
	}
	copy(s[:], l)
	r.LeaveStructure(m)
	return s
}

func writeBytesList(w *types.Writer, b []byte) {
	types.WriteList(w, b, (*types.Writer).U8)
}

func readBytesList(r *types.Reader, field string) []byte {
	return types.ReadList(r, field, (*types.Reader).U8)
}
