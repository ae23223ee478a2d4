package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gamewire/gamewire/nex/datastore"
	"github.com/gamewire/gamewire/nex/quota"
	"github.com/gamewire/gamewire/nex/types"
)

// DataStore is datastore.Store on either database: the statements and the Go
// around them. The schema is the same shape in both (nex/accounts,
// nex/pgstore): tags and access recipients are kept twice, as JSON in the
// object's row (what reads return, in order) and as rows of their own (what
// searches look up through an index); times are Unix nanoseconds (0: none).
type DataStore struct {
	db    DB
	store string
	d     DataStoreDialect
	quota quota.Quota // datastore_quota.go
}

// DataStoreDialect is what differs between the databases.
type DataStoreDialect struct {
	// ForUpdate is appended to a read of rows a transaction then writes
	// (" FOR UPDATE" on PostgreSQL; SQLite's write transaction holds the
	// whole database already).
	ForUpdate string
	// UploadOrder orders an object's uploads oldest first ("rowid", "seq").
	UploadOrder string
	// LockSlot, if set, holds a persistence slot for the rest of tx, so two
	// writers filling one slot at once take turns.
	LockSlot func(ctx context.Context, tx Querier, owner types.PID, slot uint16) error
	// ChosenID, if set, runs after an object is inserted with a chosen data
	// id, so the id sequence never hands out that id later (SQLite's
	// AUTOINCREMENT moves past it by itself).
	ChosenID func(ctx context.Context, tx Querier, id int64) error
	// Duplicate tells a unique-key violation (a chosen data id taken by a
	// concurrent insert); nil where writers take turns.
	Duplicate func(err error) bool
}

// NewDataStore returns the DataStore metadata store on db; store names it in
// error messages ("accounts", "pgstore").
func NewDataStore(store string, db DB, d DataStoreDialect) *DataStore {
	return &DataStore{db: db, store: store, d: d}
}

var _ datastore.Store = (*DataStore)(nil)

// ObjectColumns are the columns of an object, as ScanObject reads them.
const ObjectColumns = `o.data_id, o.owner, o.size, o.name, o.data_type, o.meta_binary, o.permission, o.recipients,
	o.del_permission, o.del_recipients, o.flag, o.period, o.refer_data_id, o.tags, o.status, o.referred_cnt, o.created,
	o.updated, o.referred, o.expire, o.access_password, o.update_password, o.version, o.pending, o.persistence_slot, o.ratings`

// UploadColumns are the columns of an upload, as scanUpload reads them.
const UploadColumns = `token, data_id, version, size, expires, used`

