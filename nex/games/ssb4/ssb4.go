// Package ssb4 serves Super Smash Bros. for Wii U and for Nintendo 3DS's
// DataStore (DataStore_SSB4, protocol 115, the game's CrossProtocol):
// profiles, play reports and the world's totals, replays (the server asks for
// them, stores them as DataStore objects and hands them out to watch),
// fighting power scores and their charts, and the application configuration,
// on top of the generic DataStore service, which it extends through the
// service's seams without editing it (docs/nex.md "Adding a game variant").
//
// The wire formats are generated from nex/desc/defs/datastore_ssb4.nexd
// (nex/protocols/datastoressb4); the behaviour is this package's, backed by a
// Store (internal/sqlstore's SSB4 on SQLite and PostgreSQL) and by the
// DataStore service's objects.
package ssb4

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sb "github.com/gamewire/gamewire/nex/protocols/datastoressb4"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Methods are the DataStore_SSB4 methods the Server answers: the nine the
// game's Pretendo Network servers answer (45, 46, 48, 50, 51, 53, 54, 58,
// 62), those that give them their data (47 SendPlayReport, 52
// CompletePostReplay, 60 PostFightingPowerScore) or read it another way (49
// GetReplayMeta, 59 SearchReplay, 61 GetFightingPowerChart), and shared
// data (55 PreparePostSharedData, 56 CompletePostSharedData, 57
// SearchSharedData, 63 ReportSharedData). Not answered: 64
// GetSharedDataMeta, whose parameter is not public.
var Methods = []uint32{
	sb.DataStoreSSB4MethodPostProfile, sb.DataStoreSSB4MethodGetProfiles,
	sb.DataStoreSSB4MethodSendPlayReport, sb.DataStoreSSB4MethodGetWorldPlayReport,
	sb.DataStoreSSB4MethodGetReplayMeta, sb.DataStoreSSB4MethodPrepareGetReplay,
	sb.DataStoreSSB4MethodPreparePostReplay, sb.DataStoreSSB4MethodCompletePostReplay,
	sb.DataStoreSSB4MethodCheckPostReplay, sb.DataStoreSSB4MethodGetNextReplay,
	sb.DataStoreSSB4MethodGetApplicationConfig, sb.DataStoreSSB4MethodSearchReplay,
	sb.DataStoreSSB4MethodPostFightingPowerScore, sb.DataStoreSSB4MethodGetFightingPowerChart,
	sb.DataStoreSSB4MethodGetFightingPowerChartAll,
	sb.DataStoreSSB4MethodPreparePostSharedData, sb.DataStoreSSB4MethodCompletePostSharedData,
	sb.DataStoreSSB4MethodSearchSharedData, sb.DataStoreSSB4MethodReportSharedData,
}

// Variant is the variant's name in the games table (nex/games): serve --game
// with a title that has it (Super Smash Bros. for Wii U and for Nintendo
// 3DS; by name, id or key) serves this package.
const Variant = "DataStore (Super Smash Bros. 4)"

// Limits on what a client sets.
const (
	// MaxBatch bounds the items of one call (pids, scores).
	MaxBatch = datastore.MaxBatch
	// MaxProfileSize bounds a profile.
	MaxProfileSize = 8 << 10
	// MaxPlayReport bounds the values of a play report.
	MaxPlayReport = 1024
	// MaxReplayPlayers bounds a replay's players and its winners (the
	// game's matches have at most 8 fighters).
	MaxReplayPlayers = 8
	// MaxReplayScan bounds the replays GetNextReplay looks at in one call.
	MaxReplayScan = 1000
	// MaxSharedDataFighters bounds the fighters shared data shows.
	MaxSharedDataFighters = 64
	// MaxCommentSize bounds shared data's comment (bytes).
	MaxCommentSize = 1024
)

// Defaults of Config.
const (
	// DefaultReplayDataType is the DataStore data type of replay objects
	// (gamewire's choice: the game's own is not public).
	DefaultReplayDataType = 0x5350
	// DefaultReplayPeriod is how many days a replay object lives.
	DefaultReplayPeriod = 7
	// DefaultMaxReplays is how many replays' descriptions are kept (the
	// oldest go first).
	DefaultMaxReplays = 10000
	// DefaultReplaysPerHour is how many replays of a mode the server asks
	// for per hour (CheckPostReplay's is_required).
	DefaultReplaysPerHour = 60
	// DefaultChartPoints is how many points a fighting power chart has.
	DefaultChartPoints = 100
	// DefaultSharedDataType is the DataStore data type of shared data
	// objects (gamewire's choice: the game's own is not public).
	DefaultSharedDataType = 0x5344
	// DefaultSharedDataPeriod is how many days shared data lives.
	DefaultSharedDataPeriod = 365
	// DefaultReportThreshold is how many players' reports hide shared data
	// from searches.
	DefaultReportThreshold = 5
)

