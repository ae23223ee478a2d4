// Package smm serves Super Mario Maker's DataStore (DataStore_SMM, protocol
// 115, the game's DataStoreCustomProtocol): the methods its Pretendo Network
// server answers (custom rankings, buffer queues, course records, attached
// files, course searches, application configuration, deletion reasons), on
// top of the generic DataStore service, which it extends through the
// service's seams without editing it (docs/nex.md "Adding a game variant").
//
// The wire formats are generated from nex/desc/defs/datastore_smm.nexd
// (nex/protocols/datastoresmm); the behaviour is this package's, backed by a
// Store (internal/sqlstore's SMM on SQLite and PostgreSQL) and by the
// DataStore service's objects.
package smm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/protocols/common"
	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	sm "github.com/gamewire/gamewire/nex/protocols/datastoresmm"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// Methods are the DataStore_SMM methods the Server answers: the 18 Super
// Mario Maker's Pretendo server answers, SetDeletionReason and
// ResetRateCustomRankingCounter, their counterparts, and GetMetaByOwnerId
// (as Badge Arcade's server answers it).
var Methods = []uint32{
	sm.DataStoreSMMMethodGetObjectInfos, sm.DataStoreSMMMethodGetMetaByOwnerId, sm.DataStoreSMMMethodRateCustomRanking,
	sm.DataStoreSMMMethodGetCustomRankingByDataId, sm.DataStoreSMMMethodAddToBufferQueues,
	sm.DataStoreSMMMethodGetBufferQueue, sm.DataStoreSMMMethodCompleteAttachFile,
	sm.DataStoreSMMMethodPrepareAttachFile, sm.DataStoreSMMMethodGetApplicationConfig,
	sm.DataStoreSMMMethodFollowingsLatestCourseSearchObject, sm.DataStoreSMMMethodRecommendedCourseSearchObject,
	sm.DataStoreSMMMethodSuggestedCourseSearchObject, sm.DataStoreSMMMethodUploadCourseRecord,
	sm.DataStoreSMMMethodGetCourseRecord, sm.DataStoreSMMMethodGetApplicationConfigString,
	sm.DataStoreSMMMethodGetDeletionReason, sm.DataStoreSMMMethodGetMetasWithCourseRecord,
	sm.DataStoreSMMMethodCheckRateCustomRankingCounter, sm.DataStoreSMMMethodCTRPickUpCourseSearchObject,
	sm.DataStoreSMMMethodSetDeletionReason, sm.DataStoreSMMMethodResetRateCustomRankingCounter,
}

// GameName is the title's name in the games table (nex/games): serve --game
// with it (or its id or key) serves this package.
const GameName = "Super Mario Maker"

// Limits.
const (
	// MaxBatch bounds the items of one call (data ids, params, buffers).
	MaxBatch = datastore.MaxBatch
	// MaxBufferSize bounds one buffer of a buffer queue.
	MaxBufferSize = 4096
	// DefaultBufferQueueLength is how many buffers a queue keeps (the oldest
	// go first).
	DefaultBufferQueueLength = 100
	// DefaultRateThreshold is how many custom ranking ratings (stars) a
	// player may give per application until ResetRateCustomRankingCounter:
	// CheckRateCustomRankingCounter answers below it.
	DefaultRateThreshold = 100
	// StarsApplication is the custom ranking of a course's stars, the one
	// the course searches order by.
	StarsApplication = 0
)

// Config is what an operator sets per server.
type Config struct {
	// ApplicationConfig is what GetApplicationConfig answers per table id;
	// nil: DefaultApplicationConfig. A table not in it answers an empty list.
	ApplicationConfig map[uint32][]uint32
	// ApplicationConfigString is what GetApplicationConfigString answers per
	// table id; a table not in it answers an empty list.
	ApplicationConfigString map[uint32][]string
	// RateThreshold: default DefaultRateThreshold.
	RateThreshold uint32
	// BufferQueueLength: default DefaultBufferQueueLength.
	BufferQueueLength int
	// PickUpCourses are the courses CTRPickUpCourseSearchObject answers (the
	// courses picked for the 3DS version), in order; empty: the best starred.
	PickUpCourses []uint64
}

