package datastore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// Tests of the methods beyond the core object API, through gamewire's own
// client.

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestNotifications(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, bob, carol := f.client(1001), f.client(1002), f.client(1003)

	// Nothing yet: the polled file says 0, the list is empty.
	info, err := bob.GetNotificationURL(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := httpGet(t, info.URL+info.Key+info.Query); code != 200 || body != "0,1002,0" {
		t.Fatalf("notification file before: %d %q", code, body)
	}
	ns, more, err := bob.GetNewArrivedNotifications(ctx, 0, 10, false)
	if err != nil || len(ns) != 0 || more {
		t.Fatalf("before: %v %v %v", ns, more, err)
	}

	// A post for recipients with notification on post notifies each
	// recipient (not the owner); one without the flag notifies no one.
	p := post("for you", datastore.PermissionRecipients)
	p.Permission.RecipientIDs = []types.PID{1002, 1003, 1001}
	p.Flag = datastore.DataFlagUseNotificationOnPost | datastore.DataFlagUseNotificationOnUpdate
	first, err := owner.Put(ctx, p, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	quiet := post("quiet", datastore.PermissionRecipients)
	quiet.Permission.RecipientIDs = []types.PID{1002}
	if _, err := owner.Put(ctx, quiet, []byte("q")); err != nil {
		t.Fatal(err)
	}
	p.Name = "meta only"
	second, err := owner.PostMetaBinary(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	ns, more, err = bob.GetNewArrivedNotifications(ctx, 0, 10, false)
	if err != nil || len(ns) != 2 || more || ns[0].DataID != first || ns[1].DataID != second || ns[0].ID >= ns[1].ID {
		t.Fatalf("bob's: %+v %v %v", ns, more, err)
	}
	if ns, _, _ := owner.GetNewArrivedNotifications(ctx, 0, 10, false); len(ns) != 0 {
		t.Fatalf("the owner was notified: %+v", ns)
	}
	// Paging: a limit of 1 says more follow; after the last, nothing.
	page, more, err := carol.GetNewArrivedNotifications(ctx, 0, 1, true)
	if err != nil || len(page) != 1 || !more || page[0].DataID != first {
		t.Fatalf("carol's first page (V1): %+v %v %v", page, more, err)
	}
	page, more, err = carol.GetNewArrivedNotifications(ctx, page[0].ID, 1, true)
	if err != nil || len(page) != 1 || more || page[0].DataID != second {
		t.Fatalf("carol's second page: %+v %v %v", page, more, err)
	}
	if page, more, _ = carol.GetNewArrivedNotifications(ctx, page[0].ID, 5, false); len(page) != 0 || more {
		t.Fatalf("after the last: %+v %v", page, more)
	}
	_, _, err = carol.GetNewArrivedNotifications(ctx, 0, 0, false)
	wantResult(t, err, types.DataStoreInvalidArgument)

	// The polled file names the newest; a forged or expired URL is refused.
	code, body := httpGet(t, info.URL+info.Key+info.Query)
	if want := strconv.FormatUint(ns[1].ID, 10) + ",1002," + strconv.FormatInt(f.srv.Now().Unix(), 10); code != 200 || body != want {
		t.Fatalf("notification file: %d %q, want %q", code, body, want)
	}
	if code, _ := httpGet(t, info.URL+strings.Replace(info.Key, "1002", "1003", 1)+info.Query); code != http.StatusForbidden {
		t.Fatalf("another PID's file with bob's signature: %d", code)
	}

	// An update notifies again (flag 0x10).
	up, err := owner.PrepareUpdateObject(ctx, first, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Upload(ctx, up.URL, up.FormFields, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := owner.CompleteUpdateObject(ctx, first, up.Version, true); err != nil {
		t.Fatal(err)
	}
	ns, _, _ = bob.GetNewArrivedNotifications(ctx, 0, 10, false)
	if len(ns) != 3 || ns[2].DataID != first {
		t.Fatalf("after the update: %+v", ns)
	}
	// Deleting an object takes its notifications along.
	if err := owner.DeleteObject(ctx, first, 0); err != nil {
		t.Fatal(err)
	}
	ns, _, _ = bob.GetNewArrivedNotifications(ctx, 0, 10, false)
	if len(ns) != 1 || ns[0].DataID != second {
		t.Fatalf("after the delete: %+v", ns)
	}
	f.advance(datastore.NotificationURLTTL + time.Second)
	if code, _ := httpGet(t, info.URL+info.Key+info.Query); code != http.StatusForbidden {
		t.Fatalf("expired notification URL: %d", code)
	}
}

func TestRatingsLogsLocksResets(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, bob, carol := f.client(1001), f.client(1002), f.client(1003)
	p := post("rated", datastore.PermissionEveryone)
	p.RatingInitParams = []datastore.RatingInitParam{
		{Slot: 0, InitialValue: 10, RangeMin: 1, RangeMax: 5},
		{Slot: 1, LockType: datastore.RatingLockPermanent},
		{Slot: 2, Flag: datastore.RatingFlagModifiable},
		{Slot: 3, LockType: datastore.RatingLockInterval, PeriodDuration: 60},
		{Slot: 4, Flag: datastore.RatingFlagDisableSelfRating | datastore.RatingFlagRoundMinus},
		{Slot: 5, LockType: datastore.RatingLockPeriod, PeriodDuration: -2, PeriodHour: 6}, // next Tuesday 06:00
	}
	id, err := owner.Put(ctx, p, []byte("r"))
	if err != nil {
		t.Fatal(err)
	}
	rate := func(c *datastore.Client, slot int8, v int32) (datastore.RatingInfo, error) {
		return c.RateObject(ctx, id, slot, v, 0)
	}

	// A permanent lock: once, and the log says so.
	if _, err := rate(bob, 1, 7); err != nil {
		t.Fatal(err)
	}
	_, err = rate(bob, 1, 7)
	wantResult(t, err, types.DataStoreOperationNotAllowed)
	info, log, err := bob.GetRatingWithLog(ctx, datastore.RatingTarget{DataID: id, Slot: 1}, 0)
	if err != nil || info.TotalValue != 7 || info.Count != 1 || !log.IsRated || log.PID != 1002 || log.RatingValue != 7 ||
		log.LockExpirationTime != types.MakeDateTime(9999, 12, 31, 0, 0, 0) {
		t.Fatalf("log of a permanent lock: %+v %+v %v", info, log, err)
	}
	if _, log, _ := carol.GetRatingWithLog(ctx, datastore.RatingTarget{DataID: id, Slot: 1}, 0); log.IsRated {
		t.Fatalf("carol's log: %+v", log)
	}
	// Modifiable: the second rating replaces the first.
	rate(bob, 2, 5)
	if r, err := rate(bob, 2, 2); err != nil || r.TotalValue != 2 || r.Count != 1 {
		t.Fatalf("modified rating: %+v %v", r, err)
	}
	if r, _ := rate(carol, 2, 3); r.TotalValue != 5 || r.Count != 2 {
		t.Fatalf("second rater: %+v", r)
	}
	// Interval lock: 60 s.
	rate(bob, 3, 1)
	_, err = rate(bob, 3, 1)
	wantResult(t, err, types.DataStoreOperationNotAllowed)
	_, log, _ = bob.GetRatingWithLog(ctx, datastore.RatingTarget{DataID: id, Slot: 3}, 0)
	if want := types.DateTimeFromTime(f.srv.Now().Add(time.Minute)); log.LockExpirationTime != want {
		t.Fatalf("interval lock until %v, want %v", log.LockExpirationTime, want)
	}
	// Period lock: the fixture's clock is Tuesday 24 Nov 2026 12:00, so
	// the next Tuesday 06:00 is 1 Dec.
	rate(bob, 5, 1)
	if _, log, _ = bob.GetRatingWithLog(ctx, datastore.RatingTarget{DataID: id, Slot: 5}, 0); log.LockExpirationTime != types.MakeDateTime(2026, 12, 1, 6, 0, 0) {
		t.Fatalf("period lock until %v", log.LockExpirationTime)
	}
	f.advance(61 * time.Second)
	if _, err := rate(bob, 3, 1); err != nil {
		t.Fatalf("after the interval: %v", err)
	}
	_, err = rate(bob, 5, 1)
	wantResult(t, err, types.DataStoreOperationNotAllowed)
	// No self rating; negatives round to 0.
	_, err = rate(owner, 4, 3)
	wantResult(t, err, types.DataStoreOperationNotAllowed)
	if r, _ := rate(bob, 4, -9); r.TotalValue != 0 || r.Count != 1 {
		t.Fatalf("rounded rating: %+v", r)
	}

	// GetRating, GetRatings (a Result per object).
	if r, err := bob.GetRating(ctx, datastore.RatingTarget{DataID: id, Slot: 2}, 0); err != nil || r.TotalValue != 5 {
		t.Fatalf("GetRating: %+v %v", r, err)
	}
	all, results, err := bob.GetRatings(ctx, []uint64{id, 999}, 0)
	if err != nil || len(all) != 2 || len(all[0]) != 6 || all[0][2].Slot != 2 || all[0][2].TotalValue != 5 || len(all[1]) != 0 ||
		!slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreNotFound}) {
		t.Fatalf("GetRatings: %+v %v %v", all, results, err)
	}

	// ResetRating: the owner's (or the update password's); the slot is back
	// at its initial value and the lock is gone with the log.
	wantResult(t, bob.ResetRating(ctx, datastore.RatingTarget{DataID: id, Slot: 1}, 0), types.DataStorePermissionDenied)
	wantResult(t, owner.ResetRating(ctx, datastore.RatingTarget{DataID: id, Slot: 9}, 0), types.DataStoreNotFound)
	if err := owner.ResetRating(ctx, datastore.RatingTarget{DataID: id, Slot: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if info, log, _ := bob.GetRatingWithLog(ctx, datastore.RatingTarget{DataID: id, Slot: 1}, 0); info.TotalValue != 0 || info.Count != 0 || log.IsRated {
		t.Fatalf("after reset: %+v %+v", info, log)
	}
	if _, err := rate(bob, 1, 4); err != nil {
		t.Fatalf("rating again after reset: %v", err)
	}

	// RateObjects: per item, or all or nothing.
	other, _ := owner.Put(ctx, post("other", datastore.PermissionEveryone), []byte("o"))
	targets := []datastore.RatingTarget{{DataID: id, Slot: 0}, {DataID: other, Slot: 0}}
	infos, results, err := carol.RateObjects(ctx, targets, []datastore.RateParam{{Value: 3}, {Value: 99}}, false, true)
	if err != nil || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreInvalidArgument}) || infos[0].TotalValue != 13 || infos[1].Count != 0 {
		t.Fatalf("RateObjects: %+v %v %v", infos, results, err)
	}
	_, _, err = carol.RateObjects(ctx, targets, []datastore.RateParam{{Value: 3}, {Value: 99}}, true, true)
	wantResult(t, err, types.DataStoreInvalidArgument)
	if r, _ := carol.GetRating(ctx, targets[0], 0); r.TotalValue != 13 || r.Count != 1 {
		t.Fatalf("a failed transactional batch changed slot 0: %+v", r)
	}
	_, _, err = carol.RateObjects(ctx, targets, []datastore.RateParam{{Value: 3}}, false, true)
	wantResult(t, err, types.DataStoreInvalidArgument)
	infos, results, err = carol.RateObjects(ctx, targets, []datastore.RateParam{{Value: 1}, {Value: 2}}, true, false)
	if err != nil || infos[0] != (datastore.RatingInfo{}) || results[1] != types.ResultSuccess {
		t.Fatalf("transactional RateObjects without fetch: %+v %v %v", infos, results, err)
	}
	if r, _ := carol.GetRating(ctx, targets[1], 0); r.TotalValue != 12 || r.Count != 1 {
		t.Fatalf("transactional RateObjects: other's slot 0 %+v", r)
	}

	// ResetRatings: every slot, the owner's objects only.
	results, err = owner.ResetRatings(ctx, []uint64{id, 999}, false)
	if err != nil || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreNotFound}) {
		t.Fatalf("ResetRatings: %v %v", results, err)
	}
	_, err = bob.ResetRatings(ctx, []uint64{other}, true)
	wantResult(t, err, types.DataStorePermissionDenied)
	all, _, _ = bob.GetRatings(ctx, []uint64{id, other}, 0)
	for _, r := range all[0] {
		if r.Count != 0 || r.TotalValue != r.InitialValue {
			t.Fatalf("slot %d after ResetRatings: %+v", r.Slot, r)
		}
	}
	if all[1][0].Count != 1 {
		t.Fatalf("refused ResetRatings changed the other object: %+v", all[1])
	}
}

func TestTouchPerpetuateObjectInfos(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, bob := f.client(1001), f.client(1002)
	p := post("touched", datastore.PermissionEveryone)
	p.Period, p.Flag = 1, datastore.DataFlagPeriodFromLastReferred
	id, err := owner.Put(ctx, p, []byte("body"))
	if err != nil {
		t.Fatal(err)
	}
	meta := func(id uint64) datastore.MetaInfo {
		t.Helper()
		mi, err := bob.GetMeta(ctx, datastore.GetMetaParam{DataID: id, PersistenceTarget: noSlot})
		if err != nil {
			t.Fatal(err)
		}
		return mi
	}
	// TouchObject counts a reference and restarts the period of an object
	// flagged so: a day's period survives two touches 20 hours apart.
	f.advance(20 * time.Hour)
	if err := bob.TouchObject(ctx, id, 0, 0); err != nil {
		t.Fatal(err)
	}
	f.advance(20 * time.Hour)
	if err := bob.TouchObject(ctx, id, 0, 0); err != nil {
		t.Fatal(err)
	}
	if mi := meta(id); mi.ReferredCnt != 2 || mi.ReferredTime != types.DateTimeFromTime(f.srv.Now()) {
		t.Fatalf("after two touches: %+v", mi)
	}
	wantResult(t, bob.TouchObject(ctx, 999, 0, 0), types.DataStoreNotFound)
	private, _ := owner.Put(ctx, post("private", datastore.PermissionOwner), []byte("p"))
	wantResult(t, bob.TouchObject(ctx, private, 0, 0), types.DataStorePermissionDenied)

	// GetObjectInfos: a download URL per object.
	infos, results, err := bob.GetObjectInfos(ctx, []uint64{id, private, 999})
	if err != nil || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStorePermissionDenied, types.DataStoreNotFound}) ||
		infos[0].DataID != id || infos[0].Size != 4 || infos[1].URL != "" {
		t.Fatalf("GetObjectInfos: %+v %v %v", infos, results, err)
	}
	if body, err := bob.Download(ctx, infos[0].URL, 4); err != nil || string(body) != "body" {
		t.Fatalf("download from GetObjectInfos: %q %v", body, err)
	}

	// PrepareGetObjectOrMetaBinary: the URL for a body, the meta binary
	// otherwise.
	get, add, err := bob.PrepareGetObjectOrMetaBinary(ctx, datastore.PrepareGetParam{DataID: id, PersistenceTarget: noSlot})
	if err != nil || get.Size != 4 || add.OwnerID != 0 || len(add.MetaBinary) != 0 {
		t.Fatalf("object with a body: %+v %+v %v", get, add, err)
	}
	mp := post("meta only", datastore.PermissionEveryone)
	mid, err := owner.PostMetaBinary(ctx, mp)
	if err != nil {
		t.Fatal(err)
	}
	get, add, err = bob.PrepareGetObjectOrMetaBinary(ctx, datastore.PrepareGetParam{DataID: mid, PersistenceTarget: noSlot})
	if err != nil || get.URL != "" || get.DataID != mid || add.OwnerID != 1001 || add.DataType != 7 || string(add.MetaBinary) != "meta:meta only" {
		t.Fatalf("object without a body: %+v %+v %v", get, add, err)
	}

	// Perpetuation: into slot 3, replaced (deleteLastObject), emptied.
	if err := owner.PerpetuateObject(ctx, 3, id, false); err != nil {
		t.Fatal(err)
	}
	pinfos, results, err := bob.GetPersistenceInfos(ctx, 1001, []uint16{3, 4})
	if err != nil || pinfos[0].DataID != id || pinfos[0].SlotID != 3 || pinfos[1].DataID != 0 ||
		!slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreNotFound}) {
		t.Fatalf("GetPersistenceInfos: %+v %v %v", pinfos, results, err)
	}
	wantResult(t, bob.PerpetuateObject(ctx, 3, id, false), types.DataStorePermissionDenied)
	wantResult(t, owner.PerpetuateObject(ctx, datastore.NumPersistenceSlots, id, false), types.DataStoreInvalidArgument)
	wantResult(t, owner.PerpetuateObject(ctx, 3, 999, false), types.DataStoreNotFound)
	if err := owner.PerpetuateObject(ctx, 3, mid, true); err != nil {
		t.Fatal(err)
	}
	_, err = bob.GetMeta(ctx, datastore.GetMetaParam{DataID: id, PersistenceTarget: noSlot})
	wantResult(t, err, types.DataStoreNotFound)
	if mi, err := bob.GetMeta(ctx, datastore.GetMetaParam{PersistenceTarget: datastore.PersistenceTarget{OwnerID: 1001, SlotID: 3}}); err != nil || mi.DataID != mid {
		t.Fatalf("slot 3 after the replacement: %+v %v", mi, err)
	}
	if err := owner.UnperpetuateObject(ctx, 3, false); err != nil {
		t.Fatal(err)
	}
	wantResult(t, owner.UnperpetuateObject(ctx, 3, false), types.DataStoreNotFound)
	if meta(mid).DataID != mid {
		t.Fatal("unperpetuated object gone")
	}
	_, results, _ = bob.GetPersistenceInfos(ctx, 1001, []uint16{3})
	if results[0] != types.DataStoreNotFound {
		t.Fatalf("slot 3 after UnperpetuateObject: %v", results)
	}
	// deleteLastObject on unperpetuation deletes the object.
	if err := owner.PerpetuateObject(ctx, 5, mid, false); err != nil {
		t.Fatal(err)
	}
	if err := owner.UnperpetuateObject(ctx, 5, true); err != nil {
		t.Fatal(err)
	}
	_, err = bob.GetMeta(ctx, datastore.GetMetaParam{DataID: mid, PersistenceTarget: noSlot})
	wantResult(t, err, types.DataStoreNotFound)
}

