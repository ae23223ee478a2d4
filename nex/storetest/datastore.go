package storetest

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// DataStore runs the DataStore metadata store suite against fresh stores
// made by open.
func DataStore(t *testing.T, open func(t *testing.T) datastore.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	object := func(owner types.PID, name string, perm uint8, created int, tags ...string) *datastore.Object {
		at := t0.Add(time.Duration(created) * time.Minute)
		return &datastore.Object{Owner: owner, Size: 5, Name: name, DataType: 7, MetaBinary: []byte("meta"),
			Permission: datastore.Permission{Permission: perm}, DelPermission: datastore.Permission{Permission: datastore.PermissionOwner},
			Tags: tags, Created: at, Updated: at, Referred: at, PersistenceSlot: datastore.NoPersistenceSlot, Version: 1}
	}
	create := func(t *testing.T, s datastore.Store, o *datastore.Object) uint64 {
		t.Helper()
		if _, err := s.CreateObject(ctx, o, false); err != nil {
			t.Fatal(err)
		}
		return o.DataID
	}
	search := func(t *testing.T, s datastore.Store, q datastore.SearchQuery) []string {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 100
		}
		if q.Now.IsZero() {
			q.Now = t0.Add(time.Hour)
		}
		os, _, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, o := range os {
			names = append(names, o.Name)
		}
		return names
	}

	t.Run("create, read, update, delete", func(t *testing.T) {
		s := open(t)
		o := object(1, "first", datastore.PermissionRecipients, 0, "a", "b")
		o.Permission.RecipientIDs = []types.PID{5, 6}
		o.DelPermission.RecipientIDs = []types.PID{9}
		o.Ratings = []datastore.Rating{{Slot: 0, Init: datastore.RatingInitParam{Slot: 0, InitialValue: -3, RangeMin: -10, RangeMax: 10}, Total: -3, Count: 1}}
		o.Expire, o.AccessPassword, o.UpdatePassword, o.Flag, o.Period, o.ReferDataID, o.Status, o.ReferredCnt, o.Pending =
			t0.Add(24*time.Hour), 1<<63+1, 42, 0x1234, 90, 77, 2, 3, true
		id := create(t, s, o)
		if id == 0 {
			t.Fatal("no data id given")
		}
		second := create(t, s, object(1, "second", 0, 1))
		if second <= id {
			t.Fatalf("second data id %d after %d", second, id)
		}
		got, err := s.Object(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, *o) {
			t.Fatalf("read back\n%+v\nwant\n%+v", got, *o)
		}
		if _, err := s.Object(ctx, 999999); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("unknown object: %v", err)
		}
		got, err = s.Update(ctx, id, func(o *datastore.Object) error {
			o.Name, o.Tags, o.Pending, o.Version = "renamed", []string{"c"}, false, 2
			o.DataID = 12345 // not changeable
			return nil
		})
		if err != nil || got.Name != "renamed" || got.DataID != id {
			t.Fatalf("Update: %+v %v", got, err)
		}
		refused := errors.New("refused")
		if _, err := s.Update(ctx, id, func(o *datastore.Object) error { o.Name = "lost"; return refused }); !errors.Is(err, refused) {
			t.Fatalf("Update refused: %v", err)
		}
		if _, err := s.Update(ctx, 999999, func(*datastore.Object) error { return nil }); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("Update of an unknown object: %v", err)
		}
		got, _ = s.Object(ctx, id)
		if got.Name != "renamed" || !reflect.DeepEqual(got.Tags, []string{"c"}) || got.Version != 2 {
			t.Fatalf("after updates: %+v", got)
		}
		// The tag index follows the update.
		if names := search(t, s, datastore.SearchQuery{Viewer: 5, Tags: []string{"a"}}); len(names) != 0 {
			t.Fatalf("old tag still found: %v", names)
		}
		if names := search(t, s, datastore.SearchQuery{Viewer: 5, Tags: []string{"c"}}); !reflect.DeepEqual(names, []string{"renamed"}) {
			t.Fatalf("new tag: %v", names)
		}
		if err := s.DeleteObject(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteObject(ctx, id); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
		if names := search(t, s, datastore.SearchQuery{Viewer: 1, Tags: []string{"c"}}); len(names) != 0 {
			t.Fatalf("deleted object's tag found: %v", names)
		}
	})

	t.Run("persistence slots", func(t *testing.T) {
		s := open(t)
		a := object(1, "a", 0, 0)
		a.PersistenceSlot = 3
		create(t, s, a)
		if o, err := s.ObjectInSlot(ctx, 1, 3); err != nil || o.DataID != a.DataID {
			t.Fatalf("ObjectInSlot: %+v %v", o, err)
		}
		if _, err := s.ObjectInSlot(ctx, 2, 3); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("another owner's slot: %v", err)
		}
		b := object(1, "b", 0, 1)
		b.PersistenceSlot = 3
		if deleted, err := s.CreateObject(ctx, b, false); err != nil || len(deleted) != 0 {
			t.Fatalf("take the slot: %v %v", deleted, err)
		}
		if o, _ := s.Object(ctx, a.DataID); o.PersistenceSlot != datastore.NoPersistenceSlot {
			t.Fatalf("old object kept slot %d", o.PersistenceSlot)
		}
		c := object(1, "c", 0, 2)
		c.PersistenceSlot = 3
		deleted, err := s.CreateObject(ctx, c, true)
		if err != nil || len(deleted) != 1 || deleted[0].DataID != b.DataID || deleted[0].Name != "b" {
			t.Fatalf("replace the slot's object: %+v %v", deleted, err)
		}
		if _, err := s.Object(ctx, b.DataID); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("replaced object: %v", err)
		}
		if o, err := s.ObjectInSlot(ctx, 1, 3); err != nil || o.DataID != c.DataID {
			t.Fatalf("slot after replace: %+v %v", o, err)
		}
		// Many nodes filling one slot at once: one object ends in it.
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := object(2, "racer", 0, i)
				o.PersistenceSlot = 1
				if _, err := s.CreateObject(ctx, o, i%2 == 0); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if _, err := s.ObjectInSlot(ctx, 2, 1); err != nil {
			t.Fatalf("slot after racing creates: %v", err)
		}
	})

	t.Run("search permissions, filters, order", func(t *testing.T) {
		s := open(t)
		pub := create(t, s, object(1, "public", datastore.PermissionEveryone, 0, "x"))
		_ = pub
		fr := object(1, "friends", datastore.PermissionFriends, 1, "x")
		create(t, s, fr)
		rc := object(1, "recipients", datastore.PermissionRecipients, 2, "x", "y")
		rc.Permission.RecipientIDs = []types.PID{5}
		create(t, s, rc)
		create(t, s, object(1, "private", datastore.PermissionOwner, 3))
		pend := object(1, "pending", datastore.PermissionEveryone, 4)
		pend.Pending = true
		create(t, s, pend)
		exp := object(2, "expired", datastore.PermissionEveryone, 5, "x")
		exp.Expire = t0.Add(30 * time.Minute)
		create(t, s, exp)
		other := object(2, "other type", datastore.PermissionEveryone, 6, "y")
		other.DataType, other.ReferDataID = 8, 99
		create(t, s, other)

		tests := []struct {
			name string
			q    datastore.SearchQuery
			want []string
		}{
			{"owner sees own", datastore.SearchQuery{Viewer: 1, Owners: []types.PID{1}}, []string{"public", "friends", "recipients", "private"}},
			{"stranger", datastore.SearchQuery{Viewer: 3}, []string{"public", "other type"}},
			{"recipient", datastore.SearchQuery{Viewer: 5}, []string{"public", "recipients", "other type"}},
			{"expired shows before its time", datastore.SearchQuery{Viewer: 3, Now: t0.Add(10 * time.Minute)}, []string{"public", "expired", "other type"}},
			{"data type", datastore.SearchQuery{Viewer: 1, DataTypes: []uint16{8}}, []string{"other type"}},
			{"two data types", datastore.SearchQuery{Viewer: 1, DataTypes: []uint16{8, 7}, Owners: []types.PID{2}}, []string{"other type"}},
			{"tags are ANDed", datastore.SearchQuery{Viewer: 5, Tags: []string{"x", "y"}}, []string{"recipients"}},
			{"refer data id", datastore.SearchQuery{Viewer: 1, ReferDataID: 99}, []string{"other type"}},
			{"created window", datastore.SearchQuery{Viewer: 1, CreatedAfter: t0.Add(time.Minute), CreatedBefore: t0.Add(2 * time.Minute)}, []string{"friends", "recipients"}},
			{"updated window", datastore.SearchQuery{Viewer: 1, UpdatedAfter: t0.Add(3 * time.Minute)}, []string{"private", "other type"}},
			{"created descending", datastore.SearchQuery{Viewer: 1, Order: datastore.OrderCreated, Descending: true}, []string{"other type", "private", "recipients", "friends", "public"}},
			{"data id descending, page", datastore.SearchQuery{Viewer: 1, Descending: true, Offset: 1, Limit: 2}, []string{"private", "recipients"}},
			{"updated order", datastore.SearchQuery{Viewer: 3, Order: datastore.OrderUpdated}, []string{"public", "other type"}},
			{"owner's friend", datastore.SearchQuery{Viewer: 3, Friends: []types.PID{1}}, []string{"public", "friends", "other type"}},
			{"friend of others", datastore.SearchQuery{Viewer: 3, Friends: []types.PID{2, 4}}, []string{"public", "other type"}},
			{"friend, by owner", datastore.SearchQuery{Viewer: 3, Friends: []types.PID{1}, Owners: []types.PID{1}}, []string{"public", "friends"}},
			{"friend and recipient", datastore.SearchQuery{Viewer: 5, Friends: []types.PID{2, 1}, Tags: []string{"x"}}, []string{"public", "friends", "recipients"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if got := search(t, s, tc.q); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			})
		}
		got, total, err := s.Search(ctx, datastore.SearchQuery{Viewer: 1, Limit: 2, CountTotal: true, Now: t0.Add(time.Hour)})
		if err != nil || len(got) != 2 || total != 5 {
			t.Fatalf("count total: %d objects, total %d, %v; want 2 of 5", len(got), total, err)
		}
		got, total, err = s.Search(ctx, datastore.SearchQuery{Viewer: 3, Friends: []types.PID{1}, Limit: 1, CountTotal: true, Now: t0.Add(time.Hour)})
		if err != nil || len(got) != 1 || total != 3 {
			t.Fatalf("count total for a friend: %d objects, total %d, %v; want 1 of 3", len(got), total, err)
		}
		if _, total, _ := s.Search(ctx, datastore.SearchQuery{Viewer: 1, Limit: 2, Now: t0}); total != 0 {
			t.Fatalf("total %d without CountTotal", total)
		}
	})

	t.Run("friends from a friends source", func(t *testing.T) { DataStoreFriendsSource(t, open) })

	t.Run("uploads", func(t *testing.T) {
		s := open(t)
		exp := t0.Add(time.Hour)
		for _, u := range []datastore.Upload{
			{Token: "t1", DataID: 1, Version: 1, Size: 10, Expires: exp},
			{Token: "t2", DataID: 1, Version: 2, Size: 20, Expires: exp},
			{Token: "t3", DataID: 1, Version: 2, Size: 30, Expires: exp},
		} {
			if err := s.AddUpload(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AddUpload(ctx, datastore.Upload{Token: "t1", DataID: 2, Expires: exp}); err == nil {
			t.Fatal("a token recorded twice")
		}
		u, err := s.Upload(ctx, "t2")
		if err != nil || u.DataID != 1 || u.Version != 2 || u.Size != 20 || !u.Expires.Equal(exp) || u.Used {
			t.Fatalf("Upload = %+v %v", u, err)
		}
		if _, err := s.Upload(ctx, "nope"); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("unknown token: %v", err)
		}
		if _, err := s.FinishedUpload(ctx, 1, 2); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("FinishedUpload before any: %v", err)
		}
		if err := s.FinishUpload(ctx, "t1", exp); !errors.Is(err, datastore.ErrUploadExpired) {
			t.Fatalf("finish at the expiry: %v", err)
		}
		// Two nodes finishing one token at once: one wins.
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); errs <- s.FinishUpload(ctx, "t2", t0) }()
		}
		wg.Wait()
		close(errs)
		ok, used := 0, 0
		for err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, datastore.ErrUploadUsed):
				used++
			default:
				t.Fatal(err)
			}
		}
		if ok != 1 || used != 7 {
			t.Fatalf("8 finishes of one token: %d ok, %d used; want 1 and 7", ok, used)
		}
		if err := s.FinishUpload(ctx, "t3", t0); err != nil {
			t.Fatal(err)
		}
		if u, err := s.FinishedUpload(ctx, 1, 2); err != nil || u.Token != "t3" || !u.Used {
			t.Fatalf("FinishedUpload = %+v %v, want the latest used (t3)", u, err)
		}
		if err := s.FinishUpload(ctx, "nope", t0); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("finish an unknown token: %v", err)
		}
	})

	t.Run("concurrent updates all count", func(t *testing.T) {
		s := open(t)
		id := create(t, s, object(1, "rated", 0, 0))
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Update(ctx, id, func(o *datastore.Object) error { o.ReferredCnt++; return nil }); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if o, _ := s.Object(ctx, id); o.ReferredCnt != 20 {
			t.Fatalf("referred count %d after 20 concurrent increments", o.ReferredCnt)
		}
	})

	t.Run("chosen data ids", func(t *testing.T) {
		s := open(t)
		first := create(t, s, object(1, "auto", 0, 0))
		o := object(2, "chosen", 0, 1)
		o.DataID = first + 1000
		if _, err := s.CreateObject(ctx, o, false); err != nil || o.DataID != first+1000 {
			t.Fatalf("chosen id: %d %v", o.DataID, err)
		}
		if got, err := s.Object(ctx, first+1000); err != nil || got.Name != "chosen" {
			t.Fatalf("read chosen: %+v %v", got, err)
		}
		dup := object(3, "dup", 0, 2)
		dup.DataID = first
		if _, err := s.CreateObject(ctx, dup, false); !errors.Is(err, datastore.ErrExists) {
			t.Fatalf("taken id: %v", err)
		}
		if next := create(t, s, object(1, "next", 0, 3)); next <= first+1000 {
			t.Fatalf("next id %d not past the chosen %d", next, first+1000)
		}
		low := object(1, "low", 0, 4)
		low.DataID = first + 500 // below the sequence: a hole is free
		if _, err := s.CreateObject(ctx, low, false); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("batched updates", func(t *testing.T) {
		s := open(t)
		a := create(t, s, object(1, "a", 0, 0))
		b := create(t, s, object(1, "b", 0, 1))
		// All or nothing: the failing item names itself, nothing changes.
		boom := errors.New("boom")
		err := s.UpdateObjects(ctx, []uint64{a, b}, func(i int, o *datastore.Object) error {
			o.Name += "!"
			if i == 1 {
				return boom
			}
			return nil
		})
		var ie *datastore.ItemError
		if !errors.As(err, &ie) || ie.Index != 1 || !errors.Is(err, boom) {
			t.Fatalf("failing batch: %v", err)
		}
		if o, _ := s.Object(ctx, a); o.Name != "a" {
			t.Fatalf("failed batch changed a: %q", o.Name)
		}
		err = s.UpdateObjects(ctx, []uint64{a, 999999}, func(int, *datastore.Object) error { return nil })
		if !errors.As(err, &ie) || ie.Index != 1 || !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("missing object: %v", err)
		}
		// An id twice sees its own first change; tags' index rows follow.
		if err := s.UpdateObjects(ctx, []uint64{a, b, a}, func(i int, o *datastore.Object) error {
			o.Name += strconv.Itoa(i)
			o.Tags = []string{"t" + strconv.Itoa(i)}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if o, _ := s.Object(ctx, a); o.Name != "a02" {
			t.Fatalf("a after the batch: %q", o.Name)
		}
		if got := search(t, s, datastore.SearchQuery{Viewer: 1, Tags: []string{"t2"}}); !reflect.DeepEqual(got, []string{"a02"}) {
			t.Fatalf("tag search after the batch: %v", got)
		}
	})

	t.Run("ratings with logs", func(t *testing.T) {
		s := open(t)
		o := object(1, "rated", 0, 0)
		o.Ratings = []datastore.Rating{{Slot: 2}}
		id := create(t, s, o)
		if _, err := s.RatingLog(ctx, id, 2, 7); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("no log yet: %v", err)
		}
		at := t0.Add(time.Hour)
		rate := func(v int32, fail error) error {
			return s.Rate(ctx, 7, []datastore.RatingTarget{{DataID: id, Slot: 2}}, func(i int, o *datastore.Object, log *datastore.RatingLog) error {
				if log.Rated && log.Value != 4 {
					t.Errorf("log handed to f: %+v", log)
				}
				o.Ratings[0].Total += int64(v)
				o.Ratings[0].Count++
				*log = datastore.RatingLog{Rated: true, Value: v, At: at, LockExpires: at.Add(time.Minute), Resets: 3}
				return fail
			})
		}
		if err := rate(4, nil); err != nil {
			t.Fatal(err)
		}
		l, err := s.RatingLog(ctx, id, 2, 7)
		want := datastore.RatingLog{Rated: true, Value: 4, At: at, LockExpires: at.Add(time.Minute), Resets: 3}
		if err != nil || !reflect.DeepEqual(l, want) {
			t.Fatalf("log %+v %v, want %+v", l, err, want)
		}
		if err := rate(9, errors.New("refused")); err == nil {
			t.Fatal("failing rate succeeded")
		}
		if l, _ := s.RatingLog(ctx, id, 2, 7); l.Value != 4 {
			t.Fatalf("failed rate wrote its log: %+v", l)
		}
		if got, _ := s.Object(ctx, id); got.Ratings[0].Total != 4 || got.Ratings[0].Count != 1 {
			t.Fatalf("ratings %+v", got.Ratings)
		}
		if _, err := s.RatingLog(ctx, id, 2, 8); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("another rater's log: %v", err)
		}
		// Resets survive a round trip; logs go with their object.
		if _, err := s.Update(ctx, id, func(o *datastore.Object) error { o.Ratings[0].Resets = 5; return nil }); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Object(ctx, id); got.Ratings[0].Resets != 5 {
			t.Fatalf("resets %+v", got.Ratings)
		}
		if err := s.DeleteObject(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RatingLog(ctx, id, 2, 7); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("log after delete: %v", err)
		}
	})

	t.Run("perpetuate", func(t *testing.T) {
		s := open(t)
		a := create(t, s, object(1, "a", 0, 0))
		b := create(t, s, object(1, "b", 0, 1))
		other := create(t, s, object(2, "other", 0, 2))
		slotOf := func(id uint64) uint16 {
			t.Helper()
			o, err := s.Object(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return o.PersistenceSlot
		}
		if _, err := s.Perpetuate(ctx, 1, 4, a, false); err != nil || slotOf(a) != 4 {
			t.Fatalf("perpetuate a: %v", err)
		}
		if _, err := s.Perpetuate(ctx, 1, 4, a, true); err != nil || slotOf(a) != 4 {
			t.Fatalf("perpetuate a again: %v", err)
		}
		if _, err := s.Perpetuate(ctx, 1, 4, other, false); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("someone else's object: %v", err)
		}
		// b takes slot 4: a loses it; then b moves to 5, freeing 4.
		if _, err := s.Perpetuate(ctx, 1, 4, b, false); err != nil || slotOf(a) != datastore.NoPersistenceSlot || slotOf(b) != 4 {
			t.Fatalf("replace without delete: %v", err)
		}
		if _, err := s.Perpetuate(ctx, 1, 5, b, false); err != nil || slotOf(b) != 5 {
			t.Fatalf("move: %v", err)
		}
		if _, err := s.ObjectInSlot(ctx, 1, 4); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("slot 4 after the move: %v", err)
		}
		// a replaces b with deleteLast: b is gone and returned.
		deleted, err := s.Perpetuate(ctx, 1, 5, a, true)
		if err != nil || len(deleted) != 1 || deleted[0].DataID != b {
			t.Fatalf("replace with delete: %v %v", deleted, err)
		}
		if _, err := s.Object(ctx, b); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("replaced object: %v", err)
		}
		// Emptying: the object stays, or goes with deleteLast.
		if _, err := s.Perpetuate(ctx, 1, 5, 0, false); err != nil || slotOf(a) != datastore.NoPersistenceSlot {
			t.Fatalf("unperpetuate: %v", err)
		}
		if _, err := s.Perpetuate(ctx, 1, 5, 0, false); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("empty slot: %v", err)
		}
		s.Perpetuate(ctx, 1, 6, a, false)
		deleted, err = s.Perpetuate(ctx, 1, 6, 0, true)
		if err != nil || len(deleted) != 1 || deleted[0].DataID != a {
			t.Fatalf("unperpetuate with delete: %v %v", deleted, err)
		}
		if _, err := s.Object(ctx, a); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("deleted on unperpetuate: %v", err)
		}
	})

	t.Run("notifications", func(t *testing.T) {
		s := open(t)
		a := create(t, s, object(1, "a", 0, 0))
		b := create(t, s, object(1, "b", 0, 1))
		if _, err := s.LatestNotification(ctx, 5); !errors.Is(err, datastore.ErrNotFound) {
			t.Fatalf("none yet: %v", err)
		}
		if err := s.AddNotifications(ctx, a, []types.PID{5, 6}, t0, 100); err != nil {
			t.Fatal(err)
		}
		if err := s.AddNotifications(ctx, b, []types.PID{5}, t0.Add(time.Minute), 100); err != nil {
			t.Fatal(err)
		}
		if err := s.AddNotifications(ctx, b, nil, t0, 100); err != nil {
			t.Fatal(err)
		}
		ns, err := s.Notifications(ctx, 5, 0, 10)
		if err != nil || len(ns) != 2 || ns[0].DataID != a || ns[1].DataID != b || ns[0].ID >= ns[1].ID ||
			ns[0].Recipient != 5 || !ns[1].Created.Equal(t0.Add(time.Minute)) {
			t.Fatalf("notifications of 5: %+v %v", ns, err)
		}
		if page, _ := s.Notifications(ctx, 5, ns[0].ID, 10); len(page) != 1 || page[0].ID != ns[1].ID {
			t.Fatalf("after the first: %+v", page)
		}
		if page, _ := s.Notifications(ctx, 5, 0, 1); len(page) != 1 || page[0].ID != ns[0].ID {
			t.Fatalf("limit 1: %+v", page)
		}
		if page, err := s.Notifications(ctx, 5, 1<<63+5, 10); err != nil || len(page) != 0 {
			t.Fatalf("after a huge id: %+v %v", page, err)
		}
		if l, err := s.LatestNotification(ctx, 5); err != nil || l.ID != ns[1].ID {
			t.Fatalf("latest: %+v %v", l, err)
		}
		if six, _ := s.Notifications(ctx, 6, 0, 10); len(six) != 1 || six[0].DataID != a {
			t.Fatalf("notifications of 6: %+v", six)
		}
		if err := s.DeleteObject(ctx, b); err != nil {
			t.Fatal(err)
		}
		if ns, _ := s.Notifications(ctx, 5, 0, 10); len(ns) != 1 || ns[0].DataID != a {
			t.Fatalf("after deleting b: %+v", ns)
		}
		// Each recipient keeps its newest `keep`: 6's three newest stay, 5's
		// one is untouched by 6's pruning.
		for range 4 {
			if err := s.AddNotifications(ctx, a, []types.PID{6}, t0, 3); err != nil {
				t.Fatal(err)
			}
		}
		six, _ := s.Notifications(ctx, 6, 0, 10)
		latest, _ := s.LatestNotification(ctx, 6)
		if len(six) != 3 || six[2].ID != latest.ID {
			t.Fatalf("6 after pruning to 3: %+v", six)
		}
		if five, _ := s.Notifications(ctx, 5, 0, 10); len(five) != 1 {
			t.Fatalf("5 after 6's pruning: %+v", five)
		}
	})
}
