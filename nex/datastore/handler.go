package datastore

import (
	"context"

	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/rmc"
	"github.com/gamewire/gamewire/nex/types"
)

// handler is the Server as the generated ds.DataStoreHandler: every method of
// the protocol with its parameters decoded (by the connection's NEX version)
// and its results encoded by nex/protocols/datastore. Each converts the wire
// types to the package's (wire.go) and runs the method's logic.
type handler struct{ s *Server }

var _ ds.DataStoreHandler = handler{}

// ParamError answers parameters that do not decode with
// DataStore::InvalidArgument (rmc.ParamErrorer).
func (handler) ParamError(method uint32, err error) error { return badArg(err) }

func (h handler) PrepareGetObjectV1(ctx context.Context, c *rmc.Call, p ds.DataStorePrepareGetParamV1) (ds.DataStoreReqGetInfoV1, error) {
	info, err := h.s.call(ctx, c).prepareGet(PrepareGetParam{DataID: uint64(p.DataID), LockID: p.LockID,
		PersistenceTarget: PersistenceTarget{SlotID: NoPersistenceSlot}})
	return info.wireV1(), err
}

func (h handler) PreparePostObjectV1(ctx context.Context, c *rmc.Call, p ds.DataStorePreparePostParamV1) (ds.DataStoreReqPostInfoV1, error) {
	info, err := h.s.call(ctx, c).preparePost(preparePostFromV1(p))
	return info.wireV1(), err
}

func (h handler) CompletePostObjectV1(ctx context.Context, c *rmc.Call, p ds.DataStoreCompletePostParamV1) error {
	return h.s.call(ctx, c).completePost(uint64(p.DataID), p.Success)
}

func (h handler) DeleteObject(ctx context.Context, c *rmc.Call, p ds.DataStoreDeleteParam) error {
	return h.s.call(ctx, c).delete(DeleteParam{DataID: p.DataID, UpdatePassword: p.UpdatePassword})
}

func (h handler) DeleteObjects(ctx context.Context, c *rmc.Call, ps []ds.DataStoreDeleteParam, transactional bool) ([]types.Result, error) {
	return h.s.call(ctx, c).deleteObjects(wireList(ps, func(p ds.DataStoreDeleteParam) DeleteParam {
		return DeleteParam{DataID: p.DataID, UpdatePassword: p.UpdatePassword}
	}), transactional)
}

func (h handler) ChangeMetaV1(ctx context.Context, c *rmc.Call, p ds.DataStoreChangeMetaParamV1) error {
	return h.s.call(ctx, c).changeMeta(changeMetaFromV1(p))
}

func (h handler) ChangeMetasV1(ctx context.Context, c *rmc.Call, ids []uint64, ps []ds.DataStoreChangeMetaParamV1, transactional bool) ([]types.Result, error) {
	return h.s.call(ctx, c).changeMetas(ids, wireList(ps, changeMetaFromV1), transactional)
}

func (h handler) GetMeta(ctx context.Context, c *rmc.Call, p ds.DataStoreGetMetaParam) (ds.DataStoreMetaInfo, error) {
	mi, err := h.s.call(ctx, c).meta(getMetaFrom(p))
	return mi.wire(), err
}

func (h handler) GetMetas(ctx context.Context, c *rmc.Call, ids []uint64, p ds.DataStoreGetMetaParam) ([]ds.DataStoreMetaInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).getMetas(ids, getMetaFrom(p))
	return metaInfosWire(infos), results, err
}

func (h handler) PrepareUpdateObject(ctx context.Context, c *rmc.Call, p ds.DataStorePrepareUpdateParam) (ds.DataStoreReqUpdateInfo, error) {
	info, err := h.s.call(ctx, c).prepareUpdate(p.DataID, p.Size, p.UpdatePassword)
	return info.wire(), err
}

func (h handler) CompleteUpdateObject(ctx context.Context, c *rmc.Call, p ds.DataStoreCompleteUpdateParam) error {
	return h.s.call(ctx, c).completeUpdate(p.DataID, p.Version, p.Success)
}

