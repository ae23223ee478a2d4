// Package ranking implements the Ranking protocol (protocol 112, "Ranking (112)"
// in PretendoNetwork/nintendo-wiki, docs/nex/protocols/ranking): score upload
// with groups and param, deletion, every ranking mode the page gives (global,
// around one's own entry, own entry only), approximate order, statistics, the
// cached top-X variants, common data and attribute changes. State lives in a
// Store (accounts.Store's Ranking on SQLite).
//
// The page leaves the meaning of a score's orderBy and updateMode open; the
// choices here (docs/nex.md, "Ranking") are: orderBy 0 ranks higher scores
// first and 1 lower scores first, fixed per category by its declaration or by
// its first upload; updateMode 0 keeps the better of the stored and the new
// score, 1 always replaces. Ties: standard order (1224) gives equal scores the
// same rank; ordinal order (1234) breaks them by who reached the score first.
package ranking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/friends"
	rk "github.com/gamewire/gamewire/nex/protocols/ranking"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// ProtocolID is the Ranking protocol's id.
const ProtocolID uint16 = 112

// Method ids of the Ranking protocol.
const (
	MethodUploadScore              uint32 = 1
	MethodDeleteScore              uint32 = 2
	MethodDeleteAllScores          uint32 = 3
	MethodUploadCommonData         uint32 = 4
	MethodDeleteCommonData         uint32 = 5
	MethodGetCommonData            uint32 = 6
	MethodChangeAttributes         uint32 = 7
	MethodChangeAllAttributes      uint32 = 8
	MethodGetRanking               uint32 = 9
	MethodGetApproxOrder           uint32 = 10
	MethodGetStats                 uint32 = 11
	MethodGetRankingByPIDList      uint32 = 12
	MethodGetRankingByUniqueIDList uint32 = 13
	MethodGetCachedTopXRanking     uint32 = 14
	MethodGetCachedTopXRankings    uint32 = 15
)

// Ranking modes ("Ranking Mode" on the page).
const (
	ModeGlobal            uint8 = 0 // the top entries, only the first 1000 downloadable
	ModeGlobalAroundSelf  uint8 = 1 // global ranking around one's own entry
	ModeFriendsAroundSelf uint8 = 2 // friends' ranking around one's own entry
	ModeSelf              uint8 = 4 // one's own entry only
)

// Rank calculations ("Rank Calculation").
const (
	OrderCalcStandard uint8 = 0 // 1224: equal scores share a rank
	OrderCalcOrdinal  uint8 = 1 // 1234: every entry its own rank
)

// orderBy and updateMode of a RankingScoreData (judgement calls, see the
// package comment).
const (
	OrderDescending uint8 = 0 // higher scores rank first
	OrderAscending  uint8 = 1 // lower scores rank first (times)
	UpdateNormal    uint8 = 0 // keep the better score
	UpdateDeleteOld uint8 = 1 // always replace the stored score
)

// Stat flags of GetStats ("Flags"), in the order of the RankingStats list.
const (
	StatCount   uint32 = 0x01
	StatTotal   uint32 = 0x02
	StatLowest  uint32 = 0x04
	StatHighest uint32 = 0x08
	StatAverage uint32 = 0x10
)

// Modification flags of RankingChangeAttributesParam (judgement call: bit 0
// replaces the groups, bit 1 the param).
const (
	ChangeGroups uint8 = 0x01
	ChangeParam  uint8 = 0x02
)

// Limits of the Server.
const (
	// GlobalLimit is how far down a global ranking can be read ("only the top
	// 1000 entries can be downloaded").
	GlobalLimit = 1000
	// DefaultMaxCommonData is the default of Server.MaxCommonData.
	DefaultMaxCommonData = 4096
	// MaxGroups is the most group bytes a score carries.
	MaxGroups = 8
	// cachedTTL is how long a cached top-X ranking is declared valid.
	cachedTTL = 5 * time.Minute
)