// objectColumnNames are ObjectColumns after data_id, without the table alias.
var objectColumnNames = func() []string {
	cols := strings.Split(strings.ReplaceAll(strings.TrimPrefix(ObjectColumns, "o.data_id, "), "o.", ""), ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	return cols
}()

const (
	slotCond       = `o.owner = ? AND o.persistence_slot = ? AND o.persistence_slot <> 65535`
	ratingLogQuery = `SELECT value, rated_at, lock_expires, resets FROM datastore_rating_logs WHERE data_id = ? AND slot = ? AND pid = ?`
	notification   = `SELECT id, recipient, data_id, created FROM datastore_notifications`
)

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// ScanObject reads an object of ObjectColumns.
func ScanObject(sc Row) (datastore.Object, error) {
	var o datastore.Object
	var id, owner, size, flag, refer, referredCnt, accessPW, updatePW, version int64
	var dataType, period, slot, perm, delPerm, status int64
	var recips, delRecips, tags, ratings string
	var created, updated, referred, expire int64
	if err := sc.Scan(&id, &owner, &size, &o.Name, &dataType, &o.MetaBinary, &perm, &recips,
		&delPerm, &delRecips, &flag, &period, &refer, &tags, &status, &referredCnt,
		&created, &updated, &referred, &expire, &accessPW, &updatePW, &version, &o.Pending, &slot, &ratings); err != nil {
		return o, err
	}
	o.DataID, o.Owner, o.Size, o.DataType = uint64(id), types.PID(owner), uint32(size), uint16(dataType)
	o.Permission.Permission, o.DelPermission.Permission = uint8(perm), uint8(delPerm)
	o.Flag, o.Period, o.ReferDataID, o.Status, o.ReferredCnt = uint32(flag), uint16(period), uint32(refer), uint8(status), uint32(referredCnt)
	o.AccessPassword, o.UpdatePassword, o.Version, o.PersistenceSlot = uint64(accessPW), uint64(updatePW), uint32(version), uint16(slot)
	o.Created, o.Updated, o.Referred, o.Expire = fromUnixNano(created), fromUnixNano(updated), fromUnixNano(referred), fromUnixNano(expire)
	for _, j := range []struct {
		s string
		v any
	}{{recips, &o.Permission.RecipientIDs}, {delRecips, &o.DelPermission.RecipientIDs}, {tags, &o.Tags}, {ratings, &o.Ratings}} {
		if err := json.Unmarshal([]byte(j.s), j.v); err != nil {
			return o, fmt.Errorf("object %d: corrupt column: %w", id, err)
		}
	}
	return o, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// objectValues are the columns after data_id, in ObjectColumns' order, typed
// as the PostgreSQL columns are (SQLite takes any integer).
func objectValues(o *datastore.Object) []any {
	return []any{int64(o.Owner), int64(o.Size), o.Name, int32(o.DataType), nonNil(o.MetaBinary), int16(o.Permission.Permission),
		jsonText(nonNil(o.Permission.RecipientIDs)), int16(o.DelPermission.Permission), jsonText(nonNil(o.DelPermission.RecipientIDs)),
		int64(o.Flag), int32(o.Period), int64(o.ReferDataID), jsonText(nonNil(o.Tags)), int16(o.Status), int64(o.ReferredCnt),
		unixNano(o.Created), unixNano(o.Updated), unixNano(o.Referred), unixNano(o.Expire), int64(o.AccessPassword),
		int64(o.UpdatePassword), int64(o.Version), o.Pending, int32(o.PersistenceSlot), jsonText(nonNil(o.Ratings))}
}

// fail wraps a database error with the store's name and what failed; the
// store's answers (datastore's errors, an ItemError) pass through.
func (d *DataStore) fail(what string, err error) error {
	var item *datastore.ItemError
	if err == nil || errors.As(err, &item) || errors.Is(err, datastore.ErrNotFound) || errors.Is(err, datastore.ErrExists) ||
		errors.Is(err, datastore.ErrUploadUsed) || errors.Is(err, datastore.ErrUploadExpired) {
		return err
	}
	return fmt.Errorf("%s: %s: %w", d.store, what, err)
}

// wrap names a step of a transaction in its error.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// writeIndexRows replaces the tag and recipient rows of an object.
func writeIndexRows(ctx context.Context, tx Querier, o *datastore.Object) error {
	id := int64(o.DataID)
	if _, err := tx.Exec(ctx, `DELETE FROM datastore_tags WHERE data_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM datastore_recipients WHERE data_id = ?`, id); err != nil {
		return err
	}
	for _, t := range o.Tags {
		if _, err := tx.Exec(ctx, `INSERT INTO datastore_tags (data_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, t); err != nil {
			return err
		}
	}
	for _, p := range o.Permission.RecipientIDs {
		if _, err := tx.Exec(ctx, `INSERT INTO datastore_recipients (data_id, pid) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, int64(p)); err != nil {
			return err
		}
	}
	return nil
}

func deleteObjectRows(ctx context.Context, tx Querier, id uint64) (int64, error) {
	n, err := tx.Exec(ctx, `DELETE FROM datastore_objects WHERE data_id = ?`, int64(id))
	if err != nil {
		return 0, err
	}
	for _, t := range []string{"datastore_tags", "datastore_recipients", "datastore_uploads", "datastore_rating_logs", "datastore_notifications"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE data_id = ?`, int64(id)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// takeSlot empties owner's persistence slot for another object: the object
// there is deleted (deleteLast; it is returned) or keeps no slot. keep is an
// object already there, which stays (done reports it). missing is the error
// when the slot is empty (nil: none).
func (d *DataStore) takeSlot(ctx context.Context, tx Querier, owner types.PID, slot uint16, keep uint64, deleteLast bool, missing error) (deleted []datastore.Object, done bool, err error) {
	if d.d.LockSlot != nil {
		if err := d.d.LockSlot(ctx, tx, owner, slot); err != nil {
			return nil, false, wrap("lock persistence slot", err)
		}
	}
	prev, err := ScanObject(tx.QueryRow(ctx, `SELECT `+ObjectColumns+` FROM datastore_objects o WHERE `+slotCond+d.d.ForUpdate, int64(owner), int32(slot)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, missing
	case err != nil:
		return nil, false, wrap("persistence slot", err)
	case keep != 0 && prev.DataID == keep:
		return nil, true, nil
	case deleteLast:
		if _, err := deleteObjectRows(ctx, tx, prev.DataID); err != nil {
			return nil, false, wrap("replace slot", err)
		}
		return []datastore.Object{prev}, false, nil
	}
	_, err = tx.Exec(ctx, `UPDATE datastore_objects SET persistence_slot = 65535 WHERE data_id = ?`, int64(prev.DataID))
	return nil, false, wrap("free slot", err)
}

// CreateObject implements datastore.Store.
func (d *DataStore) CreateObject(ctx context.Context, o *datastore.Object, deleteLast bool) (deleted []datastore.Object, err error) {
	var id int64
	err = d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		deleted = nil
		if o.PersistenceSlot != datastore.NoPersistenceSlot {
			if deleted, _, err = d.takeSlot(ctx, tx, o.Owner, o.PersistenceSlot, 0, deleteLast, nil); err != nil {
				return err
			}
		}
		if err := d.checkQuota(ctx, tx, o); err != nil {
			return err
		}
		cols, vals := objectColumnNames, objectValues(o)
		if o.DataID != 0 {
			var n int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM datastore_objects WHERE data_id = ?`, int64(o.DataID)).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w: object %d", datastore.ErrExists, o.DataID)
			}
			cols = append([]string{"data_id"}, cols...)
			vals = append([]any{int64(o.DataID)}, vals...)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO datastore_objects (`+strings.Join(cols, ", ")+`) VALUES (?`+strings.Repeat(", ?", len(vals)-1)+`)
			RETURNING data_id`, vals...).Scan(&id); err != nil {
			if o.DataID != 0 && d.d.Duplicate != nil && d.d.Duplicate(err) {
				return fmt.Errorf("%w: object %d", datastore.ErrExists, o.DataID)
			}
			return err
		}
		if o.DataID != 0 && d.d.ChosenID != nil {
			if err := d.d.ChosenID(ctx, tx, id); err != nil {
				return wrap("move id sequence", err)
			}
		}
		created := *o // o keeps its data id until the transaction commits (a retried one inserts it again)
		created.DataID = uint64(id)
		return writeIndexRows(ctx, tx, &created)
	})
	if err != nil {
		return nil, d.fail("create object", err)
	}
	o.DataID = uint64(id)
	return deleted, nil
}

// readOne reads one row with scan; missing names it in ErrNotFound.
func readOne[T any](ctx context.Context, d *DataStore, scan func(Row) (T, error), what, missing, query string, args ...any) (v T, err error) {
	err = d.db.Do(ctx, func(ctx context.Context, q Querier) error {
		v, err = scan(q.QueryRow(ctx, query, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", datastore.ErrNotFound, missing)
		}
		return err
	})
	return v, d.fail(what, err)
}

// Object implements datastore.Store.
func (d *DataStore) Object(ctx context.Context, id uint64) (datastore.Object, error) {
	what := fmt.Sprintf("object %d", id)
	return readOne(ctx, d, ScanObject, "read "+what, what, `SELECT `+ObjectColumns+` FROM datastore_objects o WHERE o.data_id = ?`, int64(id))
}

// ObjectInSlot implements datastore.Store.
func (d *DataStore) ObjectInSlot(ctx context.Context, owner types.PID, slot uint16) (datastore.Object, error) {
	what := fmt.Sprintf("persistence slot %d of PID %d", slot, owner)
	return readOne(ctx, d, ScanObject, "read "+what, what, `SELECT `+ObjectColumns+` FROM datastore_objects o WHERE `+slotCond, int64(owner), int32(slot))
}

// Update implements datastore.Store: on PostgreSQL the row is locked (FOR
// UPDATE) from the read to the write, so concurrent updates on several nodes
// apply one after the other (a rating counts every vote).
func (d *DataStore) Update(ctx context.Context, id uint64, f func(o *datastore.Object) error) (o datastore.Object, err error) {
	var inner error // updateObject's error, as it returned it (f's passes through)
	err = d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		o, inner = d.updateObject(ctx, tx, id, f)
		return inner
	})
	if err != nil && err == inner {
		return o, err
	}
	return o, d.fail(fmt.Sprintf("update object %d", id), err)
}

// updateObject is Update inside tx.
func (d *DataStore) updateObject(ctx context.Context, tx Querier, id uint64, f func(o *datastore.Object) error) (datastore.Object, error) {
	o, err := ScanObject(tx.QueryRow(ctx, `SELECT `+ObjectColumns+` FROM datastore_objects o WHERE o.data_id = ?`+d.d.ForUpdate, int64(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("%w: object %d", datastore.ErrNotFound, id)
	}
	if err != nil {
		return o, d.fail(fmt.Sprintf("update object %d", id), err)
	}
	before := o
	before.Tags = slices.Clone(o.Tags)
	before.Permission.RecipientIDs = slices.Clone(o.Permission.RecipientIDs)
	if err := f(&o); err != nil {
		return o, err
	}
	if err := d.checkGrowth(ctx, tx, &before, &o); err != nil {
		return o, err
	}
	o.DataID = id
	set := make([]string, len(objectColumnNames))
	for i, c := range objectColumnNames {
		set[i] = c + " = ?"
	}
	if _, err := tx.Exec(ctx, `UPDATE datastore_objects SET `+strings.Join(set, ", ")+` WHERE data_id = ?`,
		append(objectValues(&o), int64(id))...); err != nil {
		return o, d.fail(fmt.Sprintf("update object %d", id), err)
	}
	if !slices.Equal(before.Tags, o.Tags) || !slices.Equal(before.Permission.RecipientIDs, o.Permission.RecipientIDs) {
		if err := writeIndexRows(ctx, tx, &o); err != nil {
			return o, d.fail(fmt.Sprintf("update object %d", id), err)
		}
	}
	return o, nil
}

// UpdateObjects implements datastore.Store.
func (d *DataStore) UpdateObjects(ctx context.Context, ids []uint64, f func(i int, o *datastore.Object) error) error {
	targets := make([]datastore.RatingTarget, len(ids))
	for i, id := range ids {
		targets[i].DataID = id
	}
	return d.batch(ctx, 0, targets, false, func(i int, o *datastore.Object, _ *datastore.RatingLog) error { return f(i, o) })
}

// Rate implements datastore.Store.
func (d *DataStore) Rate(ctx context.Context, rater types.PID, targets []datastore.RatingTarget, f func(i int, o *datastore.Object, log *datastore.RatingLog) error) error {
	return d.batch(ctx, rater, targets, true, f)
}

// batch updates each target's object in one transaction, with the rater's
// rating log of its slot when withLog. Where rows are locked (ForUpdate) they
// are locked in data id order first, so two batches naming the same objects in
// other orders take turns instead of deadlocking.
func (d *DataStore) batch(ctx context.Context, rater types.PID, targets []datastore.RatingTarget, withLog bool,
	f func(i int, o *datastore.Object, log *datastore.RatingLog) error) error {
	err := d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		if d.d.ForUpdate != "" && len(targets) > 0 {
			ids := make([]any, len(targets))
			for i, t := range targets {
				ids[i] = int64(t.DataID)
			}
			if _, err := tx.Exec(ctx, `SELECT 1 FROM datastore_objects WHERE data_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)
				ORDER BY data_id`+d.d.ForUpdate, ids...); err != nil {
				return wrap("update objects: lock", err)
			}
		}
		for i, t := range targets {
			var log datastore.RatingLog
			if withLog {
				var err error
				log, err = scanRatingLog(tx.QueryRow(ctx, ratingLogQuery, int64(t.DataID), int16(t.Slot), int64(rater)))
				if err != nil && !errors.Is(err, sql.ErrNoRows) {
					return wrap("read rating log", err)
				}
			}
			if _, err := d.updateObject(ctx, tx, t.DataID, func(o *datastore.Object) error { return f(i, o, &log) }); err != nil {
				return &datastore.ItemError{Index: i, Err: err}
			}
			if withLog && log.Rated {
				if _, err := tx.Exec(ctx, `INSERT INTO datastore_rating_logs (data_id, slot, pid, value, rated_at, lock_expires, resets)
					VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (data_id, slot, pid) DO UPDATE SET value = excluded.value,
					rated_at = excluded.rated_at, lock_expires = excluded.lock_expires, resets = excluded.resets`,
					int64(t.DataID), int16(t.Slot), int64(rater), log.Value, unixNano(log.At), unixNano(log.LockExpires), int64(log.Resets)); err != nil {
					return wrap("write rating log", err)
				}
			}
		}
		return nil
	})
	return d.fail("update objects", err)
}

func scanRatingLog(sc Row) (datastore.RatingLog, error) {
	var l datastore.RatingLog
	var at, lock, resets int64
	if err := sc.Scan(&l.Value, &at, &lock, &resets); err != nil {
		return datastore.RatingLog{}, err
	}
	l.Rated, l.At, l.LockExpires, l.Resets = true, fromUnixNano(at), fromUnixNano(lock), uint32(resets)
	return l, nil
}

// RatingLog implements datastore.Store.
func (d *DataStore) RatingLog(ctx context.Context, id uint64, slot int8, rater types.PID) (datastore.RatingLog, error) {
	return readOne(ctx, d, scanRatingLog, "read rating log", fmt.Sprintf("rating log of object %d slot %d by PID %d", id, slot, rater),
		ratingLogQuery, int64(id), int16(slot), int64(rater))
}

// Perpetuate implements datastore.Store; where LockSlot is set it holds the
// slot's lock as CreateObject does.
func (d *DataStore) Perpetuate(ctx context.Context, owner types.PID, slot uint16, id uint64, deleteLast bool) (deleted []datastore.Object, err error) {
	err = d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		deleted = nil
		if id != 0 {
			var n int64
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM datastore_objects WHERE data_id = ? AND owner = ?`+d.d.ForUpdate+`) o`,
				int64(id), int64(owner)).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%w: object %d of PID %d", datastore.ErrNotFound, id, owner)
			}
		}
		var missing error
		if id == 0 {
			missing = fmt.Errorf("%w: persistence slot %d of PID %d", datastore.ErrNotFound, slot, owner)
		}
		var done bool
		if deleted, done, err = d.takeSlot(ctx, tx, owner, slot, id, deleteLast, missing); err != nil || done || id == 0 {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE datastore_objects SET persistence_slot = ? WHERE data_id = ?`, int32(slot), int64(id))
		return err
	})
	if err != nil {
		return nil, d.fail("perpetuate", err)
	}
	return deleted, nil
}

// AddNotifications implements datastore.Store.
func (d *DataStore) AddNotifications(ctx context.Context, id uint64, recipients []types.PID, at time.Time, keep int) error {
	if len(recipients) == 0 {
		return nil
	}
	err := d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		for _, r := range recipients {
			if _, err := tx.Exec(ctx, `INSERT INTO datastore_notifications (recipient, data_id, created) VALUES (?, ?, ?)`,
				int64(r), int64(id), unixNano(at)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM datastore_notifications WHERE recipient = ? AND id <=
				(SELECT id FROM datastore_notifications WHERE recipient = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`, int64(r), int64(r), int64(keep)); err != nil {
				return wrap("prune", err)
			}
		}
		return nil
	})
	return d.fail("add notifications", err)
}