func (h handler) SearchObject(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam) (ds.DataStoreSearchResult, error) {
	res, err := h.s.call(ctx, c).search(searchFrom(p))
	return res.wire(), err
}

// SearchObjectLight answers as SearchObject does.
func (h handler) SearchObjectLight(ctx context.Context, c *rmc.Call, p ds.DataStoreSearchParam) (ds.DataStoreSearchResult, error) {
	return h.SearchObject(ctx, c, p)
}

// GetNotificationUrl signs a fresh URL; the previous one the client sends is
// not needed.
func (h handler) GetNotificationUrl(ctx context.Context, c *rmc.Call, _ ds.DataStoreGetNotificationUrlParam) (ds.DataStoreReqGetNotificationUrlInfo, error) {
	return h.s.call(ctx, c).notificationURL().wire(), nil
}

func (h handler) GetNewArrivedNotificationsV1(ctx context.Context, c *rmc.Call, p ds.DataStoreGetNewArrivedNotificationsParam) ([]ds.DataStoreNotificationV1, bool, error) {
	ns, more, err := h.s.call(ctx, c).newArrivedNotifications(p.LastNotificationID, p.Limit, true)
	return wireList(ns, func(n Notification) ds.DataStoreNotificationV1 {
		return ds.DataStoreNotificationV1{NotificationID: n.ID, DataID: uint32(n.DataID)}
	}), more, err
}

func (h handler) GetNewArrivedNotifications(ctx context.Context, c *rmc.Call, p ds.DataStoreGetNewArrivedNotificationsParam) ([]ds.DataStoreNotification, bool, error) {
	ns, more, err := h.s.call(ctx, c).newArrivedNotifications(p.LastNotificationID, p.Limit, false)
	return wireList(ns, func(n Notification) ds.DataStoreNotification {
		return ds.DataStoreNotification{NotificationID: n.ID, DataID: n.DataID}
	}), more, err
}

func (h handler) RateObject(ctx context.Context, c *rmc.Call, t ds.DataStoreRatingTarget, p ds.DataStoreRateObjectParam, fetch bool) (ds.DataStoreRatingInfo, error) {
	info, err := h.s.call(ctx, c).rateObject(ratingTargetFrom(t), rateParamFrom(p), fetch)
	return info.wire(), err
}

func (h handler) GetRating(ctx context.Context, c *rmc.Call, t ds.DataStoreRatingTarget, pw uint64) (ds.DataStoreRatingInfo, error) {
	info, err := h.s.call(ctx, c).getRating(ratingTargetFrom(t), pw)
	return info.wire(), err
}

func (h handler) GetRatings(ctx context.Context, c *rmc.Call, ids []uint64, pw uint64) ([][]ds.DataStoreRatingInfoWithSlot, []types.Result, error) {
	ratings, results, err := h.s.call(ctx, c).getRatings(ids, pw)
	return wireList(ratings, func(rs []RatingInfo) []ds.DataStoreRatingInfoWithSlot {
		if rs == nil {
			return nil
		}
		return wireList(rs, RatingInfo.wireWithSlot)
	}), results, err
}

func (h handler) ResetRating(ctx context.Context, c *rmc.Call, t ds.DataStoreRatingTarget, pw uint64) error {
	return h.s.call(ctx, c).resetRating(ratingTargetFrom(t), pw)
}

func (h handler) ResetRatings(ctx context.Context, c *rmc.Call, ids []uint64, transactional bool) ([]types.Result, error) {
	return h.s.call(ctx, c).resetRatings(ids, transactional)
}