// Server answers the Ranking protocol from a Store. Register it with
// mux.HandleProtocol(ranking.ProtocolID, srv).
type Server struct {
	// Store keeps the rankings; required.
	Store Store
	// Categories, when not nil, are the only categories that exist: scores for
	// others are refused with Ranking::NotFound. Nil lets any category come
	// into existence with its first upload, ordered as that upload says.
	Categories []Category
	// MaxCommonData caps UploadCommonData (Ranking::InvalidDataSize beyond);
	// default DefaultMaxCommonData.
	MaxCommonData int
	// NEXVersion is the game's NEX version as major*10000+minor*100+patch
	// (30600 for 3.6.0) for connections whose settings carry none
	// (types.Settings.Version, which serve sets for every connection):
	// RankingRankData carries updateTime (revision 1) from 3.6.0 on. With
	// neither, the version is what the settings imply (3.5 with structure
	// headers, types.Settings.NEXVersion): no updateTime.
	NEXVersion int
	// Friends, when set, answers the friends ranking mode
	// (ModeFriendsAroundSelf) from the players' friend lists (nex/friends);
	// without it that mode is Ranking::NotImplemented.
	Friends friends.Friends
	// Now returns the time; default time.Now.
	Now func() time.Time
	// Logger receives store failures.
	Logger *slog.Logger
	// Quota bounds each player's categories (RankingCategories) and common
	// data entries (CommonData); beyond, an upload is refused with
	// Ranking::RegistrationError (nex/quota). The zero Quota limits
	// nothing. The check precedes the write, so a player's uploads in
	// flight at once may each take the last place.
	Quota quota.Quota

	once     sync.Once
	initErr  error
	declared map[uint32]Category
	cats     sync.Map // uint32 -> Category
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Init declares s.Categories in the store. ServeRMC calls it on first use;
// call it at start to see a store failure early.
func (s *Server) Init(ctx context.Context) error {
	s.once.Do(func() {
		if s.Store == nil {
			s.initErr = errors.New("ranking: Server.Store is required")
			return
		}
		if s.Categories != nil {
			s.declared = make(map[uint32]Category, len(s.Categories))
		}
		for _, c := range s.Categories {
			s.declared[c.ID] = c
			if err := s.Store.AddCategory(ctx, c); err != nil {
				s.initErr = fmt.Errorf("ranking: declare category %d: %w", c.ID, err)
				return
			}
		}
	})
	return s.initErr
}

// category returns a category that exists, or Ranking::NotFound.
func (s *Server) category(ctx context.Context, id uint32) (Category, error) {
	if v, ok := s.cats.Load(id); ok {
		return v.(Category), nil
	}
	c, err := s.Store.Category(ctx, id)
	if errors.Is(err, ErrNoCategory) {
		return Category{}, fmt.Errorf("%w: category %d does not exist", types.RankingNotFound, id)
	}
	if err != nil {
		return Category{}, err
	}
	if s.declared != nil {
		if _, ok := s.declared[id]; !ok {
			return Category{}, fmt.Errorf("%w: category %d is not declared", types.RankingNotFound, id)
		}
	}
	s.cats.Store(id, c)
	return c, nil
}

// categoryForUpload returns the category a score goes to, creating it when
// categories are open.
func (s *Server) categoryForUpload(ctx context.Context, sd ScoreData) (Category, error) {
	c, err := s.category(ctx, sd.Category)
	if err == nil || s.declared != nil || !errors.Is(err, types.RankingNotFound) {
		return c, err
	}
	c = Category{ID: sd.Category, Descending: sd.OrderBy == OrderDescending}
	if err := s.Store.AddCategory(ctx, c); err != nil {
		return Category{}, err
	}
	s.cats.Delete(sd.Category)
	return s.category(ctx, sd.Category)
}

// ServeRMC implements rmc.Handler: the generated dispatcher
// (nex/protocols/ranking) decodes the call at the connection's NEX version and
// runs the Server's method (handler.go); failures are mapped by Result.
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	c, err := s.PrepareCall(ctx, c)
	if err != nil {
		return out, err
	}
	out, err = rk.ServeRanking(handler{s}, ctx, c, out)
	if err != nil {
		return out, s.result(ctx, c.Method, err)
	}
	return out, nil
}