func scanNotification(sc Row) (datastore.Notification, error) {
	var n datastore.Notification
	var id, recipient, dataID, created int64
	err := sc.Scan(&id, &recipient, &dataID, &created)
	n.ID, n.Recipient, n.DataID, n.Created = uint64(id), types.PID(recipient), uint64(dataID), fromUnixNano(created)
	return n, err
}

// readAll reads the rows of a query with scan.
func readAll[T any](ctx context.Context, q Querier, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, closeRows(rows, err)
		}
		out = append(out, v)
	}
	return out, closeRows(rows, nil)
}

// Notifications implements datastore.Store.
func (d *DataStore) Notifications(ctx context.Context, recipient types.PID, after uint64, limit int) (out []datastore.Notification, err error) {
	if after > math.MaxInt64 {
		return nil, nil
	}
	err = d.db.Do(ctx, func(ctx context.Context, q Querier) error {
		out, err = readAll(ctx, q, scanNotification, notification+` WHERE recipient = ? AND id > ? ORDER BY id LIMIT ?`,
			int64(recipient), int64(after), int64(limit))
		return err
	})
	return out, d.fail("read notifications", err)
}

// LatestNotification implements datastore.Store.
func (d *DataStore) LatestNotification(ctx context.Context, recipient types.PID) (datastore.Notification, error) {
	return readOne(ctx, d, scanNotification, "read notifications", fmt.Sprintf("notifications of PID %d", recipient),
		notification+` WHERE recipient = ? ORDER BY id DESC LIMIT 1`, int64(recipient))
}