func (h handler) GetSpecificMetaV1(ctx context.Context, c *rmc.Call, p ds.DataStoreGetSpecificMetaParamV1) ([]ds.DataStoreSpecificMetaInfoV1, error) {
	ids := make([]uint64, len(p.DataIDs))
	for i, id := range p.DataIDs {
		ids[i] = uint64(id)
	}
	objs, err := h.s.call(ctx, c).specificMeta(ids)
	return wireList(objs, func(o Object) ds.DataStoreSpecificMetaInfoV1 {
		return ds.DataStoreSpecificMetaInfoV1{DataID: uint32(o.DataID), OwnerID: o.Owner, Size: o.Size, DataType: o.DataType,
			Version: uint16(o.Version)}
	}), err
}

func (h handler) GetSpecificMeta(ctx context.Context, c *rmc.Call, p ds.DataStoreGetSpecificMetaParam) ([]ds.DataStoreSpecificMetaInfo, error) {
	objs, err := h.s.call(ctx, c).specificMeta(p.DataIDs)
	return wireList(objs, func(o Object) ds.DataStoreSpecificMetaInfo {
		return ds.DataStoreSpecificMetaInfo{DataID: o.DataID, OwnerID: o.Owner, Size: o.Size, DataType: o.DataType, Version: o.Version}
	}), err
}

func (h handler) PostMetaBinary(ctx context.Context, c *rmc.Call, p ds.DataStorePreparePostParam) (uint64, error) {
	return h.s.call(ctx, c).postMetaBinary(preparePostFrom(p))
}

func (h handler) TouchObject(ctx context.Context, c *rmc.Call, p ds.DataStoreTouchObjectParam) error {
	return h.s.call(ctx, c).touchObject(p.DataID, p.AccessPassword)
}

func (h handler) GetRatingWithLog(ctx context.Context, c *rmc.Call, t ds.DataStoreRatingTarget, pw uint64) (ds.DataStoreRatingInfo, ds.DataStoreRatingLog, error) {
	info, log, err := h.s.call(ctx, c).getRatingWithLog(ratingTargetFrom(t), pw)
	return info.wire(), log.wire(), err
}

func (h handler) PreparePostObject(ctx context.Context, c *rmc.Call, p ds.DataStorePreparePostParam) (ds.DataStoreReqPostInfo, error) {
	info, err := h.s.call(ctx, c).preparePost(preparePostFrom(p))
	return info.wire(), err
}

func (h handler) PrepareGetObject(ctx context.Context, c *rmc.Call, p ds.DataStorePrepareGetParam) (ds.DataStoreReqGetInfo, error) {
	info, err := h.s.call(ctx, c).prepareGet(prepareGetFrom(p))
	return info.wire(), err
}

func (h handler) CompletePostObject(ctx context.Context, c *rmc.Call, p ds.DataStoreCompletePostParam) error {
	return h.s.call(ctx, c).completePost(p.DataID, p.Success)
}

func (h handler) GetPersistenceInfo(ctx context.Context, c *rmc.Call, owner types.PID, slot uint16) (ds.DataStorePersistenceInfo, error) {
	info, err := h.s.call(ctx, c).persistenceInfo(owner, slot)
	return info.wire(), err
}

func (h handler) GetPersistenceInfos(ctx context.Context, c *rmc.Call, owner types.PID, slots []uint16) ([]ds.DataStorePersistenceInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).persistenceInfos(owner, slots)
	return wireList(infos, PersistenceInfo.wire), results, err
}

func (h handler) PerpetuateObject(ctx context.Context, c *rmc.Call, slot uint16, id uint64, deleteLast bool) error {
	return h.s.call(ctx, c).perpetuateObject(slot, id, deleteLast)
}

func (h handler) UnperpetuateObject(ctx context.Context, c *rmc.Call, slot uint16, deleteLast bool) error {
	return h.s.call(ctx, c).unperpetuateObject(slot, deleteLast)
}

func (h handler) PrepareGetObjectOrMetaBinary(ctx context.Context, c *rmc.Call, p ds.DataStorePrepareGetParam) (ds.DataStoreReqGetInfo, ds.DataStoreReqGetAdditionalMeta, error) {
	info, meta, err := h.s.call(ctx, c).prepareGetOrMetaBinary(prepareGetFrom(p))
	return info.wire(), meta.wire(), err
}

