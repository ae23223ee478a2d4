package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/ranking"
	"github.com/gamewire/gamewire/nex/types"
)

// QuotaBackend is a store's matchmaking (communities included) and
// DataStore, each taking a quota, and its Ranking.
type QuotaBackend struct {
	Matchmaking interface {
		CommunityBackend
		SetQuota(quota.Quota)
	}
	DataStore interface {
		datastore.Store
		SetQuota(quota.Quota)
	}
	Ranking ranking.Store
}

// Quotas runs the quota and sweep suite against fresh stores made by open:
// gatherings and communities beyond a player's quota are refused with
// RendezVous' codes inside the creating transaction (and others' are not);
// DataStore objects, pending posts and bytes with DataStore::OverCapacity;
// Usage counts what Ranking's quota is checked on; Sweep removes pending
// posts and unused uploads whose window closed, and nothing else.
func Quotas(t *testing.T, open func(t *testing.T) QuotaBackend) {
	ctx := context.Background()
	t.Run("gatherings and communities", func(t *testing.T) {
		b := open(t)
		m := b.Matchmaking
		m.SetQuota(quota.Quota{Gatherings: 2, Communities: 1})
		for i := range 2 {
			if _, err := m.Create(ctx, Session(4), Participant(1)); err != nil {
				t.Fatalf("gathering %d: %v", i, err)
			}
		}
		if _, err := m.Create(ctx, Session(4), Participant(1)); !errors.Is(err, quota.ResultLimitExceeded) {
			t.Fatalf("third gathering: %v, want RendezVous::LimitExceeded", err)
		}
		// Auto-matchmaking that would create a third is refused too; with
		// a session of another player's to join, it joins.
		if _, _, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(1)); !errors.Is(err, quota.ResultLimitExceeded) {
			t.Fatalf("auto-matchmake creating a third: %v, want RendezVous::LimitExceeded", err)
		}
		if _, err := m.Create(ctx, Session(4), Participant(2)); err != nil {
			t.Fatalf("another player's gathering: %v", err)
		}
		if _, created, err := m.AutoMatchmake(ctx, nil, Session(4), Participant(3)); err != nil || created {
			t.Fatalf("auto-matchmake with room: created %v, %v", created, err)
		}
		if _, err := m.CreateCommunity(ctx, community(8), Participant(1), false); err != nil {
			t.Fatal(err)
		}
		if _, err := m.CreateCommunity(ctx, community(8), Participant(1), false); !errors.Is(err, quota.ResultPersistentGatheringCreationMax) {
			t.Fatalf("second community: %v, want RendezVous::PersistentGatheringCreationMax", err)
		}
		if _, err := m.CreateCommunity(ctx, community(8), Participant(2), false); err != nil {
			t.Fatalf("another player's community: %v", err)
		}
	})

	t.Run("datastore objects, pending posts and bytes", func(t *testing.T) {
		d := open(t).DataStore
		d.SetQuota(quota.Quota{Objects: 3, Pending: 2, Bytes: 1000})
		obj := func(owner types.PID, size uint32, pending bool) *datastore.Object {
			return &datastore.Object{Owner: owner, Size: size, MetaBinary: []byte("0123456789"), PersistenceSlot: datastore.NoPersistenceSlot,
				Pending: pending, Created: time.Unix(1000, 0)}
		}
		for i := range 2 {
			if _, err := d.CreateObject(ctx, obj(1, 100, true), false); err != nil {
				t.Fatalf("pending %d: %v", i, err)
			}
		}
		if _, err := d.CreateObject(ctx, obj(1, 100, true), false); !errors.Is(err, quota.ResultDataStoreOverCapacity) {
			t.Fatalf("third pending post: %v, want DataStore::OverCapacity", err)
		}
		if _, err := d.CreateObject(ctx, obj(1, 800, false), false); !errors.Is(err, quota.ResultDataStoreOverCapacity) {
			t.Fatalf("past the bytes: %v, want DataStore::OverCapacity", err)
		}
		if _, err := d.CreateObject(ctx, obj(1, 700, false), false); err != nil {
			t.Fatalf("up to the bytes exactly (2×110 + 710 + 70 free): %v", err)
		}
		if _, err := d.CreateObject(ctx, obj(1, 0, false), false); !errors.Is(err, quota.ResultDataStoreOverCapacity) {
			t.Fatalf("fourth object: %v, want DataStore::OverCapacity", err)
		}
		if _, err := d.CreateObject(ctx, obj(2, 100, true), false); err != nil {
			t.Fatalf("another player: %v", err)
		}
		u, err := d.Usage(ctx, 1)
		if err != nil || u != (datastore.Usage{Objects: 3, Pending: 2, Bytes: 930}) {
			t.Fatalf("usage %+v, %v", u, err)
		}
		// Updates that grow past the bytes are refused (a larger body, a
		// larger meta binary); one that shrinks, or grows within, passes.
		o := obj(2, 10, false)
		if _, err := d.CreateObject(ctx, o, false); err != nil {
			t.Fatal(err)
		}
		grow := func(id uint64, size uint32, meta int) error {
			_, err := d.Update(ctx, id, func(o *datastore.Object) error {
				o.Size, o.MetaBinary = size, make([]byte, meta)
				return nil
			})
			return err
		}
		// Player 2 keeps 110 bytes (its pending post) and this object's 20;
		// the quota is 1000, so this object may reach 890.
		if err := grow(o.DataID, 880, 10); err != nil {
			t.Fatalf("growing to the bytes exactly: %v", err)
		}
		if err := grow(o.DataID, 881, 10); !errors.Is(err, quota.ResultDataStoreOverCapacity) {
			t.Fatalf("a body growing past the bytes: %v, want DataStore::OverCapacity", err)
		}
		if err := grow(o.DataID, 880, 11); !errors.Is(err, quota.ResultDataStoreOverCapacity) {
			t.Fatalf("a meta binary growing past the bytes: %v, want DataStore::OverCapacity", err)
		}
		if err := grow(o.DataID, 5, 0); err != nil {
			t.Fatalf("shrinking: %v", err)
		}
	})

	t.Run("ranking usage", func(t *testing.T) {
		r := open(t).Ranking
		for _, c := range []uint32{1, 2} {
			if err := r.AddCategory(ctx, ranking.Category{ID: c}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.UploadScore(ctx, ranking.Category{ID: c}, 7, 0, ranking.ScoreData{Category: c, Score: 5}, time.Unix(1, 0)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.UploadScore(ctx, ranking.Category{ID: 2}, 7, 9, ranking.ScoreData{Category: 2, Score: 5}, time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		if err := r.PutCommonData(ctx, 7, 3, []byte("x"), time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		u, err := r.Usage(ctx, 7, 2, 3)
		if err != nil || u != (ranking.Usage{Categories: 2, InCategory: true, CommonData: 1, HasCommonData: true}) {
			t.Fatalf("usage %+v, %v", u, err)
		}
		u, err = r.Usage(ctx, 7, 5, 4)
		if err != nil || u != (ranking.Usage{Categories: 2, CommonData: 1}) {
			t.Fatalf("usage of another category and unique id %+v, %v", u, err)
		}
	})

	t.Run("sweep", func(t *testing.T) {
		d := open(t).DataStore
		t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		mk := func(pending bool, created time.Time) uint64 {
			t.Helper()
			o := &datastore.Object{Owner: 1, Size: 5, PersistenceSlot: datastore.NoPersistenceSlot, Pending: pending, Created: created, Updated: created}
			if _, err := d.CreateObject(ctx, o, false); err != nil {
				t.Fatal(err)
			}
			return o.DataID
		}
		upload := func(token string, id uint64, ver uint32, expires time.Time, used bool) {
			t.Helper()
			if err := d.AddUpload(ctx, datastore.Upload{Token: token, DataID: id, Version: ver, Size: 5, Expires: expires}); err != nil {
				t.Fatal(err)
			}
			if used {
				if err := d.FinishUpload(ctx, token, expires.Add(-time.Second)); err != nil {
					t.Fatal(err)
				}
			}
		}
		abandoned := mk(true, t0) // its upload expired at t0+15m
		upload("a", abandoned, 1, t0.Add(15*time.Minute), false)
		uploadedOnly := mk(true, t0) // body uploaded, never completed
		upload("b", uploadedOnly, 1, t0.Add(15*time.Minute), true)
		open := mk(true, t0.Add(20*time.Minute)) // its upload is still open
		upload("c", open, 1, t0.Add(35*time.Minute), false)
		done := mk(false, t0) // completed, with an update never completed
		upload("d", done, 1, t0.Add(15*time.Minute), true)
		upload("e", done, 2, t0.Add(16*time.Minute), false)

		sw, err := d.Sweep(ctx, t0.Add(30*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, o := range sw.Objects {
			ids = append(ids, o.DataID)
		}
		var tokens []string
		for _, u := range sw.Uploads {
			tokens = append(tokens, u.Token)
		}
		if len(ids) != 2 || ids[0] == ids[1] || (ids[0] != abandoned && ids[0] != uploadedOnly) || (ids[1] != abandoned && ids[1] != uploadedOnly) {
			t.Fatalf("swept objects %v, want %d and %d", ids, abandoned, uploadedOnly)
		}
		if len(tokens) != 1 || tokens[0] != "e" {
			t.Fatalf("swept uploads %v, want [e]", tokens)
		}
		for _, id := range []uint64{abandoned, uploadedOnly} {
			if _, err := d.Object(ctx, id); !errors.Is(err, datastore.ErrNotFound) {
				t.Errorf("swept object %d: %v", id, err)
			}
		}
		for _, tok := range []string{"a", "b", "e"} {
			if _, err := d.Upload(ctx, tok); !errors.Is(err, datastore.ErrNotFound) {
				t.Errorf("upload %s after the sweep: %v", tok, err)
			}
		}
		for _, id := range []uint64{open, done} {
			if _, err := d.Object(ctx, id); err != nil {
				t.Errorf("object %d: %v", id, err)
			}
		}
		for _, tok := range []string{"c", "d"} {
			if _, err := d.Upload(ctx, tok); err != nil {
				t.Errorf("upload %s: %v", tok, err)
			}
		}
		if sw, err := d.Sweep(ctx, t0.Add(30*time.Minute)); err != nil || len(sw.Objects)+len(sw.Uploads) != 0 {
			t.Fatalf("second sweep: %+v, %v", sw, err)
		}
		if u, err := d.Usage(ctx, 1); err != nil || u.Objects != 2 || u.Pending != 1 {
			t.Fatalf("usage after the sweep %+v, %v", u, err)
		}
	})
}

// QuotaDataStore is a DataStore store that takes a quota.
type QuotaDataStore interface {
	datastore.Store
	SetQuota(quota.Quota)
}

// DataStoreQuotaConcurrent runs creates for one player from two handles on
// one database at once (two secure nodes): exactly the quota's objects are
// created, however the creates interleave.
func DataStoreQuotaConcurrent(t *testing.T, shared func(t *testing.T) (QuotaDataStore, QuotaDataStore)) {
	ctx := context.Background()
	a, b := shared(t)
	const limit, tries = 10, 40
	for _, d := range []QuotaDataStore{a, b} {
		d.SetQuota(quota.Quota{Objects: limit})
	}
	var wg sync.WaitGroup
	results := make(chan error, tries)
	for i := range tries {
		d := a
		if i%2 == 1 {
			d = b
		}
		wg.Go(func() {
			_, err := d.CreateObject(ctx, &datastore.Object{Owner: 7, Size: 1, PersistenceSlot: datastore.NoPersistenceSlot}, false)
			results <- err
		})
	}
	wg.Wait()
	close(results)
	created := 0
	for err := range results {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, quota.ResultDataStoreOverCapacity):
			t.Fatalf("create: %v", err)
		}
	}
	u, err := a.Usage(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if created != limit || u.Objects != limit {
		t.Fatalf("%d creates succeeded, %d objects stored; want exactly %d", created, u.Objects, limit)
	}
}
