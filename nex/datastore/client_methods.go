package datastore

import (
	"context"

	"github.com/gamewire/gamewire/nex/types"
)

// Client calls of the notification, rating, perpetuation and batched
// methods.

// RateParam is the DataStoreRateObjectParam structure.
type RateParam struct {
	Value          int32 // ratingValue
	AccessPassword uint64
}

func (p RateParam) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.S32(p.Value)
	w.U64(p.AccessPassword)
	w.EndStructure(m)
}

func (t RatingTarget) append(w *types.Writer) {
	m := w.BeginStructure(0)
	w.U64(t.DataID)
	w.U8(uint8(t.Slot))
	w.EndStructure(m)
}

// RatingLogInfo is the DataStoreRatingLog structure: whether the caller
// rated a slot, with what, and until when that locks them out.
type RatingLogInfo struct {
	IsRated            bool
	PID                types.PID
	RatingValue        int32
	LockExpirationTime types.DateTime
}

func readRatingLogInfo(r *types.Reader, field string) RatingLogInfo {
	m := r.EnterStructure(field)
	l := RatingLogInfo{IsRated: r.Bool("isRated"), PID: r.PID("pid"), RatingValue: r.S32("ratingValue"),
		LockExpirationTime: r.DateTime("lockExpirationTime")}
	r.LeaveStructure(m)
	return l
}

func readResults(r *types.Reader) []types.Result {
	return types.ReadList(r, "pResults", (*types.Reader).Result)
}

func writeIDs(w *types.Writer, ids []uint64) { types.WriteList(w, ids, (*types.Writer).U64) }

// PostMetaBinary stores an object without a body and returns its data id.
func (c *Client) PostMetaBinary(ctx context.Context, p PreparePostParam) (uint64, error) {
	var id uint64
	err := c.call(ctx, MethodPostMetaBinary, func(w *types.Writer) { p.append(w, c.version()) },
		func(r *types.Reader) { id = r.U64("dataId") })
	return id, err
}

// GetNotificationURL asks where to poll for new-arrival notifications.
func (c *Client) GetNotificationURL(ctx context.Context, previousURL string) (NotificationURLInfo, error) {
	var info NotificationURLInfo
	err := c.call(ctx, MethodGetNotificationURL, func(w *types.Writer) {
		m := w.BeginStructure(0)
		w.String(previousURL)
		w.EndStructure(m)
	}, func(r *types.Reader) { info = readNotificationURLInfo(r, "info") })
	return info, err
}

// GetNewArrivedNotifications lists the caller's notifications after last,
// at most limit, and whether more follow; v1 calls
// GetNewArrivedNotificationsV1 (32-bit data ids).
func (c *Client) GetNewArrivedNotifications(ctx context.Context, last uint64, limit uint16, v1 bool) ([]Notification, bool, error) {
	method := MethodGetNewArrivedNotifications
	if v1 {
		method = MethodGetNewArrivedNotificationsV1
	}
	var ns []Notification
	var more bool
	err := c.call(ctx, method, func(w *types.Writer) {
		m := w.BeginStructure(0)
		w.U64(last)
		w.U16(limit)
		w.EndStructure(m)
	}, func(r *types.Reader) {
		ns = types.ReadList(r, "pResult", func(r *types.Reader, f string) Notification {
			m := r.EnterStructure(f)
			n := Notification{ID: r.U64("notificationId")}
			if v1 {
				n.DataID = uint64(r.U32("dataId"))
			} else {
				n.DataID = r.U64("dataId")
			}
			r.LeaveStructure(m)
			return n
		})
		more = r.Bool("pHasNext")
	})
	return ns, more, err
}

// GetRating returns one rating slot of an object.
func (c *Client) GetRating(ctx context.Context, target RatingTarget, accessPassword uint64) (RatingInfo, error) {
	var info RatingInfo
	err := c.call(ctx, MethodGetRating, func(w *types.Writer) {
		target.append(w)
		w.U64(accessPassword)
	}, func(r *types.Reader) { info = readRatingInfo(r, "pRating") })
	return info, err
}

// GetRatings returns every rating slot of each object, and a Result each.
func (c *Client) GetRatings(ctx context.Context, ids []uint64, accessPassword uint64) ([][]RatingInfo, []types.Result, error) {
	var ratings [][]RatingInfo
	var results []types.Result
	err := c.call(ctx, MethodGetRatings, func(w *types.Writer) {
		writeIDs(w, ids)
		w.U64(accessPassword)
	}, func(r *types.Reader) {
		ratings = types.ReadList(r, "pRatings", func(r *types.Reader, f string) []RatingInfo {
			return types.ReadList(r, f, readRatingInfoWithSlot)
		})
		results = readResults(r)
	})
	return ratings, results, err
}