// Config is what an operator sets per server (serve --game-config, JSON).
type Config struct {
	// ApplicationConfig is what GetApplicationConfig answers per
	// application id.
	ApplicationConfig map[uint32][]string `json:"application_config,omitempty"`
	// DefaultApplicationConfig is its answer for an application id not in
	// ApplicationConfig; nil: DefaultApplicationConfig.
	DefaultApplicationConfig []string `json:"default_application_config,omitempty"`
	// ReplayDataType: default DefaultReplayDataType.
	ReplayDataType uint16 `json:"replay_data_type,omitempty"`
	// ReplayPeriod (days, 1-365): default DefaultReplayPeriod.
	ReplayPeriod uint16 `json:"replay_period,omitempty"`
	// MaxReplays: default DefaultMaxReplays.
	MaxReplays int `json:"max_replays,omitempty"`
	// ReplaysPerHour: default DefaultReplaysPerHour.
	ReplaysPerHour int `json:"replays_per_hour,omitempty"`
	// ChartPoints: default DefaultChartPoints.
	ChartPoints int `json:"chart_points,omitempty"`
	// FightingPowerModes is how many modes GetFightingPowerChartAll answers
	// at least (charts of modes 0 to FightingPowerModes-1, more when a
	// higher mode has scores).
	FightingPowerModes int `json:"fighting_power_modes,omitempty"`
	// SharedDataType: default DefaultSharedDataType.
	SharedDataType uint16 `json:"shared_data_type,omitempty"`
	// SharedDataPeriod (days, 1-365): default DefaultSharedDataPeriod.
	SharedDataPeriod uint16 `json:"shared_data_period,omitempty"`
	// ReportThreshold: default DefaultReportThreshold.
	ReportThreshold int `json:"report_threshold,omitempty"`
}

// DefaultApplicationConfig is GetApplicationConfig's answer when the
// operator configured none: the 54 values the game's Pretendo Network
// servers answer for every application id (read as facts:
// github.com/PretendoNetwork/super-smash-bros-wiiu and super-smash-bros-3ds,
// the same list; the sixth, 1, is the one their comment says enables
// tournaments with 2).
var DefaultApplicationConfig = []string{
	"1000000", "100", "0", "0", "1", "1", "0", "30", "50", "45",
	"30", "5", "8", "50", "87", "50", "85", "60", "60", "120",
	"600", "5", "600", "0", "45", "40", "100", "100", "82", "100",
	"95", "79", "10", "4", "2", "2", "2", "1", "5", "1",
	"2", "30", "9", "15", "0", "10", "10", "0", "0", "0",
	"7", "20", "0", "0",
}

// Check reports a Config an operator wrote that cannot work.
func (c Config) Check() error {
	switch {
	case c.ReplayPeriod > 365:
		return fmt.Errorf("ssb4: replay_period %d days (at most 365)", c.ReplayPeriod)
	case c.SharedDataPeriod > 365:
		return fmt.Errorf("ssb4: shared_data_period %d days (at most 365)", c.SharedDataPeriod)
	case c.MaxReplays < 0 || c.ReplaysPerHour < 0 || c.ChartPoints < 0 || c.FightingPowerModes < 0 || c.ReportThreshold < 0:
		return errors.New("ssb4: max_replays, replays_per_hour, chart_points, fighting_power_modes and report_threshold cannot be negative")
	case c.ChartPoints > 10000:
		return fmt.Errorf("ssb4: chart_points %d (at most 10000)", c.ChartPoints)
	case c.FightingPowerModes > 256:
		return fmt.Errorf("ssb4: fighting_power_modes %d (modes are 0 to 255)", c.FightingPowerModes)
	}
	return nil
}