// result turns a failure into what the client is sent: Results as they are,
// store errors as Ranking::NotFound or Ranking::Unknown (logged).
func (s *Server) result(ctx context.Context, method uint32, err error) error {
	var res types.Result
	switch {
	case errors.As(err, &res):
		return err
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNoCategory):
		return fmt.Errorf("%w: %w", types.RankingNotFound, err)
	}
	if s.Logger != nil {
		s.Logger.LogAttrs(ctx, slog.LevelWarn, "nex ranking: store failure", slog.Uint64("method", uint64(method)), slog.String("error", err.Error()))
	}
	return fmt.Errorf("%w: %w", types.RankingUnknown, err)
}

func (s *Server) uploadScore(ctx context.Context, pid types.PID, uid uint64, sd ScoreData) error {
	if sd.OrderBy > OrderAscending {
		return fmt.Errorf("%w: orderBy %d (0 or 1)", types.RankingInvalidArgument, sd.OrderBy)
	}
	if sd.UpdateMode > UpdateDeleteOld {
		return fmt.Errorf("%w: updateMode %d (0 or 1)", types.RankingInvalidArgument, sd.UpdateMode)
	}
	if len(sd.Groups) > MaxGroups {
		return fmt.Errorf("%w: %d groups (at most %d)", types.RankingInvalidArgument, len(sd.Groups), MaxGroups)
	}
	if n := s.Quota.RankingCategories; n > 0 {
		u, err := s.Store.Usage(ctx, pid, sd.Category, uid)
		if err != nil {
			return err
		}
		if !u.InCategory && u.Categories >= n {
			return fmt.Errorf("%w: PID %d has scores in %d categories (quota %d)", quota.ResultRankingRegistrationError, pid, u.Categories, n)
		}
	}
	c, err := s.categoryForUpload(ctx, sd)
	if err != nil {
		return err
	}
	_, err = s.Store.UploadScore(ctx, c, pid, uid, sd, s.now())
	return err
}

func (s *Server) deleteScore(ctx context.Context, pid types.PID, uid uint64, cat uint32) error {
	if _, err := s.category(ctx, cat); err != nil {
		return err
	}
	ok, err := s.Store.DeleteScore(ctx, pid, uid, cat)
	if err == nil && !ok {
		err = fmt.Errorf("%w: no score in category %d", types.RankingNotFound, cat)
	}
	return err
}

func (s *Server) uploadCommonData(ctx context.Context, pid types.PID, uid uint64, data []byte) error {
	max := s.MaxCommonData
	if max == 0 {
		max = DefaultMaxCommonData
	}
	if len(data) > max {
		return fmt.Errorf("%w: common data of %d bytes (at most %d)", types.RankingInvalidDataSize, len(data), max)
	}
	if n := s.Quota.CommonData; n > 0 {
		u, err := s.Store.Usage(ctx, pid, 0, uid)
		if err != nil {
			return err
		}
		if !u.HasCommonData && u.CommonData >= n {
			return fmt.Errorf("%w: PID %d has %d common data entries (quota %d)", quota.ResultRankingRegistrationError, pid, u.CommonData, n)
		}
	}
	return s.Store.PutCommonData(ctx, pid, uid, data, s.now())
}

func (s *Server) changeAttributes(ctx context.Context, pid types.PID, uid uint64, cat uint32, all bool, p ChangeAttributesParam) error {
	if p.Flag&^(ChangeGroups|ChangeParam) != 0 {
		return fmt.Errorf("%w: modificationFlag 0x%02x", types.RankingInvalidArgument, p.Flag)
	}
	if len(p.Groups) > MaxGroups {
		return fmt.Errorf("%w: %d groups (at most %d)", types.RankingInvalidArgument, len(p.Groups), MaxGroups)
	}
	if !all {
		if _, err := s.category(ctx, cat); err != nil {
			return err
		}
	}
	n, err := s.Store.ChangeAttributes(ctx, pid, uid, cat, all, p)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: no score to change", types.RankingNotFound)
	}
	return err
}

