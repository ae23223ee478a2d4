package datastore

import (
	"context"

	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// Client calls of the notification, rating, perpetuation and batched
// methods.

// RateParam is the DataStoreRateObjectParam structure.
type RateParam struct {
	Value          int32 // ratingValue
	AccessPassword uint64
}

// RatingLogInfo is the DataStoreRatingLog structure: whether the caller
// rated a slot, with what, and until when that locks them out.
type RatingLogInfo struct {
	IsRated            bool
	PID                types.PID
	RatingValue        int32
	LockExpirationTime types.DateTime
}

func ratingInfos(infos []ds.DataStoreRatingInfo) []RatingInfo { return wireList(infos, ratingInfoFrom) }

// PostMetaBinary stores an object without a body and returns its data id.
func (c *Client) PostMetaBinary(ctx context.Context, p PreparePostParam) (uint64, error) {
	return c.proto().PostMetaBinary(ctx, p.wire())
}

// GetNotificationURL asks where to poll for new-arrival notifications.
func (c *Client) GetNotificationURL(ctx context.Context, previousURL string) (NotificationURLInfo, error) {
	info, err := c.proto().GetNotificationUrl(ctx, ds.DataStoreGetNotificationUrlParam{PreviousURL: previousURL})
	return NotificationURLInfo{URL: info.URL, Key: info.Key, Query: info.Query, RootCACert: info.RootCaCert}, err
}

// GetNewArrivedNotifications lists the caller's notifications after last,
// at most limit, and whether more follow; v1 calls
// GetNewArrivedNotificationsV1 (32-bit data ids).
func (c *Client) GetNewArrivedNotifications(ctx context.Context, last uint64, limit uint16, v1 bool) ([]Notification, bool, error) {
	p := ds.DataStoreGetNewArrivedNotificationsParam{LastNotificationID: last, Limit: limit}
	if v1 {
		ns, more, err := c.proto().GetNewArrivedNotificationsV1(ctx, p)
		return wireList(ns, func(n ds.DataStoreNotificationV1) Notification {
			return Notification{ID: n.NotificationID, DataID: uint64(n.DataID)}
		}), more, err
	}
	ns, more, err := c.proto().GetNewArrivedNotifications(ctx, p)
	return wireList(ns, func(n ds.DataStoreNotification) Notification {
		return Notification{ID: n.NotificationID, DataID: n.DataID}
	}), more, err
}

// GetRating returns one rating slot of an object.
func (c *Client) GetRating(ctx context.Context, target RatingTarget, accessPassword uint64) (RatingInfo, error) {
	info, err := c.proto().GetRating(ctx, target.wire(), accessPassword)
	return ratingInfoFrom(info), err
}

// GetRatings returns every rating slot of each object, and a Result each.
func (c *Client) GetRatings(ctx context.Context, ids []uint64, accessPassword uint64) ([][]RatingInfo, []types.Result, error) {
	ratings, results, err := c.proto().GetRatings(ctx, ids, accessPassword)
	return wireList(ratings, func(rs []ds.DataStoreRatingInfoWithSlot) []RatingInfo {
		return wireList(rs, ratingInfoWithSlotFrom)
	}), results, err
}

// ResetRating puts a rating slot back to its initial value.
func (c *Client) ResetRating(ctx context.Context, target RatingTarget, updatePassword uint64) error {
	return c.proto().ResetRating(ctx, target.wire(), updatePassword)
}

// ResetRatings resets every rating slot of the caller's objects.
func (c *Client) ResetRatings(ctx context.Context, ids []uint64, transactional bool) ([]types.Result, error) {
	return c.proto().ResetRatings(ctx, ids, transactional)
}

// TouchObject counts a reference to an object without downloading it.
func (c *Client) TouchObject(ctx context.Context, dataID uint64, lockID uint32, accessPassword uint64) error {
	return c.proto().TouchObject(ctx, ds.DataStoreTouchObjectParam{DataID: dataID, LockID: lockID, AccessPassword: accessPassword})
}

// GetRatingWithLog returns a rating slot and the caller's rating of it.
func (c *Client) GetRatingWithLog(ctx context.Context, target RatingTarget, accessPassword uint64) (RatingInfo, RatingLogInfo, error) {
	info, log, err := c.proto().GetRatingWithLog(ctx, target.wire(), accessPassword)
	return ratingInfoFrom(info), RatingLogInfo{IsRated: log.IsRated, PID: log.PID, RatingValue: log.RatingValue,
		LockExpirationTime: log.LockExpirationTime}, err
}

// GetPersistenceInfos returns the objects in an owner's persistence slots,
// and a Result each.
func (c *Client) GetPersistenceInfos(ctx context.Context, owner types.PID, slots []uint16) ([]PersistenceInfo, []types.Result, error) {
	infos, results, err := c.proto().GetPersistenceInfos(ctx, owner, slots)
	return wireList(infos, func(p ds.DataStorePersistenceInfo) PersistenceInfo {
		return PersistenceInfo{OwnerID: p.OwnerID, SlotID: p.SlotID, DataID: p.DataID}
	}), results, err
}

// PerpetuateObject puts one of the caller's objects into a persistence slot.
func (c *Client) PerpetuateObject(ctx context.Context, slot uint16, dataID uint64, deleteLast bool) error {
	return c.proto().PerpetuateObject(ctx, slot, dataID, deleteLast)
}

// UnperpetuateObject empties one of the caller's persistence slots.
func (c *Client) UnperpetuateObject(ctx context.Context, slot uint16, deleteLast bool) error {
	return c.proto().UnperpetuateObject(ctx, slot, deleteLast)
}

// PrepareGetObjectOrMetaBinary asks where to download an object's body, or,
// for an object without one, its meta binary.
func (c *Client) PrepareGetObjectOrMetaBinary(ctx context.Context, p PrepareGetParam) (ReqGetInfo, AdditionalMeta, error) {
	info, meta, err := c.proto().PrepareGetObjectOrMetaBinary(ctx, p.wire())
	return reqGetInfoFrom(info), AdditionalMeta{OwnerID: meta.OwnerID, DataType: meta.DataType, Version: meta.Version,
		MetaBinary: meta.MetaBinary}, err
}

// GetPasswordInfos returns the passwords of the caller's objects, and a
// Result each.
func (c *Client) GetPasswordInfos(ctx context.Context, ids []uint64) ([]PasswordInfo, []types.Result, error) {
	infos, results, err := c.proto().GetPasswordInfos(ctx, ids)
	return wireList(infos, func(p ds.DataStorePasswordInfo) PasswordInfo {
		return PasswordInfo{DataID: p.DataID, AccessPassword: p.AccessPassword, UpdatePassword: p.UpdatePassword}
	}), results, err
}

// ChangeMetas changes several objects' metadata (v1: ChangeMetasV1 with
// DataStoreChangeMetaParamV1).
func (c *Client) ChangeMetas(ctx context.Context, ids []uint64, params []ChangeMetaParam, transactional, v1 bool) ([]types.Result, error) {
	if v1 {
		return c.proto().ChangeMetasV1(ctx, ids, wireList(params, ChangeMetaParam.wireV1), transactional)
	}
	return c.proto().ChangeMetas(ctx, ids, wireList(params, ChangeMetaParam.wire), transactional)
}

// RateObjects rates several objects.
func (c *Client) RateObjects(ctx context.Context, targets []RatingTarget, params []RateParam, transactional, fetch bool) ([]RatingInfo, []types.Result, error) {
	infos, results, err := c.proto().RateObjects(ctx, wireList(targets, RatingTarget.wire), wireList(params, RateParam.wire), transactional, fetch)
	return ratingInfos(infos), results, err
}

// PostMetaBinaryWithDataID stores an object without a body under a chosen
// data id.
func (c *Client) PostMetaBinaryWithDataID(ctx context.Context, dataID uint64, p PreparePostParam) error {
	return c.proto().PostMetaBinaryWithDataId(ctx, dataID, p.wire())
}

// PostMetaBinariesWithDataID is PostMetaBinaryWithDataID for several.
func (c *Client) PostMetaBinariesWithDataID(ctx context.Context, ids []uint64, params []PreparePostParam, transactional bool) ([]types.Result, error) {
	return c.proto().PostMetaBinariesWithDataId(ctx, ids, preparePostsWire(params), transactional)
}

// RateObjectWithPosting rates an object, first posting it (without a body,
// under the target's data id) when it does not exist.
func (c *Client) RateObjectWithPosting(ctx context.Context, target RatingTarget, rate RateParam, post PreparePostParam, fetch bool) (RatingInfo, error) {
	info, err := c.proto().RateObjectWithPosting(ctx, target.wire(), rate.wire(), post.wire(), fetch)
	return ratingInfoFrom(info), err
}

// RateObjectsWithPosting is RateObjectWithPosting for several.
func (c *Client) RateObjectsWithPosting(ctx context.Context, targets []RatingTarget, rates []RateParam, posts []PreparePostParam,
	transactional, fetch bool) ([]RatingInfo, []types.Result, error) {
	infos, results, err := c.proto().RateObjectsWithPosting(ctx, wireList(targets, RatingTarget.wire), wireList(rates, RateParam.wire),
		preparePostsWire(posts), transactional, fetch)
	return ratingInfos(infos), results, err
}

// GetObjectInfos asks where to download each object's body, with a Result
// each.
func (c *Client) GetObjectInfos(ctx context.Context, ids []uint64) ([]ReqGetInfo, []types.Result, error) {
	infos, results, err := c.proto().GetObjectInfos(ctx, ids)
	return wireList(infos, reqGetInfoFrom), results, err
}
