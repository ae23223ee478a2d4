package ssb4

import (
	"context"
	"errors"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// ErrNotFound is returned by a Store for a replay it does not have.
var ErrNotFound = errors.New("ssb4: not found")

// Store keeps what Super Smash Bros. 4's DataStore methods add to DataStore's
// objects: players' profiles, play reports, replays' descriptions and the
// viewers' places in the replay queue, and fighting power scores. Each method
// is one transaction. internal/sqlstore's SSB4 implements it on SQLite
// (nex/accounts) and PostgreSQL (nex/pgstore); nex/storetest.SSB4 is its
// suite.
type Store interface {
	// PostProfile sets pid's profile, replacing the one it had.
	PostProfile(ctx context.Context, pid types.PID, profile []byte, now time.Time) error
	// Profiles returns the profiles of the pids that have one, in pids'
	// order (a pid named twice, once).
	Profiles(ctx context.Context, pids []types.PID) ([]Profile, error)

	// SendPlayReport sets pid's play report, replacing the one it sent
	// before.
	SendPlayReport(ctx context.Context, pid types.PID, report []int32, now time.Time) error
	// WorldPlayReport returns, per index, the sum of every player's play
	// report value at that index; as long as the longest report (none:
	// empty).
	WorldPlayReport(ctx context.Context) ([]int64, error)

	// AddReplay records a replay being posted, and drops the oldest beyond
	// keep (their descriptions; the objects expire on their own).
	AddReplay(ctx context.Context, r Replay, keep int) error
	// Replay returns replay id, or ErrNotFound.
	Replay(ctx context.Context, id uint64) (Replay, error)
	// ReplaysAfter returns the replays with ids above after, oldest first,
	// at most limit.
	ReplaysAfter(ctx context.Context, after uint64, limit int) ([]Replay, error)
	// SearchReplays returns the replays of a mode and style with a player
	// playing fighter, newest first, from offset, at most limit.
	SearchReplays(ctx context.Context, q ReplayQuery) ([]Replay, error)
	// ReplayStats returns how many replays of mode were posted since since
	// and the fighters played in them (ascending, each once).
	ReplayStats(ctx context.Context, mode uint8, since time.Time) (int, []uint8, error)
	// ReplayCursor returns the id of the last replay viewer was given by
	// the queue (0: none yet).
	ReplayCursor(ctx context.Context, viewer types.PID) (uint64, error)
	// SetReplayCursor sets it.
	SetReplayCursor(ctx context.Context, viewer types.PID, id uint64) error

	// PostFightingPower sets pid's fighting power in each score's mode.
	PostFightingPower(ctx context.Context, pid types.PID, scores []FightingPower, now time.Time) error
	// FightingPowerChart returns how many players have a fighting power in
	// mode and up to points points of its distribution (see ChartPoint),
	// best first.
	FightingPowerChart(ctx context.Context, mode uint8, points int) (uint32, []ChartPoint, error)
	// FightingPowerModes returns the modes with a score, ascending.
	FightingPowerModes(ctx context.Context) ([]uint8, error)

	// AddSharedData records shared data being posted.
	AddSharedData(ctx context.Context, d SharedData) error
	// SharedData returns shared data id, or ErrNotFound.
	SharedData(ctx context.Context, id uint64) (SharedData, error)
	// SearchSharedData returns the shared data a query selects, newest
	// first, from offset, at most limit.
	SearchSharedData(ctx context.Context, q SharedDataQuery) ([]SharedData, error)
	// ReportSharedData records reporter's report of shared data id (once
	// per reporter) and returns how many reported it.
	ReportSharedData(ctx context.Context, id uint64, reporter types.PID) (int, error)
}

// Any in a SharedDataQuery's Region, Attribute1, Attribute2 or Fighter
// matches every value.
const Any = 0xFF

// SharedData describes posted shared data (DataStorePreparePostSharedDataParam,
// and the DataStore object that holds it: its data id is the shared data's).
type SharedData struct {
	ID         uint64
	Owner      types.PID
	DataType   uint8
	Region     uint8
	Attribute1 uint8
	Attribute2 uint8
	Fighters   []byte // the fighters it shows, one byte each
	Comment    string
	Posted     time.Time
	Reports    int // how many players reported it
}

// SharedDataQuery is what SearchSharedData selects: DataType; Owner unless
// 0; Region, Attribute1, Attribute2 unless Any; shared data showing Fighter
// unless Any; reported by fewer than MaxReports players unless MaxReports is
// 0.
type SharedDataQuery struct {
	DataType                                uint8
	Owner                                   types.PID
	Region, Attribute1, Attribute2, Fighter uint8
	MaxReports                              int
	Offset, Limit                           uint32
}

// Profile is a player's profile (DataStoreProfileInfo).
type Profile struct {
	PID     types.PID
	Profile []byte
}

// Replay describes a posted replay (DataStorePreparePostReplayParam, and the
// DataStore object that holds it: its data id is the replay id).
type Replay struct {
	ID            uint64
	Poster        types.PID
	Size          uint32
	Mode          uint8
	Style         uint8
	Rule          uint8
	Stage         uint8
	ReplayType    uint8
	CompetitionID uint64
	Score         int32
	KeyVersion    uint16
	Players       []ReplayPlayer
	Winners       []uint32
	Posted        time.Time
}

// ReplayPlayer is one fighter of a replay (DataStoreReplayPlayer).
type ReplayPlayer struct {
	Fighter     uint8
	Health      uint8
	WinningRate uint16
	Color       uint8
	Color2      uint8
	PrincipalID uint32
	Country     uint32
	Region      uint8
	Number      uint8
}

// ReplayQuery is what SearchReplays selects.
type ReplayQuery struct {
	Mode, Style, Fighter uint8
	Offset, Limit        uint32
}

// FightingPower is a player's fighting power in a mode.
type FightingPower struct {
	Mode  uint8
	Score uint32
}

// ChartPoint is a point of a fighting power chart: Score is the score of the
// player at some place of the ranking (best first), Rank the rank that score
// reaches, 1 + how many players score more.
type ChartPoint struct {
	Score uint32
	Rank  uint32
}