// DeleteObject implements datastore.Store.
func (d *DataStore) DeleteObject(ctx context.Context, id uint64) error {
	err := d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		n, err := deleteObjectRows(ctx, tx, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("%w: object %d", datastore.ErrNotFound, id)
		}
		return err
	})
	return d.fail(fmt.Sprintf("delete object %d", id), err)
}

// SearchWhere builds the WHERE clause of a search: live objects the viewer
// may read, then q's filters.
func SearchWhere(q datastore.SearchQuery) (string, []any) {
	var b strings.Builder
	args := []any{false, q.Now.UnixNano(), int64(q.Viewer), int64(q.Viewer)}
	b.WriteString(`o.pending = ? AND (o.expire = 0 OR o.expire > ?)
		AND (o.owner = ? OR o.permission = 0 OR (o.permission = 2 AND EXISTS
			(SELECT 1 FROM datastore_recipients r WHERE r.data_id = o.data_id AND r.pid = ?))`)
	// Friends-permission objects are found by the owners the service names
	// (q.Friends: the viewer's friends as its friends.Friends tells them,
	// the store's own friends tables or a friends server elsewhere).
	if len(q.Friends) > 0 {
		b.WriteString(` OR (o.permission = 1 AND o.owner IN (?` + strings.Repeat(", ?", len(q.Friends)-1) + `))`)
		for _, p := range q.Friends {
			args = append(args, int64(p))
		}
	}
	b.WriteString(`)`)
	in := func(col string, n int) {
		b.WriteString(" AND " + col + " IN (?" + strings.Repeat(", ?", n-1) + ")")
	}
	if len(q.Owners) > 0 {
		in("o.owner", len(q.Owners))
		for _, p := range q.Owners {
			args = append(args, int64(p))
		}
	}
	if len(q.DataTypes) > 0 {
		in("o.data_type", len(q.DataTypes))
		for _, t := range q.DataTypes {
			args = append(args, int32(t))
		}
	}
	for _, c := range []struct {
		cond string
		t    time.Time
	}{{"o.created >= ?", q.CreatedAfter}, {"o.created <= ?", q.CreatedBefore}, {"o.updated >= ?", q.UpdatedAfter}, {"o.updated <= ?", q.UpdatedBefore}} {
		if !c.t.IsZero() {
			b.WriteString(" AND " + c.cond)
			args = append(args, c.t.UnixNano())
		}
	}
	if q.ReferDataID != 0 {
		b.WriteString(" AND o.refer_data_id = ?")
		args = append(args, int64(q.ReferDataID))
	}
	for _, t := range q.Tags {
		b.WriteString(" AND o.data_id IN (SELECT t.data_id FROM datastore_tags t WHERE t.tag = ?)")
		args = append(args, t)
	}
	return b.String(), args
}