// query checks an order param and makes the Store query it describes.
func (s *Server) query(ctx context.Context, cat uint32, op OrderParam) (Query, error) {
	if op.OrderCalc > OrderCalcOrdinal {
		return Query{}, fmt.Errorf("%w: orderCalculation %d", types.RankingInvalidArgument, op.OrderCalc)
	}
	if op.GroupIndex != NoGroup && op.GroupIndex > 1 {
		return Query{}, fmt.Errorf("%w: groupIndex %d (0, 1 or 255)", types.RankingInvalidArgument, op.GroupIndex)
	}
	c, err := s.category(ctx, cat)
	if err != nil {
		return Query{}, err
	}
	return Query{Category: c, GroupIndex: op.GroupIndex, GroupNum: op.GroupNum}, nil
}

// GetRanking answers GetRanking for pid (the entry "self" is pid's under uid).
func (s *Server) GetRanking(ctx context.Context, mode uint8, cat uint32, op OrderParam, uid uint64, pid types.PID) (Result, error) {
	q, err := s.query(ctx, cat, op)
	if err != nil {
		return Result{}, err
	}
	var offset, limit uint32
	switch mode {
	case ModeGlobal:
		offset, limit = op.Offset, uint32(op.Length)
		if offset >= GlobalLimit {
			limit = 0
		} else if offset+limit > GlobalLimit {
			limit = GlobalLimit - offset
		}
	case ModeGlobalAroundSelf:
		_, pos, err := s.Store.Find(ctx, q, pid, uid)
		if err != nil {
			return Result{}, err
		}
		limit = uint32(op.Length)
		if half := limit / 2; pos > half {
			offset = pos - half
		}
	case ModeSelf:
		_, pos, err := s.Store.Find(ctx, q, pid, uid)
		if err != nil {
			return Result{}, err
		}
		offset, limit = pos, 1
	case ModeFriendsAroundSelf:
		if s.Friends == nil {
			return Result{}, fmt.Errorf("%w: friends rankings need friend lists, which this server has not", types.RankingNotImplemented)
		}
		return s.friendsRanking(ctx, q, op, uid, pid)
	default:
		return Result{}, fmt.Errorf("%w: ranking mode %d", types.RankingInvalidArgument, mode)
	}
	res := Result{SinceTime: types.DateTimeFromTime(s.now())}
	if res.TotalCount, err = s.Store.Count(ctx, q); err != nil {
		return Result{}, err
	}
	if limit == 0 {
		return res, nil
	}
	entries, err := s.Store.List(ctx, q, offset, limit)
	if err != nil {
		return Result{}, err
	}
	res.Data, err = s.ranked(ctx, q, op.OrderCalc, offset, entries)
	return res, err
}

// friendsRanking is the friends mode: pid's and its friends' entries of q,
// ranked among themselves, the op.Length of them around pid's own (from the
// first when pid has none).
func (s *Server) friendsRanking(ctx context.Context, q Query, op OrderParam, uid uint64, pid types.PID) (Result, error) {
	fs, err := s.Friends.FriendsOf(ctx, pid)
	if err != nil {
		return Result{}, err
	}
	type found struct {
		e   Entry
		pos uint32
	}
	var all []found
	self := -1
	for _, p := range append([]types.PID{pid}, fs...) {
		e, pos, err := s.Store.Find(ctx, q, p, uid)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return Result{}, err
		}
		all = append(all, found{e, pos})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].pos < all[j].pos })
	res := Result{SinceTime: types.DateTimeFromTime(s.now()), TotalCount: uint32(len(all))}
	ranks := make([]uint32, len(all))
	for i, f := range all {
		switch {
		case i > 0 && op.OrderCalc == OrderCalcStandard && f.e.Score == all[i-1].e.Score:
			ranks[i] = ranks[i-1]
		default:
			ranks[i] = uint32(i) + 1
		}
		if f.e.PID == pid {
			self = i
		}
	}
	start, n := 0, int(op.Length)
	if half := n / 2; self > half {
		start = self - half
	}
	for i := start; i < len(all) && i < start+n; i++ {
		res.Data = append(res.Data, rankData(all[i].e, ranks[i]))
	}
	return res, nil
}

