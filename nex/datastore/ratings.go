package datastore

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gamewire/gamewire/nex/types"
)

// Rating slots: flags and lock types of DataStoreRatingInitParam (the page
// gives the fields; the values are PretendoNetwork/nex-protocols-go's
// datastore constants RatingFlag, RatingLockType and RatingLockPeriod).
const (
	RatingFlagModifiable        uint8 = 0x04 // a rater's new rating replaces their last one
	RatingFlagRoundMinus        uint8 = 0x08 // negative ratings count as 0
	RatingFlagDisableSelfRating uint8 = 0x10 // the owner may not rate

	RatingLockNone      uint8 = 0 // rate as often as wanted
	RatingLockInterval  uint8 = 1 // again after periodDuration seconds
	RatingLockPeriod    uint8 = 2 // again from the next day periodDuration names, at periodHour
	RatingLockPermanent uint8 = 3 // once

	// RatingLockPeriodDay1 (periodDuration of a period lock) is the 1st of
	// the next month; -1 to -7 are the next Monday to Sunday.
	RatingLockPeriodDay1 int16 = -17
)

// rating returns o's rating slot, or DataStore::NotFound.
func rating(o *Object, slot int8) (*Rating, error) {
	i := slices.IndexFunc(o.Ratings, func(r Rating) bool { return r.Slot == slot })
	if i < 0 {
		return nil, fmt.Errorf("%w: object %d has no rating slot %d", types.DataStoreNotFound, o.DataID, slot)
	}
	return &o.Ratings[i], nil
}

func (r Rating) info() RatingInfo {
	return RatingInfo{Slot: r.Slot, TotalValue: r.Total, Count: r.Count, InitialValue: r.Init.InitialValue}
}

// rate counts the caller's rating of o's slot, with the slot's flags and
// lock, and leaves the caller's rating log in log. It runs inside the
// store's transaction.
func (k *call) rate(o *Object, log *RatingLog, slot int8, value int32, accessPassword uint64) (RatingInfo, error) {
	if err := k.canRead(*o, accessPassword); err != nil {
		return RatingInfo{}, err
	}
	r, err := rating(o, slot)
	if err != nil {
		return RatingInfo{}, err
	}
	init := r.Init
	if init.Flag&RatingFlagDisableSelfRating != 0 && o.Owner == k.me {
		return RatingInfo{}, fmt.Errorf("%w: rating slot %d of object %d takes no rating from its owner", types.DataStoreOperationNotAllowed, slot, o.DataID)
	}
	if init.Flag&RatingFlagRoundMinus != 0 && value < 0 {
		value = 0
	}
	if (init.RangeMin != 0 || init.RangeMax != 0) && (value < init.RangeMin || value > init.RangeMax) {
		return RatingInfo{}, fmt.Errorf("%w: rating %d outside %d..%d", types.DataStoreInvalidArgument, value, init.RangeMin, init.RangeMax)
	}
	rated := log.Rated && log.Resets == r.Resets
	if rated && locked(init.LockType, *log, k.now) {
		return RatingInfo{}, fmt.Errorf("%w: PID %d rated slot %d of object %d already (lock type %d)", types.DataStoreOperationNotAllowed, k.me, slot, o.DataID, init.LockType)
	}
	if rated && init.Flag&RatingFlagModifiable != 0 {
		r.Total += int64(value) - int64(log.Value)
	} else {
		r.Total += int64(value)
		r.Count++
	}
	*log = RatingLog{Rated: true, Value: value, At: k.now, LockExpires: lockExpiry(init, k.now), Resets: r.Resets}
	return r.info(), nil
}

// locked says whether a rating log still stops its rater rating again.
func locked(lockType uint8, log RatingLog, now time.Time) bool {
	switch lockType {
	case RatingLockPermanent:
		return true
	case RatingLockInterval, RatingLockPeriod:
		return now.Before(log.LockExpires)
	}
	return false
}

