package ranking

import (
	"github.com/gamewire/gamewire/nex/types"
)

// The package's structures are its API and the Store's; the wire codecs are
// the generated ones of nex/protocols/ranking (wire.go converts).

// ScoreData is the RankingScoreData structure: one score as UploadScore sends it.
type ScoreData struct {
	Category   uint32 // category
	Score      uint32 // score
	OrderBy    uint8  // orderBy: OrderDescending or OrderAscending
	UpdateMode uint8  // updateMode: UpdateNormal or UpdateDeleteOld
	Groups     []byte // groups (List<Uint8>)
	Param      uint64 // param
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

// Result is the RankingResult structure.
type Result struct {
	Data       []RankData     // rankDataList
	TotalCount uint32         // totalCount: entries in the (filtered) ranking
	SinceTime  types.DateTime // sinceTime
}

// CachedResult is the RankingCachedResult structure, a RankingResult level
// followed by its own.
type CachedResult struct {
	Result
	CreatedTime types.DateTime // createdTime
	ExpiredTime types.DateTime // expiredTime
	MaxLength   uint8          // maxLength
}

// ChangeAttributesParam is the RankingChangeAttributesParam structure.
type ChangeAttributesParam struct {
	Flag   uint8  // modificationFlag: ChangeGroups, ChangeParam
	Groups []byte // groups
	Param  uint64 // param
}

// Stats is the RankingStats structure: always five values, in the order of the
// stat flags, 0 where the flag was not asked for.
type Stats [5]float64