// Server answers DataStore_SSB4: the methods the game declares (adds to
// DataStore or replaces) itself, the Methods with its Store and the DataStore
// service's objects and the others Core::NotImplemented, and the inherited
// ones through the DataStore service. Register it with Register.
type Server struct {
	// DataStore is the DataStore service whose objects the replays are;
	// required.
	DataStore *datastore.Server
	// Store keeps the game's additions; required.
	Store Store
	// Config: see Config.
	Config Config
	// Now returns the time; default time.Now.
	Now func() time.Time

	once    sync.Once
	own     sb.DataStoreSSB4OwnHandler // handler{s}, made once: no allocation per call
	initErr error
}

func (s *Server) init() error {
	s.once.Do(func() {
		s.own = handler{s: s}
		switch {
		case s.DataStore == nil:
			s.initErr = errors.New("ssb4: Server.DataStore is required")
		case s.Store == nil:
			s.initErr = errors.New("ssb4: Server.Store is required")
		default:
			s.initErr = s.Config.Check()
		}
	})
	return s.initErr
}

// Register registers s on mux for every method DataStore_SSB4 declares
// (datastoressb4.RegisterDataStoreSSB4Own). The DataStore service answers the
// rest of protocol 115 on the same Mux: nex.Server registers it when its
// DataStore is s.DataStore, else mux.HandleProtocol(115, s.DataStore). The
// variant's methods take precedence, whichever is registered first, so a
// method the game replaces (45, 46) never reaches the service.
func Register(mux *rmc.Mux, s *Server) error {
	if err := s.init(); err != nil {
		return err
	}
	sb.RegisterDataStoreSSB4Own(mux, s)
	return nil
}

// ServeRMC implements rmc.Handler for the whole protocol: the methods
// DataStore_SSB4 declares through the generated datastoressb4.ServeDataStoreSSB4Own,
// within the DataStore service's checks and error mapping, and the
// inherited ones through the DataStore service.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if err := s.init(); err != nil {
		return out, err
	}
	return s.DataStore.ServeVariant(ctx, c, out, s.serveOwn)
}

// serveOwn is the generated dispatch of the methods DataStore_SSB4 declares;
// the Store's ErrNotFound is DataStore::NotFound.
func (s *Server) serveOwn(ctx context.Context, c *rmc.Call, out []byte) ([]byte, bool, error) {
	out, handled, err := sb.ServeDataStoreSSB4Own(s.own, ctx, c, out)
	if errors.Is(err, ErrNotFound) && !errors.Is(err, types.DataStoreNotFound) {
		err = fmt.Errorf("%w: %w", types.DataStoreNotFound, err)
	}
	return out, handled, err
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// handler is the Server as the generated DataStoreSSB4OwnHandler; the
// methods not in Methods answer Core::NotImplemented.
type handler struct {
	sb.UnimplementedDataStoreSSB4
	s *Server
}

// ParamError answers parameters that do not decode with
// DataStore::InvalidArgument (rmc.ParamErrorer).
func (handler) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %w", types.DataStoreInvalidArgument, err)
}

func tooMany(what string, n, max int) error {
	if n > max {
		return fmt.Errorf("%w: %d %s (at most %d)", types.DataStoreInvalidArgument, n, what, max)
	}
	return nil
}

// PostProfile stores the caller's profile, replacing the one it had.
func (h handler) PostProfile(ctx context.Context, c *rmc.Call, p sb.DataStorePostProfileParam) error {
	if err := tooMany("profile bytes", len(p.Profile), MaxProfileSize); err != nil {
		return err
	}
	return h.s.Store.PostProfile(ctx, c.Peer.PID, p.Profile, h.s.now())
}

// GetProfiles answers the profiles of the players that posted one, in the
// order asked (a player without one is left out, one named twice answered
// once).
func (h handler) GetProfiles(ctx context.Context, c *rmc.Call, pids []types.PID) ([]sb.DataStoreProfileInfo, error) {
	if err := tooMany("pids", len(pids), MaxBatch); err != nil {
		return nil, err
	}
	ps, err := h.s.Store.Profiles(ctx, pids)
	if err != nil {
		return nil, err
	}
	out := make([]sb.DataStoreProfileInfo, len(ps))
	for i, p := range ps {
		out[i] = sb.DataStoreProfileInfo{PID: p.PID, Profile: p.Profile}
	}
	return out, nil
}