// lockExpiry is when a rating given at now stops locking its rater out (zero:
// no lock, or a permanent one). Times are UTC.
func lockExpiry(p RatingInitParam, now time.Time) time.Time {
	now = now.UTC()
	switch p.LockType {
	case RatingLockInterval:
		if p.PeriodDuration > 0 {
			return now.Add(time.Duration(p.PeriodDuration) * time.Second)
		}
	case RatingLockPeriod:
		hour := max(0, min(int(p.PeriodHour), 23))
		switch d := p.PeriodDuration; {
		case d == RatingLockPeriodDay1:
			return time.Date(now.Year(), now.Month()+1, 1, hour, 0, 0, 0, time.UTC)
		case d >= -7 && d <= -1:
			want := time.Weekday(-d % 7) // -1 Monday ... -6 Saturday, -7 Sunday
			days := (int(want) - int(now.Weekday()) + 7) % 7
			if days == 0 {
				days = 7
			}
			day := now.AddDate(0, 0, days)
			return time.Date(day.Year(), day.Month(), day.Day(), hour, 0, 0, 0, time.UTC)
		}
	}
	return time.Time{}
}

// unwrapItem turns a one-item Store batch's failure into the item's own.
func unwrapItem(err error) error {
	var ie *ItemError
	if errors.As(err, &ie) {
		return ie.Err
	}
	return err
}

func (k *call) getRatings(ids []uint64, pw uint64) ([][]RatingInfo, []types.Result, error) {
	if len(ids) > MaxBatch {
		return nil, nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(ids), MaxBatch)
	}
	ratings := make([][]RatingInfo, len(ids))
	results := make([]types.Result, len(ids))
	for i, id := range ids {
		o, err := k.s.Store.Object(k.ctx, id)
		if err == nil {
			err = k.canRead(o, pw)
		}
		if results[i] = k.itemResult(err); results[i] == types.DataStoreUnknown {
			return nil, nil, err
		}
		if err == nil {
			for _, r := range o.Ratings {
				ratings[i] = append(ratings[i], r.info())
			}
		}
	}
	return ratings, results, nil
}

// reset puts rating slots back to their initial value with no ratings, and
// voids the slots' rating logs (and so their locks).
func reset(r *Rating) {
	r.Total, r.Count = r.Init.InitialValue, 0
	r.Resets++
}

func (k *call) resetRating(t RatingTarget, pw uint64) error {
	_, err := k.s.Store.Update(k.ctx, t.DataID, func(o *Object) error {
		if err := k.live(*o); err != nil {
			return err
		}
		if err := k.canUpdate(*o, pw); err != nil {
			return err
		}
		r, err := rating(o, t.Slot)
		if err != nil {
			return err
		}
		reset(r)
		return nil
	})
	return err
}

// resetRatings resets every slot of each object (the owner's only: the
// method carries no password).
func (k *call) resetRatings(ids []uint64, transactional bool) ([]types.Result, error) {
	if len(ids) > MaxBatch {
		return nil, fmt.Errorf("%w: %d objects in one call (at most %d)", types.DataStoreInvalidArgument, len(ids), MaxBatch)
	}
	f := func(_ int, o *Object) error {
		if err := k.live(*o); err != nil {
			return err
		}
		if err := k.canUpdate(*o, 0); err != nil {
			return err
		}
		for i := range o.Ratings {
			reset(&o.Ratings[i])
		}
		return nil
	}
	return k.batch(len(ids), transactional,
		func() error { return k.s.Store.UpdateObjects(k.ctx, ids, f) },
		func(i int) error { return k.s.Store.UpdateObjects(k.ctx, ids[i:i+1], f) })
}

// batch runs a batch of n items: transactional, all in one go (any item's
// failure changes nothing and is the call's answer: the page gives a
// transactional batch no partial outcome); otherwise each item on its own,
// its Result in the list. A failure of the store itself fails the call.
func (k *call) batch(n int, transactional bool, all func() error, one func(i int) error) ([]types.Result, error) {
	results := make([]types.Result, n)
	if transactional {
		if err := all(); err != nil {
			return nil, err
		}
		for i := range results {
			results[i] = types.ResultSuccess
		}
		return results, nil
	}
	for i := range n {
		err := unwrapItem(one(i))
		if results[i] = k.itemResult(err); results[i] == types.DataStoreUnknown {
			return nil, err
		}
	}
	return results, nil
}