// ranked numbers entries read from position offset of q.
func (s *Server) ranked(ctx context.Context, q Query, calc uint8, offset uint32, entries []Entry) ([]RankData, error) {
	out := make([]RankData, len(entries))
	var rank uint32
	for i, e := range entries {
		switch {
		case calc == OrderCalcOrdinal:
			rank = offset + uint32(i) + 1
		case i > 0 && e.Score == entries[i-1].Score:
			// Standard order: a tie keeps the rank of the entry before.
		case i == 0 && offset > 0:
			better, err := s.Store.CountBetter(ctx, q, e.Score)
			if err != nil {
				return nil, err
			}
			rank = better + 1
		default:
			rank = offset + uint32(i) + 1
		}
		out[i] = rankData(e, rank)
	}
	return out, nil
}

func rankData(e Entry, rank uint32) RankData {
	return RankData{PID: e.PID, UniqueID: e.UniqueID, Order: rank, Category: e.Category, Score: e.Score,
		Groups: e.Groups, Param: e.Param, CommonData: e.CommonData, UpdateTime: types.DateTimeFromTime(e.Updated)}
}

// rankOf is the rank of an entry at position pos: its position + 1 in ordinal
// order, one more than the better scores in standard order.
func (s *Server) rankOf(ctx context.Context, q Query, calc uint8, e Entry, pos uint32) (uint32, error) {
	if calc == OrderCalcOrdinal {
		return pos + 1, nil
	}
	better, err := s.Store.CountBetter(ctx, q, e.Score)
	return better + 1, err
}

func (s *Server) approxOrder(ctx context.Context, cat uint32, op OrderParam, score uint32) (uint32, error) {
	q, err := s.query(ctx, cat, op)
	if err != nil {
		return 0, err
	}
	better, err := s.Store.CountBetter(ctx, q, score)
	return better + 1, err
}

func (s *Server) stats(ctx context.Context, cat uint32, op OrderParam, flags uint32) (Stats, error) {
	if flags&^(StatCount|StatTotal|StatLowest|StatHighest|StatAverage) != 0 {
		return Stats{}, fmt.Errorf("%w: stat flags 0x%x", types.RankingInvalidArgument, flags)
	}
	q, err := s.query(ctx, cat, op)
	if err != nil {
		return Stats{}, err
	}
	st, err := s.Store.Stats(ctx, q)
	if err != nil {
		return Stats{}, err
	}
	for i := range st {
		if flags&(1<<i) == 0 {
			st[i] = 0
		}
	}
	return st, nil
}

// byList answers GetRankingByPIDList (the entries of pids under uid) and
// GetRankingByUniqueIdList (the entry of any player under each unique id), in
// rank order; ids without an entry are left out.
func (s *Server) byList(ctx context.Context, cat uint32, op OrderParam, pids []types.PID, uid uint64, uids []uint64) (Result, error) {
	q, err := s.query(ctx, cat, op)
	if err != nil {
		return Result{}, err
	}
	res := Result{SinceTime: types.DateTimeFromTime(s.now())}
	if res.TotalCount, err = s.Store.Count(ctx, q); err != nil {
		return Result{}, err
	}
	type found struct {
		e   Entry
		pos uint32
	}
	var all []found
	add := func(e Entry, pos uint32, err error) error {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err == nil {
			all = append(all, found{e, pos})
		}
		return err
	}
	for _, p := range pids {
		if err := add(s.Store.Find(ctx, q, p, uid)); err != nil {
			return Result{}, err
		}
	}
	for _, u := range uids {
		if err := add(s.Store.FindUnique(ctx, q, u)); err != nil {
			return Result{}, err
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].pos < all[j].pos })
	for _, f := range all {
		rank, err := s.rankOf(ctx, q, op.OrderCalc, f.e, f.pos)
		if err != nil {
			return Result{}, err
		}
		res.Data = append(res.Data, rankData(f.e, rank))
	}
	return res, nil
}

func (s *Server) cachedTopX(ctx context.Context, cat uint32, op OrderParam) (CachedResult, error) {
	res, err := s.GetRanking(ctx, ModeGlobal, cat, op, 0, 0)
	if err != nil {
		return CachedResult{}, err
	}
	now := s.now()
	return CachedResult{Result: res, CreatedTime: types.DateTimeFromTime(now),
		ExpiredTime: types.DateTimeFromTime(now.Add(cachedTTL)), MaxLength: op.Length}, nil
}