func (h handler) GetPasswordInfo(ctx context.Context, c *rmc.Call, id uint64) (ds.DataStorePasswordInfo, error) {
	info, err := h.s.call(ctx, c).passwordInfo(id)
	return info.wire(), err
}

func (h handler) GetPasswordInfos(ctx context.Context, c *rmc.Call, ids []uint64) ([]ds.DataStorePasswordInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).passwordInfos(ids)
	return wireList(infos, PasswordInfo.wire), results, err
}

func (h handler) GetMetasMultipleParam(ctx context.Context, c *rmc.Call, ps []ds.DataStoreGetMetaParam) ([]ds.DataStoreMetaInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).metas(wireList(ps, getMetaFrom))
	return metaInfosWire(infos), results, err
}

func (h handler) CompletePostObjects(ctx context.Context, c *rmc.Call, ids []uint64) error {
	k := h.s.call(ctx, c)
	for _, id := range ids {
		if err := k.completePost(id, true); err != nil {
			return err
		}
	}
	return nil
}

func (h handler) ChangeMeta(ctx context.Context, c *rmc.Call, p ds.DataStoreChangeMetaParam) error {
	return h.s.call(ctx, c).changeMeta(changeMetaFrom(p))
}

func (h handler) ChangeMetas(ctx context.Context, c *rmc.Call, ids []uint64, ps []ds.DataStoreChangeMetaParam, transactional bool) ([]types.Result, error) {
	return h.s.call(ctx, c).changeMetas(ids, wireList(ps, changeMetaFrom), transactional)
}

func (h handler) RateObjects(ctx context.Context, c *rmc.Call, ts []ds.DataStoreRatingTarget, ps []ds.DataStoreRateObjectParam, transactional, fetch bool) ([]ds.DataStoreRatingInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).rateObjects(wireList(ts, ratingTargetFrom), wireList(ps, rateParamFrom), nil, false, transactional, fetch)
	return wireList(infos, RatingInfo.wire), results, err
}

func (h handler) PostMetaBinaryWithDataId(ctx context.Context, c *rmc.Call, id uint64, p ds.DataStorePreparePostParam) error {
	_, err := h.s.call(ctx, c).postWithDataID(id, preparePostFrom(p))
	return err
}

func (h handler) PostMetaBinariesWithDataId(ctx context.Context, c *rmc.Call, ids []uint64, ps []ds.DataStorePreparePostParam, transactional bool) ([]types.Result, error) {
	return h.s.call(ctx, c).postMetaBinariesWithDataID(ids, preparePostsFrom(ps), transactional)
}

func (h handler) RateObjectWithPosting(ctx context.Context, c *rmc.Call, t ds.DataStoreRatingTarget, rate ds.DataStoreRateObjectParam, post ds.DataStorePreparePostParam, fetch bool) (ds.DataStoreRatingInfo, error) {
	info, err := h.s.call(ctx, c).rateObjectWithPosting(ratingTargetFrom(t), rateParamFrom(rate), preparePostFrom(post), fetch)
	return info.wire(), err
}

func (h handler) RateObjectsWithPosting(ctx context.Context, c *rmc.Call, ts []ds.DataStoreRatingTarget, rates []ds.DataStoreRateObjectParam, posts []ds.DataStorePreparePostParam, transactional, fetch bool) ([]ds.DataStoreRatingInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).rateObjects(wireList(ts, ratingTargetFrom), wireList(rates, rateParamFrom), preparePostsFrom(posts), true, transactional, fetch)
	return wireList(infos, RatingInfo.wire), results, err
}

func (h handler) GetObjectInfos(ctx context.Context, c *rmc.Call, ids []uint64) ([]ds.DataStoreReqGetInfo, []types.Result, error) {
	infos, results, err := h.s.call(ctx, c).objectInfos(ids)
	return wireList(infos, ReqGetInfo.wire), results, err
}