func (k *call) getRatingWithLog(t RatingTarget, pw uint64) (RatingInfo, RatingLogInfo, error) {
	o, err := k.s.Store.Object(k.ctx, t.DataID)
	if err != nil {
		return RatingInfo{}, RatingLogInfo{}, err
	}
	if err := k.canRead(o, pw); err != nil {
		return RatingInfo{}, RatingLogInfo{}, err
	}
	r, err := rating(&o, t.Slot)
	if err != nil {
		return RatingInfo{}, RatingLogInfo{}, err
	}
	log, err := k.s.Store.RatingLog(k.ctx, t.DataID, t.Slot, k.me)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return RatingInfo{}, RatingLogInfo{}, err
	}
	l := RatingLogInfo{PID: k.me}
	if err == nil && log.Resets == r.Resets {
		l.IsRated, l.RatingValue = true, log.Value
		switch {
		case r.Init.LockType == RatingLockPermanent:
			l.LockExpirationTime = neverExpires
		case !log.LockExpires.IsZero():
			l.LockExpirationTime = types.DateTimeFromTime(log.LockExpires)
		}
	}
	return r.info(), l, nil
}

// rateItem is one rating of RateObjects(WithPosting).
type rateItem struct {
	target RatingTarget
	value  int32
	pw     uint64
	post   *PreparePostParam // WithPosting: the object to post when the target is missing
}

// rateObjects rates several objects; withPosting (RateObjectsWithPosting)
// posts each missing target from posts first.
func (k *call) rateObjects(targets []RatingTarget, params []RateParam, posts []PreparePostParam, withPosting, transactional, fetch bool) ([]RatingInfo, []types.Result, error) {
	if len(targets) > MaxBatch || len(params) != len(targets) || (withPosting && len(posts) != len(targets)) {
		return nil, nil, fmt.Errorf("%w: %d targets, %d rate params, %d post params (equal counts, at most %d)",
			types.DataStoreInvalidArgument, len(targets), len(params), len(posts), MaxBatch)
	}
	items := make([]rateItem, len(targets))
	for i := range targets {
		items[i] = rateItem{target: targets[i], value: params[i].Value, pw: params[i].AccessPassword}
		if withPosting {
			items[i].post = &posts[i]
		}
	}
	infos := make([]RatingInfo, len(items))
	results, err := k.batch(len(items), transactional,
		func() error { return k.rateMany(items, infos, true) },
		func(i int) error { return k.rateMany(items[i:i+1], infos[i:i+1], false) })
	if err != nil {
		return nil, nil, err
	}
	if !fetch {
		clear(infos)
	}
	for i := range infos {
		if results[i] != types.ResultSuccess {
			infos[i] = RatingInfo{}
		}
	}
	return infos, results, nil
}

// rateMany rates items in one store transaction, first posting the missing
// targets of items that carry a post (deleted again if the rating fails, so
// a transactional batch leaves nothing behind).
func (k *call) rateMany(items []rateItem, infos []RatingInfo, transactional bool) error {
	var posted []uint64
	for i, it := range items {
		if it.post == nil {
			continue
		}
		if _, err := k.s.Store.Object(k.ctx, it.target.DataID); err == nil {
			continue
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if _, err := k.postWithDataID(it.target.DataID, *it.post); err != nil {
			k.unpost(posted)
			if transactional {
				return &ItemError{Index: i, Err: err}
			}
			return err
		}
		posted = append(posted, it.target.DataID)
	}
	targets := make([]RatingTarget, len(items))
	for i, it := range items {
		targets[i] = it.target
	}
	err := k.s.Store.Rate(k.ctx, k.me, targets, func(i int, o *Object, log *RatingLog) error {
		var err error
		infos[i], err = k.rate(o, log, items[i].target.Slot, items[i].value, items[i].pw)
		return err
	})
	if err != nil {
		k.unpost(posted)
	}
	return err
}

// unpost deletes objects a failed batch posted.
func (k *call) unpost(ids []uint64) {
	for _, id := range ids {
		if o, err := k.s.Store.Object(k.ctx, id); err == nil && k.s.Store.DeleteObject(k.ctx, id) == nil {
			k.s.deleteBodies(k.ctx, o)
		}
	}
}

func (k *call) rateObjectWithPosting(t RatingTarget, rate RateParam, post PreparePostParam, fetch bool) (RatingInfo, error) {
	infos := make([]RatingInfo, 1)
	if err := k.rateMany([]rateItem{{target: t, value: rate.Value, pw: rate.AccessPassword, post: &post}}, infos, false); err != nil {
		return RatingInfo{}, unwrapItem(err)
	}
	if !fetch {
		return RatingInfo{}, nil
	}
	return infos[0], nil
}