// DefaultApplicationConfig is GetApplicationConfig's answer when the
// operator configured none: table 0, the game's limits, as the official
// server sent them (the values Pretendo Network's server replays, read as
// facts: github.com/PretendoNetwork/super-mario-maker), with 100 course
// uploads; table 1, the official players' PIDs, only the Quazal
// Rendez-Vous account (2) since the official players' accounts do not
// exist here; table 2 as the official server sent it.
var DefaultApplicationConfig = map[uint32][]uint32{
	0: {0x01000000, 0x32000000, 0x96000000, 0x2c010000, 0xf4010000, 0x20030000, 0x14050000, 0xd0070000, 0xb80b0000, 0x88130000,
		100, 0x14000000, 0x1e000000, 0x28000000, 0x32000000, 0x3c000000, 0x46000000, 0x50000000, 0x5a000000, 0x64000000,
		0x23000000, 0x4b000000, 0x23000000, 0x4b000000, 0x32000000, 0x00000000, 0x03000000, 0x03000000, 0x64000000, 0x06000000,
		0x01000000, 0x60000000, 0x05000000, 0x60000000, 0x00000000, 0xe4070000, 0x01000000, 0x01000000, 0x0c000000, 0x00000000},
	1: {2},
	2: {0xdf070000, 0x0c000000, 0x16000000, 0x05000000, 0x00000000},
}

// Server answers DataStore_SMM: the methods the game declares (adds to
// DataStore or replaces) itself, the Methods with its Store and the DataStore
// service's objects and the others Core::NotImplemented, and the inherited
// ones through the DataStore service. Register it with Register.
type Server struct {
	// DataStore is the DataStore service whose objects the courses are;
	// required.
	DataStore *datastore.Server
	// Store keeps the game's additions; required.
	Store Store
	// Config: see Config.
	Config Config
	// Now returns the time; default time.Now.
	Now func() time.Time

	once    sync.Once
	own     sm.DataStoreSMMOwnHandler // handler{s}, made once: no allocation per call
	initErr error
}

func (s *Server) init() error {
	s.once.Do(func() {
		s.own = handler{s: s}
		switch {
		case s.DataStore == nil:
			s.initErr = errors.New("smm: Server.DataStore is required")
		case s.Store == nil:
			s.initErr = errors.New("smm: Server.Store is required")
		}
	})
	return s.initErr
}

// Register registers s on mux for every method DataStore_SMM declares
// (datastoresmm.RegisterDataStoreSMMOwn). The DataStore service answers the
// rest of protocol 115 on the same Mux: nex.Server registers it when its
// DataStore is s.DataStore, else mux.HandleProtocol(115, s.DataStore). The
// variant's methods take precedence, whichever is registered first, so a
// method the game replaces (45, 46) never reaches the service.
func Register(mux *rmc.Mux, s *Server) error {
	if err := s.init(); err != nil {
		return err
	}
	sm.RegisterDataStoreSMMOwn(mux, s)
	return nil
}

// ServeRMC implements rmc.Handler for the whole protocol: the methods
// DataStore_SMM declares through the generated datastoresmm.ServeDataStoreSMMOwn,
// within the DataStore service's checks and error mapping, and the
// inherited ones through the DataStore service (datastore.Server.ServeVariant).
func (s *Server) ServeRMC(ctx context.Context, c *rmc.Call, out []byte) ([]byte, error) {
	if err := s.init(); err != nil {
		return out, err
	}
	return s.DataStore.ServeVariant(ctx, c, out, s.serveOwn)
}