// SearchQuery is Search's statement for q.
func SearchQuery(q datastore.SearchQuery) (string, []any) {
	where, args := SearchWhere(q)
	order := "o.data_id"
	switch q.Order {
	case datastore.OrderCreated:
		order = "o.created, o.data_id"
	case datastore.OrderUpdated:
		order = "o.updated, o.data_id"
	}
	if q.Descending {
		order = strings.ReplaceAll(order, ",", " DESC,") + " DESC"
	}
	return `SELECT ` + ObjectColumns + ` FROM datastore_objects o WHERE ` + where + ` ORDER BY ` + order + ` LIMIT ? OFFSET ?`,
		append(args, int64(q.Limit), int64(q.Offset))
}

// Search implements datastore.Store; the page and the total come from one
// snapshot.
func (d *DataStore) Search(ctx context.Context, q datastore.SearchQuery) (out []datastore.Object, total uint32, err error) {
	err = d.db.Snapshot(ctx, func(ctx context.Context, tx Querier) error {
		query, args := SearchQuery(q)
		if out, err = readAll(ctx, tx, ScanObject, query, args...); err != nil || !q.CountTotal {
			return err
		}
		var n int64
		where, wargs := SearchWhere(q)
		err := tx.QueryRow(ctx, `SELECT count(*) FROM datastore_objects o WHERE `+where, wargs...).Scan(&n)
		total = uint32(n)
		return wrap("count", err)
	})
	if err != nil {
		return nil, 0, d.fail("search objects", err)
	}
	return out, total, nil
}