// SendPlayReport records the caller's play report, replacing the one it
// sent before: the world's report counts each player's latest once.
func (h handler) SendPlayReport(ctx context.Context, c *rmc.Call, report []int32) error {
	if err := tooMany("play report values", len(report), MaxPlayReport); err != nil {
		return err
	}
	return h.s.Store.SendPlayReport(ctx, c.Peer.PID, report, h.s.now())
}

// GetWorldPlayReport answers the world's play report: per value, the sum
// over the players' latest reports.
func (h handler) GetWorldPlayReport(ctx context.Context, c *rmc.Call) ([]int64, error) {
	return h.s.Store.WorldPlayReport(ctx)
}

func replayWire(r Replay) sb.DataStoreReplayMetaInfo {
	m := sb.DataStoreReplayMetaInfo{ReplayID: r.ID, Size: r.Size, Mode: r.Mode, Style: r.Style, Rule: r.Rule, Stage: r.Stage,
		ReplayType: r.ReplayType, Players: make([]sb.DataStoreReplayPlayer, len(r.Players)), Winners: append([]uint32{}, r.Winners...)}
	for i, p := range r.Players {
		m.Players[i] = sb.DataStoreReplayPlayer(p)
	}
	return m
}

// readableReplay returns replay id when its object is one the caller may
// read (uploaded, not expired): DataStore::NotFound for a replay never
// posted or dropped.
func (h handler) readableReplay(ctx context.Context, c *rmc.Call, id uint64) (Replay, datastore.Object, error) {
	r, err := h.s.Store.Replay(ctx, id)
	if err != nil {
		return Replay{}, datastore.Object{}, err
	}
	o, err := h.s.DataStore.ReadableObject(ctx, c, id, 0)
	return r, o, err
}

// GetReplayMeta answers a replay's description. The meta type is not
// interpreted (its meaning is not public).
func (h handler) GetReplayMeta(ctx context.Context, c *rmc.Call, p sb.DataStoreGetReplayMetaParam) (sb.DataStoreReplayMetaInfo, error) {
	r, _, err := h.readableReplay(ctx, c, p.ReplayID)
	if err != nil {
		return sb.DataStoreReplayMetaInfo{}, err
	}
	return replayWire(r), nil
}

// PrepareGetReplay answers where a replay is downloaded (the DataStore
// service's download place; it counts a reference).
func (h handler) PrepareGetReplay(ctx context.Context, c *rmc.Call, p sb.DataStorePrepareGetReplayParam) (ds.DataStoreReqGetInfo, error) {
	_, o, err := h.readableReplay(ctx, c, p.ReplayID)
	if err != nil {
		return ds.DataStoreReqGetInfo{}, err
	}
	return h.s.DataStore.GetInfo(ctx, c, o)
}

// checkReplay bounds a replay's players and winners.
func checkReplay(p sb.DataStorePreparePostReplayParam) error {
	if err := tooMany("replay players", len(p.Players), MaxReplayPlayers); err != nil {
		return err
	}
	return tooMany("replay winners", len(p.Winners), MaxReplayPlayers)
}

// PreparePostReplay starts a replay's upload: a public DataStore object of
// Config.ReplayDataType living Config.ReplayPeriod days, owned by the
// caller, prepared by the service (which bounds its size), whose data id is
// the replay id. It answers the object's parameters and where to upload.
func (h handler) PreparePostReplay(ctx context.Context, c *rmc.Call, p sb.DataStorePreparePostReplayParam) (ds.DataStorePreparePostParam, ds.DataStoreReqPostInfo, error) {
	if err := checkReplay(p); err != nil {
		return ds.DataStorePreparePostParam{}, ds.DataStoreReqPostInfo{}, err
	}
	post := newPost(p.Size, "replay", cmp.Or(h.s.Config.ReplayDataType, DefaultReplayDataType),
		cmp.Or(h.s.Config.ReplayPeriod, DefaultReplayPeriod), nil, p.ExtraData)
	info, err := h.prepare(ctx, c, post, func(id uint64) error {
		r := Replay{ID: id, Poster: c.Peer.PID, Size: p.Size, Mode: p.Mode, Style: p.Style, Rule: p.Rule, Stage: p.Stage,
			ReplayType: p.ReplayType, CompetitionID: p.CompetitionID, Score: p.Score, KeyVersion: p.KeyVersion,
			Players: make([]ReplayPlayer, len(p.Players)), Winners: append([]uint32{}, p.Winners...), Posted: h.s.now()}
		for i, pl := range p.Players {
			r.Players[i] = ReplayPlayer(pl)
		}
		return h.s.Store.AddReplay(ctx, r, cmp.Or(h.s.Config.MaxReplays, DefaultMaxReplays))
	})
	return post, info, err
}