// ResetRating puts a rating slot back to its initial value.
func (c *Client) ResetRating(ctx context.Context, target RatingTarget, updatePassword uint64) error {
	return c.call(ctx, MethodResetRating, func(w *types.Writer) {
		target.append(w)
		w.U64(updatePassword)
	}, nil)
}

// ResetRatings resets every rating slot of the caller's objects.
func (c *Client) ResetRatings(ctx context.Context, ids []uint64, transactional bool) ([]types.Result, error) {
	var results []types.Result
	err := c.call(ctx, MethodResetRatings, func(w *types.Writer) {
		writeIDs(w, ids)
		w.Bool(transactional)
	}, func(r *types.Reader) { results = readResults(r) })
	return results, err
}

// TouchObject counts a reference to an object without downloading it.
func (c *Client) TouchObject(ctx context.Context, dataID uint64, lockID uint32, accessPassword uint64) error {
	return c.call(ctx, MethodTouchObject, func(w *types.Writer) {
		m := w.BeginStructure(0)
		w.U64(dataID)
		w.U32(lockID)
		w.U64(accessPassword)
		w.EndStructure(m)
	}, nil)
}

// GetRatingWithLog returns a rating slot and the caller's rating of it.
func (c *Client) GetRatingWithLog(ctx context.Context, target RatingTarget, accessPassword uint64) (RatingInfo, RatingLogInfo, error) {
	var info RatingInfo
	var log RatingLogInfo
	err := c.call(ctx, MethodGetRatingWithLog, func(w *types.Writer) {
		target.append(w)
		w.U64(accessPassword)
	}, func(r *types.Reader) {
		info = readRatingInfo(r, "pRating")
		log = readRatingLogInfo(r, "pRatingLog")
	})
	return info, log, err
}

// GetPersistenceInfos returns the objects in an owner's persistence slots,
// and a Result each.
func (c *Client) GetPersistenceInfos(ctx context.Context, owner types.PID, slots []uint16) ([]PersistenceInfo, []types.Result, error) {
	var infos []PersistenceInfo
	var results []types.Result
	err := c.call(ctx, MethodGetPersistenceInfos, func(w *types.Writer) {
		w.PID(owner)
		types.WriteList(w, slots, (*types.Writer).U16)
	}, func(r *types.Reader) {
		infos = types.ReadList(r, "pPersistenceInfo", readPersistenceInfo)
		results = readResults(r)
	})
	return infos, results, err
}

// PerpetuateObject puts one of the caller's objects into a persistence slot.
func (c *Client) PerpetuateObject(ctx context.Context, slot uint16, dataID uint64, deleteLast bool) error {
	return c.call(ctx, MethodPerpetuateObject, func(w *types.Writer) {
		w.U16(slot)
		w.U64(dataID)
		w.Bool(deleteLast)
	}, nil)
}

// UnperpetuateObject empties one of the caller's persistence slots.
func (c *Client) UnperpetuateObject(ctx context.Context, slot uint16, deleteLast bool) error {
	return c.call(ctx, MethodUnperpetuateObject, func(w *types.Writer) {
		w.U16(slot)
		w.Bool(deleteLast)
	}, nil)
}

// PrepareGetObjectOrMetaBinary asks where to download an object's body, or,
// for an object without one, its meta binary.
func (c *Client) PrepareGetObjectOrMetaBinary(ctx context.Context, p PrepareGetParam) (ReqGetInfo, AdditionalMeta, error) {
	var info ReqGetInfo
	var meta AdditionalMeta
	v := c.version()
	err := c.call(ctx, MethodPrepareGetObjectOrMetaBinary, func(w *types.Writer) { p.append(w, v, false) }, func(r *types.Reader) {
		info = readReqGetInfo(r, "pReqGetInfo", v.extraData())
		meta = readAdditionalMeta(r, "pReqGetAdditionalMeta")
	})
	return info, meta, err
}

// GetPasswordInfos returns the passwords of the caller's objects, and a
// Result each.
func (c *Client) GetPasswordInfos(ctx context.Context, ids []uint64) ([]PasswordInfo, []types.Result, error) {
	var infos []PasswordInfo
	var results []types.Result
	err := c.call(ctx, MethodGetPasswordInfos, func(w *types.Writer) { writeIDs(w, ids) }, func(r *types.Reader) {
		infos = types.ReadList(r, "pPasswordInfos", readPasswordInfo)
		results = readResults(r)
	})
	return infos, results, err
}

