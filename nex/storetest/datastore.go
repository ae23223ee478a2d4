package storetest

import (
	"context"
	"errors"
	"reflect"
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
		if _, total, _ := s.Search(ctx, datastore.SearchQuery{Viewer: 1, Limit: 2, Now: t0}); total != 0 {
			t.Fatalf("total %d without CountTotal", total)
		}
	})

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
}