func TestBatchedChangesPasswordsPosting(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	owner, bob := f.client(1001), f.client(1002)
	a, _ := owner.Put(ctx, post("a", datastore.PermissionEveryone), []byte("a"))
	b, _ := bob.Put(ctx, post("b", datastore.PermissionEveryone), []byte("b"))
	name := func(id uint64) string {
		t.Helper()
		mi, err := owner.GetMeta(ctx, datastore.GetMetaParam{DataID: id, PersistenceTarget: noSlot})
		if err != nil {
			t.Fatal(err)
		}
		return mi.Name
	}
	rename := func(n string) datastore.ChangeMetaParam {
		return datastore.ChangeMetaParam{ModifiesFlag: datastore.ModifyName, Name: n, PersistenceTarget: noSlot}
	}

	// ChangeMetas: a Result per object, or all or nothing.
	results, err := owner.ChangeMetas(ctx, []uint64{a, b, 999}, []datastore.ChangeMetaParam{rename("a2"), rename("b2"), rename("c")}, false, false)
	if err != nil || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStorePermissionDenied, types.DataStoreNotFound}) {
		t.Fatalf("ChangeMetas: %v %v", results, err)
	}
	_, err = owner.ChangeMetas(ctx, []uint64{a, b}, []datastore.ChangeMetaParam{rename("a3"), rename("b3")}, true, false)
	wantResult(t, err, types.DataStorePermissionDenied)
	if name(a) != "a2" || name(b) != "b" {
		t.Fatalf("after a refused transactional ChangeMetas: %q %q", name(a), name(b))
	}
	bad := rename("x")
	bad.ModifiesFlag = 0x8000
	_, err = owner.ChangeMetas(ctx, []uint64{a, a}, []datastore.ChangeMetaParam{rename("a4"), bad}, true, true)
	wantResult(t, err, types.DataStoreInvalidArgument)
	// ChangeMetasV1, transactional, the same object twice: in order.
	if results, err = owner.ChangeMetas(ctx, []uint64{a, a}, []datastore.ChangeMetaParam{rename("a4"), rename("a5")}, true, true); err != nil || len(results) != 2 {
		t.Fatalf("ChangeMetasV1: %v %v", results, err)
	}
	if name(a) != "a5" {
		t.Fatalf("after ChangeMetasV1: %q", name(a))
	}
	_, err = owner.ChangeMetas(ctx, []uint64{a}, nil, false, false)
	wantResult(t, err, types.DataStoreInvalidArgument)

	// GetPasswordInfos: the owner's objects only.
	access, update, _ := owner.GetPasswordInfo(ctx, a)
	pws, results, err := owner.GetPasswordInfos(ctx, []uint64{a, b})
	if err != nil || pws[0] != (datastore.PasswordInfo{DataID: a, AccessPassword: access, UpdatePassword: update}) ||
		pws[1] != (datastore.PasswordInfo{DataID: b}) || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStorePermissionDenied}) {
		t.Fatalf("GetPasswordInfos: %+v %v %v", pws, results, err)
	}

	// PostMetaBinaryWithDataId: a chosen free id; later ids pass it.
	if err := owner.PostMetaBinaryWithDataID(ctx, 5000, post("chosen", datastore.PermissionEveryone)); err != nil {
		t.Fatal(err)
	}
	if name(5000) != "chosen" {
		t.Fatal("object 5000 not named chosen")
	}
	wantResult(t, bob.PostMetaBinaryWithDataID(ctx, 5000, post("again", datastore.PermissionEveryone)), types.DataStoreOperationNotAllowed)
	wantResult(t, bob.PostMetaBinaryWithDataID(ctx, 0, post("zero", datastore.PermissionEveryone)), types.DataStoreInvalidArgument)
	wantResult(t, bob.PostMetaBinaryWithDataID(ctx, datastore.MaxChosenDataID+1, post("huge", datastore.PermissionEveryone)), types.DataStoreInvalidArgument)
	if next, _ := owner.PostMetaBinary(ctx, post("next", datastore.PermissionEveryone)); next <= 5000 {
		t.Fatalf("next data id %d after a chosen 5000", next)
	}
	// PostMetaBinariesWithDataId: per item, or nothing when one fails.
	results, err = bob.PostMetaBinariesWithDataID(ctx, []uint64{6000, 5000}, []datastore.PreparePostParam{post("p1", 0), post("p2", 0)}, false)
	if err != nil || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreOperationNotAllowed}) {
		t.Fatalf("PostMetaBinariesWithDataId: %v %v", results, err)
	}
	_, err = bob.PostMetaBinariesWithDataID(ctx, []uint64{7000, 6000}, []datastore.PreparePostParam{post("p3", 0), post("p4", 0)}, true)
	wantResult(t, err, types.DataStoreOperationNotAllowed)
	_, err = bob.GetMeta(ctx, datastore.GetMetaParam{DataID: 7000, PersistenceTarget: noSlot})
	wantResult(t, err, types.DataStoreNotFound)

	// RateObjectWithPosting: posts the missing target, then rates it.
	r, err := bob.RateObjectWithPosting(ctx, datastore.RatingTarget{DataID: 8000, Slot: 0}, datastore.RateParam{Value: 3}, post("rated post", 0), true)
	if err != nil || r.TotalValue != 13 || r.Count != 1 || name(8000) != "rated post" {
		t.Fatalf("RateObjectWithPosting: %+v %v", r, err)
	}
	r, err = owner.RateObjectWithPosting(ctx, datastore.RatingTarget{DataID: 8000, Slot: 0}, datastore.RateParam{Value: 2}, post("ignored", 0), true)
	if err != nil || r.TotalValue != 15 || name(8000) != "rated post" {
		t.Fatalf("RateObjectWithPosting of an existing object: %+v %v", r, err)
	}
	// RateObjectsWithPosting, transactional: a bad rating leaves neither
	// the rating nor the post.
	targets := []datastore.RatingTarget{{DataID: 9000, Slot: 0}, {DataID: 8000, Slot: 0}}
	_, _, err = bob.RateObjectsWithPosting(ctx, targets, []datastore.RateParam{{Value: 1}, {Value: 99}},
		[]datastore.PreparePostParam{post("new", 0), post("x", 0)}, true, true)
	wantResult(t, err, types.DataStoreInvalidArgument)
	_, err = bob.GetMeta(ctx, datastore.GetMetaParam{DataID: 9000, PersistenceTarget: noSlot})
	wantResult(t, err, types.DataStoreNotFound)
	infos, results, err := bob.RateObjectsWithPosting(ctx, targets, []datastore.RateParam{{Value: 1}, {Value: 99}},
		[]datastore.PreparePostParam{post("new", 0), post("x", 0)}, false, true)
	if err != nil || !slices.Equal(results, []types.Result{types.ResultSuccess, types.DataStoreInvalidArgument}) || infos[0].TotalValue != 11 {
		t.Fatalf("RateObjectsWithPosting: %+v %v %v", infos, results, err)
	}
	if name(9000) != "new" {
		t.Fatal("object 9000 not posted")
	}
	if errors.Is(err, types.DataStoreUnknown) {
		t.Fatal(err)
	}
}