// ChangeMetas changes several objects' metadata (v1: ChangeMetasV1 with
// DataStoreChangeMetaParamV1).
func (c *Client) ChangeMetas(ctx context.Context, ids []uint64, params []ChangeMetaParam, transactional, v1 bool) ([]types.Result, error) {
	method := MethodChangeMetas
	if v1 {
		method = MethodChangeMetasV1
	}
	var results []types.Result
	err := c.call(ctx, method, func(w *types.Writer) {
		writeIDs(w, ids)
		types.WriteList(w, params, func(w *types.Writer, p ChangeMetaParam) { p.append(w, v1) })
		w.Bool(transactional)
	}, func(r *types.Reader) { results = readResults(r) })
	return results, err
}

// RateObjects rates several objects.
func (c *Client) RateObjects(ctx context.Context, targets []RatingTarget, params []RateParam, transactional, fetch bool) ([]RatingInfo, []types.Result, error) {
	var infos []RatingInfo
	var results []types.Result
	err := c.call(ctx, MethodRateObjects, func(w *types.Writer) {
		types.WriteList(w, targets, func(w *types.Writer, t RatingTarget) { t.append(w) })
		types.WriteList(w, params, func(w *types.Writer, p RateParam) { p.append(w) })
		w.Bool(transactional)
		w.Bool(fetch)
	}, func(r *types.Reader) {
		infos = types.ReadList(r, "pRatings", readRatingInfo)
		results = readResults(r)
	})
	return infos, results, err
}

// PostMetaBinaryWithDataID stores an object without a body under a chosen
// data id.
func (c *Client) PostMetaBinaryWithDataID(ctx context.Context, dataID uint64, p PreparePostParam) error {
	return c.call(ctx, MethodPostMetaBinaryWithDataID, func(w *types.Writer) {
		w.U64(dataID)
		p.append(w, c.version())
	}, nil)
}

// PostMetaBinariesWithDataID is PostMetaBinaryWithDataID for several.
func (c *Client) PostMetaBinariesWithDataID(ctx context.Context, ids []uint64, params []PreparePostParam, transactional bool) ([]types.Result, error) {
	v := c.version()
	var results []types.Result
	err := c.call(ctx, MethodPostMetaBinariesWithDataID, func(w *types.Writer) {
		writeIDs(w, ids)
		types.WriteList(w, params, func(w *types.Writer, p PreparePostParam) { p.append(w, v) })
		w.Bool(transactional)
	}, func(r *types.Reader) { results = readResults(r) })
	return results, err
}

// RateObjectWithPosting rates an object, first posting it (without a body,
// under the target's data id) when it does not exist.
func (c *Client) RateObjectWithPosting(ctx context.Context, target RatingTarget, rate RateParam, post PreparePostParam, fetch bool) (RatingInfo, error) {
	var info RatingInfo
	err := c.call(ctx, MethodRateObjectWithPosting, func(w *types.Writer) {
		target.append(w)
		rate.append(w)
		post.append(w, c.version())
		w.Bool(fetch)
	}, func(r *types.Reader) { info = readRatingInfo(r, "pRating") })
	return info, err
}

// RateObjectsWithPosting is RateObjectWithPosting for several.
func (c *Client) RateObjectsWithPosting(ctx context.Context, targets []RatingTarget, rates []RateParam, posts []PreparePostParam,
	transactional, fetch bool) ([]RatingInfo, []types.Result, error) {
	v := c.version()
	var infos []RatingInfo
	var results []types.Result
	err := c.call(ctx, MethodRateObjectsWithPosting, func(w *types.Writer) {
		types.WriteList(w, targets, func(w *types.Writer, t RatingTarget) { t.append(w) })
		types.WriteList(w, rates, func(w *types.Writer, p RateParam) { p.append(w) })
		types.WriteList(w, posts, func(w *types.Writer, p PreparePostParam) { p.append(w, v) })
		w.Bool(transactional)
		w.Bool(fetch)
	}, func(r *types.Reader) {
		infos = types.ReadList(r, "pRatings", readRatingInfo)
		results = readResults(r)
	})
	return infos, results, err
}

// GetObjectInfos asks where to download each object's body, with a Result
// each.
func (c *Client) GetObjectInfos(ctx context.Context, ids []uint64) ([]ReqGetInfo, []types.Result, error) {
	v := c.version()
	var infos []ReqGetInfo
	var results []types.Result
	err := c.call(ctx, MethodGetObjectInfos, func(w *types.Writer) { writeIDs(w, ids) }, func(r *types.Reader) {
		infos = types.ReadList(r, "pInfos", func(r *types.Reader, f string) ReqGetInfo { return readReqGetInfo(r, f, v.extraData()) })
		results = readResults(r)
	})
	return infos, results, err
}