// serveOwn is the generated dispatch of the methods DataStore_SMM declares.
func (s *Server) serveOwn(ctx context.Context, c *rmc.Call, out []byte) ([]byte, bool, error) {
	return sm.ServeDataStoreSMMOwn(s.own, ctx, c, out)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// handler is the Server as the generated DataStoreSMMOwnHandler; the
// methods not in Methods answer Core::NotImplemented.
type handler struct {
	sm.UnimplementedDataStoreSMM
	s *Server
}

// ParamError answers parameters that do not decode with
// DataStore::InvalidArgument (rmc.ParamErrorer).
func (handler) ParamError(method uint32, err error) error {
	return fmt.Errorf("%w: %w", types.DataStoreInvalidArgument, err)
}

func batch(what string, n int) error {
	if n > MaxBatch {
		return fmt.Errorf("%w: %d %s in one call (at most %d)", types.DataStoreInvalidArgument, n, what, MaxBatch)
	}
	return nil
}

// GetObjectInfos answers where each object's body is downloaded: the caller
// must be able to read every one (else the first failure fails the call).
func (h handler) GetObjectInfos(ctx context.Context, c *rmc.Call, ids []uint64) ([]sm.DataStoreFileServerObjectInfo, error) {
	if err := batch("objects", len(ids)); err != nil {
		return nil, err
	}
	out := make([]sm.DataStoreFileServerObjectInfo, len(ids))
	for i, id := range ids {
		o, err := h.s.DataStore.ReadableObject(ctx, c, id, 0)
		if err != nil {
			return nil, fmt.Errorf("object %d (item %d): %w", id, i, err)
		}
		info, err := h.s.DataStore.GetInfo(ctx, c, o)
		if err != nil {
			return nil, fmt.Errorf("object %d (item %d): %w", id, i, err)
		}
		out[i] = sm.DataStoreFileServerObjectInfo{DataID: id, GetInfo: info}
	}
	return out, nil
}

// GetMetaByOwnerId answers the courses of the owners (and data types, when
// given) the caller may read, by data id, a page of them and whether more
// follow: the DataStore service's MetasByOwner.
func (h handler) GetMetaByOwnerId(ctx context.Context, c *rmc.Call, p sm.DataStoreGetMetaByOwnerIdParam) ([]ds.DataStoreMetaInfo, bool, error) {
	return h.s.DataStore.MetasByOwner(ctx, c, p.OwnerIDs, p.DataTypes, p.ResultOption, p.ResultRange)
}

// RateCustomRanking adds each param's score to its object's score in its
// ranking (a course's stars: application 0) and counts the ratings against
// the caller's counter; every object must be readable by the caller. The
// period is not kept: scores do not expire.
func (h handler) RateCustomRanking(ctx context.Context, c *rmc.Call, params []sm.DataStoreRateCustomRankingParam) error {
	if err := batch("ratings", len(params)); err != nil {
		return err
	}
	byApp := map[uint32][]Rate{}
	var apps []uint32
	for i, p := range params {
		if _, err := h.s.DataStore.ReadableObject(ctx, c, p.DataID, 0); err != nil {
			return fmt.Errorf("object %d (item %d): %w", p.DataID, i, err)
		}
		if _, ok := byApp[p.ApplicationID]; !ok {
			apps = append(apps, p.ApplicationID)
		}
		byApp[p.ApplicationID] = append(byApp[p.ApplicationID], Rate{DataID: p.DataID, Score: p.Score})
	}
	for _, app := range apps {
		if err := h.s.Store.RateCustomRanking(ctx, c.Peer.PID, app, byApp[app]); err != nil {
			return err
		}
	}
	return nil
}

// GetCustomRankingByDataId answers each object's place and score in the
// ranking, with its meta info as result_option asks; an object the caller
// cannot read gets an empty entry and its error in results.
func (h handler) GetCustomRankingByDataId(ctx context.Context, c *rmc.Call, p sm.DataStoreGetCustomRankingByDataIdParam) ([]sm.DataStoreCustomRankingResult, []types.Result, error) {
	if err := batch("objects", len(p.DataIDList)); err != nil {
		return nil, nil, err
	}
	ranked, err := h.s.Store.CustomRanking(ctx, p.ApplicationID, p.DataIDList)
	if err != nil {
		return nil, nil, err
	}
	out := make([]sm.DataStoreCustomRankingResult, len(p.DataIDList))
	results := make([]types.Result, len(p.DataIDList))
	for i, id := range p.DataIDList {
		o, err := h.s.DataStore.ReadableObject(ctx, c, id, 0)
		results[i] = datastore.ItemResult(err)
		if results[i] == types.DataStoreUnknown {
			return nil, nil, err
		}
		if err == nil {
			out[i] = sm.DataStoreCustomRankingResult{Order: ranked[i].Order, Score: ranked[i].Score, MetaInfo: datastore.WireMetaInfo(o, p.ResultOption)}
		}
	}
	return out, results, nil
}

// queue checks a buffer queue's object: the caller must be able to read it.
func (h handler) queue(ctx context.Context, c *rmc.Call, p sm.BufferQueueParam) (QueueID, error) {
	if _, err := h.s.DataStore.ReadableObject(ctx, c, p.DataID, 0); err != nil {
		return QueueID{}, err
	}
	return QueueID{DataID: p.DataID, Slot: p.Slot}, nil
}

// AddToBufferQueues appends each buffer to its queue, one result each.
func (h handler) AddToBufferQueues(ctx context.Context, c *rmc.Call, params []sm.BufferQueueParam, buffers [][]byte) ([]types.Result, error) {
	if err := batch("queues", len(params)); err != nil {
		return nil, err
	}
	if len(params) != len(buffers) {
		return nil, fmt.Errorf("%w: %d queues and %d buffers", types.DataStoreInvalidArgument, len(params), len(buffers))
	}
	keep := cmp.Or(h.s.Config.BufferQueueLength, DefaultBufferQueueLength)
	results := make([]types.Result, len(params))
	for i, p := range params {
		q, err := h.queue(ctx, c, p)
		if err == nil && len(buffers[i]) > MaxBufferSize {
			err = fmt.Errorf("%w: buffer %d is %d bytes (at most %d)", types.DataStoreInvalidArgument, i, len(buffers[i]), MaxBufferSize)
		}
		if err == nil {
			err = h.s.Store.AddToBufferQueue(ctx, q, buffers[i], keep)
		}
		results[i] = datastore.ItemResult(err)
		if results[i] == types.DataStoreUnknown {
			return nil, err
		}
	}
	return results, nil
}

// GetBufferQueue answers a queue's buffers, oldest first.
func (h handler) GetBufferQueue(ctx context.Context, c *rmc.Call, p sm.BufferQueueParam) ([][]byte, error) {
	q, err := h.queue(ctx, c, p)
	if err != nil {
		return nil, err
	}
	return h.s.Store.BufferQueue(ctx, q)
}

// PrepareAttachFile starts the upload of an object attached to
// refer_data_id, which the caller must be able to read: the DataStore
// service's PreparePostObject with the reference set.
func (h handler) PrepareAttachFile(ctx context.Context, c *rmc.Call, p sm.DataStoreAttachFileParam) (ds.DataStoreReqPostInfo, error) {
	if p.ReferDataID > 0xFFFFFFFF {
		return ds.DataStoreReqPostInfo{}, fmt.Errorf("%w: refer_data_id %d does not fit the object's 32-bit reference", types.DataStoreInvalidArgument, p.ReferDataID)
	}
	if _, err := h.s.DataStore.ReadableObject(ctx, c, p.ReferDataID, 0); err != nil {
		return ds.DataStoreReqPostInfo{}, fmt.Errorf("refer_data_id: %w", err)
	}
	base, err := h.s.DataStore.Handler()
	if err != nil {
		return ds.DataStoreReqPostInfo{}, err
	}
	post := p.PostParam
	post.ReferDataID = uint32(p.ReferDataID)
	return base.PreparePostObject(ctx, c, post)
}

// CompleteAttachFile completes the upload (the DataStore service's
// CompletePostObject) and answers where the file is downloaded.
func (h handler) CompleteAttachFile(ctx context.Context, c *rmc.Call, p ds.DataStoreCompletePostParam) (string, error) {
	base, err := h.s.DataStore.Handler()
	if err != nil {
		return "", err
	}
	if err := base.CompletePostObject(ctx, c, p); err != nil {
		return "", err
	}
	if !p.Success {
		return "", nil
	}
	o, err := h.s.DataStore.ReadableObject(ctx, c, p.DataID, 0)
	if err != nil {
		return "", err
	}
	info, err := h.s.DataStore.GetInfo(ctx, c, o)
	return info.URL, err
}

// GetApplicationConfig answers the operator's table id
// (Config.ApplicationConfig, else DefaultApplicationConfig); an unknown
// table is empty.
func (h handler) GetApplicationConfig(ctx context.Context, c *rmc.Call, id uint32) ([]uint32, error) {
	tables := h.s.Config.ApplicationConfig
	if tables == nil {
		tables = DefaultApplicationConfig
	}
	return append([]uint32{}, tables[id]...), nil
}

// GetApplicationConfigString answers the operator's string table id.
func (h handler) GetApplicationConfigString(ctx context.Context, c *rmc.Call, id uint32) ([]string, error) {
	return append([]string{}, h.s.Config.ApplicationConfigString[id]...), nil
}

// results turns objects into ranking results: place in the list, stars,
// meta info.
func (h handler) results(ctx context.Context, objs []datastore.Object, option uint8) ([]sm.DataStoreCustomRankingResult, error) {
	ids := make([]uint64, len(objs))
	for i, o := range objs {
		ids[i] = o.DataID
	}
	ranked, err := h.s.Store.CustomRanking(ctx, StarsApplication, ids)
	if err != nil {
		return nil, err
	}
	out := make([]sm.DataStoreCustomRankingResult, len(objs))
	for i, o := range objs {
		out[i] = sm.DataStoreCustomRankingResult{Order: uint32(i + 1), Score: ranked[i].Score, MetaInfo: datastore.WireMetaInfo(o, option)}
	}
	return out, nil
}

// FollowingsLatestCourseSearchObject answers the newest courses of the
// owners the search names (the players the caller follows), as the
// DataStore search selects them (data type, range, readable by the caller).
func (h handler) FollowingsLatestCourseSearchObject(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam, extra []string) ([]sm.DataStoreCustomRankingResult, error) {
	if len(p.OwnerIDs) == 0 {
		return []sm.DataStoreCustomRankingResult{}, nil
	}
	p.ResultOrderColumn, p.ResultOrder = uint8(datastore.OrderCreated), 1
	objs, err := h.s.DataStore.SearchObjects(ctx, c, p)
	if err != nil {
		return nil, err
	}
	return h.results(ctx, objs, p.ResultOption)
}

// starred answers the best starred courses the caller can read, the
// search's data type (when it names one) and range applying.
func (h handler) starred(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam, ids []uint64) ([]sm.DataStoreCustomRankingResult, error) {
	size := min(p.ResultRange.Size, datastore.MaxSearchResults)
	if ids == nil {
		top, err := h.s.Store.TopCustomRanking(ctx, StarsApplication, p.ResultRange.Offset, size*2+10)
		if err != nil {
			return nil, err
		}
		for _, r := range top {
			ids = append(ids, r.DataID)
		}
	}
	var objs []datastore.Object
	for _, id := range ids {
		if uint32(len(objs)) == size {
			break
		}
		o, err := h.s.DataStore.ReadableObject(ctx, c, id, 0)
		if err != nil {
			if datastore.ItemResult(err) == types.DataStoreUnknown {
				return nil, err
			}
			continue // deleted, expired or private: not listed
		}
		if p.DataType != datastore.AnyDataType && o.DataType != p.DataType {
			continue
		}
		objs = append(objs, o)
	}
	return h.results(ctx, objs, p.ResultOption)
}

// RecommendedCourseSearchObject answers the best starred courses.
func (h handler) RecommendedCourseSearchObject(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam, extra []string) ([]sm.DataStoreCustomRankingResult, error) {
	return h.starred(ctx, c, p, nil)
}

// CTRPickUpCourseSearchObject answers the operator's pick-up courses
// (Config.PickUpCourses), else the best starred.
func (h handler) CTRPickUpCourseSearchObject(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam, extra []string) ([]sm.DataStoreCustomRankingResult, error) {
	return h.starred(ctx, c, p, h.s.Config.PickUpCourses)
}

// SuggestedCourseSearchObject answers courses of others the search selects,
// in random order: up to the range's length, drawn from the newest
// MaxSearchResults.
func (h handler) SuggestedCourseSearchObject(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam, extra []string) ([]sm.DataStoreCustomRankingResult, error) {
	size := min(p.ResultRange.Size, datastore.MaxSearchResults)
	q := p
	q.ResultRange = common.ResultRange{Offset: 0, Size: datastore.MaxSearchResults}
	q.ResultOrderColumn, q.ResultOrder = uint8(datastore.OrderCreated), 1
	objs, err := h.s.DataStore.SearchObjects(ctx, c, q)
	if err != nil {
		return nil, err
	}
	others := objs[:0]
	for _, o := range objs {
		if o.Owner != c.Peer.PID {
			others = append(others, o)
		}
	}
	rand.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	return h.results(ctx, others[:min(uint32(len(others)), size)], p.ResultOption)
}

// UploadCourseRecord records the caller's clear of a course the caller can
// read.
func (h handler) UploadCourseRecord(ctx context.Context, c *rmc.Call, p sm.DataStoreUploadCourseRecordParam) error {
	if _, err := h.s.DataStore.ReadableObject(ctx, c, p.DataID, 0); err != nil {
		return err
	}
	_, err := h.s.Store.UploadCourseRecord(ctx, p.DataID, p.Slot, c.Peer.PID, p.Score, h.s.now())
	return err
}

func recordWire(r CourseRecord) sm.DataStoreGetCourseRecordResult {
	return sm.DataStoreGetCourseRecordResult{DataID: r.DataID, Slot: r.Slot, FirstPID: uint32(r.FirstPID), BestPID: uint32(r.BestPID),
		BestScore: r.BestScore, CreatedTime: types.DateTimeFromTime(r.Created), UpdatedTime: types.DateTimeFromTime(r.Updated)}
}

// courseRecord reads a course's record (DataStore::NotFound without one).
func (h handler) courseRecord(ctx context.Context, c *rmc.Call, p sm.DataStoreGetCourseRecordParam) (sm.DataStoreGetCourseRecordResult, error) {
	if _, err := h.s.DataStore.ReadableObject(ctx, c, p.DataID, 0); err != nil {
		return sm.DataStoreGetCourseRecordResult{}, err
	}
	r, err := h.s.Store.CourseRecord(ctx, p.DataID, p.Slot)
	if errors.Is(err, ErrNotFound) {
		return sm.DataStoreGetCourseRecordResult{}, fmt.Errorf("%w: %w", types.DataStoreNotFound, err)
	}
	return recordWire(r), err
}

// GetCourseRecord answers a course's record.
func (h handler) GetCourseRecord(ctx context.Context, c *rmc.Call, p sm.DataStoreGetCourseRecordParam) (sm.DataStoreGetCourseRecordResult, error) {
	return h.courseRecord(ctx, c, p)
}

// GetMetasWithCourseRecord answers each course's meta info (as meta_param's
// result_option asks) and record; a course the caller cannot read, or
// without a record, gets empty entries and its error in results.
func (h handler) GetMetasWithCourseRecord(ctx context.Context, c *rmc.Call, params []sm.DataStoreGetCourseRecordParam, mp ds.DataStoreGetMetaParam) ([]ds.DataStoreMetaInfo, []sm.DataStoreGetCourseRecordResult, []types.Result, error) {
	if err := batch("courses", len(params)); err != nil {
		return nil, nil, nil, err
	}
	infos := make([]ds.DataStoreMetaInfo, len(params))
	recs := make([]sm.DataStoreGetCourseRecordResult, len(params))
	results := make([]types.Result, len(params))
	for i, p := range params {
		o, err := h.s.DataStore.ReadableObject(ctx, c, p.DataID, mp.AccessPassword)
		if err == nil {
			infos[i] = datastore.WireMetaInfo(o, mp.ResultOption)
			recs[i], err = h.courseRecord(ctx, c, p)
		}
		results[i] = datastore.ItemResult(err)
		if results[i] == types.DataStoreUnknown {
			return nil, nil, nil, err
		}
	}
	return infos, recs, results, nil
}

// GetDeletionReason answers the recorded reason of each object, 0 where
// none is (SetDeletionReason).
func (h handler) GetDeletionReason(ctx context.Context, c *rmc.Call, ids []uint64) ([]uint32, error) {
	if err := batch("objects", len(ids)); err != nil {
		return nil, err
	}
	return h.s.Store.DeletionReasons(ctx, ids)
}

// SetDeletionReason records why objects the caller may change (their
// owner, in this server) are deleted.
func (h handler) SetDeletionReason(ctx context.Context, c *rmc.Call, ids []uint64, reason uint32) error {
	if err := batch("objects", len(ids)); err != nil {
		return err
	}
	for i, id := range ids {
		if _, err := h.s.DataStore.UpdatableObject(ctx, c, id, 0); err != nil {
			return fmt.Errorf("object %d (item %d): %w", id, i, err)
		}
	}
	return h.s.Store.SetDeletionReason(ctx, ids, reason)
}

// CheckRateCustomRankingCounter answers whether the caller's ratings in the
// application are below Config.RateThreshold.
func (h handler) CheckRateCustomRankingCounter(ctx context.Context, c *rmc.Call, app uint32) (bool, error) {
	n, err := h.s.Store.RateCount(ctx, c.Peer.PID, app)
	return n < cmp.Or(h.s.Config.RateThreshold, DefaultRateThreshold), err
}

// ResetRateCustomRankingCounter sets the caller's count to 0.
func (h handler) ResetRateCustomRankingCounter(ctx context.Context, c *rmc.Call, app uint32) error {
	return h.s.Store.ResetRateCount(ctx, c.Peer.PID, app)
}
