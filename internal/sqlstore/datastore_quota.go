package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/types"
)

// SetQuota sets the per-player limits CreateObject checks (its Objects,
// Pending and Bytes; the zero Quota, the default, limits nothing). Call it
// before the store is used.
func (d *DataStore) SetQuota(q quota.Quota) { d.quota = q }

// usageQuery sums an owner's objects: how many, how many pending, and their
// bytes (declared body sizes and meta binaries), through the owner index.
const usageQuery = `SELECT count(*), coalesce(sum(CASE WHEN pending = ? THEN 1 ELSE 0 END), 0),
	coalesce(sum(size + length(meta_binary)), 0) FROM datastore_objects WHERE owner = ?`

// Usage implements datastore.Store.
func (d *DataStore) Usage(ctx context.Context, owner types.PID) (u datastore.Usage, err error) {
	err = d.db.Do(ctx, func(ctx context.Context, q Querier) error {
		return q.QueryRow(ctx, usageQuery, true, int64(owner)).Scan(&u.Objects, &u.Pending, &u.Bytes)
	})
	return u, d.fail("usage", err)
}

// lockedUsage takes owner's lock where several nodes write (the
// persistence-slot lock of NoPersistenceSlot, which no slot uses) and sums
// what owner keeps, in tx.
func (d *DataStore) lockedUsage(ctx context.Context, tx Querier, owner types.PID) (u datastore.Usage, err error) {
	if d.d.LockSlot != nil {
		if err := d.d.LockSlot(ctx, tx, owner, datastore.NoPersistenceSlot); err != nil {
			return u, wrap("lock owner", err)
		}
	}
	err = tx.QueryRow(ctx, usageQuery, true, int64(owner)).Scan(&u.Objects, &u.Pending, &u.Bytes)
	return u, wrap("usage", err)
}

// checkQuota refuses o when its owner, with o, would pass the quota: in the
// object's write transaction, after the owner's lock (lockedUsage), so two
// creates at once cannot both take the last place.
func (d *DataStore) checkQuota(ctx context.Context, tx Querier, o *datastore.Object) error {
	q := d.quota
	if q.Objects <= 0 && q.Pending <= 0 && q.Bytes <= 0 {
		return nil
	}
	u, err := d.lockedUsage(ctx, tx, o.Owner)
	if err != nil {
		return err
	}
	add := int64(o.Size) + int64(len(o.MetaBinary))
	switch {
	case q.Objects > 0 && u.Objects+1 > int64(q.Objects):
		return fmt.Errorf("%w: PID %d has %d objects (quota %d)", quota.ResultDataStoreOverCapacity, o.Owner, u.Objects, q.Objects)
	case q.Pending > 0 && o.Pending && u.Pending+1 > int64(q.Pending):
		return fmt.Errorf("%w: PID %d has %d posts pending (quota %d)", quota.ResultDataStoreOverCapacity, o.Owner, u.Pending, q.Pending)
	case q.Bytes > 0 && u.Bytes+add > q.Bytes:
		return fmt.Errorf("%w: PID %d keeps %d bytes, %d more asked (quota %d)", quota.ResultDataStoreOverCapacity, o.Owner, u.Bytes, add, q.Bytes)
	}
	return nil
}

// checkGrowth refuses an update that makes an object's bytes (its body's
// size, its meta binary) grow past its owner's Bytes quota: a completed
// update to a larger body, ChangeMeta with a larger meta binary. Like
// checkQuota it runs in the update's transaction after the owner's lock,
// where the owner's usage still counts the object as it was.
func (d *DataStore) checkGrowth(ctx context.Context, tx Querier, before, after *datastore.Object) error {
	grow := int64(after.Size) + int64(len(after.MetaBinary)) - int64(before.Size) - int64(len(before.MetaBinary))
	if d.quota.Bytes <= 0 || grow <= 0 {
		return nil
	}
	u, err := d.lockedUsage(ctx, tx, after.Owner)
	if err != nil {
		return err
	}
	if u.Bytes+grow > d.quota.Bytes {
		return fmt.Errorf("%w: PID %d keeps %d bytes, object %d grows by %d (quota %d)", quota.ResultDataStoreOverCapacity,
			after.Owner, u.Bytes, after.DataID, grow, d.quota.Bytes)
	}
	return nil
}

// sweepLimit bounds the rows one Sweep removes; the next takes the rest.
const sweepLimit = 500

// Sweep implements datastore.Store: pending objects none of whose uploads
// is open at before (and created before it) are deleted with their rows;
// unused uploads that expired before it are deleted.
func (d *DataStore) Sweep(ctx context.Context, before time.Time) (sw datastore.Swept, err error) {
	b := before.UnixNano()
	err = d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		sw = datastore.Swept{}
		objs, err := readAll(ctx, tx, ScanObject, `SELECT `+ObjectColumns+` FROM datastore_objects o
			WHERE o.pending = true AND o.created < ? AND NOT EXISTS (
				SELECT 1 FROM datastore_uploads u WHERE u.data_id = o.data_id AND u.expires >= ?)
			ORDER BY o.created LIMIT ?`+d.d.ForUpdate, b, b, sweepLimit)
		if err != nil {
			return wrap("pending objects", err)
		}
		for _, o := range objs {
			// The object's uploads go with its rows; its staged bodies are
			// the caller's (Swept.Objects).
			if _, err := deleteObjectRows(ctx, tx, o.DataID); err != nil {
				return wrap("delete pending object", err)
			}
		}
		ups, err := readAll(ctx, tx, scanUpload, `SELECT `+UploadColumns+` FROM datastore_uploads
			WHERE used = false AND expires < ? ORDER BY expires LIMIT ?`+d.d.ForUpdate, b, sweepLimit)
		if err != nil {
			return wrap("expired uploads", err)
		}
		for _, u := range ups {
			if _, err := tx.Exec(ctx, `DELETE FROM datastore_uploads WHERE token = ?`, u.Token); err != nil {
				return wrap("delete upload", err)
			}
		}
		sw.Objects, sw.Uploads = objs, ups
		return nil
	})
	return sw, d.fail("sweep", err)
}