// TestTruncatedParametersRefused feeds every prefix of each method's client
// encoding (the fuzz seeds) and wants DataStore::InvalidArgument: a cut
// request never half-succeeds.
func TestTruncatedParametersRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, t.TempDir())
	rec := &recorder{}
	c := &datastore.Client{C: rec}
	tgt := []datastore.RatingTarget{{DataID: 1, Slot: 0}}
	c.GetNotificationURL(ctx, "u")
	c.GetNewArrivedNotifications(ctx, 3, 10, true)
	c.GetNewArrivedNotifications(ctx, 3, 10, false)
	c.GetRatings(ctx, []uint64{1}, 9)
	c.ResetRating(ctx, tgt[0], 5)
	c.ResetRatings(ctx, []uint64{1}, true)
	c.TouchObject(ctx, 1, 0, 0)
	c.GetRatingWithLog(ctx, tgt[0], 0)
	c.GetPersistenceInfos(ctx, 1000, []uint16{0})
	c.PerpetuateObject(ctx, 2, 1, true)
	c.UnperpetuateObject(ctx, 2, false)
	c.PrepareGetObjectOrMetaBinary(ctx, datastore.PrepareGetParam{DataID: 1, PersistenceTarget: noSlot})
	c.GetPasswordInfos(ctx, []uint64{1})
	c.ChangeMetas(ctx, []uint64{1}, []datastore.ChangeMetaParam{{DataID: 1, ModifiesFlag: 1, Name: "n"}}, false, true)
	c.ChangeMetas(ctx, []uint64{1}, []datastore.ChangeMetaParam{{DataID: 1, ModifiesFlag: 1, Name: "n"}}, true, false)
	c.RateObjects(ctx, tgt, []datastore.RateParam{{Value: 1}}, true, true)
	c.PostMetaBinaryWithDataID(ctx, 900, post("chosen", 0))
	c.PostMetaBinariesWithDataID(ctx, []uint64{901}, []datastore.PreparePostParam{post("a", 0)}, false)
	c.RateObjectWithPosting(ctx, tgt[0], datastore.RateParam{Value: 1}, post("p", 0), true)
	c.RateObjectsWithPosting(ctx, tgt, []datastore.RateParam{{Value: 1}}, []datastore.PreparePostParam{post("p", 0)}, false, true)
	c.GetObjectInfos(ctx, []uint64{1})
	if len(rec.seen) != 21 {
		t.Fatalf("%d encodings recorded", len(rec.seen))
	}
	for _, s := range rec.seen {
		for n := range len(s.params) {
			_, err := raw(f, 1001, s.method, func(w *types.Writer) { w.B = append(w.B, s.params[:n]...) })
			if !errors.Is(err, types.DataStoreInvalidArgument) {
				t.Fatalf("method %d, %d of %d bytes: %v", s.method, n, len(s.params), err)
			}
		}
	}
}