// AddUpload implements datastore.Store.
func (d *DataStore) AddUpload(ctx context.Context, u datastore.Upload) error {
	err := d.db.Do(ctx, func(ctx context.Context, q Querier) error {
		_, err := q.Exec(ctx, `INSERT INTO datastore_uploads (`+UploadColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			u.Token, int64(u.DataID), int64(u.Version), int64(u.Size), u.Expires.UnixNano(), false)
		return err
	})
	return d.fail("record upload", err)
}

func scanUpload(sc Row) (datastore.Upload, error) {
	var u datastore.Upload
	var id, version, size, exp int64
	err := sc.Scan(&u.Token, &id, &version, &size, &exp, &u.Used)
	u.DataID, u.Version, u.Size, u.Expires = uint64(id), uint32(version), uint32(size), time.Unix(0, exp)
	return u, err
}

// Upload implements datastore.Store.
func (d *DataStore) Upload(ctx context.Context, token string) (datastore.Upload, error) {
	return readOne(ctx, d, scanUpload, "read upload", "upload", `SELECT `+UploadColumns+` FROM datastore_uploads WHERE token = ?`, token)
}

// FinishUpload implements datastore.Store; where rows are locked (ForUpdate),
// of two nodes receiving the same token at once only one marks it used.
func (d *DataStore) FinishUpload(ctx context.Context, token string, now time.Time) error {
	err := d.db.Write(ctx, func(ctx context.Context, tx Querier) error {
		u, err := scanUpload(tx.QueryRow(ctx, `SELECT `+UploadColumns+` FROM datastore_uploads WHERE token = ?`+d.d.ForUpdate, token))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%w: upload", datastore.ErrNotFound)
		case err != nil:
			return err
		case u.Used:
			return datastore.ErrUploadUsed
		case !now.Before(u.Expires):
			return datastore.ErrUploadExpired
		}
		_, err = tx.Exec(ctx, `UPDATE datastore_uploads SET used = ? WHERE token = ?`, true, token)
		return err
	})
	return d.fail("finish upload", err)
}

// FinishedUploadQuery selects the latest finished upload of an object version.
func (d *DataStore) FinishedUploadQuery() string {
	return `SELECT ` + UploadColumns + ` FROM datastore_uploads
		WHERE data_id = ? AND version = ? AND used = ? ORDER BY ` + d.d.UploadOrder + ` DESC LIMIT 1`
}

// FinishedUpload implements datastore.Store.
func (d *DataStore) FinishedUpload(ctx context.Context, id uint64, version uint32) (datastore.Upload, error) {
	return readOne(ctx, d, scanUpload, "read upload", fmt.Sprintf("upload of object %d version %d", id, version),
		d.FinishedUploadQuery(), int64(id), int64(version), true)
}