// CompletePostReplay ends a replay's upload: the DataStore service's
// CompletePostObject of the replay's object (the replay id and the
// completion's data id must agree). Only then is the replay handed out.
func (h handler) CompletePostReplay(ctx context.Context, c *rmc.Call, p sb.DataStoreCompletePostReplayParam) error {
	return h.complete(ctx, c, "replay", p.ReplayID, p.CompleteParam, func() error {
		_, err := h.s.Store.Replay(ctx, p.ReplayID)
		return err
	})
}

// CheckPostReplay answers whether the server wants the match posted and
// whether it is rare. Rare: a fighter of it is in none of the replays of its
// mode posted in the last hour. Required: a match with players whose mode
// got fewer than Config.ReplaysPerHour replays in the last hour, or a rare
// one.
func (h handler) CheckPostReplay(ctx context.Context, c *rmc.Call, p sb.DataStorePreparePostReplayParam) (bool, bool, error) {
	if err := checkReplay(p); err != nil {
		return false, false, err
	}
	if len(p.Players) == 0 {
		return false, false, nil
	}
	n, fighters, err := h.s.Store.ReplayStats(ctx, p.Mode, h.s.now().Add(-time.Hour))
	if err != nil {
		return false, false, err
	}
	rare := false
	for _, pl := range p.Players {
		if _, found := slices.BinarySearch(fighters, pl.Fighter); !found {
			rare = true
		}
	}
	return rare || n < cmp.Or(h.s.Config.ReplaysPerHour, DefaultReplaysPerHour), rare, nil
}

// watchable reports whether viewer may be handed r: its object is
// readable (uploaded, not expired) and viewer neither posted nor played it.
func (h handler) watchable(ctx context.Context, c *rmc.Call, r Replay) (bool, error) {
	if r.Poster == c.Peer.PID {
		return false, nil
	}
	for _, p := range r.Players {
		if types.PID(p.PrincipalID) == c.Peer.PID {
			return false, nil
		}
	}
	_, err := h.s.DataStore.ReadableObject(ctx, c, r.ID, 0)
	if err == nil {
		return true, nil
	}
	if datastore.ItemResult(err) == types.DataStoreUnknown {
		return false, err
	}
	return false, nil
}

// nextAfter finds the first replay after id the caller may watch, looking at
// up to MaxReplayScan; below bounds the ids (0: none).
func (h handler) nextAfter(ctx context.Context, c *rmc.Call, after, below uint64) (Replay, bool, error) {
	for scanned := 0; scanned < MaxReplayScan; {
		rs, err := h.s.Store.ReplaysAfter(ctx, after, MaxBatch)
		if err != nil || len(rs) == 0 {
			return Replay{}, false, err
		}
		for _, r := range rs {
			if below != 0 && r.ID >= below {
				return Replay{}, false, nil
			}
			ok, err := h.watchable(ctx, c, r)
			if err != nil || ok {
				return r, ok, err
			}
			after = r.ID
		}
		scanned += len(rs)
	}
	return Replay{}, false, nil
}

// GetNextReplay answers the next replay for the caller to watch: the replays
// form a queue in the order they were posted and each viewer has a place in
// it; the next one after that place the caller neither posted nor played in
// (uploaded, not expired) is answered and becomes the caller's place. At the
// end the queue starts over. DataStore::NotFound when there is none.
func (h handler) GetNextReplay(ctx context.Context, c *rmc.Call) (sb.DataStoreReplayMetaInfo, error) {
	cursor, err := h.s.Store.ReplayCursor(ctx, c.Peer.PID)
	if err != nil {
		return sb.DataStoreReplayMetaInfo{}, err
	}
	r, ok, err := h.nextAfter(ctx, c, cursor, 0)
	if err == nil && !ok && cursor != 0 {
		r, ok, err = h.nextAfter(ctx, c, 0, cursor+1)
	}
	if err != nil {
		return sb.DataStoreReplayMetaInfo{}, err
	}
	if !ok {
		return sb.DataStoreReplayMetaInfo{}, fmt.Errorf("%w: no replay to watch", types.DataStoreNotFound)
	}
	if err := h.s.Store.SetReplayCursor(ctx, c.Peer.PID, r.ID); err != nil {
		return sb.DataStoreReplayMetaInfo{}, err
	}
	return replayWire(r), nil
}

// SearchReplay answers the replays of a mode and style with a player
// playing the fighter, newest first, in the range asked (at most
// datastore.MaxSearchResults); replays not uploaded or expired are left out
// of the range's page.
func (h handler) SearchReplay(ctx context.Context, c *rmc.Call, p sb.DataStoreSearchReplayParam) ([]sb.DataStorePrepareGetReplayParam, error) {
	size := min(p.ResultRange.Size, datastore.MaxSearchResults)
	rs, err := h.s.Store.SearchReplays(ctx, ReplayQuery{Mode: p.Mode, Style: p.Style, Fighter: p.Fighter, Offset: p.ResultRange.Offset, Limit: size})
	if err != nil {
		return nil, err
	}
	out := []sb.DataStorePrepareGetReplayParam{}
	for _, r := range rs {
		if _, err := h.s.DataStore.ReadableObject(ctx, c, r.ID, 0); err != nil {
			if datastore.ItemResult(err) == types.DataStoreUnknown {
				return nil, err
			}
			continue
		}
		out = append(out, sb.DataStorePrepareGetReplayParam{ReplayID: r.ID, ExtraData: []string{}})
	}
	return out, nil
}

// GetApplicationConfig answers the operator's configuration of the
// application (Config.ApplicationConfig, else
// Config.DefaultApplicationConfig, else DefaultApplicationConfig).
func (h handler) GetApplicationConfig(ctx context.Context, c *rmc.Call, id uint32) ([]string, error) {
	cfg, ok := h.s.Config.ApplicationConfig[id]
	switch {
	case ok:
	case h.s.Config.DefaultApplicationConfig != nil:
		cfg = h.s.Config.DefaultApplicationConfig
	default:
		cfg = DefaultApplicationConfig
	}
	return append([]string{}, cfg...), nil
}

// PostFightingPowerScore records the caller's fighting power in each
// score's mode, replacing the one it had there. is_world_high_score is not
// kept: the charts are computed from the scores.
func (h handler) PostFightingPowerScore(ctx context.Context, c *rmc.Call, params []sb.DataStorePostFightingPowerScoreParam) error {
	if err := tooMany("scores", len(params), MaxBatch); err != nil {
		return err
	}
	scores := make([]FightingPower, len(params))
	for i, p := range params {
		scores[i] = FightingPower{Mode: p.Mode, Score: p.Score}
	}
	return h.s.Store.PostFightingPower(ctx, c.Peer.PID, scores, h.s.now())
}

func chartWire(points []ChartPoint) []sb.DataStoreFightingPowerScore {
	out := make([]sb.DataStoreFightingPowerScore, len(points))
	for i, p := range points {
		out[i] = sb.DataStoreFightingPowerScore(p)
	}
	return out
}

// GetFightingPowerChart answers how many players have a fighting power in
// the mode and its chart: Config.ChartPoints points, best first, each a
// score at an evenly spaced place of the ranking and the rank it reaches.
func (h handler) GetFightingPowerChart(ctx context.Context, c *rmc.Call, mode uint8) (uint32, []sb.DataStoreFightingPowerScore, error) {
	n, points, err := h.s.Store.FightingPowerChart(ctx, mode, cmp.Or(h.s.Config.ChartPoints, DefaultChartPoints))
	return n, chartWire(points), err
}

// GetFightingPowerChartAll answers the charts of modes 0 to the highest with
// a score (at least Config.FightingPowerModes), in mode order: a mode
// without scores has an empty chart.
func (h handler) GetFightingPowerChartAll(ctx context.Context, c *rmc.Call) ([]sb.DataStoreFightingPowerChart, error) {
	modes, err := h.s.Store.FightingPowerModes(ctx)
	if err != nil {
		return nil, err
	}
	n := h.s.Config.FightingPowerModes
	if len(modes) > 0 {
		n = max(n, int(modes[len(modes)-1])+1)
	}
	out := make([]sb.DataStoreFightingPowerChart, n)
	for m := range n {
		users, chart, err := h.GetFightingPowerChart(ctx, c, uint8(m))
		if err != nil {
			return nil, err
		}
		out[m] = sb.DataStoreFightingPowerChart{UserNum: users, Chart: chart}
	}
	return out, nil
}
